#include "search/text_table.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "support/check.h"

namespace distir::search {

void TextTable::AddColumn(std::string header, Align align) {
  DISTIR_CHECK(rows_.empty()) << "columns are added before the rows";
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  DISTIR_CHECK(cells.size() == headers_.size()) << "a row needs one cell per column";
  rows_.push_back(std::move(cells));
}

void TextTable::Print(std::ostream& os) const {
  std::vector<size_t> widths;
  for (size_t c = 0; c < headers_.size(); ++c) {
    size_t w = headers_[c].size();
    for (const auto& row : rows_) w = std::max(w, row[c].size());
    widths.push_back(w);
  }
  auto print_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(widths[c] - cells[c].size(), ' ');
      if (c > 0) line += "  ";
      line += aligns_[c] == Align::kRight ? pad + cells[c] : cells[c] + pad;
    }
    // A left-aligned last column would leave padding at the end of the line.
    line.erase(line.find_last_not_of(' ') + 1);
    os << line << "\n";
  };
  print_line(headers_);
  for (const auto& row : rows_) print_line(row);
}

ByteUnit ChooseByteUnit(const std::vector<int64_t>& values) {
  static constexpr ByteUnit kUnits[] = {{"B", 1.0},
                                        {"KiB", 1024.0},
                                        {"MiB", 1024.0 * 1024},
                                        {"GiB", 1024.0 * 1024 * 1024},
                                        {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  const int64_t largest = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  ByteUnit unit = kUnits[0];
  for (const ByteUnit& u : kUnits) {
    if (static_cast<double>(largest) >= u.bytes) unit = u;
  }
  return unit;
}

std::string FormatBytes(int64_t bytes, ByteUnit unit) {
  if (unit.bytes == 1.0) return std::to_string(bytes);
  return FormatFixed(static_cast<double>(bytes) / unit.bytes, 2);
}

std::string FormatFixed(double value, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << value;
  return os.str();
}

}  // namespace distir::search
