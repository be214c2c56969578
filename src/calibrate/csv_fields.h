// The fields of one line of the comma-separated files `distir calibrate` reads:
// its own raw timings (measurement_csv.h) and the kernel timings of
// scripts/measure_kernels_torch.py (attention_fit.h).
//
// Each field keeps the column it starts at, so that an error points into the
// line (`file:line:col`). There is no quoting: neither writer puts a comma, a
// quote or a newline inside a field.

#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/status.h"
#include "support/status_or.h"

namespace distir::calibrate {

/// One field of a line and where it starts.
struct CsvField {
  std::string text;
  int col = 1;  ///< 1-based column of the field's first character
};

/// The fields of `line` (without its line end), split at every comma: n commas
/// give n + 1 fields, an empty line one empty field.
std::vector<CsvField> SplitCsvFields(const std::string& line);

/// `line_loc` (a file and line) at the column of `field`.
SourceLoc FieldLoc(const SourceLoc& line_loc, const CsvField& field);

/// The number in `field` (what std::from_chars reads, the whole field).
/// Errors (InvalidArgument at the field): "<name> must be a finite number >= 0,
/// got '<text>'" for text that is not a number, a negative or a non-finite one.
StatusOr<double> ParseCsvNumber(const CsvField& field, const char* name, const SourceLoc& line_loc);

/// The whole number in `field`, in [1, 1e9] (counts: ranks, heads, tokens).
/// Errors (InvalidArgument at the field): those of ParseCsvNumber, then
/// "<name> must be a whole number >= 1, got '<text>'".
StatusOr<int64_t> ParseCsvCount(const CsvField& field, const char* name, const SourceLoc& line_loc);

/// Calls `row(line, loc)` for each non-empty line of `text` after its header
/// (line ends \n or \r\n; `loc` is the line at column 1 of `path`) and stops
/// at its first error. Errors (InvalidArgument at path:1:1): an empty text
/// ("empty file: expected the header '<header>'"), a first line other than
/// `header`; then those of `row`.
Status ForEachCsvRow(const std::string& text, const std::string& path, const std::string& header,
                     const std::function<Status(const std::string&, const SourceLoc&)>& row);

}  // namespace distir::calibrate
