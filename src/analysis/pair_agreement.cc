#include "analysis/pair_agreement.h"

#include "analysis/ranks.h"

namespace distir::analysis {
namespace {

bool Overlap(const Interval& a, const Interval& b) { return a.low <= b.high && b.low <= a.high; }

}  // namespace

StatusOr<PairAgreement> ComparePairs(const std::vector<double>& simulated,
                                     const std::vector<double>& measured,
                                     const std::vector<Interval>& spread) {
  if (simulated.size() != measured.size() || measured.size() != spread.size()) {
    return InvalidArgument() << "pair agreement needs one simulated value, one measured value "
                                "and one interval per configuration, got "
                             << simulated.size() << ", " << measured.size() << " and "
                             << spread.size();
  }
  for (size_t i = 0; i < spread.size(); ++i) {
    if (!(spread[i].low <= spread[i].high)) {
      return InvalidArgument() << "the measured interval of configuration " << i << " is ["
                               << spread[i].low << ", " << spread[i].high
                               << "]; its low end must not exceed its high end";
    }
  }
  PairAgreement a;
  for (size_t i = 0; i < simulated.size(); ++i) {
    for (size_t j = i + 1; j < simulated.size(); ++j) {
      ++a.pairs;
      const bool near_tie = Overlap(spread[i], spread[j]);
      const int order = Sign(simulated[i] - simulated[j]) * Sign(measured[i] - measured[j]);
      a.near_ties += near_tie;
      a.simulated_ties += simulated[i] == simulated[j];
      a.measured_ties += measured[i] == measured[j];
      a.discordant += order < 0;
      a.discordant_beyond_noise += order < 0 && !near_tie;
    }
  }
  return a;
}

}  // namespace distir::analysis
