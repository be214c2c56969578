#include "analysis/rank_correlation.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

#include "analysis/ranks.h"

namespace distir::analysis {
namespace {

Status CheckPairs(const std::vector<double>& x, const std::vector<double>& y, size_t min_n,
                  const char* statistic) {
  if (x.size() != y.size()) {
    return InvalidArgument() << statistic << " needs paired samples, got " << x.size() << " and "
                             << y.size() << " values";
  }
  if (x.size() < min_n) {
    return InvalidArgument() << statistic << " needs at least " << min_n << " pairs, got "
                             << x.size();
  }
  return Status::Ok();
}

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

// Two-sided p-value of a correlation r over n pairs under H0 (no association).
double CorrelationPValue(double r, size_t n) {
  // |r| = 1 makes t infinite: the ranks agree (or disagree) perfectly, p = 0.
  if (std::abs(r) >= 1.0) return 0.0;
  const double dof = static_cast<double>(n) - 2.0;
  const double t = r * std::sqrt(dof / (1.0 - r * r));
  boost::math::students_t dist(dof);
  return 2.0 * boost::math::cdf(boost::math::complement(dist, std::abs(t)));
}

}  // namespace

StatusOr<SpearmanResult> Spearman(const std::vector<double>& x, const std::vector<double>& y) {
  DISTIR_RETURN_IF_ERROR(CheckPairs(x, y, 3, "Spearman's rho"));
  if (AllEqual(x) || AllEqual(y)) {
    return InvalidArgument() << "Spearman's rho is undefined: one sample has all " << x.size()
                             << " values equal";
  }
  SpearmanResult result;
  // Rounding can push |rho| a hair past 1 for identical rankings.
  result.rho = std::clamp(Pearson(AverageRanks(x), AverageRanks(y)), -1.0, 1.0);
  result.p_value = CorrelationPValue(result.rho, x.size());
  return result;
}

StatusOr<double> KendallTauB(const std::vector<double>& x, const std::vector<double>& y) {
  DISTIR_RETURN_IF_ERROR(CheckPairs(x, y, 2, "Kendall's tau"));
  if (AllEqual(x) || AllEqual(y)) {
    return InvalidArgument() << "Kendall's tau is undefined: one sample has all " << x.size()
                             << " values equal";
  }
  // Counted in 64-bit integers so that the tie corrections are exact.
  int64_t concordant_minus_discordant = 0, pairs = 0, tied_x = 0, tied_y = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      const int sx = Sign(x[i] - x[j]);
      const int sy = Sign(y[i] - y[j]);
      ++pairs;
      tied_x += sx == 0;
      tied_y += sy == 0;
      concordant_minus_discordant += sx * sy;  // 0 for a pair tied in x or y
    }
  }
  const double denominator =
      std::sqrt(static_cast<double>(pairs - tied_x) * static_cast<double>(pairs - tied_y));
  return static_cast<double>(concordant_minus_discordant) / denominator;
}

}  // namespace distir::analysis
