// Software prefetching for passes that walk a function's ops in order.
//
// A big program's ops and values are separate heap objects reached through
// pointers (Function -> Op -> result Value), so a pass over them is bound by
// cache misses that the hardware prefetcher cannot predict. PrefetchOps()
// requests, a few ops ahead of the one being processed, the objects that the
// pass will dereference next, in stages so that each stage reads only lines
// the previous stage already brought in. It changes no state and is a pure
// performance hint: passes are correct without it. Used by the interpreter
// (interpreter.h), type inference and the simulator.

#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "ir/op.h"

namespace distir {

/// Prefetches for a pass now at op `i` of `ops`: the Op object 16 ahead, its
/// input and result lists 8 ahead, its result values 4 ahead.
inline void PrefetchOps(const std::vector<std::unique_ptr<Op>>& ops, size_t i) {
  constexpr size_t kOpAhead = 16, kListsAhead = 8, kValuesAhead = 4;
  const size_t n = ops.size();
  if (i + kOpAhead < n) __builtin_prefetch(ops[i + kOpAhead].get());
  if (i + kListsAhead < n) {
    const Op& op = *ops[i + kListsAhead];
    __builtin_prefetch(op.inputs().data());
    __builtin_prefetch(op.results().data());
  }
  if (i + kValuesAhead < n) {
    for (const std::unique_ptr<Value>& r : ops[i + kValuesAhead]->results()) {
      const char* v = reinterpret_cast<const char*>(r.get());
      __builtin_prefetch(v);
      __builtin_prefetch(v + 64);
    }
  }
}

}  // namespace distir
