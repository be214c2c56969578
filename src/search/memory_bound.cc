#include "search/memory_bound.h"

#include <cmath>

#include "models/transformer_metrics.h"

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

}  // namespace distir::search
