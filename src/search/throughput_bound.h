// An upper bound of a configuration's throughput that needs no program, and
// the gap it certifies between the best configuration a search found and
// the best of the whole space (issue #18, docs/cost_model.md §3.4).
//
// A device runs its compute ops one after another (one stream, or the
// compute stream of a profile with overlap), so the iteration time is at
// least the compute time of the busiest device, hence at least the average
// over the N = D x T x P devices of their compute time, hence at least
// W / N, where W is sim::WorkFloorS of the sequential step: the floor of the
// matrix ops' and the split-invariant streaming kernels' time, which no
// distribution lowers. The throughput, batch / time, is then at most
// batch x N / W.

#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "search/evaluator.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// batch x D x T x P / work_floor_s, in samples per second; 0 (no bound)
/// when the floor is not positive.
double ThroughputUpperBound(double work_floor_s, int64_t batch, const ParallelOptions& o);

/// How far the best configuration found can be from the best of the space.
struct OptimumGap {
  int64_t best = -1;  ///< the index of the best result; -1: none fits
  /// The largest throughput bound among the configurations that may beat it
  /// but were not simulated (status skipped, too-large or error); 0: none.
  double open_bound = 0;
  int64_t open = 0;  ///< how many such configurations
  /// max(0, open_bound / best throughput - 1): the optimum is at most this
  /// fraction above the best found; nullopt when not known (no result fits,
  /// or an open configuration has no bound).
  std::optional<double> gap;
};

/// The gap of `results` (by index) with `bounds` (ThroughputUpperBound per
/// index, 0 for none) and `ranking` (RankResults). Configurations that are
/// invalid, pruned (they cannot fit), or simulated do not count as open.
/// REQUIRES: bounds.size() == results.size().
OptimumGap GapOf(const std::vector<ConfigResult>& results, const std::vector<double>& bounds,
                 const std::vector<int64_t>& ranking);

}  // namespace distir::search
