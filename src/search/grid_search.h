// The MPI grid search: every rank evaluates a slice of the configurations,
// rank 0 gathers the results and ranks them.
//
// Slicing: configurations are sorted by estimated cost (largest first, ties
// by index) and each goes to the rank with the least estimated work so far
// (ties: lowest rank), so that ranks finish together although
// configurations differ in cost by 100x and more. Results do not depend on
// the slicing: each configuration is evaluated on its own, deterministically,
// so the datasets are identical whatever the number of ranks.

#pragma once

#include <mpi.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"

namespace distir::search {

/// Configuration indices per rank.
std::vector<std::vector<int64_t>> AssignSlices(const Experiment& e,
                                               const std::vector<Config>& configs, int ranks);

/// Row indices of the configurations that simulated and fit in memory, by
/// throughput (highest first), ties by iteration time then by index.
std::vector<int64_t> RankResults(const std::vector<ConfigResult>& results);

struct SearchOutcome {
  std::vector<Config> configs;
  std::vector<ConfigResult> results;  ///< by index; complete on rank 0 only
  std::vector<int64_t> ranking;       ///< rank 0 only
  int ranks = 1;
  double wall_time_s = 0;
};

/// Runs the search over `comm`. Progress lines (done/total, configurations per
/// second, ETA) go to `progress` on rank 0 when not null.
SearchOutcome RunGridSearch(const Experiment& e, MPI_Comm comm, std::ostream* progress);

}  // namespace distir::search
