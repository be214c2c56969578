// Quantiles of a sample and the five-number summary of repeated measurements.
//
// `distir run` times every configuration several times and keeps the spread
// of those times next to their median (io/measurements.h); `distir validate`
// resamples its statistics and reads percentiles of the resamples
// (bootstrap.h). Both use one definition of a quantile: linear interpolation
// between order statistics, numpy's default ("type 7" of Hyndman and Fan,
// 1996), whose 0.5-quantile is the usual median (the mean of the two middle
// values of an even sample, as backend::TimeExecutor computes it).

#pragma once

#include <vector>

namespace distir::analysis {

/// The q-quantile, q in [0, 1], of `sorted` (ascending):
/// h = (n - 1) q, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
/// REQUIRES: `sorted` is non-empty, ascending and free of NaN; 0 <= q <= 1.
double QuantileOfSorted(const std::vector<double>& sorted, double q);

/// Minimum, quartiles, median and maximum of a sample.
struct FiveNumbers {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;

  bool operator==(const FiveNumbers&) const = default;
};

/// The five-number summary of `values` (any order). All 0 for an empty sample.
/// REQUIRES: no NaN.
FiveNumbers SummarizeSample(std::vector<double> values);

}  // namespace distir::analysis
