// The search strategies (search/strategy.h): the generator is SplitMix64
// exactly, random picks `budget` distinct valid configurations and depends
// only on the seed, and the annealing walk proposes each configuration at
// most once, never an invalid one, spends exactly its budget and, with a
// budget as large as the space, evaluates it all and so finds the optimum;
// given throughput bounds, it never proposes one bounded below its best.

#include "search/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "search/experiment.h"
#include "search/grid.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

// A grid of 136 configurations (mlp-tiny, 8 layers, world 8).
Experiment Space() {
  StatusOr<Experiment> e = ParseExperiment(
      "name: t\nmodel: {name: mlp-tiny, n_layer: 8}\nhardware: ../hardware/dgx2-v100.yaml\n"
      "world_size: 8\nspace:\n  batch: [32, 64]\n  dp: all\n  tp: all\n  pp: all\n"
      "  microbatches: [1, 2, 4]\n  recompute: [none, full]\n  zero: [0, 1]\n",
      testing::SourcePath("configs/experiments/t.yaml"));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

// A made-up result: throughput grows with the index, every fourth does not fit.
ConfigResult FakeResult(int64_t index) {
  ConfigResult r;
  r.index = index;
  r.status = ConfigStatus::kOk;
  r.fits = index % 4 != 0;
  r.throughput = static_cast<double>(index + 1);
  return r;
}

TEST(SeededRandomTest, IsSplitMix64) {
  // The reference sequence of SplitMix64 from seed 0 (Vigna's splitmix64.c).
  SeededRandom r(0);
  EXPECT_EQ(r.Next(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(r.Next(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(r.Next(), 0x06C45D188009454FULL);
  SeededRandom u(42);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.Unit();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    EXPECT_LT(u.Below(7), 7);
  }
}

TEST(RandomPickTest, PicksTheBudgetAmongValidConfigurationsBySeed) {
  const std::vector<Config> configs = EnumerateConfigs(Space());
  ASSERT_EQ(configs.size(), 136u);
  const std::vector<char> a = RandomPick(configs, 40, 3);
  EXPECT_EQ(std::count(a.begin(), a.end(), 1), 40);
  for (const Config& c : configs) {
    if (!c.invalid.empty()) {
      EXPECT_FALSE(a[static_cast<size_t>(c.index)]) << c.index;
    }
  }
  EXPECT_EQ(RandomPick(configs, 40, 3), a);
  EXPECT_NE(RandomPick(configs, 40, 4), a);
  const auto valid = std::count_if(configs.begin(), configs.end(),
                                   [](const Config& c) { return c.invalid.empty(); });
  const std::vector<char> all = RandomPick(configs, 100000, 1);
  EXPECT_EQ(std::count(all.begin(), all.end(), 1), valid);
}

// Runs the walk on FakeResult; returns the proposed indices in order.
std::vector<int64_t> Walk(const std::vector<Config>& configs, const Strategy& s, double* best) {
  Annealer walk(configs, s);
  std::vector<int64_t> proposed;
  for (std::vector<int64_t> round = walk.Propose(); !round.empty(); round = walk.Propose()) {
    EXPECT_LE(round.size(), static_cast<size_t>(kAnnealRound));
    std::vector<ConfigResult> results;
    for (int64_t i : round) {
      proposed.push_back(i);
      results.push_back(FakeResult(i));
    }
    walk.Take(results);
  }
  EXPECT_EQ(walk.evaluated(), static_cast<int64_t>(proposed.size()));
  *best = walk.best_throughput();
  return proposed;
}

TEST(AnnealerTest, SpendsTheBudgetOnDistinctValidConfigurations) {
  const std::vector<Config> configs = EnumerateConfigs(Space());
  Strategy s{StrategyKind::kAnneal, 50, 9};
  double best = 0;
  const std::vector<int64_t> proposed = Walk(configs, s, &best);
  EXPECT_EQ(proposed.size(), 50u);
  EXPECT_EQ(std::set<int64_t>(proposed.begin(), proposed.end()).size(), proposed.size());
  for (int64_t i : proposed) EXPECT_TRUE(configs[static_cast<size_t>(i)].invalid.empty()) << i;
  double again = 0;
  EXPECT_EQ(Walk(configs, s, &again), proposed);  // the seed decides the walk
  EXPECT_GT(best, 0);
}

TEST(AnnealerTest, ABudgetAsLargeAsTheSpaceFindsTheOptimum) {
  const std::vector<Config> configs = EnumerateConfigs(Space());
  double optimum = 0;
  int64_t valid = 0;
  for (const Config& c : configs) {
    if (!c.invalid.empty()) continue;
    ++valid;
    const ConfigResult r = FakeResult(c.index);
    if (r.fits) optimum = std::max(optimum, r.throughput);
  }
  double best = 0;
  const std::vector<int64_t> proposed = Walk(configs, {StrategyKind::kAnneal, 1000, 1}, &best);
  EXPECT_EQ(static_cast<int64_t>(proposed.size()), valid);
  EXPECT_EQ(best, optimum);
}

// With throughput bounds, a configuration bounded at or below the best found
// is never proposed; with a budget as large as the space, the walk stops when
// every one left is so bounded, and still finds the optimum (FakeResult's
// throughputs are their bounds here, so a bound is exact).
TEST(AnnealerTest, NeverSpendsTheBudgetOnConfigurationsBoundedBelowTheBest) {
  const std::vector<Config> configs = EnumerateConfigs(Space());
  std::vector<double> bounds(configs.size());
  double optimum = 0;
  int64_t valid = 0;
  for (const Config& c : configs) {
    bounds[static_cast<size_t>(c.index)] = static_cast<double>(c.index + 1);
    if (!c.invalid.empty()) continue;
    ++valid;
    const ConfigResult r = FakeResult(c.index);
    if (r.fits) optimum = std::max(optimum, r.throughput);
  }
  Annealer walk(configs, {StrategyKind::kAnneal, 1000, 1}, bounds);
  for (std::vector<int64_t> round = walk.Propose(); !round.empty(); round = walk.Propose()) {
    std::vector<ConfigResult> results;
    for (int64_t i : round) {
      EXPECT_GT(bounds[static_cast<size_t>(i)], walk.best_throughput()) << i;
      results.push_back(FakeResult(i));
    }
    walk.Take(results);
  }
  EXPECT_EQ(walk.best_throughput(), optimum);
  EXPECT_LT(walk.evaluated(), valid);
}

}  // namespace
}  // namespace distir::search
