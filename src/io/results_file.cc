#include "io/results_file.h"

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>

#include "io/hdf5_handle.h"
#include "io/hdf5_reader.h"
#include "support/checked_math.h"

namespace distir::io {
namespace {

using Handle = Hdf5Handle;

class Writer {
 public:
  // HDF5 converts variable-length strings through a type-conversion buffer
  // that it zeroes at every H5Dwrite, 1 MiB by default: for the two texts and
  // the short string columns of a small search that zeroing (and its page
  // faults) was ~3 % of a one-batch MLP-1B search. 64 KiB converts 4096
  // strings a pass; longer columns take several passes.
  explicit Writer(hid_t file) : file_(file), xfer_(H5Pcreate(H5P_DATASET_XFER), H5Pclose) {
    failed_ = !xfer_.ok() || H5Pset_buffer(xfer_.get(), size_t{64} << 10, nullptr, nullptr) < 0;
  }
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
    if (set.ok() && n > 0)
      Check(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, xfer_.get(), data.data()));
  }
  void Strings(hid_t where, const char* name, const std::vector<std::string>& data) {
    std::vector<const char*> ptrs;
    for (const auto& s : data) ptrs.push_back(s.c_str());
    Handle type = Utf8StringType();
    Array(where, name, type.get(), ptrs);
  }
  void Text(hid_t where, const char* name, const std::string& text) {
    Handle type = Utf8StringType();
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle set(H5Dcreate2(where, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
    failed_ = failed_ || !set.ok();
    const char* p = text.c_str();
    if (set.ok()) Check(H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, xfer_.get(), &p));
  }
  template <typename T>
  void Attr(hid_t where, const char* name, hid_t type, T value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle a(H5Acreate2(where, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    failed_ = failed_ || !a.ok();
    if (a.ok()) Check(H5Awrite(a.get(), type, &value));
  }
  void AttrText(hid_t where, const char* name, const std::string& text) {
    Handle type = Utf8StringType();
    Attr(where, name, type.get(), text.c_str());
  }

 private:
  hid_t file_;
  Handle xfer_;  // the dataset transfer properties of every write
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

// Column recompute_kind: none, full or selective.
std::string RecomputeKind(const ResultRow& r) {
  if (!r.recompute) return "none";
  return r.recompute_selective ? "selective" : "full";
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
  ints("virtual_stages", [](const ResultRow& r) { return r.virtual_stages; });
  strings("recompute_kind", [](const ResultRow& r) { return RecomputeKind(r); });
  ints("micro_batch", [](const ResultRow& r) { return r.micro_batch; });
  w.Array(g, "sequence_parallel", H5T_NATIVE_INT8,
          Column<int8_t>(rows, [](const ResultRow& r) { return r.sequence_parallel; }));
  strings("status", [](const ResultRow& r) { return r.status; });
  strings("reason", [](const ResultRow& r) { return r.reason; });
  doubles("iteration_time_s", [](const ResultRow& r) { return r.iteration_time_s; });
  doubles("throughput", [](const ResultRow& r) { return r.throughput; });
  ints("peak_memory_bytes", [](const ResultRow& r) { return r.peak_memory_bytes; });
  w.Array(g, "fits", H5T_NATIVE_INT8, Column<int8_t>(rows, [](const ResultRow& r) { return r.fits; }));
  ints("num_ops", [](const ResultRow& r) { return r.num_ops; });
  ints("rank", [](const ResultRow& r) { return r.rank; });
  doubles("exposed_communication_s", [](const ResultRow& r) { return r.exposed_communication_s; });
  strings("evaluation", [](const ResultRow& r) { return r.evaluation; });
  doubles("throughput_bound", [](const ResultRow& r) { return r.throughput_bound; });
}

// The transformer columns (ResultsFile::has_step_figures).
void WriteStepFigures(Writer& w, hid_t g, const std::vector<ResultRow>& rows) {
  auto doubles = [&](const char* name, auto get) { w.Array(g, name, H5T_NATIVE_DOUBLE, Column<double>(rows, get)); };
  doubles("tokens_per_s", [](const ResultRow& r) { return r.step.tokens_per_s; });
  doubles("tflops_per_gpu", [](const ResultRow& r) { return r.step.tflops_per_gpu; });
  doubles("mfu", [](const ResultRow& r) { return r.step.mfu; });
  for (int k = 0; k < kNumMemoryKindColumns; ++k) {
    const std::string name = std::string("memory_") + kMemoryKindColumns[k] + "_bytes";
    w.Array(g, name.c_str(), H5T_NATIVE_INT64, Column<int64_t>(rows, [k](const ResultRow& r) {
              return r.step.memory_at_peak[static_cast<size_t>(k)];
            }));
  }
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
  QuietHdf5 quiet;
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
  if (f.optimum_gap) w.Attr(file, "optimum_gap", H5T_NATIVE_DOUBLE, *f.optimum_gap);
  hid_t exp = w.Group("/experiment");
  w.Text(exp, "yaml", f.experiment_yaml);
  w.Text(exp, "hardware_yaml", f.hardware_yaml);
  hid_t configs = w.Group("/configs");
  WriteConfigs(w, configs, f.rows);
  if (f.has_step_figures) WriteStepFigures(w, configs, f.rows);
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

// The /configs columns, as read, before they are checked to agree in length.
struct Columns {
  std::vector<int64_t> index, batch, dp, tp, pp, k, zero, peak, ops, rank;
  std::vector<double> time, throughput;
  // Optional: absent in files of earlier versions (exposed) or of other models (step).
  std::vector<double> exposed, tokens_per_s, tflops_per_gpu, mfu;
  std::array<std::vector<int64_t>, kNumMemoryKindColumns> memory;
  // Optional: absent in files written before the Megatron knobs (issue #17).
  std::vector<int64_t> virtual_stages, micro_batch;
  std::vector<std::string> recompute_kind;
  // Optional: absent in files written before space.sequence_parallel.
  std::vector<int8_t> sequence_parallel;
  // Optional: absent in files written before the column (issue #18).
  std::vector<std::string> evaluation;
  // Optional: absent in files written before the throughput bound (issue #18).
  std::vector<double> throughput_bound;
  bool has_throughput_bound = false;
  bool has_exposed = false, has_step = false, has_megatron = false, has_sp = false;
  bool has_evaluation = false;
  std::vector<int8_t> recompute, fits;
  std::vector<std::string> schedule, status, reason;
};

// Text the layout documents but a file written by hand may lack: absent reads
// as "", present must have the documented layout.
Status ReadOptionalAttr(const Hdf5Reader& r, const char* name, std::string& out) {
  if (!r.HasAttr("/", name)) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(out, r.ReadTextAttr("/", name));
  return Status::Ok();
}

Status ReadOptionalText(const Hdf5Reader& r, const char* dataset, std::string& out) {
  if (!r.Has(dataset)) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(out, r.ReadText(dataset));
  return Status::Ok();
}

Status ReadVersion(const Hdf5Reader& r) {
  if (!r.HasAttr("/", "format_version")) {
    return InvalidArgument() << "'" << r.path() << "' is not a DistIR results file (no format_version)";
  }
  DISTIR_ASSIGN_OR_RETURN(int64_t version, r.ReadIntAttr("/", "format_version"));
  if (version != kResultsFormatVersion) {
    return InvalidArgument() << "'" << r.path() << "' has results format " << version
                             << "; this tool reads " << kResultsFormatVersion;
  }
  return Status::Ok();
}

Status ReadMetadata(const Hdf5Reader& r, ResultsFile& out) {
  if (r.HasAttr("/", "memory_limit_bytes")) {
    DISTIR_ASSIGN_OR_RETURN(out.memory_limit_bytes, r.ReadIntAttr("/", "memory_limit_bytes"));
  }
  if (r.HasAttr("/", "optimum_gap")) {
    DISTIR_ASSIGN_OR_RETURN(out.optimum_gap, r.ReadDoubleAttr("/", "optimum_gap"));
  }
  DISTIR_RETURN_IF_ERROR(ReadOptionalAttr(r, "tool_version", out.tool_version));
  DISTIR_RETURN_IF_ERROR(ReadOptionalAttr(r, "git_revision", out.git_revision));
  DISTIR_RETURN_IF_ERROR(ReadOptionalAttr(r, "experiment", out.experiment_name));
  DISTIR_RETURN_IF_ERROR(ReadOptionalAttr(r, "model", out.model));
  DISTIR_RETURN_IF_ERROR(ReadOptionalAttr(r, "hardware", out.hardware));
  DISTIR_RETURN_IF_ERROR(ReadOptionalText(r, "/experiment/yaml", out.experiment_yaml));
  return ReadOptionalText(r, "/experiment/hardware_yaml", out.hardware_yaml);
}

Status ReadColumns(const Hdf5Reader& r, Columns& c) {
  DISTIR_ASSIGN_OR_RETURN(c.index, r.ReadInts("/configs/index"));
  DISTIR_ASSIGN_OR_RETURN(c.batch, r.ReadInts("/configs/batch"));
  DISTIR_ASSIGN_OR_RETURN(c.dp, r.ReadInts("/configs/dp"));
  DISTIR_ASSIGN_OR_RETURN(c.tp, r.ReadInts("/configs/tp"));
  DISTIR_ASSIGN_OR_RETURN(c.pp, r.ReadInts("/configs/pp"));
  DISTIR_ASSIGN_OR_RETURN(c.k, r.ReadInts("/configs/microbatches"));
  DISTIR_ASSIGN_OR_RETURN(c.zero, r.ReadInts("/configs/zero_stage"));
  DISTIR_ASSIGN_OR_RETURN(c.peak, r.ReadInts("/configs/peak_memory_bytes"));
  DISTIR_ASSIGN_OR_RETURN(c.ops, r.ReadInts("/configs/num_ops"));
  DISTIR_ASSIGN_OR_RETURN(c.rank, r.ReadInts("/configs/rank"));
  DISTIR_ASSIGN_OR_RETURN(c.time, r.ReadDoubles("/configs/iteration_time_s"));
  DISTIR_ASSIGN_OR_RETURN(c.throughput, r.ReadDoubles("/configs/throughput"));
  DISTIR_ASSIGN_OR_RETURN(c.recompute, r.ReadInt8s("/configs/recompute"));
  DISTIR_ASSIGN_OR_RETURN(c.fits, r.ReadInt8s("/configs/fits"));
  DISTIR_ASSIGN_OR_RETURN(c.schedule, r.ReadStrings("/configs/schedule"));
  DISTIR_ASSIGN_OR_RETURN(c.status, r.ReadStrings("/configs/status"));
  DISTIR_ASSIGN_OR_RETURN(c.reason, r.ReadStrings("/configs/reason"));
  if ((c.has_exposed = r.Has("/configs/exposed_communication_s"))) {
    DISTIR_ASSIGN_OR_RETURN(c.exposed, r.ReadDoubles("/configs/exposed_communication_s"));
  }
  if ((c.has_megatron = r.Has("/configs/virtual_stages"))) {
    DISTIR_ASSIGN_OR_RETURN(c.virtual_stages, r.ReadInts("/configs/virtual_stages"));
    DISTIR_ASSIGN_OR_RETURN(c.recompute_kind, r.ReadStrings("/configs/recompute_kind"));
    DISTIR_ASSIGN_OR_RETURN(c.micro_batch, r.ReadInts("/configs/micro_batch"));
  }
  if ((c.has_sp = r.Has("/configs/sequence_parallel"))) {
    DISTIR_ASSIGN_OR_RETURN(c.sequence_parallel, r.ReadInt8s("/configs/sequence_parallel"));
  }
  if ((c.has_evaluation = r.Has("/configs/evaluation"))) {
    DISTIR_ASSIGN_OR_RETURN(c.evaluation, r.ReadStrings("/configs/evaluation"));
  }
  if ((c.has_throughput_bound = r.Has("/configs/throughput_bound"))) {
    DISTIR_ASSIGN_OR_RETURN(c.throughput_bound, r.ReadDoubles("/configs/throughput_bound"));
  }
  if ((c.has_step = r.Has("/configs/tokens_per_s"))) {
    DISTIR_ASSIGN_OR_RETURN(c.tokens_per_s, r.ReadDoubles("/configs/tokens_per_s"));
    DISTIR_ASSIGN_OR_RETURN(c.tflops_per_gpu, r.ReadDoubles("/configs/tflops_per_gpu"));
    DISTIR_ASSIGN_OR_RETURN(c.mfu, r.ReadDoubles("/configs/mfu"));
    for (int k = 0; k < kNumMemoryKindColumns; ++k) {
      DISTIR_ASSIGN_OR_RETURN(
          c.memory[static_cast<size_t>(k)],
          r.ReadInts(std::string("/configs/memory_") + kMemoryKindColumns[k] + "_bytes"));
    }
  }
  return Status::Ok();
}

// recompute_kind must be a kind, and say what the recompute column says.
// REQUIRES: the two columns have one entry per row.
Status CheckRecomputeKinds(const std::string& path, const Columns& c) {
  for (size_t i = 0; i < c.recompute_kind.size() && i < c.recompute.size(); ++i) {
    const std::string& kind = c.recompute_kind[i];
    const bool known = kind == "none" || kind == "full" || kind == "selective";
    if (!known || (kind != "none") != (c.recompute[i] != 0)) {
      return InvalidArgument() << "'" << path << "': /configs/recompute_kind[" << i << "] is '"
                               << kind << "' but /configs/recompute is "
                               << static_cast<int>(c.recompute[i])
                               << " (expected none with 0, full or selective with 1)";
    }
  }
  return Status::Ok();
}

// Every column must have one entry per row, and /ranking must name rows.
Status CheckColumns(const std::string& path, const Columns& c, const std::vector<int64_t>& ranking) {
  const size_t n = c.index.size();
  for (size_t size : {c.batch.size(), c.dp.size(), c.tp.size(), c.pp.size(), c.k.size(),
                      c.zero.size(), c.peak.size(), c.ops.size(), c.rank.size(), c.time.size(),
                      c.throughput.size(), c.recompute.size(), c.fits.size(), c.schedule.size(),
                      c.status.size(), c.reason.size()}) {
    if (size != n) {
      return InvalidArgument() << "'" << path << "': the /configs columns differ in length";
    }
  }
  std::vector<size_t> optional;
  if (c.has_exposed) optional.push_back(c.exposed.size());
  if (c.has_megatron) {
    for (size_t size : {c.virtual_stages.size(), c.recompute_kind.size(), c.micro_batch.size()})
      optional.push_back(size);
    DISTIR_RETURN_IF_ERROR(CheckRecomputeKinds(path, c));
  }
  if (c.has_sp) optional.push_back(c.sequence_parallel.size());
  if (c.has_evaluation) optional.push_back(c.evaluation.size());
  if (c.has_throughput_bound) optional.push_back(c.throughput_bound.size());
  if (c.has_step) {
    for (size_t size : {c.tokens_per_s.size(), c.tflops_per_gpu.size(), c.mfu.size()})
      optional.push_back(size);
    for (const auto& m : c.memory) optional.push_back(m.size());
  }
  for (size_t size : optional) {
    if (size != n) {
      return InvalidArgument() << "'" << path << "': the /configs columns differ in length";
    }
  }
  for (int64_t row : ranking) {
    if (row < 0 || static_cast<size_t>(row) >= n) {
      return InvalidArgument() << "'" << path << "': /ranking names row " << row << " of " << n;
    }
  }
  return Status::Ok();
}

// What `report` and `run` take from /ranking without looking again: each named
// row simulated ("ok"), once, with a finite time and throughput that are not
// negative and a peak memory that is not negative; and /configs/rank is each
// row's position in /ranking (0: not ranked). A file edited by hand (h5py) that
// breaks this is refused, not ranked with NaN or a negative time (issue 20).
// REQUIRES: CheckColumns passed.
Status CheckRanked(const std::string& path, const Columns& c, const std::vector<int64_t>& ranking) {
  std::vector<int64_t> position(c.index.size(), 0);
  for (size_t j = 0; j < ranking.size(); ++j) {
    const auto i = static_cast<size_t>(ranking[j]);
    if (position[i] != 0) {
      return InvalidArgument() << "'" << path << "': /ranking names row " << i << " twice";
    }
    position[i] = static_cast<int64_t>(j) + 1;
  }
  for (size_t i = 0; i < position.size(); ++i) {
    if (c.rank[i] != position[i]) {
      return InvalidArgument() << "'" << path << "': /configs/rank of row " << i << " is "
                               << c.rank[i] << " but /ranking puts it at " << position[i]
                               << " (0: not ranked)";
    }
  }
  for (int64_t row : ranking) {
    const auto i = static_cast<size_t>(row);
    const double time = c.time[i], throughput = c.throughput[i];
    if (c.status[i] == "ok" && std::isfinite(time) && time >= 0 && std::isfinite(throughput) &&
        throughput >= 0 && c.peak[i] >= 0) {
      continue;
    }
    return InvalidArgument() << "'" << path << "': /ranking names row " << row << " (status '"
                             << c.status[i] << "', iteration time " << time << " s, throughput "
                             << throughput << ", peak memory " << c.peak[i]
                             << " B); a ranked configuration is ok, with a finite time and "
                                "throughput and a peak memory, none negative";
  }
  return Status::Ok();
}

// /run: the three facts of the run that wrote the file, all of them or none.
Status ReadRun(const Hdf5Reader& r, ResultsFile& out) {
  if (!r.Has("/run")) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(out.ranks, r.ReadIntAttr("/run", "ranks"));
  DISTIR_ASSIGN_OR_RETURN(out.wall_time_s, r.ReadDoubleAttr("/run", "wall_time_s"));
  DISTIR_ASSIGN_OR_RETURN(out.started_at, r.ReadTextAttr("/run", "started_at"));
  return Status::Ok();
}

StatusOr<TraceRecord> ReadTrace(const Hdf5Reader& r, const std::string& name) {
  const std::string g = "/traces/" + name;
  TraceRecord t;
  DISTIR_ASSIGN_OR_RETURN(t.config, r.ReadIntAttr(g, "config"));
  DISTIR_ASSIGN_OR_RETURN(t.rank, r.ReadIntAttr(g, "rank"));
  if (name != std::to_string(t.rank)) {
    return InvalidArgument() << "'" << r.path() << "': trace group " << g << " has rank " << t.rank
                             << "; its name must be its rank";
  }
  DISTIR_ASSIGN_OR_RETURN(t.device, r.ReadInt32s(g + "/device"));
  DISTIR_ASSIGN_OR_RETURN(t.start_s, r.ReadDoubles(g + "/start_s"));
  DISTIR_ASSIGN_OR_RETURN(t.end_s, r.ReadDoubles(g + "/end_s"));
  DISTIR_ASSIGN_OR_RETURN(t.category, r.ReadInt8s(g + "/category"));
  DISTIR_ASSIGN_OR_RETURN(t.label, r.ReadStrings(g + "/label"));
  DISTIR_ASSIGN_OR_RETURN(t.memory_device, r.ReadInt32s(g + "/memory_device"));
  DISTIR_ASSIGN_OR_RETURN(t.memory_time_s, r.ReadDoubles(g + "/memory_time_s"));
  DISTIR_ASSIGN_OR_RETURN(t.memory_bytes, r.ReadInts(g + "/memory_bytes"));
  return t;
}

// /traces/<rank>, one group per traced configuration, in increasing rank (the
// order the search writes them; HDF5 lists "10" before "2").
Status ReadTraces(const Hdf5Reader& r, ResultsFile& out) {
  if (!r.Has("/traces")) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(std::vector<std::string> names, r.Children("/traces"));
  for (const std::string& name : names) {
    DISTIR_ASSIGN_OR_RETURN(TraceRecord t, ReadTrace(r, name));
    out.traces.push_back(std::move(t));
  }
  std::sort(out.traces.begin(), out.traces.end(),
            [](const TraceRecord& a, const TraceRecord& b) { return a.rank < b.rank; });
  return Status::Ok();
}

// The micro batch of a row of a file without the column: batch / (D K),
// 0 where that does not divide (as the search writes it).
int64_t OldMicroBatch(const ResultRow& r) {
  const std::optional<int64_t> pieces = CheckedMul(r.dp, r.microbatches);
  if (!pieces || *pieces <= 0 || r.batch % *pieces != 0) return 0;
  return r.batch / *pieces;
}

std::vector<ResultRow> BuildRows(const Columns& c) {
  std::vector<ResultRow> rows;
  rows.reserve(c.index.size());
  for (size_t i = 0; i < c.index.size(); ++i) {
    ResultRow r;
    r.index = c.index[i];
    r.batch = c.batch[i];
    r.dp = c.dp[i];
    r.tp = c.tp[i];
    r.pp = c.pp[i];
    r.microbatches = c.k[i];
    r.schedule = c.schedule[i];
    r.recompute = c.recompute[i] != 0;
    r.zero_stage = c.zero[i];
    r.status = c.status[i];
    r.reason = c.reason[i];
    r.iteration_time_s = c.time[i];
    r.throughput = c.throughput[i];
    r.peak_memory_bytes = c.peak[i];
    r.fits = c.fits[i] != 0;
    r.num_ops = c.ops[i];
    r.rank = c.rank[i];
    if (c.has_exposed) r.exposed_communication_s = c.exposed[i];
    if (c.has_sp) r.sequence_parallel = c.sequence_parallel[i] != 0;
    if (c.has_evaluation) r.evaluation = c.evaluation[i];
    if (c.has_throughput_bound) r.throughput_bound = c.throughput_bound[i];
    if (c.has_megatron) {
      r.virtual_stages = c.virtual_stages[i];
      r.recompute_selective = c.recompute_kind[i] == "selective";
      r.micro_batch = c.micro_batch[i];
    } else {
      r.micro_batch = OldMicroBatch(r);
    }
    if (c.has_step) {
      r.step.tokens_per_s = c.tokens_per_s[i];
      r.step.tflops_per_gpu = c.tflops_per_gpu[i];
      r.step.mfu = c.mfu[i];
      for (size_t k = 0; k < c.memory.size(); ++k) r.step.memory_at_peak[k] = c.memory[k][i];
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

StatusOr<ResultsFile> ReadResultsFile(const std::string& path) {
  DISTIR_ASSIGN_OR_RETURN(Hdf5Reader reader, Hdf5Reader::Open(path));
  DISTIR_RETURN_IF_ERROR(ReadVersion(reader));
  ResultsFile out;
  DISTIR_RETURN_IF_ERROR(ReadMetadata(reader, out));
  Columns columns;
  DISTIR_RETURN_IF_ERROR(ReadColumns(reader, columns));
  DISTIR_ASSIGN_OR_RETURN(out.ranking, reader.ReadInts("/ranking"));
  DISTIR_RETURN_IF_ERROR(CheckColumns(path, columns, out.ranking));
  DISTIR_RETURN_IF_ERROR(CheckRanked(path, columns, out.ranking));
  out.rows = BuildRows(columns);
  out.has_step_figures = columns.has_step;
  DISTIR_RETURN_IF_ERROR(ReadTraces(reader, out));
  DISTIR_RETURN_IF_ERROR(ReadRun(reader, out));
  return out;
}

}  // namespace distir::io
