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

/// The attributes of /validation.
struct ValidationRecord {
  int64_t n = 0;                   ///< configurations compared
  double spearman_rho = 0;         ///< simulated vs measured throughput
  double spearman_p = 1;           ///< two-sided p-value of rho
  double kendall_tau = 0;          ///< tau-b, simulated vs measured throughput
  double mape_iteration_time = 0;  ///< percent, simulated vs measured iteration time
  bool top1_match = false;         ///< the simulated best (among the measured) is the measured best
  int64_t simulated_top1_config = 0;  ///< its row in /configs
  int64_t measured_top1_config = 0;   ///< row in /configs of the measured best
};

/// Stores `record` as /validation in the results file at `path`, atomically.
/// Errors: the file cannot be opened as HDF5 (NotFound), or copying, writing or
/// renaming fails (Internal); in every case `path` is unchanged and no
/// `<path>.tmp` is left.
Status WriteValidation(const std::string& path, const ValidationRecord& record);

/// Reads /validation back. NotFound when the file has no /validation group (run
/// `distir validate` first), InvalidArgument when an attribute is missing.
StatusOr<ValidationRecord> ReadValidation(const std::string& path);

}  // namespace distir::io
