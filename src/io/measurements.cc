// /measured in a results file (see measurements.h), with the HDF5 C API.
// HDF5 errors are checked per call and turned into a Status; the library's
// own error printing is silenced while we work, since a missing group is an
// answer here, not a failure.

#include "io/measurements.h"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "io/hdf5_handle.h"
#include "io/hdf5_reader.h"

namespace distir::io {
namespace {

constexpr const char* kMeasuredGroup = "/measured";

using Handle = Hdf5Handle;

bool WriteArray(hid_t g, const char* name, hid_t type, const void* data, hsize_t n) {
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle set(H5Dcreate2(g, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose);
  if (!set.ok()) return false;
  return n == 0 || H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
}

template <typename T, typename F>
bool WriteColumn(hid_t g, const char* name, hid_t type, const std::vector<MeasuredRow>& rows,
                 F get) {
  std::vector<T> col;
  for (const MeasuredRow& r : rows) col.push_back(get(r));
  return WriteArray(g, name, type, col.data(), col.size());
}

bool WriteStrings(hid_t g, const char* name, const std::vector<MeasuredRow>& rows,
                  const std::string MeasuredRow::*field) {
  std::vector<const char*> ptrs;
  for (const MeasuredRow& r : rows) ptrs.push_back((r.*field).c_str());
  Handle type = Utf8StringType();
  return WriteArray(g, name, type.get(), ptrs.data(), ptrs.size());
}

bool WriteScalarAttr(hid_t g, const char* name, hid_t type, const void* value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(g, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return a.ok() && H5Awrite(a.get(), type, value) >= 0;
}

// The spread columns and the concatenated iteration times (has_spread only).
bool WriteSpread(hid_t g, const std::vector<MeasuredRow>& rows) {
  const hid_t f64 = H5T_NATIVE_DOUBLE;
  std::vector<double> times;
  for (const MeasuredRow& r : rows) {
    times.insert(times.end(), r.iteration_times_s.begin(), r.iteration_times_s.end());
  }
  return WriteColumn<double>(g, "time_min_s", f64, rows, [](auto& r) { return r.time_min_s; }) &&
         WriteColumn<double>(g, "time_q1_s", f64, rows, [](auto& r) { return r.time_q1_s; }) &&
         WriteColumn<double>(g, "time_q3_s", f64, rows, [](auto& r) { return r.time_q3_s; }) &&
         WriteColumn<double>(g, "time_max_s", f64, rows, [](auto& r) { return r.time_max_s; }) &&
         WriteArray(g, "iteration_times_s", f64, times.data(), times.size());
}

bool WriteHost(hid_t g, const HostInfo& host) {
  Handle st = Utf8StringType();
  const char* name = host.host.c_str();
  const char* cpu = host.cpu_model.c_str();
  return WriteScalarAttr(g, "host", st.get(), &name) &&
         WriteScalarAttr(g, "cpu_model", st.get(), &cpu) &&
         WriteScalarAttr(g, "cpus", H5T_NATIVE_INT64, &host.cpus);
}

bool WriteGroup(hid_t file, const Measurements& m) {
  if (H5Lexists(file, kMeasuredGroup, H5P_DEFAULT) > 0 &&
      H5Ldelete(file, kMeasuredGroup, H5P_DEFAULT) < 0) {
    return false;
  }
  Handle g(H5Gcreate2(file, kMeasuredGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.ok()) return false;
  const auto& rows = m.rows;
  const hid_t i64 = H5T_NATIVE_INT64, f64 = H5T_NATIVE_DOUBLE;
  bool ok = WriteColumn<int64_t>(g.get(), "config", i64, rows, [](auto& r) { return r.config; });
  ok = ok && WriteColumn<double>(g.get(), "iteration_time_s", f64, rows,
                                 [](auto& r) { return r.iteration_time_s; });
  ok = ok &&
       WriteColumn<double>(g.get(), "throughput", f64, rows, [](auto& r) { return r.throughput; });
  ok = ok &&
       WriteColumn<int64_t>(g.get(), "iterations", i64, rows, [](auto& r) { return r.iterations; });
  ok = ok && WriteColumn<int64_t>(g.get(), "planned_peak_bytes", i64, rows,
                                  [](auto& r) { return r.planned_peak_bytes; });
  ok = ok && WriteStrings(g.get(), "status", rows, &MeasuredRow::status);
  ok = ok && WriteStrings(g.get(), "reason", rows, &MeasuredRow::reason);
  ok = ok && (!m.has_spread || WriteSpread(g.get(), rows));
  Handle st = Utf8StringType();
  const char* backend = m.backend.c_str();
  const char* started = m.started_at.c_str();
  ok = ok && WriteScalarAttr(g.get(), "backend", st.get(), &backend);
  ok = ok && WriteScalarAttr(g.get(), "ranks", i64, &m.ranks);
  ok = ok && WriteScalarAttr(g.get(), "started_at", st.get(), &started);
  return ok && WriteHost(g.get(), m.host);
}

// A row's iteration times are the next `iterations` values of the column, so
// the column must hold exactly their sum (each row's count, when has_spread).
Status CheckIterationTimes(const Measurements& m) {
  for (const MeasuredRow& r : m.rows) {
    if (!m.has_spread && !r.iteration_times_s.empty()) {
      return InvalidArgument() << "/measured row of configuration " << r.config
                               << " has iteration times, but has_spread is false";
    }
    if (m.has_spread && static_cast<int64_t>(r.iteration_times_s.size()) != r.iterations) {
      return InvalidArgument() << "/measured row of configuration " << r.config << " has "
                               << r.iteration_times_s.size() << " iteration times for "
                               << r.iterations << " iterations";
    }
  }
  return Status::Ok();
}

// Attributes a file from before they were recorded lacks: absent reads as
// empty, present must be readable.
Status ReadHost(const Hdf5Reader& r, HostInfo& host) {
  if (r.HasAttr(kMeasuredGroup, "host")) {
    DISTIR_ASSIGN_OR_RETURN(host.host, r.ReadTextAttr(kMeasuredGroup, "host"));
  }
  if (r.HasAttr(kMeasuredGroup, "cpu_model")) {
    DISTIR_ASSIGN_OR_RETURN(host.cpu_model, r.ReadTextAttr(kMeasuredGroup, "cpu_model"));
  }
  if (r.HasAttr(kMeasuredGroup, "cpus")) {
    DISTIR_ASSIGN_OR_RETURN(host.cpus, r.ReadIntAttr(kMeasuredGroup, "cpus"));
  }
  return Status::Ok();
}

Status Malformed(const Hdf5Reader& r, const std::string& why) {
  return InvalidArgument() << r.path() << ": malformed /measured group (" << why << ")";
}

// The spread columns, all of them or none (a file from before they existed).
// REQUIRES: m.rows holds the group's rows.
Status ReadSpread(const Hdf5Reader& r, Measurements& m) {
  const char* kColumns[] = {"time_min_s", "time_q1_s", "time_q3_s", "time_max_s",
                            "iteration_times_s"};
  int present = 0;
  for (const char* c : kColumns) present += r.Has(std::string(kMeasuredGroup) + "/" + c);
  m.has_spread = present > 0;
  if (present == 0) return Status::Ok();
  std::vector<double> cols[5];
  for (int i = 0; i < 5; ++i) {
    DISTIR_ASSIGN_OR_RETURN(cols[i],
                            r.ReadDoubles(std::string(kMeasuredGroup) + "/" + kColumns[i]));
    if (i < 4 && cols[i].size() != m.rows.size()) {
      return Malformed(r, "datasets of unequal length");
    }
  }
  size_t next = 0;
  for (size_t i = 0; i < m.rows.size(); ++i) {
    MeasuredRow& row = m.rows[i];
    std::tie(row.time_min_s, row.time_q1_s, row.time_q3_s, row.time_max_s) =
        std::tuple{cols[0][i], cols[1][i], cols[2][i], cols[3][i]};
    const auto count = static_cast<size_t>(std::max<int64_t>(row.iterations, 0));
    if (count > cols[4].size() - next) {
      return Malformed(r, "iteration_times_s holds fewer values than the rows' iterations");
    }
    row.iteration_times_s.assign(cols[4].begin() + static_cast<std::ptrdiff_t>(next),
                                 cols[4].begin() + static_cast<std::ptrdiff_t>(next + count));
    next += count;
  }
  if (next != cols[4].size()) {
    return Malformed(r, "iteration_times_s holds more values than the rows' iterations");
  }
  return Status::Ok();
}

// Reads the group's columns and attributes; every column must have as many
// rows as /measured/config.
Status ReadGroup(const Hdf5Reader& r, Measurements& m) {
  DISTIR_ASSIGN_OR_RETURN(std::vector<int64_t> config, r.ReadInts("/measured/config"));
  DISTIR_ASSIGN_OR_RETURN(std::vector<double> time, r.ReadDoubles("/measured/iteration_time_s"));
  DISTIR_ASSIGN_OR_RETURN(std::vector<double> throughput, r.ReadDoubles("/measured/throughput"));
  DISTIR_ASSIGN_OR_RETURN(std::vector<int64_t> iterations, r.ReadInts("/measured/iterations"));
  DISTIR_ASSIGN_OR_RETURN(std::vector<int64_t> peak, r.ReadInts("/measured/planned_peak_bytes"));
  DISTIR_ASSIGN_OR_RETURN(std::vector<std::string> status, r.ReadStrings("/measured/status"));
  DISTIR_ASSIGN_OR_RETURN(std::vector<std::string> reason, r.ReadStrings("/measured/reason"));
  const size_t n = config.size();
  for (size_t size : {time.size(), throughput.size(), iterations.size(), peak.size(), status.size(),
                      reason.size()}) {
    if (size != n) {
      return InvalidArgument() << r.path()
                               << ": malformed /measured group (datasets of unequal length)";
    }
  }
  DISTIR_ASSIGN_OR_RETURN(m.ranks, r.ReadIntAttr(kMeasuredGroup, "ranks"));
  DISTIR_ASSIGN_OR_RETURN(m.backend, r.ReadTextAttr(kMeasuredGroup, "backend"));
  DISTIR_ASSIGN_OR_RETURN(m.started_at, r.ReadTextAttr(kMeasuredGroup, "started_at"));
  DISTIR_RETURN_IF_ERROR(ReadHost(r, m.host));
  for (size_t i = 0; i < n; ++i) {
    // A row that ran has a time and a throughput `distir validate` can divide
    // by: a file edited by hand (h5py) with -inf or 0 is refused, not
    // validated into a MAPE of -nan %.
    if (status[i] == "ok" && !(std::isfinite(time[i]) && time[i] > 0 &&
                               std::isfinite(throughput[i]) && throughput[i] >= 0)) {
      return InvalidArgument() << r.path() << ": /measured row of configuration " << config[i]
                               << " is ok but its iteration time " << time[i] << " s or throughput "
                               << throughput[i] << " is not a finite positive number";
    }
    MeasuredRow row;
    row.config = config[i];
    row.iteration_time_s = time[i];
    row.throughput = throughput[i];
    row.iterations = iterations[i];
    row.planned_peak_bytes = peak[i];
    row.status = status[i];
    row.reason = reason[i];
    m.rows.push_back(std::move(row));
  }
  return ReadSpread(r, m);
}

}  // namespace

Status WriteMeasurements(const std::string& path, const Measurements& m) {
  namespace fs = std::filesystem;
  DISTIR_RETURN_IF_ERROR(CheckIterationTimes(m));
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound() << path << ": no such results file";
  const std::string tmp = path + ".tmp";
  fs::copy_file(path, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) return Internal() << "cannot copy " << path << " to " << tmp << ": " << ec.message();
  bool ok = false;
  {
    QuietHdf5 quiet;
    Handle file(H5Fopen(tmp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    ok = file.ok() && WriteGroup(file.get(), m);
  }
  if (ok) fs::rename(tmp, path, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    return Internal() << "cannot write /measured into " << path
                      << (ok ? ": rename failed" : ": HDF5 error (is it a DistIR results file?)");
  }
  return Status::Ok();
}

StatusOr<Measurements> ReadMeasurements(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound() << path << ": no such results file";
  StatusOr<Hdf5Reader> reader = Hdf5Reader::Open(path);
  if (!reader.ok()) return InvalidArgument() << path << ": not an HDF5 file";
  if (!reader->Has(kMeasuredGroup)) {
    return NotFound() << path << " has no /measured group: run `distir run` first";
  }
  Measurements m;
  DISTIR_RETURN_IF_ERROR(ReadGroup(*reader, m));
  return m;
}

}  // namespace distir::io
