// Plain-text tables for the terminal, and the units their numbers are shown in.
//
// TextTable lines up columns of text cells: each column as wide as its widest
// cell, two spaces between columns, numbers right-aligned. ByteUnit picks, per
// column, the binary unit (B, KiB, MiB, GiB, TiB) in which the column's largest
// value reads well. results_table.h builds the ranking tables of `distir
// search` and `report` on them, and `distir run` its table of measurements.

#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace distir::search {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  /// Adds a column at the right end. REQUIRES: no row has been added yet.
  void AddColumn(std::string header, Align align);

  /// Adds a row. REQUIRES: one cell per column, in the order of AddColumn.
  void AddRow(std::vector<std::string> cells);

  size_t num_columns() const { return headers_.size(); }
  size_t num_rows() const { return rows_.size(); }

  /// The header line and one line per row; no trailing spaces.
  void Print(std::ostream& os) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

/// A binary unit of bytes.
struct ByteUnit {
  const char* name;  ///< "B", "KiB", "MiB", "GiB" or "TiB"
  double bytes;      ///< 1, 1024, 1024^2, ...
};

/// The largest unit in which the largest of `values` is at least 1 (B when
/// every value is below 1 KiB, or there are none).
ByteUnit ChooseByteUnit(const std::vector<int64_t>& values);

/// `bytes` in `unit`: "512" in B, else two decimals ("1.50").
std::string FormatBytes(int64_t bytes, ByteUnit unit);

/// `value` with `decimals` digits after the point ("0.474").
std::string FormatFixed(double value, int decimals);

}  // namespace distir::search
