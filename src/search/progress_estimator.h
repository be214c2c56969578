// The time left of a grid search, for its progress lines.
//
// Configurations differ in cost by 100x and more, and grid_search.cc hands
// each rank its slice largest first, so the rate of the first configurations
// says little about the rest (the GPT-2 1.6B grid once printed an ETA of
// 1124 s for a 39 s search). The estimator instead predicts each
// configuration's seconds as a + b * cost from a cost proxy known before
// simulating (Evaluator::PredictedCost), fits a and b by least squares to the
// seconds the reporting rank measured so far, and sums the prediction over
// what is left. Only the reporting rank measures; every other rank is taken
// to have done as much predicted work as it has. Pure arithmetic, no MPI.

#pragma once

#include <cstdint>
#include <vector>

namespace distir::search {

class ProgressEstimator {
 public:
  /// `slice_costs[r]`: the predicted costs (>= 0, any unit) of rank r's
  /// configurations in the order it evaluates them; rank `observed` is the
  /// one whose measurements Record() receives.
  /// REQUIRES: 0 <= observed < slice_costs.size().
  ProgressEstimator(std::vector<std::vector<double>> slice_costs, int observed);

  /// The observed rank evaluated its next configuration in `seconds`.
  /// REQUIRES: it has one left.
  void Record(double seconds);

  /// Seconds until the last rank is done: the largest, over ranks, of the
  /// predicted seconds of its slice beyond the predicted seconds the observed
  /// rank has done. 0 once the observed rank is done and no other rank's slice
  /// is predicted longer; before the first Record() the prediction is 0 too.
  double SecondsLeft() const;

  /// Configurations done over all ranks: the observed rank's count, plus for
  /// every other rank the configurations whose cumulative predicted seconds
  /// are within the predicted seconds the observed rank has done.
  int64_t ConfigurationsDone() const;

  /// The fitted a + b * cost (a, b >= 0).
  double PredictedSeconds(double cost) const { return a_ + b_ * cost; }

  /// False while SecondsLeft() cannot be trusted: some configuration left has a
  /// cost above 0 but every one measured so far had cost 0 (rejected before
  /// simulating: pruned, too-large, invalid), so nothing has fixed the seconds
  /// per unit of cost yet and the prediction would count the rest as free.
  bool RateKnown() const;

 private:
  void Fit();
  double PredictedDone() const;

  std::vector<std::vector<double>> slices_;
  int observed_;
  int64_t done_ = 0;
  bool costed_seen_ = false;  // a configuration of cost > 0 was recorded
  // Least-squares sums of (cost, seconds) over the recorded configurations.
  double n_ = 0, sc_ = 0, sd_ = 0, scc_ = 0, scd_ = 0;
  double a_ = 0, b_ = 0;
};

}  // namespace distir::search
