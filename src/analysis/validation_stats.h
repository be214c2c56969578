// The statistics `distir validate` reports: how well simulated configurations
// agree with the same configurations measured on hardware.
//
// Inputs are plain pairs (no file formats here: the tool pairs /configs with
// /measured, io/validation_file.h stores the result). Throughput drives the rank
// statistics and the top-1 decision; iteration time drives MAPE, because a
// relative error of time is what a user budgets with. The rank statistics come
// with what makes them trustworthy on a noisy machine: a bootstrap interval for
// rho (bootstrap.h) and the pairs that are within the measurement's noise
// (pair_agreement.h). When every simulated (or every measured) throughput is
// the same, there is no ranking to correlate: rho, its p-value and tau are then
// *undefined*, NaN with a reason, never a number such as 0.

#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/bootstrap.h"
#include "analysis/pair_agreement.h"
#include "support/status_or.h"

namespace distir::analysis {

/// One configuration both simulated and measured.
struct ValidationPair {
  int64_t config = 0;  ///< row index in /configs
  double simulated_time_s = 0, measured_time_s = 0;
  double simulated_throughput = 0, measured_throughput = 0;
  /// The measured throughput's spread (batch / time_q3 to batch / time_q1);
  /// nullopt when the run recorded none.
  std::optional<Interval> measured_throughput_spread{};
};

struct ValidationStats {
  static constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

  int64_t n = 0;  ///< pairs compared
  /// Why rho, its p-value, its interval and tau are undefined (NaN), e.g.
  /// "all 25 simulated throughputs are equal"; "" when they are defined.
  std::string rank_undefined_reason;
  double spearman_rho = kUndefined;  ///< simulated vs measured throughput
  double spearman_p = kUndefined;    ///< two-sided p-value of rho (rank_correlation.h)
  double kendall_tau = kUndefined;   ///< tau-b, simulated vs measured throughput
  /// Percentile-bootstrap interval of rho (NaN when rho is undefined).
  double rho_ci_low = kUndefined, rho_ci_high = kUndefined;
  BootstrapOptions bootstrap;       ///< how the interval was drawn
  int64_t bootstrap_undefined = 0;  ///< resamples without a rho, left out
  /// Pair counts (pair_agreement.h); nullopt when some pair has no measured spread.
  std::optional<PairAgreement> agreement;
  double mape_iteration_time = 0;     ///< percent, simulated vs measured iteration time
  bool top1_match = false;            ///< the simulator's best (among these) is the measured best
  int64_t simulated_top1_config = 0;  ///< config of the highest simulated throughput (first tie)
  /// Configurations sharing the highest simulated throughput (1: a clear best;
  /// more: the simulator cannot tell them apart, and top-1 is one of them).
  int64_t simulated_top1_ties = 1;
  int64_t measured_top1_config = 0;  ///< config of the highest measured throughput (first tie)
};

/// Minimum pairs: Spearman's p-value needs n - 2 >= 1 degrees of freedom.
inline constexpr size_t kMinValidationPairs = 3;

/// Computes every statistic over `pairs`, the interval with `bootstrap`.
/// Errors (InvalidArgument): fewer than kMinValidationPairs pairs, a measured
/// time of 0, or bootstrap options out of range. A sample whose throughputs are
/// all equal is no error: the rank statistics are undefined (see above) and
/// the rest is computed.
StatusOr<ValidationStats> ComputeValidationStats(const std::vector<ValidationPair>& pairs,
                                                 const BootstrapOptions& bootstrap = {});

}  // namespace distir::analysis
