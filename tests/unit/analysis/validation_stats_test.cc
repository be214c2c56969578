// Issue 19 item 10: validation that can be trusted on a noisy machine. The
// quantiles behind /measured's spread, the bootstrap interval of rho, the pairs
// tied within noise, and an undefined rho reported as undefined (NaN and a
// reason), never as 0.

#include "analysis/validation_stats.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/bootstrap.h"
#include "analysis/pair_agreement.h"
#include "analysis/quantiles.h"
#include "testing/test_util.h"

namespace distir::analysis {
namespace {

using ::distir::testing::StatusIs;

// numpy.quantile([1, 2, 3, 4], [0.25, 0.5, 0.75]) = 1.75, 2.5, 3.25
// (h = 3q: 0.75 -> 1 + 0.75, 1.5 -> 2 + 0.5, 2.25 -> 3 + 0.25).
TEST(QuantilesTest, InterpolateLinearlyLikeNumpy) {
  EXPECT_EQ(SummarizeSample({4, 1, 3, 2}), (FiveNumbers{1, 1.75, 2.5, 3.25, 4}));
  // Odd n: the median is the middle value; q1 of {1, 2, 10}: h = 0.5 -> 1.5.
  EXPECT_EQ(SummarizeSample({10, 1, 2}), (FiveNumbers{1, 1.5, 2, 6, 10}));
  EXPECT_EQ(SummarizeSample({7}), (FiveNumbers{7, 7, 7, 7, 7}));
  EXPECT_EQ(SummarizeSample({}), FiveNumbers{});
}

// Every draw from an increasing relation that has a rho has rho = 1 (ties in x
// come with the same ties in y); draws of one index three times (3 of the 27
// equally likely index triples) have none.
TEST(BootstrapTest, PerfectAgreementGivesAPointIntervalAndCountsUndefinedDraws) {
  BootstrapOptions o;
  o.resamples = 2700;
  ASSERT_OK_AND_ASSIGN(BootstrapInterval ci, BootstrapSpearman({1, 2, 3}, {10, 20, 40}, o));
  EXPECT_EQ(ci.low, 1);
  EXPECT_EQ(ci.high, 1);
  EXPECT_EQ(ci.resamples, 2700);
  // Binomial(2700, 1/9): mean 300, sd 16.3.
  EXPECT_GT(ci.undefined, 200);
  EXPECT_LT(ci.undefined, 400);
  ASSERT_OK_AND_ASSIGN(BootstrapInterval anti, BootstrapSpearman({1, 2, 3}, {3, 2, 1}, o));
  EXPECT_EQ(anti.low, -1);
  EXPECT_EQ(anti.high, -1);
}

// The textbook sample of rank_correlation_test (rho = -29/165 over 10 people):
// a weak correlation on 10 pairs has a wide interval around it, and the same
// seed gives the same interval.
TEST(BootstrapTest, IsSeededAndCoversAWeakCorrelationWidely) {
  const std::vector<double> iq{106, 100, 86, 101, 99, 103, 97, 113, 112, 110};
  const std::vector<double> tv{7, 27, 2, 50, 28, 29, 20, 12, 6, 17};
  ASSERT_OK_AND_ASSIGN(BootstrapInterval a, BootstrapSpearman(iq, tv, {}));
  ASSERT_OK_AND_ASSIGN(BootstrapInterval b, BootstrapSpearman(iq, tv, {}));
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, -29.0 / 165.0);
  EXPECT_GT(a.high, -29.0 / 165.0);
  EXPECT_GT(a.high - a.low, 0.5);
  EXPECT_LT(a.low, 0);
  EXPECT_GT(a.high, 0);  // the data do not rule out no association
  BootstrapOptions other;
  other.seed = 2;
  ASSERT_OK_AND_ASSIGN(BootstrapInterval c, BootstrapSpearman(iq, tv, other));
  EXPECT_TRUE(c.low != a.low || c.high != a.high);
}

TEST(BootstrapTest, RejectsBadOptionsAndConstantSamples) {
  BootstrapOptions o;
  o.confidence = 1;
  EXPECT_THAT(BootstrapSpearman({1, 2, 3}, {1, 2, 3}, o),
              StatusIs(StatusCode::kInvalidArgument, "a confidence in (0, 1)"));
  EXPECT_THAT(BootstrapSpearman({1, 2}, {1, 2}, {}),
              StatusIs(StatusCode::kInvalidArgument, "at least 3 pairs"));
  EXPECT_THAT(BootstrapSpearman({5, 5, 5}, {1, 2, 3}, {}),
              StatusIs(StatusCode::kInvalidArgument, "undefined in all 2000 bootstrap resamples"));
}

// Three configurations: measured intervals [1, 3], [2, 4], [5, 6]. Pairs (0,1)
// overlap, (0,2) and (1,2) do not. Simulated 3 > 2 > 1 against measured 2 < 3 <
// 5.5: (0,1) discordant within noise, (0,2) and (1,2) discordant beyond it.
TEST(PairAgreementTest, CountsNearTiesAndDiscordantPairsBeyondNoise) {
  ASSERT_OK_AND_ASSIGN(PairAgreement a,
                       ComparePairs({3, 2, 1}, {2, 3, 5.5}, {{1, 3}, {2, 4}, {5, 6}}));
  EXPECT_EQ(a, (PairAgreement{3, 1, 0, 0, 3, 2}));
  // Touching intervals overlap; a simulated or measured tie is neither order.
  ASSERT_OK_AND_ASSIGN(PairAgreement t, ComparePairs({1, 1}, {1, 2}, {{0, 1}, {1, 2}}));
  EXPECT_EQ(t, (PairAgreement{1, 1, 1, 0, 0, 0}));
  ASSERT_OK_AND_ASSIGN(PairAgreement m, ComparePairs({1, 2}, {3, 3}, {{3, 3}, {3, 3}}));
  EXPECT_EQ(m, (PairAgreement{1, 1, 0, 1, 0, 0}));
  EXPECT_THAT(ComparePairs({1}, {1}, {{2, 1}}),
              StatusIs(StatusCode::kInvalidArgument, "must not exceed its high end"));
}

std::vector<ValidationPair> Pairs(const std::vector<double>& simulated_tp,
                                  const std::vector<double>& measured_tp) {
  std::vector<ValidationPair> pairs;
  for (size_t i = 0; i < simulated_tp.size(); ++i) {
    // Batch 100: time = 100 / throughput.
    pairs.push_back({static_cast<int64_t>(i), 100 / simulated_tp[i], 100 / measured_tp[i],
                     simulated_tp[i], measured_tp[i],
                     Interval{0.9 * measured_tp[i], 1.1 * measured_tp[i]}});
  }
  return pairs;
}

// Issue 19: a profile under which every configuration simulates the same
// throughput gives no ranking. rho and tau are undefined, stored as NaN with the
// reason, and the rest is still computed (it used to be an error or 0.000).
TEST(ValidationStatsTest, AllSimulatedThroughputsEqualLeavesRhoUndefinedNotZero) {
  ASSERT_OK_AND_ASSIGN(ValidationStats s,
                       ComputeValidationStats(Pairs({50, 50, 50, 50}, {40, 50, 60, 80})));
  EXPECT_EQ(s.rank_undefined_reason, "all 4 simulated throughputs are equal");
  EXPECT_TRUE(std::isnan(s.spearman_rho));
  EXPECT_TRUE(std::isnan(s.spearman_p));
  EXPECT_TRUE(std::isnan(s.kendall_tau));
  EXPECT_TRUE(std::isnan(s.rho_ci_low));
  // Times 2 s simulated against 2.5, 2, 5/3, 1.25 s: |.| / measured = 0.2, 0, 0.2, 0.6.
  EXPECT_NEAR(s.mape_iteration_time, 25.0, 1e-9);
  ASSERT_TRUE(s.agreement.has_value());
  EXPECT_EQ(s.agreement->simulated_ties, 6);
  EXPECT_EQ(s.simulated_top1_ties, 4);
  ASSERT_OK_AND_ASSIGN(ValidationStats m,
                       ComputeValidationStats(Pairs({40, 50, 60, 80}, {50, 50, 50, 50})));
  EXPECT_EQ(m.rank_undefined_reason, "all 4 measured throughputs are equal");
}

// A rho of exactly 0 can be real: simulated 1 < 2 < 3 against measured a, b, a
// with b > a, average ranks 1.5, 3, 1.5: sum (x - 2)(y - 2) = 0.5 + 0 - 0.5 = 0.
// It is then a number, with an interval that says how little it means.
TEST(ValidationStatsTest, ExactZeroFromTiesIsDefinedAndComesWithItsInterval) {
  ASSERT_OK_AND_ASSIGN(ValidationStats s, ComputeValidationStats(Pairs({1, 2, 3}, {5, 9, 5})));
  EXPECT_EQ(s.rank_undefined_reason, "");
  EXPECT_EQ(s.spearman_rho, 0);
  EXPECT_LE(s.rho_ci_low, 0);
  EXPECT_GE(s.rho_ci_high, 0);
  EXPECT_EQ(s.bootstrap.resamples, 2000);
  ASSERT_TRUE(s.agreement.has_value());
  // Intervals [4.5, 5.5], [8.1, 9.9], [4.5, 5.5]: only (0, 2) overlaps.
  EXPECT_EQ(s.agreement->near_ties, 1);
}

// A NaN has no rank: reported as the reason, not ranked (AverageRanks requires no NaN).
TEST(ValidationStatsTest, NanThroughputLeavesRhoUndefinedAndNamesTheConfiguration) {
  std::vector<ValidationPair> pairs = Pairs({1, 2, 3}, {1, 2, 3});
  pairs[2].config = 17;
  pairs[2].simulated_throughput = std::nan("");
  pairs[2].measured_throughput_spread.reset();
  ASSERT_OK_AND_ASSIGN(ValidationStats s, ComputeValidationStats(pairs));
  EXPECT_EQ(s.rank_undefined_reason,
            "the simulated throughput of configuration 17 is not a number");
  EXPECT_TRUE(std::isnan(s.spearman_rho));
}

TEST(ValidationStatsTest, WithoutSpreadThePairCountsAreUnknown) {
  std::vector<ValidationPair> pairs = Pairs({1, 2, 3}, {1, 2, 3});
  pairs[1].measured_throughput_spread.reset();
  ASSERT_OK_AND_ASSIGN(ValidationStats s, ComputeValidationStats(pairs));
  EXPECT_FALSE(s.agreement.has_value());
  EXPECT_EQ(s.spearman_rho, 1);
}

}  // namespace
}  // namespace distir::analysis
