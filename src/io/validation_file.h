// The /validation group of results.h5: how well the simulator's predictions agree
// with the configurations `distir run` measured (layout: docs/results_format.md,
// "Validation").
//
// `distir validate` computes the statistics (analysis/validation_stats.h) and
// stores them here as attributes of one group, replacing any earlier /validation.
// The update is atomic like every write of a results file: the file is copied to
// `<path>.tmp`, the copy is changed and renamed over `path`, so a killed run leaves
// the previous file intact. Everything else in the file is left as it was.

#pragma once

#include <cstdint>
#include <string>

#include "support/status_or.h"

namespace distir::io {

/// The attributes of /validation (docs/results_format.md, "Validation").
struct ValidationRecord {
  int64_t n = 0;                   ///< configurations compared
  /// Why the rank statistics are undefined (they are then NaN); "" when defined.
  std::string rank_undefined_reason;
  double spearman_rho = 0;         ///< simulated vs measured throughput
  double spearman_p = 1;           ///< two-sided p-value of rho
  double kendall_tau = 0;          ///< tau-b, simulated vs measured throughput
  double rho_ci_low = 0, rho_ci_high = 0;  ///< bootstrap interval of rho
  double rho_ci_confidence = 0.95;         ///< its coverage
  int64_t bootstrap_resamples = 0;         ///< resamples drawn
  int64_t bootstrap_seed = 0;              ///< seed of the draws (a uint64 stored bit for bit)
  int64_t bootstrap_undefined = 0;         ///< resamples without a rho, left out
  /// Pair counts (analysis/pair_agreement.h); all -1 when the measurements
  /// record no spread.
  int64_t pairs = -1, near_tie_pairs = -1, simulated_tie_pairs = -1, measured_tie_pairs = -1,
          discordant_pairs = -1, discordant_beyond_noise = -1;
  double mape_iteration_time = 0;  ///< percent, simulated vs measured iteration time
  bool top1_match = false;         ///< the simulated best (among the measured) is the measured best
  int64_t simulated_top1_config = 0;  ///< its row in /configs
  int64_t measured_top1_config = 0;   ///< row in /configs of the measured best
  /// Where the profile was calibrated when that differs from (or is not known
  /// to be) the machine the runs were measured on; "" when they are the same.
  std::string calibration_warning;

  /// Field-wise (NaN compares unequal, as always).
  bool operator==(const ValidationRecord&) const = default;
};

/// Stores `record` as /validation in the results file at `path`, atomically.
/// Errors: the file cannot be opened as HDF5 (NotFound), or copying, writing or
/// renaming fails (Internal); in every case `path` is unchanged and no
/// `<path>.tmp` is left.
Status WriteValidation(const std::string& path, const ValidationRecord& record);

/// Reads /validation back, every attribute WriteValidation writes. NotFound
/// when the file has no /validation group (run `distir validate` first),
/// InvalidArgument when an attribute is missing or cannot be read.
StatusOr<ValidationRecord> ReadValidation(const std::string& path);

}  // namespace distir::io
