// The call graph of a module, walked without recursion.
//
// A call may only name a function defined earlier in the module (ir.md §4), so
// the call graph is acyclic, but a chain of calls may be as deep as the module
// is long. Analyses that summarise callees (the simulator's cost and memory of
// a call) would recurse once per call level; instead they ask for the callees
// bottom-up here and summarise them in that order, so that every callee's
// summary exists before its callers need it.

#pragma once

#include <functional>
#include <vector>

#include "ir/function.h"

namespace distir {

/// The functions `fn` calls directly or through other calls, each listed once
/// and after every function it calls, `fn` itself last. Functions for which
/// `known` returns true are neither listed nor entered (a caller's cache of
/// summaries). Calls of undefined functions are skipped; the analysis that
/// summarises the caller reports them. Runs in time linear in the ops of the
/// listed functions, on an explicit stack.
/// REQUIRES: the call graph is acyclic (VerifyModule(module).ok()).
std::vector<const Function*> CalleesBottomUp(
    const Module& module, const Function& fn,
    const std::function<bool(const Function&)>& known = nullptr);

}  // namespace distir
