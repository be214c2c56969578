// Pairwise agreement of a simulated and a measured ranking, with the
// measurement's noise taken into account.
//
// Rank statistics (rank_correlation.h) count every swap of two configurations
// against the simulator. When two configurations' measured times are within
// the run-to-run spread of each other, their measured order is a coin toss and
// a swap says nothing about the simulator. This looks at all n(n-1)/2 pairs of
// configurations: a pair is a *near-tie* when their measured intervals (the
// interquartile ranges of the repeated iterations, io/measurements.h) overlap,
// and *discordant* when the simulated and the measured orders are opposite.
// Discordant pairs that are not near-ties are the simulator's real mistakes.

#pragma once

#include <cstdint>
#include <vector>

#include "support/status_or.h"

namespace distir::analysis {

/// A closed interval [low, high] of one configuration's measured value.
struct Interval {
  double low = 0, high = 0;
};

struct PairAgreement {
  int64_t pairs = 0;           ///< n(n-1)/2
  int64_t near_ties = 0;       ///< pairs whose measured intervals overlap
  int64_t simulated_ties = 0;  ///< pairs with equal simulated values
  /// Pairs with equal measured values: many of them (a timer or scheduler that
  /// quantizes the iteration times) leave few orders to compare, and can make
  /// rho exactly 0 (docs/calibration.md §4.1).
  int64_t measured_ties = 0;
  int64_t discordant = 0;               ///< pairs ordered oppositely (ties excluded)
  int64_t discordant_beyond_noise = 0;  ///< discordant pairs that are not near-ties

  bool operator==(const PairAgreement&) const = default;
};

/// Compares every pair i < j of configurations: `simulated[i]` and `measured[i]`
/// are point values (larger is better or smaller is better alike: only the
/// order matters), `spread[i]` the interval around `measured[i]`.
/// Errors (InvalidArgument): sizes differ, or an interval with low > high.
StatusOr<PairAgreement> ComparePairs(const std::vector<double>& simulated,
                                     const std::vector<double>& measured,
                                     const std::vector<Interval>& spread);

}  // namespace distir::analysis
