// distir report RESULTS.h5 [--csv]

#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>

#include "io/results_file.h"
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

void PrintCsv(const io::ResultsFile& f, std::ostream& os) {
  os << "rank,index,batch,dp,tp,pp,microbatches,schedule,recompute,zero_stage,status,reason,"
        "iteration_time_s,throughput,peak_memory_bytes,fits,num_ops\n";
  os << std::setprecision(17);
  for (const io::ResultRow& r : f.rows) {
    os << r.rank << "," << r.index << "," << r.batch << "," << r.dp << "," << r.tp << "," << r.pp
       << "," << r.microbatches << "," << r.schedule << "," << (r.recompute ? 1 : 0) << ","
       << r.zero_stage << "," << r.status << "," << Csv(r.reason) << "," << r.iteration_time_s
       << "," << r.throughput << "," << r.peak_memory_bytes << "," << (r.fits ? 1 : 0) << ","
       << r.num_ops << "\n";
  }
}

void PrintSummary(const io::ResultsFile& f, std::ostream& os) {
  int64_t ok = 0, invalid = 0, error = 0, fit = 0;
  for (const io::ResultRow& r : f.rows) {
    ok += r.status == "ok";
    invalid += r.status == "invalid";
    error += r.status == "error";
    fit += r.status == "ok" && r.fits;
  }
  os << "experiment " << f.experiment_name << ": " << f.model << " on " << f.hardware << " ("
     << f.tool_version << ")\n"
     << f.rows.size() << " configurations: " << ok << " simulated (" << fit
     << " fit in memory), " << invalid << " invalid, " << error << " failed\n\n";
  os << std::left << std::setw(6) << "rank" << std::setw(9) << "batch" << std::setw(5) << "D"
     << std::setw(5) << "T" << std::setw(5) << "P" << std::setw(6) << "K" << std::setw(7)
     << "sched" << std::setw(10) << "recomp" << std::setw(6) << "zero" << std::setw(14)
     << "time (ms)" << std::setw(16) << "samples/s" << "peak memory (GB)\n";
  for (size_t i = 0; i < f.ranking.size(); ++i) {
    const io::ResultRow& r = f.rows[static_cast<size_t>(f.ranking[i])];
    os << std::setw(6) << i + 1 << std::setw(9) << r.batch << std::setw(5) << r.dp << std::setw(5)
       << r.tp << std::setw(5) << r.pp << std::setw(6) << r.microbatches << std::setw(7)
       << r.schedule << std::setw(10) << (r.recompute ? "yes" : "no") << std::setw(6)
       << r.zero_stage << std::setw(14) << std::fixed << std::setprecision(3)
       << r.iteration_time_s * 1e3 << std::setw(16) << std::setprecision(1) << r.throughput
       << std::setprecision(3) << static_cast<double>(r.peak_memory_bytes) / 1e9
       << std::defaultfloat << "\n";
  }
}

}  // namespace

int RunReport(int argc, char** argv) {
  std::string input;
  bool csv = false;
  po::options_description desc(
      "usage: distir report RESULTS.h5 [--csv]\n\n"
      "Prints the ranking and a summary of a search's results, or with --csv one\n"
      "row per configuration (docs/results_format.md).\n\noptions");
  desc.add_options()("help,h", "print this help")("csv", po::bool_switch(&csv),
                                                   "print every configuration as CSV")(
      "input", po::value(&input), "results file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("report", argc, argv, desc, vm)) return *stop;
  if (input.empty()) {
    std::cerr << "distir report: missing RESULTS.h5 (see --help)\n";
    return kExitUsage;
  }
  StatusOr<io::ResultsFile> f = io::ReadResultsFile(input);
  if (!f.ok()) return ReportError(f.status());
  if (csv) {
    PrintCsv(*f, std::cout);
  } else {
    PrintSummary(*f, std::cout);
  }
  return kExitOk;
}

}  // namespace distir::tools
