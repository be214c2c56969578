// The search space's knobs under Megatron-LM's names (issue #17;
// docs/configs.md, `space`): the recomputation kind (--recompute-granularity),
// interleaved pipeline chunks (--num-layers-per-virtual-pipeline-stage) and
// the micro batch (--micro-batch-size), turned into DistIR's knobs per
// configuration.
//
// What a single value cannot say (the micro batch not dividing the batch,
// chunks not dividing the layers) depends on the configuration: these
// functions answer InvalidArgument with the reason, and the configuration is
// `invalid` with it, like the transform's own refusals (search/evaluator.h).

#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// "none", "full", "selective": the name of a RecomputeKind
/// (transforms/parallel_options.h) as space.recompute writes it.
std::string_view RecomputeKindName(RecomputeKind kind);

/// `none` / `full` / `selective`, and the truth values of YAML (true / yes /
/// on: full; false / no / off: none); nullopt otherwise.
std::optional<RecomputeKind> ParseRecomputeKind(std::string_view text);

/// K of Megatron's global batch = micro_batch x D x K: batch / (D
/// micro_batch). InvalidArgument naming the numbers when D micro_batch does
/// not fit in 64 bits or does not divide the batch.
StatusOr<int64_t> MicrobatchesOfMicroBatch(int64_t batch, int64_t dp, int64_t micro_batch);

/// The micro batch of a configuration given K: batch / (D K), or 0 when D K
/// does not divide the batch (or does not fit in 64 bits).
int64_t MicroBatchOf(int64_t batch, int64_t dp, int64_t microbatches);

/// v of --num-layers-per-virtual-pipeline-stage N for P stages of the
/// model's L layers: L / (P N), at least 2. InvalidArgument naming the
/// numbers when P N does not divide L, or when L / (P N) = 1 (Megatron runs
/// its interleaved code with one chunk, which is not plain 1F1B and is not
/// modelled, as `distir simulate --megatron-args` says).
/// REQUIRES: pp >= 2 (P = 1 runs v = 1, search/grid.h).
StatusOr<int64_t> VirtualStagesOfChunkLayers(int64_t layers, int64_t pp, int64_t chunk_layers);

}  // namespace distir::search
