#include "calibrate/measurement_csv.h"

#include <charconv>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "support/status.h"

namespace distir::calibrate {
namespace {

constexpr char kHeader[] = "op,dtype,shape,ranks,flops,bytes,time_s";

struct Field {
  std::string text;
  int col = 1;  // 1-based column where the field starts
};

std::vector<Field> SplitFields(const std::string& line) {
  std::vector<Field> out;
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

StatusOr<double> ParseNumber(const Field& f, const char* name, const SourceLoc& line_loc) {
  SourceLoc loc = line_loc;
  loc.col = f.col;
  double v = 0;
  const char* end = f.text.data() + f.text.size();
  auto [ptr, ec] = std::from_chars(f.text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v) || v < 0) {
    return InvalidArgument(loc) << name << " must be a finite number >= 0, got '" << f.text << "'";
  }
  return v;
}

StatusOr<Measurement> ParseLine(const std::string& line, const SourceLoc& loc) {
  const std::vector<Field> f = SplitFields(line);
  if (f.size() != 7) {
    return InvalidArgument(loc) << "expected 7 fields (" << kHeader << "), got " << f.size();
  }
  Measurement m;
  m.op = f[0].text;
  m.dtype = f[1].text;
  m.shape = f[2].text;
  if (m.op.empty()) return InvalidArgument(loc) << "empty op";
  DISTIR_ASSIGN_OR_RETURN(double ranks, ParseNumber(f[3], "ranks", loc));
  if (ranks < 1 || ranks != std::floor(ranks) || ranks > 1e9) {
    SourceLoc at = loc;
    at.col = f[3].col;
    return InvalidArgument(at) << "ranks must be a whole number >= 1, got '" << f[3].text << "'";
  }
  m.ranks = static_cast<int>(ranks);
  DISTIR_ASSIGN_OR_RETURN(m.flops, ParseNumber(f[4], "flops", loc));
  DISTIR_ASSIGN_OR_RETURN(m.bytes, ParseNumber(f[5], "bytes", loc));
  DISTIR_ASSIGN_OR_RETURN(m.time_s, ParseNumber(f[6], "time_s", loc));
  if (m.time_s <= 0) {
    SourceLoc at = loc;
    at.col = f[6].col;
    return InvalidArgument(at) << "time_s must be > 0, got '" << f[6].text << "'";
  }
  return m;
}

}  // namespace

std::string MeasurementsCsv(const std::vector<Measurement>& ms) {
  std::ostringstream os;
  os << kHeader << "\n" << std::setprecision(9);
  for (const Measurement& m : ms) {
    os << m.op << "," << m.dtype << "," << m.shape << "," << m.ranks << "," << m.flops << ","
       << m.bytes << "," << m.time_s << "\n";
  }
  return os.str();
}

StatusOr<std::vector<Measurement>> ParseMeasurementsCsv(const std::string& text,
                                                        const std::string& path) {
  std::vector<Measurement> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const SourceLoc loc{path, number, 1, ""};
    if (number == 1) {
      if (line != kHeader) {
        return InvalidArgument(loc)
               << "expected the header '" << kHeader << "', got '" << line << "'";
      }
      continue;
    }
    if (line.empty()) continue;
    DISTIR_ASSIGN_OR_RETURN(Measurement m, ParseLine(line, loc));
    out.push_back(std::move(m));
  }
  if (number == 0) {
    return InvalidArgument(SourceLoc{path, 1, 1, ""})
           << "empty file: expected the header '" << kHeader << "'";
  }
  return out;
}

}  // namespace distir::calibrate
