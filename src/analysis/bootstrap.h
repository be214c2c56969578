// A bootstrap confidence interval for Spearman's rho (rank_correlation.h).
//
// With 10-30 configurations, rho moves a lot when one or two of them swap
// places, which on a noisy machine they do from run to run. The percentile
// bootstrap (Efron and Tibshirani 1993, ch. 13) says how much: draw n pairs with
// replacement from the n (simulated, measured) pairs, compute rho of the draw,
// repeat, and report the middle `confidence` of those rhos. A draw whose
// simulated or measured values are all equal has no rho and is left out
// (counted in `undefined`). The generator is std::mt19937_64 with a fixed seed and
// the indices are drawn by rejection (no std::uniform_int_distribution, whose
// algorithm the standard leaves open), so the interval is the same on every
// machine and every run.

#pragma once

#include <cstdint>
#include <vector>

#include "support/status_or.h"

namespace distir::analysis {

struct BootstrapOptions {
  int64_t resamples = 2000;  ///< draws, >= 1
  double confidence = 0.95;  ///< central coverage of the interval, in (0, 1)
  uint64_t seed = 1;
};

struct BootstrapInterval {
  double low = 0, high = 0;  ///< percentiles (1 - c)/2 and (1 + c)/2 of the defined rhos
  int64_t resamples = 0;     ///< draws made
  int64_t undefined = 0;     ///< draws left out because rho was undefined
};

/// The percentile-bootstrap interval of Spearman's rho of the pairs (x[i], y[i]).
/// Errors (InvalidArgument): sizes differ, fewer than 3 pairs, options out of
/// range, or no draw with a defined rho (then rho itself is undefined).
/// REQUIRES: no NaN.
StatusOr<BootstrapInterval> BootstrapSpearman(const std::vector<double>& x,
                                              const std::vector<double>& y,
                                              const BootstrapOptions& options);

}  // namespace distir::analysis
