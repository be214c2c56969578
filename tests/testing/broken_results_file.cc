#include "testing/broken_results_file.h"

#include <hdf5.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "io/hdf5_handle.h"
#include "io/measurements.h"
#include "io/results_file.h"
#include "io/validation_file.h"

namespace distir::testing {
namespace {

using io::Hdf5Handle;

constexpr std::array<std::pair<ResultsDefect, std::string_view>, 12> kNames = {{
    {ResultsDefect::kNone, "none"},
    {ResultsDefect::kColumn2d, "column-2d"},
    {ResultsDefect::kRanking2d, "ranking-2d"},
    {ResultsDefect::kHugeColumn, "huge-column"},
    {ResultsDefect::kStringColumn, "string-column"},
    {ResultsDefect::kIntForFloat, "int-for-float"},
    {ResultsDefect::kVersionArray, "version-array"},
    {ResultsDefect::kTextArray, "text-array"},
    {ResultsDefect::kMeasured2d, "measured-2d"},
    {ResultsDefect::kValidationArray, "validation-array"},
    {ResultsDefect::kRankedNan, "ranked-nan"},
    {ResultsDefect::kRankMismatch, "rank-mismatch"},
}};

io::ResultsFile ValidResults() {
  io::ResultsFile f;
  f.experiment_name = "broken";
  f.model = "mlp-tiny";
  f.hardware = "dgx2-v100";
  f.experiment_yaml = "name: broken\nmodel: mlp-tiny\n";
  f.hardware_yaml = "name: dgx2-v100\n";
  for (int64_t i = 0; i < 3; ++i) {
    io::ResultRow r;
    r.index = i;
    r.batch = 16;
    r.dp = i + 1;
    r.schedule = "1f1b";
    // Not the literal itself: GCC 12 at -O3 warns (-Wmaybe-uninitialized) that
    // assigning it may read r.status's own buffer.
    r.status = std::string("ok");
    r.iteration_time_s = 0.01 * static_cast<double>(i + 1);
    r.throughput = 16 / r.iteration_time_s;
    r.fits = i < 2;
    r.rank = i < 2 ? i + 1 : 0;
    f.rows.push_back(r);
  }
  f.ranking = {0, 1};
  return f;
}

io::Measurements ValidMeasurements() {
  io::Measurements m;
  m.backend = "cpu";
  m.ranks = 1;
  m.started_at = "2025-01-31T12:00:00Z";
  for (int64_t i = 0; i < 3; ++i) m.rows.push_back({i, 0.01, 1600, 3, 4096, "ok", ""});
  return m;
}

// Replaces the dataset `name` by one of `type` with extent `dims`, filled
// from `data` (nullptr: nothing written) under the creation properties `dcpl`.
Status Replace(hid_t file, const char* name, hid_t type, std::vector<hsize_t> dims,
               const void* data, hid_t dcpl = H5P_DEFAULT, const hsize_t* max_dims = nullptr) {
  if (H5Ldelete(file, name, H5P_DEFAULT) < 0) return Internal() << "H5Ldelete " << name;
  Hdf5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims),
                   H5Sclose);
  Hdf5Handle set(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl, H5P_DEFAULT),
                 H5Dclose);
  if (!set.ok()) return Internal() << "H5Dcreate2 " << name;
  if (data != nullptr && H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return Internal() << "H5Dwrite " << name;
  }
  return Status::Ok();
}

Status ReplaceAttr(hid_t file, const char* object, const char* name, hid_t type, hsize_t n,
                   const void* data) {
  if (H5Adelete_by_name(file, object, name, H5P_DEFAULT) < 0) {
    return Internal() << "H5Adelete_by_name " << name;
  }
  Hdf5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Hdf5Handle attr(H5Acreate_by_name(file, object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT),
                  H5Aclose);
  if (!attr.ok() || H5Awrite(attr.get(), type, data) < 0) return Internal() << "H5Awrite " << name;
  return Status::Ok();
}

Hdf5Handle VariableString() {
  Hdf5Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  return t;
}

// 2^40 rows of int64 that no chunk stores: 8 TiB declared in a file of a few KiB.
Status ReplaceWithHugeColumn(hid_t file) {
  const hsize_t rows = hsize_t{1} << 40, max_rows = H5S_UNLIMITED, chunk = 1024;
  Hdf5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (H5Pset_chunk(dcpl.get(), 1, &chunk) < 0) return Internal() << "H5Pset_chunk";
  return Replace(file, "/configs/dp", H5T_NATIVE_INT64, {rows}, nullptr, dcpl.get(), &max_rows);
}

Status Apply(hid_t file, ResultsDefect defect) {
  const int64_t pairs[6] = {1, 1, 2, 2, 3, 3};
  const char* words[3] = {"one", "two", "three"};
  switch (defect) {
    case ResultsDefect::kNone:
      return Status::Ok();
    case ResultsDefect::kColumn2d:
      return Replace(file, "/configs/dp", H5T_NATIVE_INT64, {3, 2}, pairs);
    case ResultsDefect::kRanking2d:
      return Replace(file, "/ranking", H5T_NATIVE_INT64, {2, 2}, pairs);
    case ResultsDefect::kHugeColumn:
      return ReplaceWithHugeColumn(file);
    case ResultsDefect::kStringColumn:
      return Replace(file, "/configs/dp", VariableString().get(), {3}, words);
    case ResultsDefect::kIntForFloat:
      return Replace(file, "/configs/throughput", H5T_NATIVE_INT64, {3}, pairs);
    case ResultsDefect::kVersionArray:
      return ReplaceAttr(file, "/", "format_version", H5T_NATIVE_INT64, 2, pairs);
    case ResultsDefect::kTextArray:
      return Replace(file, "/experiment/yaml", VariableString().get(), {3}, words);
    case ResultsDefect::kMeasured2d:
      return Replace(file, "/measured/config", H5T_NATIVE_INT64, {3, 2}, pairs);
    case ResultsDefect::kValidationArray: {
      const double rho[4] = {0.5, 0.5, 0.5, 0.5};
      return ReplaceAttr(file, "/validation", "spearman_rho", H5T_NATIVE_DOUBLE, 4, rho);
    }
    case ResultsDefect::kRankedNan: {
      const double throughput[3] = {1600, std::nan(""), 16 / 0.03};
      return Replace(file, "/configs/throughput", H5T_NATIVE_DOUBLE, {3}, throughput);
    }
    case ResultsDefect::kRankMismatch: {
      const int64_t rank[3] = {1, 2, 3};
      return Replace(file, "/configs/rank", H5T_NATIVE_INT64, {3}, rank);
    }
  }
  return Internal() << "unknown defect";
}

}  // namespace

std::string_view ResultsDefectName(ResultsDefect defect) {
  for (const auto& [d, name] : kNames) {
    if (d == defect) return name;
  }
  return "?";
}

std::optional<ResultsDefect> ParseResultsDefect(std::string_view name) {
  for (const auto& [d, n] : kNames) {
    if (n == name) return d;
  }
  return std::nullopt;
}

std::vector<ResultsDefect> AllResultsDefects() {
  std::vector<ResultsDefect> all;
  for (const auto& entry : kNames) all.push_back(entry.first);
  return all;
}

Status WriteBrokenResultsFile(const std::string& path, ResultsDefect defect) {
  DISTIR_RETURN_IF_ERROR(io::WriteResultsFile(path, ValidResults()));
  DISTIR_RETURN_IF_ERROR(io::WriteMeasurements(path, ValidMeasurements()));
  io::ValidationRecord v;
  v.n = 3;
  DISTIR_RETURN_IF_ERROR(io::WriteValidation(path, v));
  io::QuietHdf5 quiet;
  Hdf5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return Internal() << "cannot open '" << path << "' for writing";
  return Apply(file.get(), defect);
}

}  // namespace distir::testing
