#include "io/results_file.h"

#include <hdf5.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

namespace distir::io {
namespace {

// Closes an HDF5 handle on scope exit.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

Handle StringType() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

class Writer {
 public:
  explicit Writer(hid_t file) : file_(file) {}
  bool failed() const { return failed_; }

  void Check(herr_t e) { failed_ = failed_ || e < 0; }

  hid_t Group(const std::string& path) {
    hid_t g = H5Gcreate2(file_, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    failed_ = failed_ || g < 0;
    groups_.push_back(g);
    return g;
  }
  void CloseGroups() {
    for (hid_t g : groups_) {
      if (g >= 0) H5Gclose(g);
    }
    groups_.clear();
  }

  template <typename T>
  void Array(hid_t where, const char* name, hid_t type, const std::vector<T>& data) {
    hsize_t n = data.size();
    Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    Handle set(H5Dcreate2(where, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
    failed_ = failed_ || !set.ok();
    if (set.ok() && n > 0) Check(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()));
  }
  void Strings(hid_t where, const char* name, const std::vector<std::string>& data) {
    std::vector<const char*> ptrs;
    for (const auto& s : data) ptrs.push_back(s.c_str());
    Handle type = StringType();
    Array(where, name, type.get(), ptrs);
  }
  void Text(hid_t where, const char* name, const std::string& text) {
    Handle type = StringType();
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle set(H5Dcreate2(where, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
    failed_ = failed_ || !set.ok();
    const char* p = text.c_str();
    if (set.ok()) Check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p));
  }
  template <typename T>
  void Attr(hid_t where, const char* name, hid_t type, T value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle a(H5Acreate2(where, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    failed_ = failed_ || !a.ok();
    if (a.ok()) Check(H5Awrite(a.get(), type, &value));
  }
  void AttrText(hid_t where, const char* name, const std::string& text) {
    Handle type = StringType();
    Attr(where, name, type.get(), text.c_str());
  }

 private:
  hid_t file_;
  bool failed_ = false;
  std::vector<hid_t> groups_;
};

template <typename T, typename F>
std::vector<T> Column(const std::vector<ResultRow>& rows, F get) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const ResultRow& r : rows) out.push_back(static_cast<T>(get(r)));
  return out;
}

void WriteConfigs(Writer& w, hid_t g, const std::vector<ResultRow>& rows) {
  auto ints = [&](const char* name, auto get) { w.Array(g, name, H5T_NATIVE_INT64, Column<int64_t>(rows, get)); };
  auto doubles = [&](const char* name, auto get) { w.Array(g, name, H5T_NATIVE_DOUBLE, Column<double>(rows, get)); };
  auto strings = [&](const char* name, auto get) {
    std::vector<std::string> col;
    for (const ResultRow& r : rows) col.push_back(get(r));
    w.Strings(g, name, col);
  };
  ints("index", [](const ResultRow& r) { return r.index; });
  ints("batch", [](const ResultRow& r) { return r.batch; });
  ints("dp", [](const ResultRow& r) { return r.dp; });
  ints("tp", [](const ResultRow& r) { return r.tp; });
  ints("pp", [](const ResultRow& r) { return r.pp; });
  ints("microbatches", [](const ResultRow& r) { return r.microbatches; });
  strings("schedule", [](const ResultRow& r) { return r.schedule; });
  w.Array(g, "recompute", H5T_NATIVE_INT8, Column<int8_t>(rows, [](const ResultRow& r) { return r.recompute; }));
  ints("zero_stage", [](const ResultRow& r) { return r.zero_stage; });
  strings("status", [](const ResultRow& r) { return r.status; });
  strings("reason", [](const ResultRow& r) { return r.reason; });
  doubles("iteration_time_s", [](const ResultRow& r) { return r.iteration_time_s; });
  doubles("throughput", [](const ResultRow& r) { return r.throughput; });
  ints("peak_memory_bytes", [](const ResultRow& r) { return r.peak_memory_bytes; });
  w.Array(g, "fits", H5T_NATIVE_INT8, Column<int8_t>(rows, [](const ResultRow& r) { return r.fits; }));
  ints("num_ops", [](const ResultRow& r) { return r.num_ops; });
  ints("rank", [](const ResultRow& r) { return r.rank; });
}

void WriteTrace(Writer& w, hid_t traces, const TraceRecord& t) {
  const std::string name = std::to_string(t.rank);
  hid_t g = H5Gcreate2(traces, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) {
    w.Check(-1);
    return;
  }
  w.Attr(g, "config", H5T_NATIVE_INT64, t.config);
  w.Attr(g, "rank", H5T_NATIVE_INT64, t.rank);
  w.Array(g, "device", H5T_NATIVE_INT32, t.device);
  w.Array(g, "start_s", H5T_NATIVE_DOUBLE, t.start_s);
  w.Array(g, "end_s", H5T_NATIVE_DOUBLE, t.end_s);
  w.Array(g, "category", H5T_NATIVE_INT8, t.category);
  w.Strings(g, "label", t.label);
  w.Array(g, "memory_device", H5T_NATIVE_INT32, t.memory_device);
  w.Array(g, "memory_time_s", H5T_NATIVE_DOUBLE, t.memory_time_s);
  w.Array(g, "memory_bytes", H5T_NATIVE_INT64, t.memory_bytes);
  H5Gclose(g);
}

}  // namespace

Status WriteResultsFile(const std::string& path, const ResultsFile& f) {
  const std::string tmp = ResultsTempPath(path);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t file = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return InvalidArgument() << "cannot create '" << tmp << "'";
  Writer w(file);
  w.Attr(file, "format_version", H5T_NATIVE_INT64, int64_t{kResultsFormatVersion});
  w.AttrText(file, "tool_version", f.tool_version);
  w.AttrText(file, "git_revision", f.git_revision);
  w.AttrText(file, "experiment", f.experiment_name);
  w.AttrText(file, "model", f.model);
  w.AttrText(file, "hardware", f.hardware);
  w.Attr(file, "memory_limit_bytes", H5T_NATIVE_INT64, f.memory_limit_bytes);
  hid_t exp = w.Group("/experiment");
  w.Text(exp, "yaml", f.experiment_yaml);
  w.Text(exp, "hardware_yaml", f.hardware_yaml);
  WriteConfigs(w, w.Group("/configs"), f.rows);
  w.Array(file, "ranking", H5T_NATIVE_INT64, f.ranking);
  hid_t traces = w.Group("/traces");
  for (const TraceRecord& t : f.traces) WriteTrace(w, traces, t);
  hid_t run = w.Group("/run");
  w.Attr(run, "ranks", H5T_NATIVE_INT64, f.ranks);
  w.Attr(run, "wall_time_s", H5T_NATIVE_DOUBLE, f.wall_time_s);
  w.AttrText(run, "started_at", f.started_at);
  w.CloseGroups();
  const bool failed = w.failed();
  if (H5Fclose(file) < 0 || failed) {
    std::remove(tmp.c_str());
    return Internal() << "writing '" << tmp << "' failed";
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Internal() << "cannot rename '" << tmp << "' to '" << path
                      << "': " << std::strerror(err);
  }
  return Status::Ok();
}

namespace {

template <typename T>
bool ReadArray(hid_t file, const char* name, hid_t type, std::vector<T>& out) {
  Handle set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return false;
  Handle space(H5Dget_space(set.get()), H5Sclose);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  out.resize(n);
  return n == 0 || H5Dread(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0;
}

bool ReadStrings(hid_t file, const char* name, std::vector<std::string>& out) {
  Handle type = StringType();
  std::vector<char*> ptrs;
  if (!ReadArray(file, name, type.get(), ptrs)) return false;
  for (char* p : ptrs) {
    out.emplace_back(p ? p : "");
    free(p);
  }
  return true;
}

bool ReadText(hid_t where, const char* name, std::string& out) {
  Handle set(H5Dopen2(where, name, H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return false;
  Handle type = StringType();
  char* p = nullptr;
  if (H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) < 0) return false;
  out = p ? p : "";
  free(p);
  return true;
}

bool ReadAttrText(hid_t where, const char* name, std::string& out) {
  Handle a(H5Aopen(where, name, H5P_DEFAULT), H5Aclose);
  if (!a.ok()) return false;
  Handle type = StringType();
  char* p = nullptr;
  if (H5Aread(a.get(), type.get(), &p) < 0) return false;
  out = p ? p : "";
  free(p);
  return true;
}

}  // namespace

StatusOr<ResultsFile> ReadResultsFile(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return NotFound() << "cannot open '" << path << "' as an HDF5 file";
  hid_t f = file.get();
  int64_t version = 0;
  {
    Handle a(H5Aopen(f, "format_version", H5P_DEFAULT), H5Aclose);
    if (!a.ok() || H5Aread(a.get(), H5T_NATIVE_INT64, &version) < 0) {
      return InvalidArgument() << "'" << path << "' is not a DistIR results file (no format_version)";
    }
  }
  if (version != kResultsFormatVersion) {
    return InvalidArgument() << "'" << path << "' has results format " << version << "; this tool reads "
                             << kResultsFormatVersion;
  }
  ResultsFile out;
  ReadAttrText(f, "tool_version", out.tool_version);
  ReadAttrText(f, "git_revision", out.git_revision);
  ReadAttrText(f, "experiment", out.experiment_name);
  ReadAttrText(f, "model", out.model);
  ReadAttrText(f, "hardware", out.hardware);
  ReadText(f, "/experiment/yaml", out.experiment_yaml);
  ReadText(f, "/experiment/hardware_yaml", out.hardware_yaml);
  std::vector<int64_t> index, batch, dp, tp, pp, k, zero, peak, ops, rank;
  std::vector<double> time, throughput;
  std::vector<int8_t> recompute, fits;
  std::vector<std::string> schedule, status, reason;
  bool ok = ReadArray(f, "/configs/index", H5T_NATIVE_INT64, index) &&
            ReadArray(f, "/configs/batch", H5T_NATIVE_INT64, batch) &&
            ReadArray(f, "/configs/dp", H5T_NATIVE_INT64, dp) &&
            ReadArray(f, "/configs/tp", H5T_NATIVE_INT64, tp) &&
            ReadArray(f, "/configs/pp", H5T_NATIVE_INT64, pp) &&
            ReadArray(f, "/configs/microbatches", H5T_NATIVE_INT64, k) &&
            ReadArray(f, "/configs/zero_stage", H5T_NATIVE_INT64, zero) &&
            ReadArray(f, "/configs/peak_memory_bytes", H5T_NATIVE_INT64, peak) &&
            ReadArray(f, "/configs/num_ops", H5T_NATIVE_INT64, ops) &&
            ReadArray(f, "/configs/rank", H5T_NATIVE_INT64, rank) &&
            ReadArray(f, "/configs/iteration_time_s", H5T_NATIVE_DOUBLE, time) &&
            ReadArray(f, "/configs/throughput", H5T_NATIVE_DOUBLE, throughput) &&
            ReadArray(f, "/configs/recompute", H5T_NATIVE_INT8, recompute) &&
            ReadArray(f, "/configs/fits", H5T_NATIVE_INT8, fits) &&
            ReadStrings(f, "/configs/schedule", schedule) &&
            ReadStrings(f, "/configs/status", status) && ReadStrings(f, "/configs/reason", reason) &&
            ReadArray(f, "/ranking", H5T_NATIVE_INT64, out.ranking);
  if (!ok) return InvalidArgument() << "'" << path << "' lacks a /configs column or /ranking";
  const size_t n = index.size();
  for (size_t size : {batch.size(), dp.size(), tp.size(), pp.size(), k.size(), zero.size(),
                      peak.size(), ops.size(), rank.size(), time.size(), throughput.size(),
                      recompute.size(), fits.size(), schedule.size(), status.size(), reason.size()}) {
    if (size != n) {
      return InvalidArgument() << "'" << path << "': the /configs columns differ in length";
    }
  }
  for (int64_t row : out.ranking) {
    if (row < 0 || static_cast<size_t>(row) >= n) {
      return InvalidArgument() << "'" << path << "': /ranking names row " << row << " of " << n;
    }
  }
  for (size_t i = 0; i < index.size(); ++i) {
    ResultRow r;
    r.index = index[i];
    r.batch = batch[i];
    r.dp = dp[i];
    r.tp = tp[i];
    r.pp = pp[i];
    r.microbatches = k[i];
    r.schedule = schedule[i];
    r.recompute = recompute[i] != 0;
    r.zero_stage = zero[i];
    r.status = status[i];
    r.reason = reason[i];
    r.iteration_time_s = time[i];
    r.throughput = throughput[i];
    r.peak_memory_bytes = peak[i];
    r.fits = fits[i] != 0;
    r.num_ops = ops[i];
    r.rank = rank[i];
    out.rows.push_back(std::move(r));
  }
  return out;
}

}  // namespace distir::io
