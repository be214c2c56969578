// A deep copy of a function: the same parameters, ops, attributes, names,
// types, shardings and locations, with fresh values. Cheaper than printing
// and parsing the function again, which is how a pass that rewrites a
// function in place used to get a private copy of a cached one.

#pragma once

#include <functional>
#include <memory>

#include "ir/function.h"

namespace distir {

/// A copy of `fn` that prints exactly as `fn` does and shares nothing with
/// it. Calls keep their callee's name (resolved in whichever module holds
/// the copy).
std::unique_ptr<Function> CloneFunction(const Function& fn);

/// Rewrites one op of a copy: returns false to have `op` copied as is, or true
/// when it has emitted the op's replacement into `out` and bound each result
/// of `op` that is used afterwards in `map` (by the old value's id), or has
/// dropped an op whose results nothing reads any more.
using CloneRewrite = std::function<bool(const Op& op, std::vector<Value*>& map, Function& out)>;

/// A copy of `fn` in which `rewrite` replaces or drops ops (an import-time
/// fusion, transforms/fuse_gelu.h). REQUIRES: every value read by a copied op
/// or returned is bound.
std::unique_ptr<Function> CloneFunction(const Function& fn, const CloneRewrite& rewrite);

}  // namespace distir
