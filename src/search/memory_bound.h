// A lower bound of a configuration's simulated peak memory that needs no
// program: the memory pruning of `distir search` (issue #18, status pruned).
//
// The simulator keeps every function parameter resident from time 0
// (docs/cost_model.md §4), and in a transformer-training step every weight's
// gradient is still live at the first update op of its devices: the update
// ops (reductions of the gradients, the optimizer, ZeRO's gathers) all come
// after the last backward op (sharding/task_order.h), and each reads its
// weight's gradient, produced in the backward. So at that op a device holds
// its parameters and the gradients of its weights, and its peak is at least
// their bytes. For a transformer-training step on the sharding path
// (models/transformer_sharding.h) each parameter lives on at least one of
// the P stages, laid out over that stage's D x T devices: at best split over
// tp (T ways) and, where ZeRO shards it, over dp (D ways); the batch inputs
// are split over dp. A gradient has its weight's shape and a dtype at least
// as wide (bf16/f16 weights have bf16/f16 or f32 gradients), split as its
// weight, over dp only with ZeRO >= 2 (which reduce-scatters it as it is
// computed). The most loaded device therefore holds at least
//   (1 / P) * [ sum_p bytes(p) / (T * Z(p))  +  sum_w bytes(w) / (T * Zg) ],
// p over the parameters, w over the weights; Z(p) = D for the batch inputs,
// the Adam moments and master weights with ZeRO >= 1, and every parameter
// with ZeRO 3, 1 otherwise; Zg = D with ZeRO >= 2, else 1. Activations, a
// gradient wider than its weight and replicated parameters (norms, biases)
// only add to it. docs/cost_model.md §4.5 has the derivation and the test
// that checks the bound against full simulations.

#pragma once

#include <cstdint>

#include "ir/function.h"
#include "search/layer_footprint.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// The bound above for the sequential transformer-training step `seq`
/// (parameters named as models/transformer.h names them, classified by
/// ClassifyTransformerValue) distributed as `o`,
/// in bytes, rounded down. REQUIRES: `seq` is typed; o.dp, o.tp, o.pp >= 1.
int64_t MemoryLowerBound(const Function& seq, const ParallelOptions& o);

/// A second bound, at each pipeline rank's first backward op (issue #18): the
/// rank then holds the parameters of its layers and the buffers its
/// backward will read of every forward it has run (layer_footprint.h). In
/// the schedule's order (transforms/interleaved_schedule.h; GPipe: all K
/// forwards first) rank r runs f_r forward tasks of model chunks of at least
/// n = floor(L / (P v)) layers before its first backward, and holds v chunks:
///   bound_r = v n (w / (T Zw) + s / (T Zs)) + f_r n a mb / (B T),
/// w and s one layer's weights and optimizer state, Zw = D with ZeRO 3, Zs =
/// D with ZeRO >= 1 (else 1), a one layer's saved buffers at the global batch
/// B (none with full recomputation, those of unmarked ops with selective),
/// mb = B / (D K) the micro batch, split at most T ways on a device (the
/// microbatch's samples of the replica are its whole batch dimension). Rank
/// 0, with the most warm-up forwards, has the largest. 0 where the point is not a valid
/// pipeline (more chunks than layers, an interleaving Megatron refuses, a
/// batch K D does not divide): the checks that refuse it come after pruning.
int64_t ActivationLowerBound(const LayerFootprint& f, const ParallelOptions& o);

}  // namespace distir::search
