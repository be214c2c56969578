#include "search/memory_bound.h"

#include <algorithm>
#include <cmath>

#include "models/transformer_metrics.h"
#include "transforms/interleaved_schedule.h"

namespace distir::search {

int64_t MemoryLowerBound(const Function& seq, const ParallelOptions& o) {
  const double d = static_cast<double>(o.dp), t = static_cast<double>(o.tp);
  double per_stage = 0;  // over the T devices of a tensor-parallel group
  for (const auto& p : seq.params()) {
    if (!p->type().HasStaticShape()) continue;
    const auto bytes = static_cast<double>(p->type().SizeInBytes());
    // The batch inputs are split over dp; ZeRO-1 and -2 shard the optimizer
    // state over it (sharding/zero.h), ZeRO-3 everything.
    const TransformerValueRole role = ClassifyTransformerValue(*p);
    const bool over_dp = role == TransformerValueRole::kInput || o.zero_stage >= 3 ||
                         (o.zero_stage >= 1 && role == TransformerValueRole::kOptimizerState);
    per_stage += bytes / (t * (over_dp ? d : 1.0));
    // A weight's gradient, live at the first update op: at least the
    // weight's bytes, reduce-scattered over dp with ZeRO-2 and -3.
    if (role == TransformerValueRole::kWeight)
      per_stage += bytes / (t * (o.zero_stage >= 2 ? d : 1.0));
  }
  return static_cast<int64_t>(std::floor(per_stage / static_cast<double>(o.pp)));
}

namespace {

// How many forward tasks rank r runs before its first backward task.
int64_t ForwardsBeforeBackward(const ParallelOptions& o, int64_t r) {
  if (o.schedule != PipelineSchedule::k1F1B) return o.microbatches * o.virtual_stages;  // GPipe
  int64_t forwards = 0;
  for (const PipelineTask& t :
       InterleavedRankOrder(o.pp, o.virtual_stages, o.microbatches, r, /*training=*/true)) {
    if (t.backward) break;
    ++forwards;
  }
  return forwards;
}

}  // namespace

int64_t ActivationLowerBound(const LayerFootprint& f, const ParallelOptions& o) {
  const int64_t v = std::max<int64_t>(o.virtual_stages, 1);
  const int64_t chunks = o.pp * v;
  if (f.layers < chunks || (v > 1 && f.layers % chunks != 0) || f.batch <= 0 ||
      o.microbatches < 1 || f.batch % (o.dp * o.microbatches) != 0 ||
      (v > 1 && !CheckInterleaving(o.pp, v, o.microbatches).ok()) ||
      (v > 1 && o.schedule != PipelineSchedule::k1F1B))
    return 0;
  const double d = static_cast<double>(o.dp), t = static_cast<double>(o.tp);
  const auto n = static_cast<double>(f.layers / chunks);
  const double params = f.weights / (t * (o.zero_stage >= 3 ? d : 1.0)) +
                        f.optimizer_state / (t * (o.zero_stage >= 1 ? d : 1.0));
  const double saved = o.recompute == RecomputeKind::kNone        ? f.saved
                       : o.recompute == RecomputeKind::kSelective ? f.saved_selective
                                                                  : 0.0;
  const double micro = static_cast<double>(f.batch / (o.dp * o.microbatches));
  const double per_forward = n * saved * micro / (static_cast<double>(f.batch) * t);
  // Rank 0 runs the most warm-up forwards (W falls with r): its bound is the largest.
  const int64_t forwards = ForwardsBeforeBackward(o, 0);
  const double bound =
      static_cast<double>(v) * n * params + static_cast<double>(forwards) * per_forward;
  return static_cast<int64_t>(std::floor(bound));
}

}  // namespace distir::search
