// MAPE, top-1 agreement and the combined validation statistics on small hand
// examples (the arithmetic in the comments).

#include "analysis/error_metrics.h"

#include <gtest/gtest.h>

#include "analysis/validation_stats.h"
#include "testing/test_util.h"

namespace distir::analysis {
namespace {

using ::distir::testing::StatusIs;

// |110-100|/100 = 10 %, |180-200|/200 = 10 %, |400-400|/400 = 0 %: mean 20/3 %.
TEST(MapeTest, IsTheMeanRelativeErrorInPercent) {
  ASSERT_OK_AND_ASSIGN(double mape, MeanAbsolutePercentageError({110, 180, 400}, {100, 200, 400}));
  EXPECT_NEAR(mape, 20.0 / 3.0, 1e-12);
}

TEST(MapeTest, RejectsZeroActualAndEmptyInput) {
  EXPECT_THAT(MeanAbsolutePercentageError({1, 2}, {1, 0}),
              StatusIs(StatusCode::kInvalidArgument, "actual value 1 is 0"));
  EXPECT_THAT(MeanAbsolutePercentageError({}, {}), StatusIs(StatusCode::kInvalidArgument, "got 0"));
}

TEST(Top1Test, ComparesTheLargestEntries) {
  ASSERT_OK_AND_ASSIGN(Top1Agreement same, CompareTop1({1, 9, 3}, {10, 90, 30}));
  EXPECT_TRUE(same.match);
  EXPECT_EQ(same.predicted_best, 1u);
  ASSERT_OK_AND_ASSIGN(Top1Agreement differ, CompareTop1({1, 9, 3}, {10, 20, 30}));
  EXPECT_FALSE(differ.match);
  EXPECT_EQ(differ.predicted_best, 1u);
  EXPECT_EQ(differ.actual_best, 2u);
  // Ties go to the first index.
  ASSERT_OK_AND_ASSIGN(Top1Agreement tie, CompareTop1({5, 5, 1}, {1, 2, 2}));
  EXPECT_EQ(tie.predicted_best, 0u);
  EXPECT_EQ(tie.actual_best, 1u);
}

// Four configurations; the simulator overestimates every time by 25 %, so
// MAPE = 25 %, and it swaps the measured order of configs 7 and 9 only.
// Throughputs sim 40, 30, 20, 10 vs measured 32, 24, 8, 16 (ranks 4 3 2 1 vs
// 4 3 1 2): d^2 = 2, rho = 1 - 12/60 = 0.8; tau = (5 - 1)/6 = 2/3.
TEST(ValidationStatsTest, CombinesEveryStatistic) {
  std::vector<ValidationPair> pairs{
      {3, 1.25, 1.0, 40, 32}, {5, 2.5, 2.0, 30, 24}, {7, 5.0, 4.0, 20, 8}, {9, 10.0, 8.0, 10, 16}};
  ASSERT_OK_AND_ASSIGN(ValidationStats s, ComputeValidationStats(pairs));
  EXPECT_EQ(s.n, 4);
  EXPECT_NEAR(s.spearman_rho, 0.8, 1e-12);
  EXPECT_NEAR(s.spearman_p, 0.2, 1e-9);  // t = 0.8*sqrt(2/0.36) = 1.8856 on 2 dof
  EXPECT_NEAR(s.kendall_tau, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(s.mape_iteration_time, 25.0, 1e-12);
  EXPECT_TRUE(s.top1_match);
  EXPECT_EQ(s.simulated_top1_config, 3);
  EXPECT_EQ(s.measured_top1_config, 3);
}

TEST(ValidationStatsTest, NeedsThreePairs) {
  EXPECT_THAT(ComputeValidationStats({{0, 1, 1, 1, 1}, {1, 2, 2, 2, 2}}),
              StatusIs(StatusCode::kInvalidArgument, "at least 3 configurations"));
}

}  // namespace
}  // namespace distir::analysis
