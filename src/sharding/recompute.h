// Recomputation (activation checkpointing) on a pipelined global view
// (docs/transforms.md §12): each backward task recomputes the forward
// values of its own stage and microbatch that it reads, instead of keeping
// them from the forward task.
//
// Runs after the microbatch and stage passes (microbatch.h, stages.h): the
// ops carry tasks. A backward op that reads a value computed by a forward op
// of the same stage and microbatch reads a clone instead (`<name>.rc`),
// computed just before its first reader in the backward task from the same
// operands, recursively; the recursion stops at parameters, at values of
// other stages (the stage's inputs, the checkpoints) and at setup values. The
// forward task's values then die at their last forward use: only the stage
// inputs live from a microbatch's forward to its backward (paper Figure 8,
// per stage; Megatron's full recomputation). Clones are backward work.

#pragma once

#include <string>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Makes every backward task of `function` recompute the forward values it
/// reads. A function without backward tasks is left unchanged.
Status RecomputeForward(Module& module, std::string function);

}  // namespace distir::sharding
