// distir report RESULTS.h5 [--top N] [--batch B] [--where KNOB=VALUE ...] | [--csv]

#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "io/results_file.h"
#include "search/results_table.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

// RFC 4180 quoting for the free-text reason.
std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The /configs columns, one row each; a transformer step's figures at the end.
void PrintCsv(const io::ResultsFile& f, std::ostream& os) {
  os << "rank,index,batch,dp,tp,pp,microbatches,schedule,recompute,zero_stage,status,reason,"
        "iteration_time_s,throughput,peak_memory_bytes,fits,num_ops,exposed_communication_s";
  if (f.has_step_figures) {
    os << ",tokens_per_s,tflops_per_gpu,mfu";
    for (const char* kind : io::kMemoryKindColumns) os << ",memory_" << kind << "_bytes";
  }
  // Added last (issue #17), so that readers of the older columns by position still work.
  os << ",virtual_stages,recompute_kind,micro_batch,sequence_parallel";
  os << "\n" << std::setprecision(17);
  for (const io::ResultRow& r : f.rows) {
    os << r.rank << "," << r.index << "," << r.batch << "," << r.dp << "," << r.tp << "," << r.pp
       << "," << r.microbatches << "," << r.schedule << "," << (r.recompute ? 1 : 0) << ","
       << r.zero_stage << "," << r.status << "," << Csv(r.reason) << "," << r.iteration_time_s
       << "," << r.throughput << "," << r.peak_memory_bytes << "," << (r.fits ? 1 : 0) << ","
       << r.num_ops << "," << r.exposed_communication_s;
    if (f.has_step_figures) {
      os << "," << r.step.tokens_per_s << "," << r.step.tflops_per_gpu << "," << r.step.mfu;
      for (int64_t bytes : r.step.memory_at_peak) os << "," << bytes;
    }
    os << "," << r.virtual_stages << ","
       << (!r.recompute            ? "none"
           : r.recompute_selective ? "selective"
                                   : "full")
       << "," << r.micro_batch << "," << (r.sequence_parallel ? 1 : 0);
    os << "\n";
  }
}

void PrintSummary(const io::ResultsFile& f, std::ostream& os) {
  int64_t ok = 0, invalid = 0, error = 0, too_large = 0, pruned = 0, skipped = 0, fit = 0;
  for (const io::ResultRow& r : f.rows) {
    ok += r.status == "ok";
    invalid += r.status == "invalid";
    error += r.status == "error";
    too_large += r.status == "too-large";
    pruned += r.status == "pruned";
    skipped += r.status == "skipped";
    fit += r.status == "ok" && r.fits;
  }
  os << "experiment " << f.experiment_name << ": " << search::ModelLabel(f) << " on " << f.hardware
     << " (" << f.tool_version << ")\n"
     << f.rows.size() << " configurations: " << ok << " simulated (" << fit << " fit in memory), "
     << invalid << " invalid, " << error << " failed";
  if (too_large > 0) os << ", " << too_large << " too large to simulate (--max-memory)";
  if (pruned > 0)
    os << ", " << pruned
       << " pruned (a lower bound of their memory, parameters with weight gradients or with "
          "the activations of the first backward, exceeds memory_limit)";
  if (skipped > 0) os << ", " << skipped << " not evaluated (the strategy's budget)";
  os << "\n";
  // How far the best can be from the whole space's, by the bounds of the
  // configurations left unsimulated (docs/cost_model.md §3.4).
  if (f.optimum_gap && skipped + too_large + error > 0) {
    os << "optimum gap: the best configuration of the space is at most " << std::fixed
       << std::setprecision(1) << 100 * *f.optimum_gap
       << " % above the best simulated (throughput bounds of the " << skipped + too_large + error
       << " not simulated)\n"
       << std::defaultfloat;
  }
}

struct ReportFlags {
  std::string input;
  bool csv = false;
  int64_t top = 0;
  int64_t batch = 0;
  std::vector<std::string> where;
};

// The ranking options of the flags; InvalidArgument names the bad flag.
StatusOr<search::RankingOptions> ToRankingOptions(const ReportFlags& flags,
                                                  const po::variables_map& vm) {
  if (flags.csv && (vm.count("top") || vm.count("batch") || !flags.where.empty())) {
    return InvalidArgument() << "--csv prints every configuration; --top, --batch and --where "
                                "select rows of the ranking";
  }
  if (vm.count("top") && flags.top < 1) {
    return InvalidArgument() << "--top must be >= 1, got " << flags.top;
  }
  search::RankingOptions o;
  o.top = flags.top;
  if (vm.count("batch")) o.batch = flags.batch;
  for (const std::string& text : flags.where) {
    DISTIR_ASSIGN_OR_RETURN(search::KnobFilter filter, search::ParseKnobFilter(text));
    o.where.push_back(filter);
  }
  return o;
}

int Report(const ReportFlags& flags, const search::RankingOptions& options) {
  StatusOr<io::ResultsFile> f = io::ReadResultsFile(flags.input);
  if (!f.ok()) return ReportError(f.status());
  if (flags.csv) {
    PrintCsv(*f, std::cout);
    return kExitOk;
  }
  // The ranking goes to a buffer first: a bad --batch prints nothing but the error.
  std::ostringstream ranking;
  if (Status s = search::PrintRanking(*f, options, ranking); !s.ok()) {
    return ReportError(InvalidArgument(SourceLoc{flags.input, 0, 0, ""}) << s.message());
  }
  PrintSummary(*f, std::cout);
  std::cout << ranking.str();
  return kExitOk;
}

}  // namespace

int RunReport(int argc, char** argv) {
  ReportFlags flags;
  po::options_description desc(
      "usage: distir report RESULTS.h5 [--top N] [--batch B] [--where KNOB=VALUE ...]\n"
      "       distir report RESULTS.h5 --csv\n\n"
      "Prints a summary of a search's results and the configurations that fit in\n"
      "memory, ranked by throughput within each global batch: one table per batch,\n"
      "showing the knobs that differ between its rows (the constant ones are named\n"
      "above it). With --csv, prints every configuration as CSV instead, one row\n"
      "each (docs/results_format.md).\n\noptions");
  desc.add_options()("help,h", "print this help")("top", po::value(&flags.top),
                                                  "the N best of each batch (default: all)")(
      "batch", po::value(&flags.batch), "only the configurations of global batch B")(
      "where", po::value(&flags.where)->composing(),
      "only the configurations whose KNOB (a /configs column: batch, dp, tp, pp, "
      "virtual_stages, microbatches, micro_batch, schedule, recompute, zero_stage) has VALUE, e.g. "
      "tp=8; repeatable: "
      "different knobs must all match, values of one knob are alternatives")(
      "csv", po::bool_switch(&flags.csv), "print every configuration as CSV")(
      "input", po::value(&flags.input), "results file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("report", argc, argv, desc, vm)) return *stop;
  if (flags.input.empty()) {
    std::cerr << "distir report: missing RESULTS.h5 (see --help)\n";
    return kExitUsage;
  }
  StatusOr<search::RankingOptions> options = ToRankingOptions(flags, vm);
  if (!options.ok()) {
    std::cerr << "distir report: " << options.status().message() << " (see --help)\n";
    return kExitUsage;
  }
  return Report(flags, *options);
}

}  // namespace distir::tools
