#include "calibrate/measurement_csv.h"

#include <iomanip>
#include <sstream>

#include "calibrate/csv_fields.h"
#include "support/status.h"

namespace distir::calibrate {
namespace {

constexpr char kHeader[] = "op,dtype,shape,ranks,flops,bytes,time_s";

StatusOr<Measurement> ParseLine(const std::string& line, const SourceLoc& loc) {
  const std::vector<CsvField> f = SplitCsvFields(line);
  if (f.size() != 7) {
    return InvalidArgument(loc) << "expected 7 fields (" << kHeader << "), got " << f.size();
  }
  Measurement m;
  m.op = f[0].text;
  m.dtype = f[1].text;
  m.shape = f[2].text;
  if (m.op.empty()) return InvalidArgument(loc) << "empty op";
  DISTIR_ASSIGN_OR_RETURN(int64_t ranks, ParseCsvCount(f[3], "ranks", loc));
  m.ranks = static_cast<int>(ranks);
  DISTIR_ASSIGN_OR_RETURN(m.flops, ParseCsvNumber(f[4], "flops", loc));
  DISTIR_ASSIGN_OR_RETURN(m.bytes, ParseCsvNumber(f[5], "bytes", loc));
  DISTIR_ASSIGN_OR_RETURN(m.time_s, ParseCsvNumber(f[6], "time_s", loc));
  if (m.time_s <= 0) {
    return InvalidArgument(FieldLoc(loc, f[6])) << "time_s must be > 0, got '" << f[6].text << "'";
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
  DISTIR_RETURN_IF_ERROR(
      ForEachCsvRow(text, path, kHeader, [&](const std::string& line, const SourceLoc& loc) {
        DISTIR_ASSIGN_OR_RETURN(Measurement m, ParseLine(line, loc));
        out.push_back(std::move(m));
        return Status::Ok();
      }));
  return out;
}

}  // namespace distir::calibrate
