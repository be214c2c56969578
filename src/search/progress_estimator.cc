#include "search/progress_estimator.h"

#include <algorithm>

#include "support/check.h"

namespace distir::search {

ProgressEstimator::ProgressEstimator(std::vector<std::vector<double>> slice_costs, int observed)
    : slices_(std::move(slice_costs)), observed_(observed) {
  DISTIR_CHECK(observed >= 0 && static_cast<size_t>(observed) < slices_.size())
      << "observed rank out of range";
}

void ProgressEstimator::Record(double seconds) {
  const std::vector<double>& mine = slices_[static_cast<size_t>(observed_)];
  DISTIR_CHECK(static_cast<size_t>(done_) < mine.size())
      << "the observed rank has no more configurations";
  const double c = mine[static_cast<size_t>(done_++)];
  costed_seen_ = costed_seen_ || c > 0;
  n_ += 1;
  sc_ += c;
  sd_ += seconds;
  scc_ += c * c;
  scd_ += c * seconds;
  Fit();
}

// a + b * cost with a, b >= 0. A fixed part a is real (the configurations the
// transform rejects cost no simulation, but are built and checked), yet it is
// only identifiable when the costs seen so far differ; until then all the time
// is put on the cost, which keeps the prediction's total equal to the total measured.
void ProgressEstimator::Fit() {
  const double det = n_ * scc_ - sc_ * sc_;
  // Relative spread of the costs below 1e-9: the regression is ill-conditioned.
  const bool spread = n_ >= 2 && det > 1e-9 * n_ * scc_;
  if (spread) {
    b_ = (n_ * scd_ - sc_ * sd_) / det;
    a_ = (sd_ - b_ * sc_) / n_;
  }
  if (!spread || a_ < 0) {
    a_ = sc_ > 0 ? 0 : sd_ / n_;
    b_ = sc_ > 0 ? sd_ / sc_ : 0;
  }
  if (b_ < 0) {
    a_ = sd_ / n_;
    b_ = 0;
  }
}

double ProgressEstimator::PredictedDone() const {
  const std::vector<double>& mine = slices_[static_cast<size_t>(observed_)];
  double total = 0;
  for (int64_t i = 0; i < done_; ++i) total += PredictedSeconds(mine[static_cast<size_t>(i)]);
  return total;
}

double ProgressEstimator::SecondsLeft() const {
  const double done = PredictedDone();
  double left = 0;
  for (const std::vector<double>& slice : slices_) {
    double total = 0;
    for (double c : slice) total += PredictedSeconds(c);
    left = std::max(left, total - done);
  }
  return left;
}

bool ProgressEstimator::RateKnown() const {
  if (costed_seen_) return true;
  for (size_t r = 0; r < slices_.size(); ++r) {
    const size_t from = static_cast<int>(r) == observed_ ? static_cast<size_t>(done_) : 0;
    for (size_t i = from; i < slices_[r].size(); ++i) {
      if (slices_[r][i] > 0) return false;
    }
  }
  return true;
}

int64_t ProgressEstimator::ConfigurationsDone() const {
  if (done_ == 0) return 0;  // nothing fitted: every prediction is 0
  const double done = PredictedDone();
  int64_t count = done_;
  for (size_t r = 0; r < slices_.size(); ++r) {
    if (static_cast<int>(r) == observed_) continue;
    double cumulative = 0;
    for (double c : slices_[r]) {
      cumulative += PredictedSeconds(c);
      if (cumulative > done) break;
      ++count;
    }
  }
  return count;
}

}  // namespace distir::search
