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
// per stage). Clones are backward work.
//
// With the forward ops' layers (stages.h ForwardLayers), every layer's input
// is a checkpoint too, as Megatron's full recomputation keeps it
// (--recompute-granularity full --recompute-method uniform
// --recompute-num-layers 1; Korthikanti et al. 2022 §4): a forward value that
// a forward op of another layer reads is kept, and each layer's backward
// recomputes that layer alone from its input. The same ops are recomputed
// either way; what lives through the stage's backward is one layer's
// activations instead of the whole stage's.

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status.h"

namespace distir::sharding {

/// Makes every backward task of `function` recompute the forward values it
/// reads. A function without backward tasks is left unchanged. With
/// `forward_layers` (one entry per op of `function`), the inputs of every
/// layer are checkpoints as well as the stage's. With `selective`, only the
/// values of forward ops marked `recompute = 1` are recomputed (Megatron's
/// selective recomputation: the model marks its core attention, whose
/// b·h·s·s scores are large and cheap to recompute); every other value is kept.
Status RecomputeForward(Module& module, std::string function,
                        const std::vector<int64_t>& forward_layers = {}, bool selective = false);

}  // namespace distir::sharding
