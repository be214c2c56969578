// distir validate RESULTS.h5 [--resamples B --confidence C --seed S]
//
// Compares the simulated configurations of a results file (/configs) with the
// ones `distir run` measured (/measured): Spearman rho with its p-value and a
// bootstrap interval, Kendall tau of the throughputs, the pairs of
// configurations that are tied within the measurement's noise, MAPE of the
// iteration times and whether the simulator's best is the measured best
// (src/analysis); and whether the profile was calibrated on the machine the
// runs were measured on. Prints them and stores them as /validation
// (io/validation_file.h; docs/results_format.md).

#include <boost/program_options.hpp>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "analysis/validation_stats.h"
#include "io/measurements.h"
#include "io/results_file.h"
#include "io/validation_file.h"
#include "sim/hardware_profile.h"
#include "support/host_info.h"
#include "tools/cli_util.h"
#include "tools/commands.h"

namespace po = boost::program_options;

namespace distir::tools {
namespace {

struct ValidateFlags {
  std::string input;
  analysis::BootstrapOptions bootstrap;
};

// The measured throughput's interquartile range: batch / q3 .. batch / q1 (the
// median's throughput is batch / median, io/measurements.h). nullopt when the
// run recorded no spread.
std::optional<analysis::Interval> ThroughputSpread(const io::Measurements& measured,
                                                   const io::MeasuredRow& m, int64_t batch) {
  if (!measured.has_spread || !(m.time_q1_s > 0) || !(m.time_q3_s >= m.time_q1_s)) {
    return std::nullopt;
  }
  const auto b = static_cast<double>(batch);
  return analysis::Interval{b / m.time_q3_s, b / m.time_q1_s};
}

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
    pairs.push_back({m.config, s.iteration_time_s, m.iteration_time_s, s.throughput, m.throughput,
                     ThroughputSpread(measured, m, s.batch)});
  }
  if (pairs.size() < analysis::kMinValidationPairs) {
    return InvalidArgument() << "'" << path << "' has " << pairs.size()
                             << " configurations both simulated and measured ok; validation "
                                "needs at least "
                             << analysis::kMinValidationPairs << " (run `distir run` with more)";
  }
  return pairs;
}

// "" when the stored profile was calibrated on the machine of the runs (or
// there is no stored profile to ask); otherwise what differs. The hardware is
// compared as the profile and /measured record it: host name, CPU model and
// CPU count (support/host_info.h).
std::string CalibrationWarning(const io::ResultsFile& f, const io::Measurements& m) {
  if (f.hardware_yaml.empty()) return "";
  StatusOr<sim::HardwareProfile> hw = sim::ParseHardwareProfile(f.hardware_yaml, f.hardware);
  if (!hw.ok()) return "the stored hardware profile does not load: " + hw.status().message();
  const std::string ran_on = m.host.host.empty() && m.host.cpu_model.empty()
                                 ? "an unrecorded machine (/measured from an older distir run)"
                                 : DescribeHost(m.host);
  if (!hw->calibrated_on.has_value()) {
    return "profile '" + hw->name + "' (device '" + hw->device.name +
           "') does not record where it was calibrated (no calibrated_on); these runs were "
           "measured on " +
           ran_on +
           ". Calibrate on this machine (docs/calibration.md) to validate the simulator "
           "rather than the profile";
  }
  if (*hw->calibrated_on == m.host) return "";
  return "profile '" + hw->name + "' was calibrated on " + DescribeHost(*hw->calibrated_on) +
         ", but these runs were measured on " + ran_on +
         ": its rates describe another machine. Calibrate on this machine (docs/calibration.md) "
         "to validate the simulator rather than the profile";
}

io::ValidationRecord ToRecord(const analysis::ValidationStats& s, std::string warning) {
  io::ValidationRecord r;
  r.n = s.n;
  r.rank_undefined_reason = s.rank_undefined_reason;
  r.spearman_rho = s.spearman_rho;
  r.spearman_p = s.spearman_p;
  r.kendall_tau = s.kendall_tau;
  r.rho_ci_low = s.rho_ci_low;
  r.rho_ci_high = s.rho_ci_high;
  r.rho_ci_confidence = s.bootstrap.confidence;
  r.bootstrap_resamples = s.bootstrap.resamples;
  r.bootstrap_seed = static_cast<int64_t>(s.bootstrap.seed);
  r.bootstrap_undefined = s.bootstrap_undefined;
  if (s.agreement.has_value()) {
    r.pairs = s.agreement->pairs;
    r.near_tie_pairs = s.agreement->near_ties;
    r.simulated_tie_pairs = s.agreement->simulated_ties;
    r.measured_tie_pairs = s.agreement->measured_ties;
    r.discordant_pairs = s.agreement->discordant;
    r.discordant_beyond_noise = s.agreement->discordant_beyond_noise;
  }
  r.mape_iteration_time = s.mape_iteration_time;
  r.top1_match = s.top1_match;
  r.simulated_top1_config = s.simulated_top1_config;
  r.measured_top1_config = s.measured_top1_config;
  r.calibration_warning = std::move(warning);
  return r;
}

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

void PrintRankStats(const analysis::ValidationStats& s, std::ostream& os) {
  if (!s.rank_undefined_reason.empty()) {
    os << "  Spearman rho        undefined: " << s.rank_undefined_reason
       << " (no ranking to correlate)\n"
       << "  Kendall tau-b       undefined\n";
    return;
  }
  std::ostringstream p;
  p << std::scientific << std::setprecision(3) << s.spearman_p;
  os << "  Spearman rho        " << Fixed(s.spearman_rho, 4) << "  (p = " << p.str() << ")\n"
     << "  rho " << Fixed(100 * s.bootstrap.confidence, 0) << "% interval    ["
     << Fixed(s.rho_ci_low, 4) << ", " << Fixed(s.rho_ci_high, 4) << "]  (bootstrap, "
     << s.bootstrap.resamples << " resamples, seed " << s.bootstrap.seed;
  if (s.bootstrap_undefined > 0) os << ", " << s.bootstrap_undefined << " without a rho";
  os << ")\n  Kendall tau-b       " << Fixed(s.kendall_tau, 4) << "\n";
}

void PrintAgreement(const analysis::ValidationStats& s, std::ostream& os) {
  if (!s.agreement.has_value()) {
    os << "  near-ties           unknown: /measured records no spread (rerun `distir run`)\n";
    return;
  }
  const analysis::PairAgreement& a = *s.agreement;
  os << "  near-ties           " << a.near_ties << " of " << a.pairs
     << " pairs (measured interquartile ranges overlap)\n"
     << "  discordant pairs    " << a.discordant << ", " << a.discordant_beyond_noise
     << " beyond noise; " << a.simulated_ties << " pairs tied in simulation, " << a.measured_ties
     << " in measurement\n";
}

void Print(const analysis::ValidationStats& s, const io::Measurements& m,
           const std::string& warning, std::ostream& os) {
  os << "validation of " << s.n << " configurations measured on " << m.ranks << " rank(s) ("
     << m.backend << "), simulated vs measured:\n";
  PrintRankStats(s, os);
  PrintAgreement(s, os);
  os << "  MAPE iteration time " << Fixed(s.mape_iteration_time, 2) << " %\n"
     << "  top-1               " << (s.top1_match ? "match" : "differs") << " (simulated best "
     << s.simulated_top1_config;
  if (s.simulated_top1_ties > 1) os << ", tied with " << s.simulated_top1_ties - 1 << " more";
  os << ", measured best " << s.measured_top1_config << ")\n";
  if (!warning.empty()) os << "warning: " << warning << "\n";
}

Status Validate(const ValidateFlags& flags) {
  const std::string& path = flags.input;
  DISTIR_ASSIGN_OR_RETURN(io::ResultsFile simulated, io::ReadResultsFile(path));
  DISTIR_ASSIGN_OR_RETURN(io::Measurements measured, io::ReadMeasurements(path));
  DISTIR_ASSIGN_OR_RETURN(std::vector<analysis::ValidationPair> pairs,
                          Pair(path, simulated, measured));
  StatusOr<analysis::ValidationStats> stats =
      analysis::ComputeValidationStats(pairs, flags.bootstrap);
  if (!stats.ok()) return Status(stats.status()).Prefix("'" + path + "': ");
  const std::string warning = CalibrationWarning(simulated, measured);
  Print(*stats, measured, warning, std::cout);
  DISTIR_RETURN_IF_ERROR(io::WriteValidation(path, ToRecord(*stats, warning)));
  std::cout << "stored in " << path << " as /validation\n";
  return Status::Ok();
}

}  // namespace

int RunValidate(int argc, char** argv) {
  ValidateFlags f;
  po::options_description desc(
      "usage: distir validate RESULTS.h5 [--resamples B] [--confidence C] [--seed S]\n\n"
      "Compares simulated with measured throughput (after `distir run`): Spearman rho,\n"
      "its p-value and bootstrap interval, Kendall tau, the pairs tied within the\n"
      "measurements' noise, MAPE of the iteration time, top-1 agreement; warns when the\n"
      "profile was calibrated on another machine; prints them and stores them as\n"
      "/validation (docs/results_format.md, docs/calibration.md).\n\noptions");
  desc.add_options()("help,h", "print this help")(
      "resamples", po::value(&f.bootstrap.resamples)->default_value(2000),
      "bootstrap resamples of rho's interval")(
      "confidence", po::value(&f.bootstrap.confidence)->default_value(0.95),
      "coverage of rho's interval, in (0, 1)")(
      "seed", po::value(&f.bootstrap.seed)->default_value(1), "seed of the bootstrap")(
      "input", po::value(&f.input), "results file");
  po::variables_map vm;
  if (std::optional<int> stop = ParseCommandLine("validate", argc, argv, desc, vm)) return *stop;
  if (f.input.empty()) {
    std::cerr << "distir validate: missing RESULTS.h5 (see --help)\n";
    return kExitUsage;
  }
  if (f.bootstrap.resamples < 1 || !(f.bootstrap.confidence > 0 && f.bootstrap.confidence < 1)) {
    std::cerr << "distir validate: --resamples must be >= 1 and --confidence in (0, 1)\n";
    return kExitUsage;
  }
  Status s = Validate(f);
  return s.ok() ? kExitOk : ReportError(s);
}

}  // namespace distir::tools
