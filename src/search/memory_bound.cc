#include "search/memory_bound.h"

#include <cmath>
#include <string_view>

#include "models/transformer.h"

namespace distir::search {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Optimizer state: what ZeRO-1 and -2 shard over dp (sharding/zero.h).
bool IsOptimizerState(std::string_view name) {
  namespace n = transformer_names;
  return EndsWith(name, n::kMasterSuffix) || EndsWith(name, n::kExpAvgSuffix) ||
         EndsWith(name, n::kExpAvgSqSuffix);
}

bool IsBatchInput(std::string_view name) {
  return name == transformer_names::kTokens || name == transformer_names::kLabels;
}

}  // namespace

int64_t ParameterMemoryLowerBound(const Function& seq, const ParallelOptions& o) {
  const double d = static_cast<double>(o.dp), t = static_cast<double>(o.tp);
  double per_stage = 0;  // over the T devices of a tensor-parallel group
  for (const auto& p : seq.params()) {
    if (!p->type().HasStaticShape()) continue;
    const std::string_view name = p->name();
    const bool over_dp =
        IsBatchInput(name) || o.zero_stage >= 3 || (o.zero_stage >= 1 && IsOptimizerState(name));
    per_stage += static_cast<double>(p->type().SizeInBytes()) / (t * (over_dp ? d : 1.0));
  }
  return static_cast<int64_t>(std::floor(per_stage / static_cast<double>(o.pp)));
}

}  // namespace distir::search
