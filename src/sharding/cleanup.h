// Collective clean-ups on materialised global-view programs (SHARDING.md §5).
//
// Each pass is one rewrite with one contract, runnable by name from
// `distir opt --pass NAME`; RunCleanup applies them all, in SHARDING.md's
// order, until none changes the function. They keep the numerics (checked
// by `distir opt --check-partition` on their golden tests) and only fire when
// the intermediate collective has no other user. Collectives left without a
// user are removed.
//
//   gather-slice-cancel            MeshSlice(A,d)(MeshAllGather(A,d)(x)) -> x, and
//                                  MeshAllGather(A,d)(MeshSlice(A,d)(x)) -> x      (W3)
//   reduce-scatter-gather-to-all-reduce
//                                  MeshAllGather(A,d)(MeshReduceScatter(A,d)(x))
//                                  -> MeshAllReduce(A)(x)                           (W4)
//   all-reduce-reassociate         AR(A)(x) + AR(A)(y) -> AR(A)(x + y); also Sub,
//                                  and Max/Min with max/min all-reduces            (W1)
//   all-reduce-to-reduce-scatter   MeshSlice(A,d)(AR(A)(x)) -> MeshReduceScatter(A,d)(x) (W2)
//   all-gather-sink                f(MeshAllGather(A,d)(x)) -> MeshAllGather(A,d)(f(x))
//                                  for elementwise unary f: f runs on the pieces  (W8)
//   all-reduce-fold                AR(B)(AR(A)(x)) -> AR(A, B)(x)                  (W5)

#pragma once

#include <string>
#include <vector>

#include "ir/function.h"

namespace distir::sharding {

/// A clean-up pass: rewrites `function` of `module`; true when it changed it.
/// Every sharding pass takes the function's name by value: it replaces the
/// function, which owns the string a caller would otherwise pass.
using CleanupPass = bool (*)(Module& module, std::string function);

struct NamedCleanupPass {
  const char* name;
  CleanupPass run;
};

/// The passes above, in the order RunCleanup applies them.
const std::vector<NamedCleanupPass>& CleanupPasses();

bool GatherSliceCancel(Module& module, std::string function);
bool ReduceScatterGatherToAllReduce(Module& module, std::string function);
bool AllReduceReassociate(Module& module, std::string function);
bool AllReduceToReduceScatter(Module& module, std::string function);
bool AllGatherSink(Module& module, std::string function);
bool AllReduceFold(Module& module, std::string function);

/// Every pass, repeatedly, until none changes `function`. Returns the number
/// of rewrites that fired.
int RunCleanup(Module& module, std::string function);

}  // namespace distir::sharding
