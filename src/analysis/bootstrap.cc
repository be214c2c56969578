#include "analysis/bootstrap.h"

#include <algorithm>
#include <limits>
#include <random>

#include "analysis/quantiles.h"
#include "analysis/rank_correlation.h"

namespace distir::analysis {
namespace {

// Uniform in [0, n): rejection of the top partial block keeps it unbiased.
size_t DrawIndex(std::mt19937_64& rng, size_t n) {
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
  uint64_t v = rng();
  while (v >= limit) v = rng();
  return static_cast<size_t>(v % range);
}

}  // namespace

StatusOr<BootstrapInterval> BootstrapSpearman(const std::vector<double>& x,
                                              const std::vector<double>& y,
                                              const BootstrapOptions& options) {
  if (x.size() != y.size() || x.size() < 3) {
    return InvalidArgument() << "the bootstrap of Spearman's rho needs at least 3 pairs, got "
                             << x.size() << " and " << y.size() << " values";
  }
  if (options.resamples < 1 || !(options.confidence > 0 && options.confidence < 1)) {
    return InvalidArgument() << "the bootstrap needs at least 1 resample and a confidence in "
                                "(0, 1), got "
                             << options.resamples << " and " << options.confidence;
  }
  std::mt19937_64 rng(options.seed);
  BootstrapInterval out;
  std::vector<double> rhos, xs(x.size()), ys(y.size());
  for (int64_t b = 0; b < options.resamples; ++b) {
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t j = DrawIndex(rng, x.size());
      xs[i] = x[j];
      ys[i] = y[j];
    }
    ++out.resamples;
    StatusOr<SpearmanResult> rho = Spearman(xs, ys);
    if (!rho.ok()) {
      ++out.undefined;  // a draw with one sample all equal
      continue;
    }
    rhos.push_back(rho->rho);
  }
  if (rhos.empty()) {
    return InvalidArgument() << "Spearman's rho is undefined in all " << out.resamples
                             << " bootstrap resamples";
  }
  std::sort(rhos.begin(), rhos.end());
  out.low = QuantileOfSorted(rhos, (1 - options.confidence) / 2);
  out.high = QuantileOfSorted(rhos, (1 + options.confidence) / 2);
  return out;
}

}  // namespace distir::analysis
