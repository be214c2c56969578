// /measured in a results file (see measurements.h), with the HDF5 C API.
// HDF5 errors are checked per call and turned into a Status; the library's
// own error printing is silenced while we work, since a missing group is an
// answer here, not a failure.

#include "io/measurements.h"

#include <hdf5.h>

#include <filesystem>
#include <system_error>

namespace distir::io {
namespace {

constexpr const char* kGroup = "/measured";

class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// Silences HDF5's automatic error stack printing for the current scope.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

Handle StringType() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

bool WriteArray(hid_t g, const char* name, hid_t type, const void* data, hsize_t n) {
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle set(H5Dcreate2(g, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose);
  if (!set.ok()) return false;
  return n == 0 || H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
}

template <typename T, typename F>
bool WriteColumn(hid_t g, const char* name, hid_t type, const std::vector<MeasuredRow>& rows, F get) {
  std::vector<T> col;
  for (const MeasuredRow& r : rows) col.push_back(get(r));
  return WriteArray(g, name, type, col.data(), col.size());
}

bool WriteStrings(hid_t g, const char* name, const std::vector<MeasuredRow>& rows,
                  const std::string MeasuredRow::*field) {
  std::vector<const char*> ptrs;
  for (const MeasuredRow& r : rows) ptrs.push_back((r.*field).c_str());
  Handle type = StringType();
  return WriteArray(g, name, type.get(), ptrs.data(), ptrs.size());
}

bool WriteAttr(hid_t g, const char* name, hid_t type, const void* value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(g, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return a.ok() && H5Awrite(a.get(), type, value) >= 0;
}

bool WriteGroup(hid_t file, const Measurements& m) {
  if (H5Lexists(file, kGroup, H5P_DEFAULT) > 0 && H5Ldelete(file, kGroup, H5P_DEFAULT) < 0) {
    return false;
  }
  Handle g(H5Gcreate2(file, kGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.ok()) return false;
  const auto& rows = m.rows;
  const hid_t i64 = H5T_NATIVE_INT64, f64 = H5T_NATIVE_DOUBLE;
  bool ok = WriteColumn<int64_t>(g.get(), "config", i64, rows, [](auto& r) { return r.config; });
  ok = ok && WriteColumn<double>(g.get(), "iteration_time_s", f64, rows,
                                 [](auto& r) { return r.iteration_time_s; });
  ok = ok && WriteColumn<double>(g.get(), "throughput", f64, rows, [](auto& r) { return r.throughput; });
  ok = ok && WriteColumn<int64_t>(g.get(), "iterations", i64, rows, [](auto& r) { return r.iterations; });
  ok = ok && WriteColumn<int64_t>(g.get(), "planned_peak_bytes", i64, rows,
                                  [](auto& r) { return r.planned_peak_bytes; });
  ok = ok && WriteStrings(g.get(), "status", rows, &MeasuredRow::status);
  ok = ok && WriteStrings(g.get(), "reason", rows, &MeasuredRow::reason);
  Handle st = StringType();
  const char* backend = m.backend.c_str();
  const char* started = m.started_at.c_str();
  ok = ok && WriteAttr(g.get(), "backend", st.get(), &backend);
  ok = ok && WriteAttr(g.get(), "ranks", i64, &m.ranks);
  ok = ok && WriteAttr(g.get(), "started_at", st.get(), &started);
  return ok;
}

// ---- reading

hsize_t Length(hid_t set) {
  Handle space(H5Dget_space(set), H5Sclose);
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1) return static_cast<hsize_t>(-1);
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  return n;
}

template <typename T>
bool ReadColumn(hid_t g, const char* name, hid_t type, size_t n, std::vector<T>& out) {
  Handle set(H5Dopen2(g, name, H5P_DEFAULT), H5Dclose);
  if (!set.ok() || Length(set.get()) != n) return false;
  out.resize(n);
  return n == 0 || H5Dread(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0;
}

bool ReadStrings(hid_t g, const char* name, size_t n, std::vector<std::string>& out) {
  Handle type = StringType();
  std::vector<char*> ptrs;
  if (!ReadColumn(g, name, type.get(), n, ptrs)) return false;
  for (char* p : ptrs) out.emplace_back(p != nullptr ? p : "");
  if (n > 0) {
    Handle set(H5Dopen2(g, name, H5P_DEFAULT), H5Dclose);
    Handle space(H5Dget_space(set.get()), H5Sclose);
    H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, ptrs.data());
  }
  return true;
}

bool ReadTextAttr(hid_t g, const char* name, std::string& out) {
  Handle a(H5Aopen(g, name, H5P_DEFAULT), H5Aclose);
  Handle type = StringType();
  char* p = nullptr;
  if (!a.ok() || H5Aread(a.get(), type.get(), &p) < 0) return false;
  out = p != nullptr ? p : "";
  H5free_memory(p);
  return true;
}

bool ReadGroup(hid_t g, Measurements& m) {
  Handle set(H5Dopen2(g, "config", H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return false;
  const size_t n = Length(set.get());
  std::vector<int64_t> config, iterations, peak;
  std::vector<double> time, throughput;
  std::vector<std::string> status, reason;
  bool ok = ReadColumn(g, "config", H5T_NATIVE_INT64, n, config) &&
            ReadColumn(g, "iteration_time_s", H5T_NATIVE_DOUBLE, n, time) &&
            ReadColumn(g, "throughput", H5T_NATIVE_DOUBLE, n, throughput) &&
            ReadColumn(g, "iterations", H5T_NATIVE_INT64, n, iterations) &&
            ReadColumn(g, "planned_peak_bytes", H5T_NATIVE_INT64, n, peak) &&
            ReadStrings(g, "status", n, status) && ReadStrings(g, "reason", n, reason);
  Handle a(H5Aopen(g, "ranks", H5P_DEFAULT), H5Aclose);
  ok = ok && a.ok() && H5Aread(a.get(), H5T_NATIVE_INT64, &m.ranks) >= 0;
  ok = ok && ReadTextAttr(g, "backend", m.backend) && ReadTextAttr(g, "started_at", m.started_at);
  for (size_t i = 0; ok && i < n; ++i) {
    m.rows.push_back({config[i], time[i], throughput[i], iterations[i], peak[i], status[i], reason[i]});
  }
  return ok;
}

}  // namespace

Status WriteMeasurements(const std::string& path, const Measurements& m) {
  namespace fs = std::filesystem;
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
  QuietHdf5 quiet;
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return InvalidArgument() << path << ": not an HDF5 file";
  if (H5Lexists(file.get(), kGroup, H5P_DEFAULT) <= 0) {
    return NotFound() << path << " has no /measured group: run `distir run` first";
  }
  Handle g(H5Gopen2(file.get(), kGroup, H5P_DEFAULT), H5Gclose);
  Measurements m;
  if (!g.ok() || !ReadGroup(g.get(), m)) {
    return InvalidArgument() << path << ": malformed /measured group (missing or unequal datasets)";
  }
  return m;
}

}  // namespace distir::io
