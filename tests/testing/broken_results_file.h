// Results files with one defect each, for the tests of the HDF5 readers
// (issue 20): a small valid file written by io::WriteResultsFile (three
// configurations, with /measured and /validation), in which one dataset or
// attribute is then replaced, as a hand edit or h5py would, by one of another
// rank, extent or type. tests/unit/io uses it directly; lit tests through the
// `distir-break-results DEFECT FILE` tool built from break_results_main.cc.

#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace distir::testing {

enum class ResultsDefect {
  kNone,             ///< the valid file
  kColumn2d,         ///< /configs/dp is 3 x 2 (h5py: np.stack([v, v], axis=1))
  kRanking2d,        ///< /ranking is 2 x 2 (h5py: np.stack([v, v]))
  kHugeColumn,       ///< /configs/dp declares 2^40 rows (chunked, unlimited) and stores none
  kStringColumn,     ///< /configs/dp holds strings
  kIntForFloat,      ///< /configs/throughput holds int64
  kVersionArray,     ///< the root attribute format_version is int64[2]
  kTextArray,        ///< /experiment/yaml is a 1-D array of 3 strings, not a scalar
  kMeasured2d,       ///< /measured/config is 3 x 2
  kValidationArray,  ///< /validation's attribute spearman_rho is float64[4]
  kRankedNan,        ///< /configs/throughput of ranked row 1 is NaN (fuzz campaign)
  kRankMismatch,     ///< /configs/rank says row 2 is ranked 3; /ranking leaves it out
};

/// The defect's name on the command line, e.g. "column-2d".
std::string_view ResultsDefectName(ResultsDefect defect);
/// The defect named `name`; nullopt for an unknown name.
std::optional<ResultsDefect> ParseResultsDefect(std::string_view name);
/// Every defect, kNone first.
std::vector<ResultsDefect> AllResultsDefects();

/// Writes the valid file to `path`, then applies `defect`. Errors name the HDF5 call that failed.
Status WriteBrokenResultsFile(const std::string& path, ResultsDefect defect);

}  // namespace distir::testing
