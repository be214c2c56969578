#include "calibrate/csv_fields.h"

#include <charconv>
#include <cmath>
#include <sstream>

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

Status ForEachCsvRow(const std::string& text, const std::string& path, const std::string& header,
                     const std::function<Status(const std::string&, const SourceLoc&)>& row) {
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const SourceLoc loc{path, number, 1, ""};
    if (number == 1 && line != header) {
      return InvalidArgument(loc) << "expected the header '" << header << "', got '" << line << "'";
    }
    if (number == 1 || line.empty()) continue;
    DISTIR_RETURN_IF_ERROR(row(line, loc));
  }
  if (number == 0) {
    return InvalidArgument(SourceLoc{path, 1, 1, ""})
           << "empty file: expected the header '" << header << "'";
  }
  return Status::Ok();
}

}  // namespace distir::calibrate
