// mpirun -np N distir run results.h5 --top K [--sample M --seed S]
//     [--iterations N --warmup W] [--backend cpu|cuda] [--trace T.json]
//
// Runs the best configurations of a search for real (docs/backend.md) and
// records the measurements in the results file's /measured group
// (docs/results_format.md). Every rank rebuilds each configuration's program
// from the stored experiment (deterministic, so the ranks agree) and runs its
// own device's program; rank 0 writes the file.

#include <mpi.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "analysis/quantiles.h"
#include "backend/cpu/cpu_executor.h"
#include "backend/executor.h"
#ifdef DISTIR_HAVE_CUDA
#include "backend/gpu/gpu_executor.h"
#endif
#include "interp/infer_types.h"
#include "io/measurements.h"
#include "io/results_file.h"
#include "models/model_zoo.h"
#include "search/experiment.h"
#include "search/model_grid.h"
#include "search/results_table.h"
#include "search/text_table.h"
#include "sharding/grid.h"
#include "support/host_info.h"
#include "support/parallel_for.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct RunFlags {
  std::string results;
  int64_t top = 3;
  int64_t sample = 0;
  uint64_t seed = 0;
  int iterations = 10;
  int warmup = 2;
  std::string backend = "cpu";
  std::string trace;
};

std::string Now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// The top K of the ranking, then M drawn uniformly (seeded) among the rest of
// the ranking (the configurations that fit).
std::vector<int64_t> Choose(const io::ResultsFile& f, const RunFlags& flags) {
  const auto top = std::min<size_t>(static_cast<size_t>(flags.top), f.ranking.size());
  std::vector<int64_t> chosen(f.ranking.begin(), f.ranking.begin() + static_cast<int64_t>(top));
  std::vector<int64_t> rest(f.ranking.begin() + static_cast<int64_t>(top), f.ranking.end());
  std::mt19937_64 rng(flags.seed);
  for (size_t i = 0; i < rest.size() && static_cast<int64_t>(i) < flags.sample; ++i) {
    std::uniform_int_distribution<size_t> pick(i, rest.size() - 1);
    std::swap(rest[i], rest[pick(rng)]);
    chosen.push_back(rest[i]);
  }
  return chosen;
}

// The stored experiment YAML with its hardware file replaced by the stored
// profile (/experiment/hardware_yaml) as an inline map. A relative hardware
// path was relative to the experiment file, whose location the results file
// does not record, so the path cannot be resolved again; the stored profile is
// the one the search used. Everything else (the model and its overrides) is
// kept as data. An inline profile, or no stored profile, leaves the text as is.
StatusOr<std::string> WithStoredHardware(const io::ResultsFile& f, const std::string& path) {
  try {
    YAML::Node root = YAML::Load(f.experiment_yaml);
    // Looked up through a const node: a non-const operator[] would add the key.
    const YAML::Node hardware = std::as_const(root)["hardware"];
    if (!root.IsMap() || !hardware || !hardware.IsScalar() || f.hardware_yaml.empty()) {
      return f.experiment_yaml;
    }
    root["hardware"] = YAML::Load(f.hardware_yaml);
    YAML::Emitter out;
    out << root;
    return std::string(out.c_str());
  } catch (const YAML::Exception& e) {
    return InvalidArgument() << path << ": /experiment/yaml or /experiment/hardware_yaml is not "
                             << "valid YAML: " << e.what();
  }
}

// What the search distributed: the model and its sharding rules, so that the
// run executes the very program the search simulated.
struct SearchedModel {
  ModelSpec model;
  ModelSharding sharding;
  /// The ONNX or DistIR file of `model: {onnx: ...}` / `{distir: ...}`, loaded
  /// again at each row's batch; none for a built-in model.
  std::optional<search::ModelFile> file;
};

// The model of the stored experiment, rebuilt exactly (overrides included) or
// not at all: a model that differs from the one searched would make the
// measured times meaningless next to the simulated ones.
StatusOr<SearchedModel> ModelOf(const io::ResultsFile& f, const std::string& path) {
  DISTIR_ASSIGN_OR_RETURN(std::string yaml, WithStoredHardware(f, path));
  StatusOr<search::Experiment> e = search::ParseExperiment(yaml, path + ":/experiment/yaml");
  if (!e.ok()) {
    return InvalidArgument() << "cannot rebuild the model of the experiment stored in " << path
                             << ": " << e.status().message();
  }
  if (!f.model.empty() && e->model.name != f.model) {
    return InvalidArgument() << path << ": the stored experiment builds model '" << e->model.name
                             << "' but the file says it searched '" << f.model << "'";
  }
  return SearchedModel{e->model, e->sharding, e->model_file};
}

// The program of `row` as the search built it, through the sharding passes
// (sharding/grid.h). Returns the module and the name of the program in it.
StatusOr<std::pair<Module, std::string>> DistributedProgramOf(const SearchedModel& searched,
                                                              const io::ResultRow& row,
                                                              const ParallelOptions& o) {
  Module seq;
  if (searched.file) {
    // Imported (or parsed) and typed at the row's batch, as the search did.
    DISTIR_ASSIGN_OR_RETURN(seq, search::LoadModelFile(*searched.file, row.batch));
  } else {
    DISTIR_ASSIGN_OR_RETURN(seq, BuildModel(WithBatch(searched.model, row.batch)));
    DISTIR_RETURN_IF_ERROR(InferTypes(seq));
  }
  DISTIR_ASSIGN_OR_RETURN(search::ModelGrid g, search::ShardingGridOf(searched.sharding, o));
  const std::string name = seq.entry()->name();
  DISTIR_RETURN_IF_ERROR(sharding::DistributeGrid(seq, name, g.grid, g.rules));
  return std::pair{std::move(seq), name};
}

// Builds, runs and times one configuration on every rank.
// The executor of `flags.backend` ("cpu", or "cuda" in a CUDA build: one GPU
// per rank, src/backend/gpu/gpu_executor.h).
StatusOr<std::unique_ptr<backend::Executor>> MakeExecutor(const backend::ExecutionPlan& plan,
                                                          const RunFlags& flags) {
  if (flags.backend != "cuda") return backend::CreateCpuExecutor(plan, MPI_COMM_WORLD);
#ifdef DISTIR_HAVE_CUDA
  return gpu::MakeGpuExecutor(plan, MPI_COMM_WORLD);
#else
  return Unimplemented() << "the cuda backend is not available in this build (no nvcc found)";
#endif
}

// Wall seconds of a configuration's phases on this rank, printed with the
// progress: on a GPU the host-side set-up (random weights for a billion
// parameters) can take far longer than the timed iterations.
struct Phases {
  double build_s = 0;   ///< distribute, lower, plan memory
  double setup_s = 0;   ///< the executor (device memory, communicators, constants)
  double inputs_s = 0;  ///< random inputs drawn and copied in
  double timed_s = 0;   ///< warm-up and timed iterations
};

// Seconds since `t0`, and `t0` moved to now.
double Lap(std::chrono::steady_clock::time_point& t0) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - t0).count();
  t0 = now;
  return s;
}

StatusOr<backend::TimingResult> RunConfig(const SearchedModel& model, const io::ResultRow& row,
                                          const RunFlags& flags, std::string* trace_json,
                                          Phases& phases) {
  auto t0 = std::chrono::steady_clock::now();
  ParallelOptions o;
  o.dp = row.dp;
  o.tp = row.tp;
  o.pp = row.pp;
  o.microbatches = row.microbatches;
  DISTIR_ASSIGN_OR_RETURN(o.schedule, ParseSchedule(row.schedule));
  o.virtual_stages = row.virtual_stages;
  o.recompute = !row.recompute            ? RecomputeKind::kNone
                : row.recompute_selective ? RecomputeKind::kSelective
                                          : RecomputeKind::kFull;
  o.zero_stage = static_cast<int>(row.zero_stage);
  o.sequence_parallel = row.sequence_parallel;
  DISTIR_ASSIGN_OR_RETURN(auto dist, DistributedProgramOf(model, row, o));
  const auto& [module, program_name] = dist;
  DISTIR_ASSIGN_OR_RETURN(backend::ExecutionPlan plan,
                          backend::PrepareExecution(module, *module.Lookup(program_name)));
  phases.build_s = Lap(t0);
  DISTIR_ASSIGN_OR_RETURN(std::unique_ptr<backend::Executor> exec, MakeExecutor(plan, flags));
  phases.setup_s = Lap(t0);
  DISTIR_RETURN_IF_ERROR(exec->SetRandomInputs(flags.seed));
  phases.inputs_s = Lap(t0);
  backend::TimingOptions t;
  t.warmup = flags.warmup;
  t.iterations = flags.iterations;
  t.batch_size = row.batch;
  t.per_op = trace_json != nullptr;
  DISTIR_ASSIGN_OR_RETURN(backend::TimingResult r, backend::TimeExecutor(*exec, MPI_COMM_WORLD, t));
  phases.timed_s = Lap(t0);
  if (trace_json != nullptr) {
    *trace_json = backend::OpTimingChromeTraceJson(program_name, plan.ranks, r.ops);
  }
  return r;
}

io::MeasuredRow Measure(const SearchedModel& model, const io::ResultRow& row, const RunFlags& flags,
                        int ranks, std::string* trace_json, Phases& phases) {
  io::MeasuredRow m;
  m.config = row.index;
  const int64_t devices = row.dp * row.tp * row.pp;
  if (devices > ranks) {
    m.status = "skipped";
    m.reason = "needs " + std::to_string(devices) + " devices, the job has " +
               std::to_string(ranks) + " ranks";
    return m;
  }
  StatusOr<backend::TimingResult> r = RunConfig(model, row, flags, trace_json, phases);
  if (!r.ok()) {
    m.status = "error";
    m.reason = r.status().message();
    return m;
  }
  m.status = "ok";
  m.iteration_time_s = r->median_s;
  m.throughput = r->throughput;
  m.iterations = static_cast<int64_t>(r->iteration_s.size());
  m.planned_peak_bytes = r->planned_peak_bytes;
  // The spread of the repeated iterations: `distir validate` counts two
  // configurations whose interquartile ranges overlap as tied within noise.
  const analysis::FiveNumbers spread = analysis::SummarizeSample(r->iteration_s);
  m.time_min_s = spread.min;
  m.time_q1_s = spread.q1;
  m.time_q3_s = spread.q3;
  m.time_max_s = spread.max;
  m.iteration_times_s = r->iteration_s;
  return m;
}

// One row of the table of runs: `knobs` of the configuration, its simulated
// time, and what the run measured (blank when it did not run), with the reason
// when `notes`.
std::vector<std::string> RunCells(const io::ResultRow& row, const io::MeasuredRow& m,
                                  const std::vector<search::Knob>& knobs, search::ByteUnit unit,
                                  bool notes) {
  std::vector<std::string> cells{std::to_string(row.index)};
  for (search::Knob k : knobs) cells.push_back(search::KnobValue(row, k));
  cells.push_back(m.status);
  cells.push_back(search::FormatFixed(row.iteration_time_s * 1e3, 3));
  const bool ok = m.status == "ok";
  cells.push_back(ok ? search::FormatFixed(m.iteration_time_s * 1e3, 3) : "");
  cells.push_back(ok ? search::FormatFixed((m.time_q3_s - m.time_q1_s) * 1e3, 3) : "");
  cells.push_back(ok ? search::FormatFixed(m.throughput, 1) : "");
  cells.push_back(ok ? search::FormatBytes(m.planned_peak_bytes, unit) : "");
  if (notes) cells.push_back(m.reason);
  return cells;
}

// The table of runs, with the knobs that differ between the configurations
// run as columns and the constant ones named above it (search/results_table.h).
void PrintRuns(const io::ResultsFile& f, const io::Measurements& runs, std::ostream& os) {
  os << "ran " << runs.rows.size() << " configurations of " << f.experiment_name << " ("
     << search::ModelLabel(f) << ") on " << runs.ranks << " ranks, " << runs.backend << " backend, "
     << DescribeHost(runs.host) << "\n";
  if (runs.rows.empty()) return;
  std::vector<const io::ResultRow*> configs;
  std::vector<int64_t> planned;
  for (const io::MeasuredRow& m : runs.rows) {
    configs.push_back(&f.rows[static_cast<size_t>(m.config)]);
    planned.push_back(m.planned_peak_bytes);
  }
  const search::KnobSplit split =
      search::SplitKnobs(configs, search::TableKnobs(f));
  if (!split.constant.empty()) {
    os << search::ConstantKnobsLine(*configs.front(), split.constant) << "\n";
  }
  const search::ByteUnit unit = search::ChooseByteUnit(planned);
  using Align = search::TextTable::Align;
  search::TextTable table;
  table.AddColumn("config", Align::kRight);
  for (search::Knob k : split.varying) {
    table.AddColumn(std::string(search::KnobLabel(k)),
                    search::IsNumericKnob(k) ? Align::kRight : Align::kLeft);
  }
  table.AddColumn("status", Align::kLeft);
  table.AddColumn("sim (ms)", Align::kRight);
  table.AddColumn("measured (ms)", Align::kRight);
  table.AddColumn("IQR (ms)", Align::kRight);
  table.AddColumn("samples/s", Align::kRight);
  table.AddColumn(std::string("planned peak (") + unit.name + ")", Align::kRight);
  const bool notes = std::any_of(runs.rows.begin(), runs.rows.end(),
                                 [](const io::MeasuredRow& m) { return !m.reason.empty(); });
  if (notes) table.AddColumn("note", Align::kLeft);
  for (size_t i = 0; i < runs.rows.size(); ++i) {
    table.AddRow(RunCells(*configs[i], runs.rows[i], split.varying, unit, notes));
  }
  table.Print(os);
}

int RunOn(const RunFlags& flags, int rank, int ranks) {
  StatusOr<backend::BackendKind> kind = backend::ParseBackend(flags.backend);
  if (!kind.ok()) return rank == 0 ? ReportError(kind.status()) : kExitInputError;
#ifndef DISTIR_HAVE_CUDA
  if (*kind != backend::BackendKind::kCpu) {
    if (rank == 0) std::cerr << "distir run: the cuda backend is not available in this build\n";
    return kExitInputError;
  }
#endif
  StatusOr<io::ResultsFile> f = io::ReadResultsFile(flags.results);
  if (!f.ok()) return rank == 0 ? ReportError(f.status()) : kExitInputError;
  StatusOr<SearchedModel> model = ModelOf(*f, flags.results);
  if (!model.ok()) return rank == 0 ? ReportError(model.status()) : kExitInputError;
  io::Measurements out;
  out.backend = flags.backend;
  out.ranks = ranks;
  out.started_at = Now();
  out.host = CurrentHost();  // rank 0's, written by rank 0
  out.has_spread = true;
  const std::vector<int64_t> chosen = Choose(*f, flags);
  if (rank == 0 && UsableCores() == 1 && std::thread::hardware_concurrency() > 1) {
    // OpenMPI binds a rank to one core when there are at most two; drawing a
    // billion-parameter program's inputs then takes tens of seconds per config.
    std::cerr << "[run] this rank may run on 1 of " << std::thread::hardware_concurrency()
              << " cores (mpirun bound it to a core), so its inputs are drawn on one: "
                 "mpirun --bind-to none (or --map-by ...:PE=N) gives it more\n";
  }
  for (int64_t index : chosen) {
    const io::ResultRow& row = f->rows[static_cast<size_t>(index)];
    std::string trace;
    const bool traced = !flags.trace.empty() && out.rows.empty();
    Phases phases;
    io::MeasuredRow m = Measure(*model, row, flags, ranks, traced ? &trace : nullptr, phases);
    if (rank == 0) {
      // The table comes at the end, when its columns are known; progress now.
      std::cerr << "[run] " << out.rows.size() + 1 << "/" << chosen.size() << ": config " << index
                << " " << m.status;
      if (m.status == "ok") {
        std::cerr << std::fixed << std::setprecision(2) << " (build " << phases.build_s
                  << " s, set-up " << phases.setup_s << " s, inputs " << phases.inputs_s
                  << " s, timed " << phases.timed_s << " s)" << std::defaultfloat;
      }
      std::cerr << "\n";
    }
    if (rank == 0 && traced && m.status == "ok") std::ofstream(flags.trace) << trace;
    out.rows.push_back(std::move(m));
  }
  if (rank != 0) return kExitOk;
  PrintRuns(*f, out, std::cout);
  if (Status s = io::WriteMeasurements(flags.results, out); !s.ok()) return ReportError(s);
  std::cerr << "[run] " << out.rows.size() << " configurations on " << ranks
            << " ranks; wrote /measured to " << flags.results << "\n";
  return kExitOk;
}

}  // namespace

int RunRun(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  RunFlags f;
  po::options_description desc(
      "usage: mpirun -np N distir run RESULTS.h5 [--top K] [--sample M --seed S]\n"
      "         [--iterations N --warmup W] [--backend cpu|cuda] [--trace T.json]\n\n"
      "Runs the top K configurations of a search and M more drawn at random among\n"
      "those that fit, one MPI rank per device (docs/backend.md); a configuration\n"
      "needing more devices than the job has ranks is skipped. The median iteration\n"
      "time and throughput, the spread of the timed iterations (min, quartiles, max,\n"
      "every time) and this host go to the file's /measured group\n"
      "(docs/results_format.md).\n\noptions");
  desc.add_options()("help,h", "print this help")("top", po::value(&f.top)->default_value(3),
                                                  "the K best configurations")(
      "sample", po::value(&f.sample)->default_value(0), "M more, uniformly among the rest")(
      "seed", po::value(&f.seed)->default_value(0), "seed of the sample and of the inputs")(
      "iterations", po::value(&f.iterations)->default_value(10), "timed iterations")(
      "warmup", po::value(&f.warmup)->default_value(2), "untimed iterations first")(
      "backend", po::value(&f.backend)->default_value("cpu"), "cpu or cuda")(
      "trace", po::value(&f.trace), "per-op Chrome trace of the first configuration run")(
      "input", po::value(&f.results), "results file");
  po::variables_map vm;
  int code = kExitOk;
  if (std::optional<int> stop = ParseCommandLine("run", argc, argv, desc, vm)) {
    code = *stop;
  } else if (f.results.empty() || f.top < 0 || f.sample < 0 || f.iterations < 1 || f.warmup < 0) {
    if (rank == 0)
      std::cerr
          << "distir run: need RESULTS.h5, --top/--sample >= 0, --iterations >= 1 (see --help)\n";
    code = kExitUsage;
  } else {
    code = RunOn(f, rank, ranks);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}

}  // namespace distir::tools
