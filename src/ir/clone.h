// A deep copy of a function: the same parameters, ops, attributes, names,
// types, shardings and locations, with fresh values. Cheaper than printing
// and parsing the function again, which is how a pass that rewrites a
// function in place used to get a private copy of a cached one.

#pragma once

#include <memory>

#include "ir/function.h"

namespace distir {

/// A copy of `fn` that prints exactly as `fn` does and shares nothing with
/// it. Calls keep their callee's name (resolved in whichever module holds
/// the copy).
std::unique_ptr<Function> CloneFunction(const Function& fn);

}  // namespace distir
