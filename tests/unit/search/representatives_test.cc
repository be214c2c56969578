// The devices that stand for all (search/representatives.h): the ways tried,
// each device's representative, and the search's figures with a tensor-parallel
// split whose last piece is smaller equal to the whole program's.

#include "search/representatives.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::SourcePath;

ParallelOptions Point(int64_t dp, int64_t tp, int64_t pp) {
  ParallelOptions o;
  o.dp = dp;
  o.tp = tp;
  o.pp = pp;
  return o;
}

// T 4 of D 2 on 8-GPU nodes: ranks 0 and 1 of replica 0, then ranks 0, 1
// and 3, then replica 0.
TEST(RepresentativesTest, RanksZeroAndOneThenTheLastApartThenReplicaZero) {
  const std::vector<Representatives> ways = RepresentativesOf(Point(2, 4, 2), 8);
  ASSERT_EQ(ways.size(), 3u);
  EXPECT_EQ(ways[0].keep, (std::vector<char>{1, 1, 0, 0, 1, 1, 0, 0}));
  EXPECT_FALSE(ways[0].last_apart);
  EXPECT_EQ(ways[1].keep, (std::vector<char>{1, 1, 0, 1, 1, 1, 0, 1}));
  EXPECT_TRUE(ways[1].last_apart);
  EXPECT_EQ(ways[2].tp, 0);
  EXPECT_EQ(ways[2].replica, 8);
  // Device 13 = replica 1, stage 1, rank 1; 14 rank 2; 15 rank 3.
  EXPECT_EQ(ways[0].Of(14), 5);
  EXPECT_EQ(ways[0].Of(15), 5);
  EXPECT_EQ(ways[1].Of(14), 5);
  EXPECT_EQ(ways[1].Of(15), 7);
  EXPECT_EQ(ways[1].Of(8), 0);
  EXPECT_EQ(ways[2].Of(15), 7);
  const std::vector<sharding::DevicePart> parts = PartsOf(ways);
  EXPECT_FALSE(parts[0].last_apart);
  EXPECT_TRUE(parts[1].last_apart);
  EXPECT_EQ(parts[1].even_axis, "tp");
}

// With T = 3, ranks 0, 1 and 2 are all of them: no such way.
TEST(RepresentativesTest, NoLastApartWayForThreeRanks) {
  const std::vector<Representatives> ways = RepresentativesOf(Point(1, 3, 1), 6);
  ASSERT_EQ(ways.size(), 1u);
  EXPECT_FALSE(ways[0].last_apart);
}

// GPT-2 with a vocabulary of 63 (16, 16, 16, 15 over 4 ranks) over T 4 and 8,
// D 1 and 2, P 1 and 2:
// the search's results with ranks 0, 1 and T - 1 standing for all equal the
// whole program's, bit for bit.
TEST(RepresentativesTest, AnUnevenVocabularyIsSimulatedByThreeRanksExactly) {
  StatusOr<Experiment> e = ParseExperiment(
      "name: t\nmodel: {name: gpt2-tiny, vocab: 63}\nhardware: ../hardware/dgx2-v100.yaml\n"
      "world_size: 16\nspace:\n  batch: [16]\n  dp: [1, 2]\n  tp: [4, 8]\n  pp: [1, 2]\n"
      "  microbatches: [2]\nconstraints: {world: at_most}\n",
      SourcePath("configs/experiments/t.yaml"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Evaluator fast(*e), whole(*e, EvaluatorOptions{.replica_symmetry = false});
  int by_three = 0;
  for (const Config& c : EnumerateConfigs(*e)) {
    const ConfigResult a = fast.Evaluate(c), b = whole.Evaluate(c);
    const std::string what = DescribeParallelOptions(c.options);
    ASSERT_EQ(a.status, ConfigStatus::kOk) << what << ": " << a.reason;
    by_three += a.evaluation == Evaluation::kRepresentativesExpanded;
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s) << what;
    EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes) << what;
    EXPECT_EQ(a.num_ops, b.num_ops) << what;
    EXPECT_EQ(a.exposed_communication_s, b.exposed_communication_s) << what;
  }
  EXPECT_GE(by_three, 4);  // D 1 (with D 2, "one-replica expanded" labels it)
}

}  // namespace
}  // namespace distir::search
