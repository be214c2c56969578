// distir search EXPERIMENT.yaml [-o results.h5] [--quiet]   (under mpirun -np N)

#include <mpi.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "io/results_file.h"
#include "search/experiment.h"
#include "search/grid_search.h"
#include "search/journal.h"
#include "search/results_table.h"
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
    row.recompute = c.options.recompute;
    row.zero_stage = c.options.zero_stage;
    row.status = search::StatusName(r.status);
    row.reason = r.reason;
    row.iteration_time_s = r.iteration_time_s;
    row.throughput = r.throughput;
    row.peak_memory_bytes = r.peak_memory_bytes;
    row.fits = r.fits;
    row.num_ops = r.num_ops;
    row.rank = position[static_cast<size_t>(c.index)];
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

// Rank 0: the traces of the best configurations, the file, the table.
int Finish(const search::Experiment& e, const search::SearchOutcome& out, const SearchFlags& f) {
  io::ResultsFile file = Assemble(e, out);
  search::Evaluator evaluator(e);
  for (int64_t i = 0; i < std::min<int64_t>(e.traces, static_cast<int64_t>(out.ranking.size())); ++i) {
    io::TraceRecord t;
    t.config = out.ranking[static_cast<size_t>(i)];
    t.rank = i + 1;
    Status traced = evaluator.Trace(out.configs[static_cast<size_t>(t.config)], t);
    if (!traced.ok()) return ReportError(traced);
    file.traces.push_back(std::move(t));
  }
  const std::string path = f.output.empty() ? e.output : f.output;
  if (Status written = io::WriteResultsFile(path, file); !written.ok()) return ReportError(written);
  // The results are safe in the file: the journal has served its purpose.
  if (Status removed = search::RemoveJournal(search::JournalDir(path)); !removed.ok()) {
    std::cerr << "distir search: warning: " << removed.message() << "\n";
  }
  PrintTop(file, std::cout);
  std::cerr << "[search] " << out.configs.size() << " configurations on " << out.ranks
            << " ranks in " << std::fixed << std::setprecision(2) << out.wall_time_s << " s ("
            << std::setprecision(1) << static_cast<double>(out.configs.size()) / std::max(out.wall_time_s, 1e-9)
            << " configs/s); wrote " << path << "\n";
  return kExitOk;
}

int RunOn(const SearchFlags& f, int rank) {
  StatusOr<std::string> text = ReadInput(f.experiment);
  if (!text.ok()) return rank == 0 ? ReportError(text.status()) : kExitInputError;
  StatusOr<search::Experiment> e = search::ParseExperiment(*text, f.experiment);
  if (!e.ok()) return rank == 0 ? ReportError(e.status(), *text) : kExitInputError;
  const std::string path = f.output.empty() ? e->output : f.output;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    if (rank == 0) std::cerr << "distir search: output directory '" << dir.string() << "' does not exist\n";
    return kExitInputError;
  }
  if (search::EnumerateConfigs(*e).empty()) {
    if (rank == 0) {
      std::cerr << f.experiment << ": error: the search space has no configuration (check "
                << "world_size, constraints.world and space.dp/tp/pp)\n";
    }
    return kExitInputError;
  }
  search::SearchOptions options;
  options.progress = f.quiet ? nullptr : &std::cerr;
  options.journal_dir = search::JournalDir(path);
  options.resume = f.resume;
  options.tool_revision = GitRevision();
  StatusOr<search::SearchOutcome> out = search::RunGridSearch(*e, MPI_COMM_WORLD, options);
  if (!out.ok()) return rank == 0 ? ReportError(out.status()) : kExitInputError;
  return rank == 0 ? Finish(*e, *out, f) : kExitOk;
}

}  // namespace

int RunSearch(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  sim::RetainFreedMemory();
  SearchFlags f;
  po::options_description desc(
      "usage: [mpirun -np N] distir search EXPERIMENT.yaml [-o results.h5] [--resume]\n\n"
      "Simulates every configuration of the experiment (docs/configs.md), each MPI\n"
      "rank a balanced slice; rank 0 ranks them and writes the HDF5 results\n"
      "(docs/results_format.md) and prints the 10 best (with several global batches,\n"
      "the best of each batch, ranked within it). Finished configurations are\n"
      "journaled in RESULTS.journal/ as they complete, so that a killed search can be\n"
      "resumed with --resume; the journal is removed once the results file is written.\n\noptions");
  desc.add_options()("help,h", "print this help")(
      "output,o", po::value(&f.output), "results file (default: the experiment's output)")(
      "quiet,q", po::bool_switch(&f.quiet), "no progress lines on stderr")(
      "resume", po::bool_switch(&f.resume),
      "reuse the results a killed run of the same experiment left in RESULTS.journal/ and "
      "compute only the rest")(
      "input", po::value(&f.experiment), "experiment file");
  po::variables_map vm;
  int code = kExitOk;
  if (std::optional<int> stop = ParseCommandLine("search", argc, argv, desc, vm)) {
    code = *stop;
  } else if (f.experiment.empty()) {
    if (rank == 0) std::cerr << "distir search: missing EXPERIMENT.yaml (see --help)\n";
    code = kExitUsage;
  } else {
    code = RunOn(f, rank);
  }
  // Every rank exits with rank 0's code.
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}

}  // namespace distir::tools
