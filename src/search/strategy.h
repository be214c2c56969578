// Search strategies for spaces too large to evaluate whole (issue #18):
// `strategy: {kind: random | anneal, budget: N, seed: S}` in an experiment.
//
// Both are deterministic functions of the enumerated configurations, the
// seed and the (deterministic) results: every rank draws the same numbers
// from the same portable generator (SplitMix64; the standard library's
// distributions are implementation-defined), so a seed gives the same
// configurations evaluated and the same results whatever the number of ranks.
//
// random: `budget` configurations drawn uniformly without replacement among
// those not invalid at enumeration.
//
// anneal: simulated annealing (Kirkpatrick et al. 1983) over the
// configurations, maximising throughput (0 for a configuration that is not
// simulated or does not fit). A move goes to a neighbour: a configuration
// that differs in one or two knobs (two, because D x T x P = world ties the
// degrees). Each round proposes kAnnealRound configurations, all but
// kAnnealExplore of them neighbours of the current one and those anywhere,
// evaluates them in parallel over the ranks, and takes the round's best as
// the move, accepted by Metropolis' rule with a temperature relative to the
// current throughput that falls geometrically from 10 % to 0.1 % over the
// budget. A configuration is evaluated at most once; when the current one has
// no unevaluated neighbour, the round draws anywhere. Given throughput bounds
// (throughput_bound.h), the walk never proposes a configuration whose bound
// is at most the best throughput found so far: it cannot beat it, and the
// budget goes to those that can.

#pragma once

#include <cstdint>
#include <vector>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"

namespace distir::search {

/// SplitMix64 (Steele et al. 2014): the same sequence on every platform.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  /// Uniform in [0, n). REQUIRES: n >= 1.
  int64_t Below(int64_t n);
  /// Uniform in [0, 1).
  double Unit();

 private:
  uint64_t state_;
};

/// One flag per configuration: the `budget` that a random strategy
/// evaluates, drawn without replacement among those with an empty
/// Config::invalid (all of them when there are fewer).
std::vector<char> RandomPick(const std::vector<Config>& configs, int64_t budget, uint64_t seed);

/// Configurations proposed per annealing round (fixed, so that the walk does
/// not depend on the number of ranks), of which the last kAnnealExplore are
/// drawn anywhere in the space rather than next to the current one.
inline constexpr int kAnnealRound = 8;
inline constexpr int kAnnealExplore = 2;

/// The annealing walk: Propose() a round, evaluate it, Take() its results,
/// until Propose() returns none.
class Annealer {
 public:
  /// `bounds`: a throughput bound per configuration (0: none known), or empty.
  Annealer(const std::vector<Config>& configs, const Strategy& strategy,
           std::vector<double> bounds = {});

  /// The next round: at most kAnnealRound configurations not evaluated yet,
  /// fewer when the budget runs out; empty when the walk is over.
  std::vector<int64_t> Propose();

  /// The results of the last round, in its order (ConfigResult::index set).
  void Take(const std::vector<ConfigResult>& results);

  int64_t evaluated() const { return evaluated_count_; }
  /// The best throughput seen (0 before any configuration fits).
  double best_throughput() const { return best_; }

 private:
  static double Score(const ConfigResult& r);
  bool Neighbours(int64_t a, int64_t b) const;
  int64_t RandomUnevaluated(const std::vector<char>& taken);
  /// Not evaluated, not in this round, and not bounded below the best.
  bool Eligible(size_t i, const std::vector<char>& taken) const;
  double Temperature() const;

  const std::vector<Config>& configs_;
  Strategy strategy_;
  SeededRandom random_;
  std::vector<std::vector<int64_t>> knobs_;  ///< per configuration
  std::vector<double> bounds_;               ///< per configuration, or empty
  std::vector<char> evaluated_;
  int64_t evaluated_count_ = 0;
  int64_t current_ = -1;
  double current_score_ = 0;
  double best_ = 0;
};

}  // namespace distir::search
