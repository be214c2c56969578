#include "transforms/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

namespace distir {
namespace {

// Timesteps as text: "f0.0 | f0.1 f1.0 | ...".
std::string Render(const std::vector<std::vector<PipelineTask>>& steps) {
  std::string out;
  for (const auto& step : steps) {
    if (!out.empty()) out += " | ";
    for (size_t i = 0; i < step.size(); ++i) out += (i ? " " : "") + TaskName(step[i]);
  }
  return out;
}

// DISTIR_PYTHON_NOTES.md §9: the original's 1F1B order for an MLP with P = 2, K = 4:
// [{1:(fwd_stage0,0)}, {1:(fwd_stage0,1), 2:(fwd_stage1,0)}, {1:(fwd_stage0,2), 2:(bwd_stage1,0)},
//  {1:(bwd_stage0,0), 2:(fwd_stage1,1)}, {1:(fwd_stage0,3), 2:(bwd_stage1,1)},
//  {1:(bwd_stage0,1), 2:(fwd_stage1,2)}, {2:(bwd_stage1,2)}, {1:(bwd_stage0,2), 2:(fwd_stage1,3)},
//  {2:(bwd_stage1,3)}, {1:(bwd_stage0,3)}]
TEST(PipelineScheduleTest, OneFOneBMatchesTheOriginalForTwoStagesFourMicrobatches) {
  EXPECT_EQ(Render(SchedulePipeline(2, 4, PipelineSchedule::k1F1B, true)),
            "f0.0 | f0.1 f1.0 | f0.2 b1.0 | b0.0 f1.1 | f0.3 b1.1 | b0.1 f1.2 | b1.2 | "
            "b0.2 f1.3 | b1.3 | b0.3");
}

// The original's scheduler test (two stages, K = 2): PipeDream and FIFO orders.
TEST(PipelineScheduleTest, TwoMicrobatchesMatchTheOriginalSchedulerTest) {
  EXPECT_EQ(Render(SchedulePipeline(2, 2, PipelineSchedule::k1F1B, true)),
            "f0.0 | f0.1 f1.0 | b1.0 | b0.0 f1.1 | b1.1 | b0.1");
  EXPECT_EQ(Render(SchedulePipeline(2, 2, PipelineSchedule::kGpipe, true)),
            "f0.0 | f0.1 f1.0 | f1.1 | b1.0 | b0.0 b1.1 | b0.1");
}

TEST(PipelineScheduleTest, GpipeRunsEveryForwardBeforeAnyBackwardOnEachStage) {
  const auto steps = SchedulePipeline(4, 8, PipelineSchedule::kGpipe, true);
  for (int64_t s = 0; s < 4; ++s) {
    bool seen_backward = false;
    int64_t next_forward = 0, next_backward = 0;
    for (const auto& step : steps) {
      for (const PipelineTask& t : step) {
        if (t.stage != s) continue;
        if (t.backward) {
          seen_backward = true;
          EXPECT_EQ(t.microbatch, next_backward++);
        } else {
          EXPECT_FALSE(seen_backward) << "stage " << s;
          EXPECT_EQ(t.microbatch, next_forward++);
        }
      }
    }
    EXPECT_EQ(next_forward, 8);
    EXPECT_EQ(next_backward, 8);
  }
}

TEST(PipelineScheduleTest, EveryTaskRunsOnceAfterItsPredecessor) {
  for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B}) {
    for (int64_t p : {1, 2, 3, 8}) {
      for (int64_t k : {1, 2, 5, 16}) {
        const auto steps = SchedulePipeline(p, k, schedule, true);
        std::map<std::tuple<int64_t, int64_t, bool>, size_t> when;
        for (size_t i = 0; i < steps.size(); ++i) {
          std::set<int64_t> stages;
          for (const PipelineTask& t : steps[i]) {
            EXPECT_TRUE(stages.insert(t.stage).second) << "a stage runs twice in one timestep";
            EXPECT_TRUE(when.emplace(std::make_tuple(t.stage, t.microbatch, t.backward), i).second);
          }
        }
        ASSERT_EQ(when.size(), static_cast<size_t>(2 * p * k));
        for (const auto& [task, i] : when) {
          const auto [s, m, bw] = task;
          if (!bw && s > 0) {
            EXPECT_LT(when.at({s - 1, m, false}), i);
          }
          if (bw && s == p - 1) {
            EXPECT_LT(when.at({s, m, false}), i);
          }
          if (bw && s < p - 1) {
            EXPECT_LT(when.at({s + 1, m, true}), i);
          }
        }
      }
    }
  }
}

TEST(PipelineScheduleTest, InferenceHasForwardTasksOnly) {
  EXPECT_EQ(Render(SchedulePipeline(3, 2, PipelineSchedule::k1F1B, false)),
            "f0.0 | f0.1 f1.0 | f1.1 f2.0 | f2.1");
}

TEST(PipelineScheduleTest, ParsesAndNamesSchedules) {
  EXPECT_EQ(*ParseSchedule("1F1B"), PipelineSchedule::k1F1B);
  EXPECT_EQ(*ParseSchedule("gpipe"), PipelineSchedule::kGpipe);
  EXPECT_FALSE(ParseSchedule("interleaved").ok());
  EXPECT_EQ(ScheduleName(PipelineSchedule::k1F1B), "1f1b");
}

}  // namespace
}  // namespace distir
