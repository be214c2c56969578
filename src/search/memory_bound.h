// A lower bound of a configuration's simulated peak memory that needs no
// program: the memory pruning of `distir search` (issue #18, status pruned).
//
// The simulator keeps every function parameter resident from time 0
// (docs/cost_model.md §4), so a device's peak is at least the bytes of the
// parameters it holds. For a transformer-training step on the sharding path
// (models/transformer_sharding.h) each parameter lives on at least one of
// the P stages, laid out over that stage's D x T devices: at best split over
// tp (T ways) and, where ZeRO shards it, over dp (D ways); the batch inputs
// are split over dp. The most loaded device therefore holds at least
//   (1 / P) * sum_p bytes(p) / (T * Z(p)),
// Z(p) = D for the batch inputs, the Adam moments and master weights with
// ZeRO >= 1, and every parameter with ZeRO 3; 1 otherwise. Activations,
// gradients and replicated parameters (norms, biases) only add to it.
// docs/cost_model.md §4.5 has the derivation and the test that checks the
// bound against full simulations.

#pragma once

#include <cstdint>

#include "ir/function.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// The bound above for the sequential transformer-training step `seq`
/// (parameters named as models/transformer.h names them, classified by
/// ClassifyTransformerValue) distributed as `o`,
/// in bytes, rounded down. REQUIRES: `seq` is typed; o.dp, o.tp, o.pp >= 1.
int64_t ParameterMemoryLowerBound(const Function& seq, const ParallelOptions& o);

}  // namespace distir::search
