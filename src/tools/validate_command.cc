// distir validate RESULTS.h5
//
// Compares the simulated configurations of a results file (/configs) with the
// ones `distir run` measured (/measured): Spearman rho with its p-value and
// Kendall tau of the throughputs, MAPE of the iteration times and whether the
// simulator's best is the measured best (src/analysis). Prints them and stores
// them as /validation (io/validation_file.h; docs/results_format.md).

#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>

#include "analysis/validation_stats.h"
#include "io/measurements.h"
#include "io/results_file.h"
#include "io/validation_file.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

// The measured "ok" rows that name a simulated "ok" row, in /measured order.
StatusOr<std::vector<analysis::ValidationPair>> Pair(const std::string& path,
                                                     const io::ResultsFile& simulated,
                                                     const io::Measurements& measured) {
  std::vector<analysis::ValidationPair> pairs;
  for (const io::MeasuredRow& m : measured.rows) {
    if (m.status != "ok") continue;
    if (m.config < 0 || static_cast<size_t>(m.config) >= simulated.rows.size()) {
      return InvalidArgument() << "'" << path << "': /measured names configuration " << m.config
                               << ", but /configs has " << simulated.rows.size() << " rows";
    }
    const io::ResultRow& s = simulated.rows[static_cast<size_t>(m.config)];
    if (s.status != "ok") continue;  // nothing simulated to compare with
    pairs.push_back({m.config, s.iteration_time_s, m.iteration_time_s, s.throughput, m.throughput});
  }
  if (pairs.size() < analysis::kMinValidationPairs) {
    return InvalidArgument() << "'" << path << "' has " << pairs.size()
                             << " configurations both simulated and measured ok; validation "
                                "needs at least "
                             << analysis::kMinValidationPairs << " (run `distir run` with more)";
  }
  return pairs;
}

io::ValidationRecord ToRecord(const analysis::ValidationStats& s) {
  return {s.n,
          s.spearman_rho,
          s.spearman_p,
          s.kendall_tau,
          s.mape_iteration_time,
          s.top1_match,
          s.simulated_top1_config,
          s.measured_top1_config};
}

void Print(const analysis::ValidationStats& s, const io::Measurements& m, std::ostream& os) {
  os << "validation of " << s.n << " configurations measured on " << m.ranks << " rank(s) ("
     << m.backend << "), simulated vs measured:\n"
     << std::fixed << std::setprecision(4) << "  Spearman rho        " << s.spearman_rho
     << "  (p = " << std::scientific << std::setprecision(3) << s.spearman_p << ")\n"
     << std::fixed << std::setprecision(4) << "  Kendall tau-b       " << s.kendall_tau << "\n"
     << std::setprecision(2) << "  MAPE iteration time " << s.mape_iteration_time << " %\n"
     << "  top-1               " << (s.top1_match ? "match" : "differs") << " (simulated best "
     << s.simulated_top1_config << ", measured best " << s.measured_top1_config << ")\n";
}

Status Validate(const std::string& path) {
  DISTIR_ASSIGN_OR_RETURN(io::ResultsFile simulated, io::ReadResultsFile(path));
  DISTIR_ASSIGN_OR_RETURN(io::Measurements measured, io::ReadMeasurements(path));
  DISTIR_ASSIGN_OR_RETURN(std::vector<analysis::ValidationPair> pairs,
                          Pair(path, simulated, measured));
  StatusOr<analysis::ValidationStats> stats = analysis::ComputeValidationStats(pairs);
  if (!stats.ok()) return Status(stats.status()).Prefix("'" + path + "': ");
  Print(*stats, measured, std::cout);
  DISTIR_RETURN_IF_ERROR(io::WriteValidation(path, ToRecord(*stats)));
  std::cout << "stored in " << path << " as /validation\n";
  return Status::Ok();
}

}  // namespace

int RunValidate(int argc, char** argv) {
  std::string input;
  po::options_description desc(
      "usage: distir validate RESULTS.h5\n\n"
      "Compares simulated with measured throughput (after `distir run`): Spearman rho\n"
      "and its p-value, Kendall tau, MAPE of the iteration time, top-1 agreement;\n"
      "prints them and stores them as /validation (docs/results_format.md).\n\noptions");
  desc.add_options()("help,h", "print this help")("input", po::value(&input), "results file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("validate", argc, argv, desc, vm)) return *stop;
  if (input.empty()) {
    std::cerr << "distir validate: missing RESULTS.h5 (see --help)\n";
    return kExitUsage;
  }
  Status s = Validate(input);
  return s.ok() ? kExitOk : ReportError(s);
}

}  // namespace distir::tools
