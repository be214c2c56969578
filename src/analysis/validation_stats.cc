#include "analysis/validation_stats.h"

#include <algorithm>
#include <cmath>

#include "analysis/error_metrics.h"
#include "analysis/rank_correlation.h"
#include "analysis/ranks.h"

namespace distir::analysis {
namespace {

// Why no rank statistic exists for these samples, or "" when they do. Ranks
// of a constant sample have no variance (rho's denominator is 0), and a NaN
// has no rank at all.
std::string RankUndefinedReason(const std::vector<ValidationPair>& pairs,
                                const std::vector<double>& simulated,
                                const std::vector<double>& measured) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (std::isnan(simulated[i]) || std::isnan(measured[i])) {
      return "the " + std::string(std::isnan(simulated[i]) ? "simulated" : "measured") +
             " throughput of configuration " + std::to_string(pairs[i].config) + " is not a number";
    }
  }
  const std::string n = std::to_string(simulated.size());
  if (AllEqual(simulated)) return "all " + n + " simulated throughputs are equal";
  if (AllEqual(measured)) return "all " + n + " measured throughputs are equal";
  return "";
}

Status ComputeRankStats(const std::vector<ValidationPair>& pairs, const std::vector<double>& sim_tp,
                        const std::vector<double>& meas_tp, ValidationStats& s) {
  s.rank_undefined_reason = RankUndefinedReason(pairs, sim_tp, meas_tp);
  if (!s.rank_undefined_reason.empty()) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(SpearmanResult spearman, Spearman(sim_tp, meas_tp));
  s.spearman_rho = spearman.rho;
  s.spearman_p = spearman.p_value;
  DISTIR_ASSIGN_OR_RETURN(s.kendall_tau, KendallTauB(sim_tp, meas_tp));
  DISTIR_ASSIGN_OR_RETURN(BootstrapInterval ci, BootstrapSpearman(sim_tp, meas_tp, s.bootstrap));
  s.rho_ci_low = ci.low;
  s.rho_ci_high = ci.high;
  s.bootstrap_undefined = ci.undefined;
  return Status::Ok();
}

// The pair counts, when every pair has a measured spread.
Status ComputeAgreement(const std::vector<ValidationPair>& pairs, const std::vector<double>& sim_tp,
                        const std::vector<double>& meas_tp, ValidationStats& s) {
  std::vector<Interval> spread;
  for (const ValidationPair& p : pairs) {
    if (!p.measured_throughput_spread) return Status::Ok();
    spread.push_back(*p.measured_throughput_spread);
  }
  DISTIR_ASSIGN_OR_RETURN(s.agreement, ComparePairs(sim_tp, meas_tp, spread));
  return Status::Ok();
}

}  // namespace

StatusOr<ValidationStats> ComputeValidationStats(const std::vector<ValidationPair>& pairs,
                                                 const BootstrapOptions& bootstrap) {
  if (pairs.size() < kMinValidationPairs) {
    return InvalidArgument() << "validation needs at least " << kMinValidationPairs
                             << " configurations both simulated and measured, got " << pairs.size();
  }
  std::vector<double> sim_tp, meas_tp, sim_t, meas_t;
  for (const ValidationPair& p : pairs) {
    sim_tp.push_back(p.simulated_throughput);
    meas_tp.push_back(p.measured_throughput);
    sim_t.push_back(p.simulated_time_s);
    meas_t.push_back(p.measured_time_s);
  }
  ValidationStats s;
  s.n = static_cast<int64_t>(pairs.size());
  s.bootstrap = bootstrap;
  DISTIR_RETURN_IF_ERROR(ComputeRankStats(pairs, sim_tp, meas_tp, s));
  DISTIR_RETURN_IF_ERROR(ComputeAgreement(pairs, sim_tp, meas_tp, s));
  DISTIR_ASSIGN_OR_RETURN(s.mape_iteration_time, MeanAbsolutePercentageError(sim_t, meas_t));
  DISTIR_ASSIGN_OR_RETURN(Top1Agreement top1, CompareTop1(sim_tp, meas_tp));
  s.top1_match = top1.match;
  s.simulated_top1_config = pairs[top1.predicted_best].config;
  s.simulated_top1_ties = std::count(sim_tp.begin(), sim_tp.end(), sim_tp[top1.predicted_best]);
  s.measured_top1_config = pairs[top1.actual_best].config;
  return s;
}

}  // namespace distir::analysis
