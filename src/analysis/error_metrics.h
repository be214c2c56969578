// Error metrics of a prediction against a measurement: the mean absolute
// percentage error (how far the simulated times are off) and top-1 agreement
// (whether the simulator picks the configuration that is really fastest).
// rank_correlation.h judges the whole ordering; these judge the numbers and the
// one decision a user acts on.

#pragma once

#include <cstddef>
#include <vector>

#include "support/status_or.h"

namespace distir::analysis {

/// MAPE in percent: 100/n * sum |predicted[i] - actual[i]| / |actual[i]|.
/// Errors (InvalidArgument): sizes differ, no pairs, or an actual value of 0
/// (its relative error is undefined), naming its index.
StatusOr<double> MeanAbsolutePercentageError(const std::vector<double>& predicted,
                                             const std::vector<double>& actual);

/// Which entry each sample ranks first (largest value), and whether they agree.
struct Top1Agreement {
  size_t predicted_best = 0;  ///< index of the largest predicted value (first of ties)
  size_t actual_best = 0;     ///< index of the largest actual value (first of ties)
  bool match = false;         ///< predicted_best == actual_best
};

/// Top-1 agreement of two paired samples where larger is better (throughput).
/// Errors (InvalidArgument): sizes differ or no pairs.
StatusOr<Top1Agreement> CompareTop1(const std::vector<double>& predicted,
                                    const std::vector<double>& actual);

}  // namespace distir::analysis
