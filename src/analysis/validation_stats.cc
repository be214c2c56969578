#include "analysis/validation_stats.h"

#include "analysis/error_metrics.h"
#include "analysis/rank_correlation.h"

namespace distir::analysis {

StatusOr<ValidationStats> ComputeValidationStats(const std::vector<ValidationPair>& pairs) {
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
  DISTIR_ASSIGN_OR_RETURN(SpearmanResult spearman, Spearman(sim_tp, meas_tp));
  s.spearman_rho = spearman.rho;
  s.spearman_p = spearman.p_value;
  DISTIR_ASSIGN_OR_RETURN(s.kendall_tau, KendallTauB(sim_tp, meas_tp));
  DISTIR_ASSIGN_OR_RETURN(s.mape_iteration_time, MeanAbsolutePercentageError(sim_t, meas_t));
  DISTIR_ASSIGN_OR_RETURN(Top1Agreement top1, CompareTop1(sim_tp, meas_tp));
  s.top1_match = top1.match;
  s.simulated_top1_config = pairs[top1.predicted_best].config;
  s.measured_top1_config = pairs[top1.actual_best].config;
  return s;
}

}  // namespace distir::analysis
