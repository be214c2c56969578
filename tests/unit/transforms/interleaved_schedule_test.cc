#include "transforms/interleaved_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "testing/test_util.h"

namespace distir {
namespace {

using distir::testing::StatusIs;

std::string RenderOrder(const std::vector<PipelineTask>& tasks) {
  std::string out;
  for (size_t i = 0; i < tasks.size(); ++i) out += (i ? " " : "") + TaskName(tasks[i]);
  return out;
}

// Timesteps as text: "f0.0 | f0.1 f1.0 | ...".
std::string RenderSteps(const std::vector<std::vector<PipelineTask>>& steps) {
  std::string out;
  for (const auto& step : steps) {
    if (!out.empty()) out += " | ";
    out += RenderOrder(step);
  }
  return out;
}

// Megatron's forward_backward_pipelining_with_interleaving by hand, P = 2,
// v = 2, K = 4 (8 forwards and 8 backwards per rank; "f2.1" is virtual
// stage 2, microbatch 1; rank r's local chunk c is virtual stage 2 c + r):
//   get_model_chunk_id(k, forward) = (k mod 4) / 2, so forwards k = 0..7 are
//   chunks 0 0 1 1 0 0 1 1 on microbatches 0 1 0 1 2 3 2 3; backward k runs
//   chunk 1 - that: 1 1 0 0 1 1 0 0 on the same microbatches.
//   Warm-up: rank 0 (2 - 0 - 1) 2 + (2 - 1) 2 = 4 forwards, rank 1 2.
//   Steady state: forward k + W, then backward k, for k = 0 .. 8 - W - 1.
//   Cool-down: backwards 8 - W .. 7.
// Rank 0: f0.0 f0.1 f2.0 f2.1 | f0.2 b2.0 f0.3 b2.1 f2.2 b0.0 f2.3 b0.1 |
//         b2.2 b2.3 b0.2 b0.3
// Rank 1: f1.0 f1.1 | f3.0 b3.0 f3.1 b3.1 f1.2 b1.0 f1.3 b1.1 f3.2 b3.2
//         f3.3 b3.3 | b1.2 b1.3
TEST(InterleavedScheduleTest, RankOrdersAreMegatronsForTwoStagesTwoChunksFourMicrobatches) {
  EXPECT_EQ(RenderOrder(InterleavedRankOrder(2, 2, 4, 0, true)),
            "f0.0 f0.1 f2.0 f2.1 f0.2 b2.0 f0.3 b2.1 f2.2 b0.0 f2.3 b0.1 b2.2 b2.3 b0.2 b0.3");
  EXPECT_EQ(RenderOrder(InterleavedRankOrder(2, 2, 4, 1, true)),
            "f1.0 f1.1 f3.0 b3.0 f3.1 b3.1 f1.2 b1.0 f1.3 b1.1 f3.2 b3.2 f3.3 b3.3 b1.2 b1.3");
}

// The same orders merged into timesteps, a task one step after its
// predecessor: rank 0 waits at steps 12 and 14 for the backward of virtual
// stage 3 (the last chunk) of microbatches 2 and 3.
TEST(InterleavedScheduleTest, TimestepsFollowEveryRanksOrder) {
  EXPECT_EQ(RenderSteps(ScheduleInterleaved(2, 2, 4, true)),
            "f0.0 | f0.1 f1.0 | f2.0 f1.1 | f2.1 f3.0 | f0.2 b3.0 | b2.0 f3.1 | f0.3 b3.1 | "
            "b2.1 f1.2 | f2.2 b1.0 | b0.0 f1.3 | f2.3 b1.1 | b0.1 f3.2 | b3.2 | b2.2 f3.3 | "
            "b3.3 | b2.3 b1.2 | b0.2 b1.3 | b0.3");
}

// K = P: Megatron runs every forward, then every backward (all_warmup_microbatches).
TEST(InterleavedScheduleTest, AsManyMicrobatchesAsStagesRunAllForwardsFirst) {
  EXPECT_EQ(RenderOrder(InterleavedRankOrder(2, 2, 2, 0, true)),
            "f0.0 f0.1 f2.0 f2.1 b2.0 b2.1 b0.0 b0.1");
  EXPECT_EQ(RenderOrder(InterleavedRankOrder(2, 2, 2, 1, true)),
            "f1.0 f1.1 f3.0 f3.1 b3.0 b3.1 b1.0 b1.1");
}

TEST(InterleavedScheduleTest, InferenceRunsTheForwardsInOrder) {
  EXPECT_EQ(RenderOrder(InterleavedRankOrder(2, 2, 4, 1, false)),
            "f1.0 f1.1 f3.0 f3.1 f1.2 f1.3 f3.2 f3.3");
  EXPECT_EQ(RenderSteps(ScheduleInterleaved(2, 2, 2, false)),
            "f0.0 | f0.1 f1.0 | f2.0 f1.1 | f2.1 f3.0 | f3.1");
}

// The warm-up length W = (P - r - 1) 2 + (v - 1) P: each rank's first
// backward comes after W forwards and the steady state's first forward, at
// position W + 1. (Megatron's cap at K v never applies once K is a multiple
// of P other than P: W is below 2 P v <= K v.)
TEST(InterleavedScheduleTest, WarmupIsMegatronsCount) {
  for (auto [p, v, k] : {std::tuple<int64_t, int64_t, int64_t>{4, 3, 8}, {8, 2, 16}, {3, 4, 9}}) {
    for (int64_t r = 0; r < p; ++r) {
      const std::vector<PipelineTask> order = InterleavedRankOrder(p, v, k, r, true);
      size_t first_backward = 0;
      while (first_backward < order.size() && !order[first_backward].backward) ++first_backward;
      EXPECT_EQ(static_cast<int64_t>(first_backward), (p - r - 1) * 2 + (v - 1) * p + 1)
          << "P " << p << " v " << v << " K " << k << " rank " << r;
    }
  }
}

TEST(InterleavedScheduleTest, EveryTaskRunsOnceOnItsStageAfterItsPredecessor) {
  for (int64_t p : {2, 3, 4, 8}) {
    for (int64_t v : {2, 3}) {
      for (int64_t k : {p, 2 * p, 3 * p}) {
        const auto steps = ScheduleInterleaved(p, v, k, true);
        std::map<std::tuple<int64_t, int64_t, bool>, size_t> when;
        std::vector<std::vector<PipelineTask>> by_rank(static_cast<size_t>(p));
        for (size_t i = 0; i < steps.size(); ++i) {
          std::set<int64_t> ranks;
          for (const PipelineTask& t : steps[i]) {
            EXPECT_TRUE(ranks.insert(t.stage % p).second) << "a rank runs twice in one timestep";
            EXPECT_TRUE(when.emplace(std::make_tuple(t.stage, t.microbatch, t.backward), i).second);
            by_rank[static_cast<size_t>(t.stage % p)].push_back(t);
          }
        }
        ASSERT_EQ(when.size(), static_cast<size_t>(2 * p * v * k));
        const int64_t last = p * v - 1;
        for (const auto& [task, i] : when) {
          const auto [s, m, bw] = task;
          if (!bw && s > 0) {
            EXPECT_LT(when.at({s - 1, m, false}), i);
          }
          if (bw && s == last) {
            EXPECT_LT(when.at({s, m, false}), i);
          }
          if (bw && s < last) {
            EXPECT_LT(when.at({s + 1, m, true}), i);
          }
        }
        for (int64_t r = 0; r < p; ++r)
          EXPECT_EQ(by_rank[static_cast<size_t>(r)], InterleavedRankOrder(p, v, k, r, true));
      }
    }
  }
}

TEST(InterleavedScheduleTest, RefusesWhatMegatronRefuses) {
  EXPECT_OK(CheckInterleaving(1, 1, 3));
  EXPECT_OK(CheckInterleaving(4, 1, 3));
  EXPECT_OK(CheckInterleaving(2, 2, 4));
  EXPECT_THAT(CheckInterleaving(2, 2, 3),
              StatusIs(StatusCode::kInvalidArgument,
                       "the interleaved schedule needs the microbatches K = 3 to be a multiple "
                       "of the pipeline stages P = 2"));
  EXPECT_THAT(CheckInterleaving(1, 2, 4), StatusIs(StatusCode::kInvalidArgument, "P >= 2"));
  EXPECT_THAT(CheckInterleaving(2, 0, 4), StatusIs(StatusCode::kInvalidArgument, "v = 0"));
}

}  // namespace
}  // namespace distir
