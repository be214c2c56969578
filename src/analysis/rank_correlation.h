// Rank correlations between two paired samples: Spearman's rho with its p-value,
// and Kendall's tau-b.
//
// `distir validate` uses them to ask whether the simulator orders configurations
// the way the hardware does (the paper reports Spearman 0.84-0.99). Both are
// invariant under any strictly increasing transform of either sample, so they
// judge the ranking and not the absolute times; error_metrics.h covers those.
// Methods (docs/calibration.md, "Validation statistics"):
//   rho   = Pearson correlation of the average ranks (ranks.h), which is exact with ties;
//   p     = two-sided, from t = rho * sqrt((n - 2) / (1 - rho^2)), which under the null
//           hypothesis of no association follows Student's t with n - 2 degrees of
//           freedom (Boost.Math students_t); the approximation scipy.stats.spearmanr uses;
//   tau_b = (concordant - discordant) / sqrt((n0 - n1) * (n0 - n2)), with n0 = n(n-1)/2
//           and n1, n2 the pairs tied in x and in y (Kendall 1945).

#pragma once

#include <vector>

#include "support/status_or.h"

namespace distir::analysis {

struct SpearmanResult {
  double rho = 0;      ///< in [-1, 1]
  double p_value = 1;  ///< two-sided; 0 when |rho| == 1
};

/// Spearman's rank correlation of the pairs (x[i], y[i]) and its p-value.
/// Errors (InvalidArgument): sizes differ, fewer than 3 pairs (the t statistic
/// needs n - 2 >= 1 degrees of freedom), or a sample whose values are all equal
/// (its ranks have no variance, so rho is undefined). REQUIRES: no NaN.
StatusOr<SpearmanResult> Spearman(const std::vector<double>& x, const std::vector<double>& y);

/// Kendall's tau-b of the pairs (x[i], y[i]), O(n^2). Errors as for Spearman,
/// except that 2 pairs suffice.
StatusOr<double> KendallTauB(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace distir::analysis
