#include "search/throughput_bound.h"

#include <algorithm>

namespace distir::search {

double ThroughputUpperBound(double work_floor_s, int64_t batch, const ParallelOptions& o) {
  if (!(work_floor_s > 0)) return 0;
  const double devices =
      static_cast<double>(o.dp) * static_cast<double>(o.tp) * static_cast<double>(o.pp);
  return static_cast<double>(batch) * devices / work_floor_s;
}

namespace {

// Simulated nothing that says it cannot be the best.
bool Open(ConfigStatus s) {
  return s == ConfigStatus::kSkipped || s == ConfigStatus::kTooLarge || s == ConfigStatus::kError;
}

}  // namespace

OptimumGap GapOf(const std::vector<ConfigResult>& results, const std::vector<double>& bounds,
                 const std::vector<int64_t>& ranking) {
  OptimumGap g;
  bool unbounded = false;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!Open(results[i].status)) continue;
    ++g.open;
    unbounded = unbounded || !(bounds[i] > 0);
    g.open_bound = std::max(g.open_bound, bounds[i]);
  }
  if (ranking.empty()) return g;
  g.best = ranking.front();
  const double best = results[static_cast<size_t>(g.best)].throughput;
  if (!unbounded && best > 0) g.gap = std::max(0.0, g.open_bound / best - 1);
  return g;
}

}  // namespace distir::search
