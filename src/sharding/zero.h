// ZeRO as annotations (docs/transforms.md §7 and §12): the optimizer state,
// gradients and weights sharded over the data-parallel axis.
//
// Runs on the annotated global view, after the microbatch pass
// (microbatch.h). For each optimizer op (SGD, Adam) with weight w laid out
// as S (its parameter's sharding, replicated if it has none), let S/dp be S
// with the data axis added to dim 0 (after the axes already there: the
// tensor-parallel shard is cut into D pieces, as the emitter does):
//   stage 1: the optimizer state (Adam's m, v) is laid out S/dp; the
//            optimizer reads the gradient and the weight as S/dp (a
//            reduce-scatter and a local slice) and its updated weight is
//            gathered back to S for the step's result;
//   stage 2: and every microbatch's gradient is reduce-scattered to S/dp
//            before it is added to the sum;
//   stage 3: and the weight itself is S/dp: every other op that reads it
//            reads its own all-gather to S (which dies after that op); the
//            updated weight stays S/dp.
// All of it is Shard {for_users = 1} ops and parameter shardings: the
// collectives come from materialisation like any other reshard.

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Applies ZeRO stage `stage` to `function` over mesh axis `data_axis`.
/// Stage 0 changes nothing. Errors (InvalidArgument): a stage outside 0..3;
/// no optimizer op (an inference program); a mesh without `data_axis`
/// (ZeRO needs D > 1).
Status ApplyZero(Module& module, std::string function, int stage,
                 const std::string& data_axis = "dp");

}  // namespace distir::sharding
