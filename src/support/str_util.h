// Small string helpers shared by the printers, parsers and loaders.

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace distir {

/// Joins the elements of `parts` with `sep`.
std::string Join(const std::vector<std::string>& parts, std::string_view sep);

/// Joins integers with `sep`, e.g. JoinInts({8, 16}, "x") == "8x16".
std::string JoinInts(const std::vector<int64_t>& values, std::string_view sep);

/// Shortest decimal text that parses back to exactly `value` (round trip), always
/// with a '.', an 'e', "inf" or "nan" so that it reads as a float, e.g. "1.0", "2.5e-05".
std::string FormatDouble(double value);

/// Quotes `text` with '"' and escapes '"', '\\', newlines and tabs.
std::string QuoteString(std::string_view text);

/// True when `text` starts with `prefix`.
bool StartsWith(std::string_view text, std::string_view prefix);

/// Reads a whole file; false when it cannot be opened or read.
bool ReadFileToString(const std::string& path, std::string* contents);

}  // namespace distir
