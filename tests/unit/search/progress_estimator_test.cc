// The search's ETA: a + b * cost fitted to measured seconds, summed over what
// is left on every rank (src/search/progress_estimator.h).

#include "search/progress_estimator.h"

#include <gtest/gtest.h>

namespace distir::search {
namespace {

TEST(ProgressEstimatorTest, NothingRecordedPredictsNothing) {
  ProgressEstimator estimate({{10, 5}, {7}}, 0);
  EXPECT_EQ(estimate.SecondsLeft(), 0);
  EXPECT_EQ(estimate.ConfigurationsDone(), 0);
}

// Pruned and too-large configurations cost 0 (nothing is simulated): while
// only those were timed, the seconds per unit of cost of the rest are unknown
// and the ETA says so instead of counting the rest as free (issue #18: a
// 1024-GPU search printed "ETA 0.0 s", then 647 s).
TEST(ProgressEstimatorTest, RateIsUnknownUntilACostedConfigurationIsTimed) {
  ProgressEstimator estimate({{0, 0, 500, 0}, {800}}, 0);
  EXPECT_FALSE(estimate.RateKnown());
  estimate.Record(0.01);
  estimate.Record(0.01);
  EXPECT_FALSE(estimate.RateKnown());
  estimate.Record(5.01);  // cost 500
  EXPECT_TRUE(estimate.RateKnown());
  // Rank 1: 0.01 + 8 s predicted, 5.03 s of it taken as done (as rank 0).
  EXPECT_NEAR(estimate.SecondsLeft(), 2.98, 1e-9);
  // Nothing costed anywhere: the rate is not needed.
  ProgressEstimator rejected({{0, 0}, {0}}, 0);
  EXPECT_TRUE(rejected.RateKnown());
}

TEST(ProgressEstimatorTest, FitRecoversFixedAndPerCostSeconds) {
  // Seconds = 0.5 + 0.01 * cost exactly; the slice runs largest first.
  ProgressEstimator estimate({{1000, 400, 0, 100, 100, 0}}, 0);
  estimate.Record(10.5);  // 0.5 + 10
  estimate.Record(4.5);   // 0.5 + 4
  estimate.Record(0.5);   // a rejected configuration: the fixed part only
  EXPECT_NEAR(estimate.PredictedSeconds(0), 0.5, 1e-12);
  EXPECT_NEAR(estimate.PredictedSeconds(100), 1.5, 1e-12);
  // Left: 1.5 + 1.5 + 0.5.
  EXPECT_NEAR(estimate.SecondsLeft(), 3.5, 1e-12);
  EXPECT_EQ(estimate.ConfigurationsDone(), 3);
}

TEST(ProgressEstimatorTest, LargestFirstDoesNotInflateTheEta) {
  // The regression issue #19 item 5 reports: after the first (and largest)
  // tenth of the configurations, the rate of configurations extrapolates
  // 9 x 10 s = 90 s; 9 configurations of cost 1 at 0.1 s per unit take 0.9 s.
  ProgressEstimator estimate({{100, 1, 1, 1, 1, 1, 1, 1, 1, 1}}, 0);
  estimate.Record(10);
  EXPECT_NEAR(estimate.SecondsLeft(), 0.9, 1e-12);
}

TEST(ProgressEstimatorTest, EqualCostsFallBackToSecondsPerCost) {
  // No spread in the costs: a and b cannot be told apart, so all time goes on b.
  ProgressEstimator estimate({{10, 10, 20}}, 0);
  estimate.Record(2);
  estimate.Record(2);
  EXPECT_NEAR(estimate.PredictedSeconds(0), 0, 1e-12);
  EXPECT_NEAR(estimate.SecondsLeft(), 4, 1e-12);
}

TEST(ProgressEstimatorTest, NegativeInterceptIsClampedToZero) {
  // Seconds grow faster than the cost: the line through them would cross
  // below 0 at cost 0; the fit keeps a = 0 and the total measured (4 s / 40).
  ProgressEstimator estimate({{30, 10, 5}}, 0);
  estimate.Record(3.9);
  estimate.Record(0.1);
  EXPECT_NEAR(estimate.PredictedSeconds(0), 0, 1e-12);
  EXPECT_NEAR(estimate.PredictedSeconds(10), 1, 1e-12);
  EXPECT_NEAR(estimate.SecondsLeft(), 0.5, 1e-12);
}

TEST(ProgressEstimatorTest, SlowestRankDecidesAndIsCountedByItsPredictedProgress) {
  // Rank 0 (observed) and rank 1 at 1 s per unit of cost. Rank 0 has done
  // 4 s of its 6 s; rank 1, taken to be 4 s into its 10 s, has finished its
  // first two configurations (1 + 3 s) and has 6 s left.
  ProgressEstimator estimate({{4, 2}, {1, 3, 6}}, 0);
  estimate.Record(4);
  EXPECT_NEAR(estimate.SecondsLeft(), 6, 1e-12);
  EXPECT_EQ(estimate.ConfigurationsDone(), 3);
  estimate.Record(2);
  EXPECT_NEAR(estimate.SecondsLeft(), 4, 1e-12);
  // Both of rank 0's and rank 1's first two (4 s in all); its 6 s one ends at 10 s.
  EXPECT_EQ(estimate.ConfigurationsDone(), 4);
}

TEST(ProgressEstimatorTest, ObservedRankMayBeAnyRank) {
  ProgressEstimator estimate({{8}, {2, 2}}, 1);
  estimate.Record(1);                             // 0.5 s per unit
  EXPECT_NEAR(estimate.SecondsLeft(), 3, 1e-12);  // rank 0: 4 s in all, 1 s done
  EXPECT_EQ(estimate.ConfigurationsDone(), 1);
}

}  // namespace
}  // namespace distir::search
