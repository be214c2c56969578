// The statistics `distir validate` reports: how well simulated configurations
// agree with the same configurations measured on hardware.
//
// Inputs are plain pairs (no file formats here: the tool pairs /configs with
// /measured, io/validation_file.h stores the result). Throughput drives the rank
// statistics and the top-1 decision; iteration time drives MAPE, because a
// relative error of time is what a user budgets with.

#pragma once

#include <cstdint>
#include <vector>

#include "support/status_or.h"

namespace distir::analysis {

/// One configuration both simulated and measured.
struct ValidationPair {
  int64_t config = 0;  ///< row index in /configs
  double simulated_time_s = 0, measured_time_s = 0;
  double simulated_throughput = 0, measured_throughput = 0;
};

struct ValidationStats {
  int64_t n = 0;                      ///< pairs compared
  double spearman_rho = 0;            ///< simulated vs measured throughput
  double spearman_p = 1;              ///< two-sided p-value of rho (rank_correlation.h)
  double kendall_tau = 0;             ///< tau-b, simulated vs measured throughput
  double mape_iteration_time = 0;     ///< percent, simulated vs measured iteration time
  bool top1_match = false;            ///< the simulator's best (among these) is the measured best
  int64_t simulated_top1_config = 0;  ///< config of the highest simulated throughput
  int64_t measured_top1_config = 0;   ///< config of the highest measured throughput
};

/// Minimum pairs: Spearman's p-value needs n - 2 >= 1 degrees of freedom.
inline constexpr size_t kMinValidationPairs = 3;

/// Computes every statistic over `pairs`. Errors (InvalidArgument): fewer than
/// kMinValidationPairs pairs, a measured time of 0, or a sample whose throughputs
/// are all equal (no ranking to compare).
StatusOr<ValidationStats> ComputeValidationStats(const std::vector<ValidationPair>& pairs);

}  // namespace distir::analysis
