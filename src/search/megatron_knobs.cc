#include "search/megatron_knobs.h"

#include "support/checked_math.h"

namespace distir::search {

std::string_view RecomputeKindName(RecomputeKind kind) {
  switch (kind) {
    case RecomputeKind::kNone:
      return "none";
    case RecomputeKind::kFull:
      return "full";
    case RecomputeKind::kSelective:
      return "selective";
  }
  return "?";
}

std::optional<RecomputeKind> ParseRecomputeKind(std::string_view text) {
  // The truth values keep the experiments written before the kinds working.
  if (text == "none" || text == "false" || text == "no" || text == "off")
    return RecomputeKind::kNone;
  if (text == "full" || text == "true" || text == "yes" || text == "on")
    return RecomputeKind::kFull;
  if (text == "selective") return RecomputeKind::kSelective;
  return std::nullopt;
}

StatusOr<int64_t> MicrobatchesOfMicroBatch(int64_t batch, int64_t dp, int64_t micro_batch) {
  const std::optional<int64_t> step = CheckedMul(dp, micro_batch);
  if (!step || batch % *step != 0) {
    return InvalidArgument() << "micro_batch " << micro_batch << " x D " << dp
                             << " does not divide the batch " << batch
                             << " (Megatron's global batch = micro batch x D x K)";
  }
  return batch / *step;
}

int64_t MicroBatchOf(int64_t batch, int64_t dp, int64_t microbatches) {
  const std::optional<int64_t> pieces = CheckedMul(dp, microbatches);
  if (!pieces || *pieces <= 0 || batch % *pieces != 0) return 0;
  return batch / *pieces;
}

StatusOr<int64_t> VirtualStagesOfChunkLayers(int64_t layers, int64_t pp, int64_t chunk_layers) {
  const std::optional<int64_t> per_round = CheckedMul(pp, chunk_layers);
  if (!per_round || layers < 1 || layers % *per_round != 0) {
    return InvalidArgument() << "num_layers_per_virtual_pipeline_stage " << chunk_layers << ": the "
                             << layers << " layers do not divide into P = " << pp
                             << " stages of chunks of " << chunk_layers << " layers";
  }
  const int64_t v = layers / *per_round;
  if (v == 1) {
    return InvalidArgument() << "num_layers_per_virtual_pipeline_stage " << chunk_layers
                             << " gives one model chunk per stage (L / P = " << layers / pp
                             << "): Megatron's interleaved schedule with one chunk is not "
                                "modelled; give space.virtual_stages: 1 for plain 1F1B";
  }
  return v;
}

}  // namespace distir::search
