#include "analysis/quantiles.h"

#include <algorithm>
#include <cmath>

#include "support/check.h"

namespace distir::analysis {

double QuantileOfSorted(const std::vector<double>& sorted, double q) {
  DISTIR_CHECK(!sorted.empty()) << "the quantile of an empty sample";
  DISTIR_CHECK(q >= 0 && q <= 1) << "quantile level " << q << " outside [0, 1]";
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

FiveNumbers SummarizeSample(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  return {values.front(), QuantileOfSorted(values, 0.25), QuantileOfSorted(values, 0.5),
          QuantileOfSorted(values, 0.75), values.back()};
}

}  // namespace distir::analysis
