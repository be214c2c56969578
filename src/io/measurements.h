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

#include "support/status_or.h"

namespace distir::io {

/// One run configuration.
struct MeasuredRow {
  int64_t config = 0;           ///< row index in /configs
  double iteration_time_s = 0;  ///< median over the timed iterations
  double throughput = 0;        ///< samples/s at the median
  int64_t iterations = 0;       ///< timed iterations
  int64_t planned_peak_bytes = 0;  ///< the largest planned arena over ranks
  std::string status;           ///< "ok", "skipped" or "error"
  std::string reason;           ///< why skipped or failed; "" when ok
};

struct Measurements {
  std::string backend;     ///< "cpu" or "cuda"
  int64_t ranks = 0;       ///< MPI ranks of the job
  std::string started_at;  ///< ISO 8601 UTC, e.g. "2025-01-31T12:00:00Z"
  std::vector<MeasuredRow> rows;
};

/// Replaces /measured of the results file at `path` with `m` (atomically, see
/// above). Errors: NotFound when `path` does not exist, Internal for an HDF5
/// or file-system failure (naming the path); `path` is then unchanged and no
/// <path>.tmp is left behind.
Status WriteMeasurements(const std::string& path, const Measurements& m);

/// Reads /measured of the file at `path`. Errors: NotFound when the file or
/// the group does not exist ("<path> has no /measured group: run `distir
/// run` first"), InvalidArgument for a malformed group (datasets of unequal
/// lengths or wrong types), naming the path.
StatusOr<Measurements> ReadMeasurements(const std::string& path);

}  // namespace distir::io
