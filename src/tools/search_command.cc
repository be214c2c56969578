// distir search EXPERIMENT.yaml [-o results.h5] [--resume] [--quiet] [--exact-full] [--op-by-op]
// (under mpirun -np N)

#include <mpi.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <optional>
#include <vector>

#include "io/output_claim.h"
#include "io/results_file.h"
#include "search/experiment.h"
#include "search/grid_search.h"
#include "search/journal.h"
#include "search/memory_estimate.h"
#include "search/ranks.h"
#include "search/results_table.h"
#include "search/step_metrics.h"
#include "search/throughput_bound.h"
#include "sim/simulator.h"
#include "support/check.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct SearchFlags {
  std::string experiment;
  std::string output;
  bool quiet = false;
  bool resume = false;
  bool exact_full = false;
  bool op_by_op = false;
  bool build_all_templates = false;
  std::string max_memory;  // as given; "" for the default
};

std::string Now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

io::ResultsFile Assemble(const search::Experiment& e, const search::SearchOutcome& out) {
  io::ResultsFile f;
  f.experiment_name = e.name;
  f.model = e.model.name;
  f.hardware = e.hardware.name;
  f.experiment_yaml = e.yaml_text;
  f.hardware_yaml = e.hardware_text;
  f.tool_version = VersionString();
  f.git_revision = GitRevision();
  f.memory_limit_bytes = e.memory_limit_bytes;
  f.has_step_figures = search::RecordsStepFigures(e);
  f.ranking = out.ranking;
  std::vector<int64_t> position(out.configs.size(), 0);
  for (size_t i = 0; i < out.ranking.size(); ++i) position[static_cast<size_t>(out.ranking[i])] = static_cast<int64_t>(i) + 1;
  for (const search::Config& c : out.configs) {
    const search::ConfigResult& r = out.results[static_cast<size_t>(c.index)];
    io::ResultRow row;
    row.index = c.index;
    row.batch = c.batch;
    row.dp = c.options.dp;
    row.tp = c.options.tp;
    row.pp = c.options.pp;
    row.microbatches = c.options.microbatches;
    row.schedule = std::string(ScheduleName(c.options.schedule));
    row.recompute = c.options.recompute != RecomputeKind::kNone;
    row.recompute_selective = c.options.recompute == RecomputeKind::kSelective;
    row.zero_stage = c.options.zero_stage;
    row.virtual_stages = c.options.virtual_stages;
    row.micro_batch = c.micro_batch;
    row.sequence_parallel = c.options.sequence_parallel;
    row.status = search::StatusName(r.status);
    row.reason = r.reason;
    row.iteration_time_s = r.iteration_time_s;
    row.throughput = r.throughput;
    row.peak_memory_bytes = r.peak_memory_bytes;
    row.fits = r.fits;
    row.num_ops = r.num_ops;
    row.rank = position[static_cast<size_t>(c.index)];
    row.exposed_communication_s = r.exposed_communication_s;
    row.step = r.step;
    row.evaluation = search::EvaluationName(r.evaluation);
    f.rows.push_back(std::move(row));
  }
  f.ranks = out.ranks;
  f.wall_time_s = out.wall_time_s;
  f.started_at = Now();
  return f;
}

// The summary: about kSummaryRows configurations, the best of each global
// batch (throughput is only comparable at one batch), in one table.
constexpr int64_t kSummaryRows = 10;

void PrintTop(const io::ResultsFile& f, std::ostream& os) {
  const auto batches = std::max<int64_t>(static_cast<int64_t>(search::BatchesOf(f).size()), 1);
  search::RankingOptions o;
  o.top = (kSummaryRows + batches - 1) / batches;
  o.table_per_batch = false;
  os << "top configurations of " << f.experiment_name << " (" << search::ModelLabel(f) << " on "
     << f.hardware << "), " << f.ranking.size() << " of " << f.rows.size() << " fit in memory";
  if (batches > 1) os << "; the best " << o.top << " of each batch, ranked within it";
  os << "\n";
  Status printed = search::PrintRanking(f, o, os);
  DISTIR_CHECK(printed.ok()) << "a ranking without --batch always prints";
}

// Each row's throughput bound (the search's, where it computed them) and the
// file's optimum gap (search/throughput_bound.h).
search::OptimumGap BoundAndGap(search::Evaluator& evaluator, const search::SearchOutcome& out,
                               io::ResultsFile& file) {
  std::vector<double> bounds = out.bounds;
  if (bounds.size() != out.configs.size()) {
    bounds.assign(out.configs.size(), 0);
    for (const search::Config& c : out.configs)
      bounds[static_cast<size_t>(c.index)] = evaluator.ThroughputBound(c);
  }
  for (size_t i = 0; i < bounds.size(); ++i) file.rows[i].throughput_bound = bounds[i];
  search::OptimumGap gap = search::GapOf(out.results, bounds, out.ranking);
  file.optimum_gap = gap.gap;
  return gap;
}

// One line, where some configuration was left unsimulated: how far the best
// found can be from the optimum of the space.
void PrintGap(const io::ResultsFile& f, const search::OptimumGap& gap, std::ostream& os) {
  if (gap.best < 0 || gap.open == 0) return;
  os << "optimum gap: " << gap.open << " configurations not simulated";
  if (!gap.gap) {
    os << ", some without a throughput bound: gap unknown\n";
    return;
  }
  os << ", none above " << std::fixed << std::setprecision(1) << gap.open_bound
     << " samples/s (their bound): the optimum is at most " << 100 * *gap.gap
     << " % above the best found (" << f.rows[static_cast<size_t>(gap.best)].throughput
     << " samples/s)\n"
     << std::defaultfloat;
}

// Rank 0: the traces of the best configurations, the file, the table.
// `path` is the claimed output (symbolic links resolved); `shown` as given.
int Finish(const search::Experiment& e, const search::SearchOutcome& out, const std::string& path,
           const std::string& shown, int64_t max_memory) {
  io::ResultsFile file = Assemble(e, out);
  search::EvaluatorOptions options;
  options.max_memory_bytes = max_memory;
  search::Evaluator evaluator(e, options);
  const search::OptimumGap gap = BoundAndGap(evaluator, out, file);
  for (int64_t i = 0; i < std::min<int64_t>(e.traces, static_cast<int64_t>(out.ranking.size())); ++i) {
    io::TraceRecord t;
    t.config = out.ranking[static_cast<size_t>(i)];
    t.rank = i + 1;
    Status traced = evaluator.Trace(out.configs[static_cast<size_t>(t.config)], t);
    // A trace too large for the memory limit is left out; the results are not.
    if (traced.code() == StatusCode::kResourceExhausted) {
      std::cerr << "distir search: warning: no trace of configuration " << t.config << " (rank "
                << t.rank << "): it " << traced.message() << "\n";
      continue;
    }
    if (!traced.ok()) return ReportError(traced);
    file.traces.push_back(std::move(t));
  }
  if (Status written = io::WriteResultsFile(path, file); !written.ok()) return ReportError(written);
  // The results are safe in the file: the journal has served its purpose.
  if (Status removed = search::RemoveJournal(search::JournalDir(path)); !removed.ok()) {
    std::cerr << "distir search: warning: " << removed.message() << "\n";
  }
  PrintTop(file, std::cout);
  PrintGap(file, gap, std::cout);
  std::cerr << "[search] " << out.configs.size() << " configurations on " << out.ranks
            << " ranks in " << std::fixed << std::setprecision(2) << out.wall_time_s << " s ("
            << std::setprecision(1)
            << static_cast<double>(out.configs.size()) / std::max(out.wall_time_s, 1e-9)
            << " configs/s); wrote " << shown << "\n";
  return kExitOk;
}

// The files of the run that the results must not overwrite.
std::vector<io::RunInput> InputsOf(const SearchFlags& f, const search::Experiment& e) {
  std::vector<io::RunInput> inputs = {{"the experiment file", f.experiment},
                                      {"the experiment's hardware profile", e.hardware_path}};
  if (e.model_file) inputs.push_back({"the experiment's model file", e.model_file->path});
  return inputs;
}

// Rank 0 claims the output for the whole run (io/output_claim.h: checks, lock,
// stale .tmp); every rank learns the claimed path, or that the claim failed
// (the error is rank 0's to report). Collective.
Status ClaimOutput(const std::string& shown, const std::vector<io::RunInput>& inputs,
                   MPI_Comm world, int rank, io::OutputClaim& claim, std::string& target) {
  Status status;
  if (rank == 0) {
    StatusOr<io::OutputClaim> claimed = io::ClaimOutput(shown, inputs);
    status = claimed.status();
    if (claimed.ok()) claim = std::move(claimed).value();
    target = claim.target();
  }
  int size = status.ok() ? static_cast<int>(target.size()) : -1;
  search::BroadcastFromFirst(&size, 1, MPI_INT, world);
  if (size < 0) return rank == 0 ? status : Internal() << "rank 0 could not claim the output";
  target.resize(static_cast<size_t>(size));
  search::BroadcastFromFirst(target.data(), size, MPI_CHAR, world);
  if (rank == 0 && !claim.removed_stale_tmp().empty()) {
    std::cerr << "distir search: removed '" << claim.removed_stale_tmp()
              << "', the unfinished results file of an interrupted run\n";
  }
  return Status::Ok();
}

// Searches, then rank 0 writes. On failure rank 0 removes the journal when this
// run made it (search::JournalCleanup); WriteResultsFile removes its .tmp.
int SearchAndFinish(const search::Experiment& e, const SearchFlags& f, const std::string& target,
                    MPI_Comm world, int rank, int64_t max_memory) {
  search::SearchOptions options;
  options.max_memory_bytes = max_memory;
  options.progress = f.quiet ? nullptr : &std::cerr;
  options.warnings = &std::cerr;
  options.journal_dir = search::JournalDir(target);
  options.resume = f.resume;
  options.exact_full = f.exact_full;
  options.op_by_op = f.op_by_op;
  options.build_all_templates = f.build_all_templates;
  options.tool_revision = GitRevision();
  std::optional<search::JournalCleanup> cleanup;
  if (rank == 0) cleanup.emplace(options.journal_dir, f.resume, &std::cerr);
  StatusOr<search::SearchOutcome> out = search::RunGridSearch(e, world, options);
  if (rank != 0) return out.ok() ? kExitOk : kExitInputError;
  const std::string shown = f.output.empty() ? e.output : f.output;
  const int code =
      out.ok() ? Finish(e, *out, target, shown, max_memory) : ReportError(out.status());
  if (code == kExitOk) cleanup->Dismiss();  // Finish removed the journal itself
  return code;
}

// The ranks of `world` on this machine (collective); 1 without MPI.
int RanksOnThisMachine(MPI_Comm world) {
  if (world == MPI_COMM_NULL) return 1;
  MPI_Comm local;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int size = 1;
  MPI_Comm_size(local, &size);
  MPI_Comm_free(&local);
  return size;
}

int RunOn(const SearchFlags& f, MPI_Comm world, int rank) {
  // Each rank builds its own configurations: by default they share 80% of the
  // machine's memory (search/memory_estimate.h).
  const int local_ranks = RanksOnThisMachine(world);
  StatusOr<int64_t> max_memory = f.max_memory.empty() ? search::DefaultMaxMemory(local_ranks)
                                                      : search::ParseMaxMemory(f.max_memory);
  if (!max_memory.ok()) return rank == 0 ? ReportError(max_memory.status()) : kExitInputError;
  StatusOr<std::string> text = ReadInput(f.experiment);
  if (!text.ok()) return rank == 0 ? ReportError(text.status()) : kExitInputError;
  std::string source;  // the text the error points into: the experiment's or its profile's
  StatusOr<search::Experiment> e = search::ParseExperiment(*text, f.experiment, &source);
  if (!e.ok()) return rank == 0 ? ReportError(e.status(), source) : kExitInputError;
  // Before any work: the output is checked and locked until the results are written.
  io::OutputClaim claim;
  std::string target;
  const std::string shown = f.output.empty() ? e->output : f.output;
  Status claimed = ClaimOutput(shown, InputsOf(f, *e), world, rank, claim, target);
  if (!claimed.ok()) return rank == 0 ? ReportError(claimed) : kExitInputError;
  return SearchAndFinish(*e, f, target, world, rank, *max_memory);
}

}  // namespace

int RunSearch(int argc, char** argv) {
  // Started without mpirun, the search is one process without MPI
  // (search/ranks.h: Open MPI's singleton start costs more than a small
  // search).
  const bool mpi = search::LaunchedByMpi();
  if (mpi) MPI_Init(&argc, &argv);
  const MPI_Comm world = mpi ? MPI_COMM_WORLD : MPI_COMM_NULL;
  const int rank = search::RankIn(world);
  sim::RetainFreedMemory();
  SearchFlags f;
  po::options_description desc(
      "usage: [mpirun -np N] distir search EXPERIMENT.yaml [-o results.h5] [--resume]\n\n"
      "Simulates every configuration of the experiment (docs/configs.md), each MPI\n"
      "rank a balanced slice; rank 0 ranks them and writes the HDF5 results\n"
      "(docs/results_format.md) and prints the 10 best (with several global batches,\n"
      "the best of each batch, ranked within it). RESULTS is checked and locked\n"
      "(RESULTS.lock) before the search starts: a second search of the same file fails\n"
      "at once; a symbolic link is written through. Finished configurations are\n"
      "journaled in RESULTS.journal/ as they complete, so that a killed search can be\n"
      "resumed with --resume; the journal is removed once the results file is written.\n\noptions");
  desc.add_options()("help,h", "print this help")(
      "output,o", po::value(&f.output), "results file (default: the experiment's output)")(
      "quiet,q", po::bool_switch(&f.quiet), "no progress lines on stderr")(
      "resume", po::bool_switch(&f.resume),
      "reuse the results a killed run of the same experiment left in RESULTS.journal/ and "
      "compute only the rest")(
      "exact-full", po::bool_switch(&f.exact_full),
      "build and simulate every configuration's whole program, also where the sharding path "
      "would simulate a pipeline as copies of its one-microbatch template (the same results, "
      "slower; docs/cost_model.md §3.2)")(
      "op-by-op", po::bool_switch(&f.op_by_op),
      "simulate a pipeline's copies op by op, not composed per kind of segment (the same "
      "peaks, the same times to rounding, slower; docs/cost_model.md §3.3)")(
      "build-all-templates", po::bool_switch(&f.build_all_templates),
      "build the template of every configuration whole, also where the search would write it "
      "from two built ones of the same configuration at other micro-batches or with fewer "
      "layers (the same results, slower; docs/cost_model.md §3.2, §3.6)")(
      "max-memory", po::value(&f.max_memory),
      "skip as too-large, before building it, every configuration whose program distir "
      "estimates to need more memory than SIZE per rank to build and simulate (e.g. 4GiB; "
      "'none': no limit; default: 80% of this machine's memory divided by the ranks on it)")(
      "input", po::value(&f.experiment), "experiment file");
  po::variables_map vm;
  int code = kExitOk;
  if (std::optional<int> stop = ParseCommandLine("search", argc, argv, desc, vm)) {
    code = *stop;
  } else if (f.experiment.empty()) {
    if (rank == 0) std::cerr << "distir search: missing EXPERIMENT.yaml (see --help)\n";
    code = kExitUsage;
  } else {
    code = RunOn(f, world, rank);
  }
  // Every rank exits with rank 0's code.
  search::BroadcastFromFirst(&code, 1, MPI_INT, world);
  if (mpi) MPI_Finalize();
  return code;
}

}  // namespace distir::tools
