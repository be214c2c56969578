// The measured results of `distir run` in a results file: the group
// /measured, one row per configuration that was run (or skipped), beside the
// search's /configs (docs/results_format.md, "/measured (distir run)").
//
// Written by rank 0 only, atomically: the results file is copied to
// <path>.tmp, the group is (re)written there, and the copy is renamed over the
// original, so a crash leaves either the old file or the new one. Every other
// group of the file is left as it was (results_file.h owns them).

#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/host_info.h"
#include "support/status_or.h"

namespace distir::io {

/// One run configuration. The spread fields describe the timed iterations'
/// times (each the slowest rank's): the quartiles are linearly interpolated
/// (numpy's default), so time_q1_s <= iteration_time_s <= time_q3_s. All are 0
/// for a row that did not run.
struct MeasuredRow {
  int64_t config = 0;           ///< row index in /configs
  double iteration_time_s = 0;  ///< median over the timed iterations
  double throughput = 0;        ///< samples/s at the median
  int64_t iterations = 0;       ///< timed iterations
  int64_t planned_peak_bytes = 0;  ///< the largest planned arena over ranks
  std::string status;           ///< "ok", "skipped" or "error"
  std::string reason;           ///< why skipped or failed; "" when ok
  double time_min_s = 0, time_q1_s = 0, time_q3_s = 0, time_max_s = 0;
  /// Every timed iteration's time, in order: `iterations` values when ok (a
  /// file from before the spread was recorded: none), none otherwise.
  std::vector<double> iteration_times_s{};

  bool operator==(const MeasuredRow&) const = default;
};

struct Measurements {
  std::string backend;     ///< "cpu" or "cuda"
  int64_t ranks = 0;       ///< MPI ranks of the job
  std::string started_at;  ///< ISO 8601 UTC, e.g. "2025-01-31T12:00:00Z"
  /// The machine rank 0 ran on (empty in a file from before it was recorded).
  HostInfo host;
  /// Whether the rows' spread fields and iteration times are known. `distir
  /// run` sets it; /measured written before the spread was recorded reads as
  /// false, and the spread fields and iteration_times_s are then 0 and empty.
  /// When false, WriteMeasurements writes no spread columns.
  bool has_spread = false;
  std::vector<MeasuredRow> rows;

  bool operator==(const Measurements&) const = default;
};

/// Replaces /measured of the results file at `path` with `m` (atomically, see
/// above). REQUIRES of `m` (else InvalidArgument, nothing written): each row
/// holds `iterations` iteration times when has_spread, none otherwise.
/// Errors: NotFound when `path` does not exist, Internal for an HDF5
/// or file-system failure (naming the path); `path` is then unchanged and no
/// <path>.tmp is left behind.
Status WriteMeasurements(const std::string& path, const Measurements& m);

/// Reads /measured of the file at `path`: every field WriteMeasurements
/// writes, so that the result == m after WriteMeasurements(path, m). Errors: NotFound when the file
/// or the group does not exist ("<path> has no /measured group: run `distir run` first"),
/// InvalidArgument for a malformed group (datasets of unequal lengths or wrong
/// types, some spread columns without the others, iteration times that do not
/// add up to the iterations of the ok rows, an attribute that cannot be read),
/// naming the path.
StatusOr<Measurements> ReadMeasurements(const std::string& path);

}  // namespace distir::io
