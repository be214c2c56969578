// Which op results share a buffer with one of the op's inputs.
//
// Two places count a program's memory: the simulator (sim/memory_tracker.h)
// predicts each device's peak, and the executor's arena plan
// (backend/memory_plan.h) sizes the memory a rank really allocates. They must
// count the same bytes, so both ask this one table which results are views or
// in-place updates of an input rather than fresh buffers (docs/cost_model.md §4).
// Tuple and UnpackTuple are not in it: they regroup whole values (the simulator
// keeps a buffer per tensor leaf) and never reach the executor.

#pragma once

#include "ir/device.h"
#include "ir/op.h"

namespace distir {

/// True when result 0 of the per-rank op `op`, run by device `self`, is a
/// token that carries no data: SendTo's result, and the result of a Collective
/// whose rank only sends (a Reduce or MPIGather away from its root, a Broadcast
/// or Scatter source that is not among the destinations). Every other op: false.
bool IsTokenResult(const Op& op, DeviceId self);

/// The input whose buffer result `result` of `op` shares, or -1 when the
/// result is a fresh buffer:
///   * Reshape, Squeeze, Unsqueeze, Identity: result 0 is a view of input 0;
///   * SGD(w, dw) -> w' updates w in place (input 0);
///   * Adam(w, dw, m, v) -> (w', m', v') updates w, m and v in place (inputs 0, 2, 3);
///   * a token (IsTokenResult, with the device of input 0 as the rank) is
///     input 0 handed on.
/// Calls are -1 here: a callee's aliasing is its own function's (the
/// simulator summarises it per callee).
/// REQUIRES: 0 <= result < op.num_results().
int AliasedInput(const Op& op, int result);

}  // namespace distir
