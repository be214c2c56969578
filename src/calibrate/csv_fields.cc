#include "calibrate/csv_fields.h"

#include <charconv>
#include <cmath>

namespace distir::calibrate {

std::vector<CsvField> SplitCsvFields(const std::string& line) {
  std::vector<CsvField> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(
        {line.substr(start, comma == std::string::npos ? std::string::npos : comma - start),
         static_cast<int>(start) + 1});
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

SourceLoc FieldLoc(const SourceLoc& line_loc, const CsvField& field) {
  SourceLoc loc = line_loc;
  loc.col = field.col;
  return loc;
}

StatusOr<double> ParseCsvNumber(const CsvField& field, const char* name,
                                const SourceLoc& line_loc) {
  double v = 0;
  const char* end = field.text.data() + field.text.size();
  auto [ptr, ec] = std::from_chars(field.text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v) || v < 0) {
    return InvalidArgument(FieldLoc(line_loc, field))
           << name << " must be a finite number >= 0, got '" << field.text << "'";
  }
  return v;
}

StatusOr<int64_t> ParseCsvCount(const CsvField& field, const char* name,
                                const SourceLoc& line_loc) {
  DISTIR_ASSIGN_OR_RETURN(double v, ParseCsvNumber(field, name, line_loc));
  // The bound keeps the cast exact and far above any count a benchmark writes.
  if (v < 1 || v != std::floor(v) || v > 1e9) {
    return InvalidArgument(FieldLoc(line_loc, field))
           << name << " must be a whole number >= 1, got '" << field.text << "'";
  }
  return static_cast<int64_t>(v);
}

}  // namespace distir::calibrate
