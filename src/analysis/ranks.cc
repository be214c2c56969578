#include "analysis/ranks.h"

#include <algorithm>
#include <numeric>

namespace distir::analysis {

std::vector<double> AverageRanks(const std::vector<double>& values) {
  const size_t n = values.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(n);
  size_t i = 0;
  while (i < n) {
    size_t j = i + 1;
    while (j < n && values[order[j]] == values[order[i]]) ++j;
    // Positions i..j-1 (0-based) hold equal values: ranks i+1..j, whose mean is (i+1+j)/2.
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) ranks[order[k]] = mean_rank;
    i = j;
  }
  return ranks;
}

bool AllEqual(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [&](double a) { return a == values.front(); });
}

int Sign(double v) { return (v > 0) - (v < 0); }

}  // namespace distir::analysis
