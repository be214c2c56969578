// The raw timings of `distir calibrate` as CSV, one Measurement a line under the
// header `op,dtype,shape,ranks,flops,bytes,time_s`: written by `--measurements`
// and read back by `--refit`, so that a profile can be fitted again (another
// base profile, a fixed fit) from timings taken on a machine no longer at hand.

#pragma once

#include <string>
#include <vector>

#include "calibrate/measurement.h"
#include "support/status_or.h"

namespace distir::calibrate {

/// The CSV text of `ms` (numbers with 9 significant digits).
std::string MeasurementsCsv(const std::vector<Measurement>& ms);

/// Parses what MeasurementsCsv writes; `path` names the file in errors.
/// Errors (InvalidArgument at path:line:col): a header other than the one
/// above, a line without 7 fields, an empty op, a rank count below 1, or a
/// number that does not parse, is negative or not finite (a time must be > 0).
StatusOr<std::vector<Measurement>> ParseMeasurementsCsv(const std::string& text,
                                                        const std::string& path);

}  // namespace distir::calibrate
