// Rank statistics against textbook values; the arithmetic is in the comments, and
// every p-value was cross-checked with scipy.stats 1.10 (spearmanr, kendalltau).

#include "analysis/rank_correlation.h"

#include <gtest/gtest.h>

#include "analysis/ranks.h"
#include "testing/test_util.h"

namespace distir::analysis {
namespace {

using ::distir::testing::StatusIs;

TEST(RanksTest, TiesGetTheMeanOfTheRanksTheySpan) {
  // 20 occupies ranks 2 and 3 -> 2.5 each; 5 is smallest -> 1.
  EXPECT_EQ(AverageRanks({10, 20, 20, 30, 5}), (std::vector<double>{2, 3.5, 3.5, 5, 1}));
  EXPECT_EQ(AverageRanks({7, 7, 7}), (std::vector<double>{2, 2, 2}));
  EXPECT_TRUE(AverageRanks({}).empty());
}

// Wikipedia, "Spearman's rank correlation coefficient", worked example: IQ against
// hours of TV per week for 10 people. No ties; sum of squared rank differences
// d^2 = 194, so rho = 1 - 6*194 / (10*(100-1)) = 1 - 1164/990 = -29/165.
// t = rho*sqrt(8/(1-rho^2)) = -0.5050 on 8 dof -> two-sided p = 0.627188.
TEST(SpearmanTest, MatchesTheTextbookExample) {
  std::vector<double> iq{106, 100, 86, 101, 99, 103, 97, 113, 112, 110};
  std::vector<double> tv{7, 27, 2, 50, 28, 29, 20, 12, 6, 17};
  ASSERT_OK_AND_ASSIGN(SpearmanResult r, Spearman(iq, tv));
  EXPECT_NEAR(r.rho, -29.0 / 165.0, 1e-12);
  EXPECT_NEAR(r.p_value, 0.6271883447764844, 1e-9);
}

// x = 1..7, y = 2,1,4,3,7,5,6: d = -1,1,-1,1,-2,1,1, sum d^2 = 10,
// rho = 1 - 60/(7*48) = 23/28 = 0.8214286; t = 3.222 on 5 dof, p = 0.0234488.
TEST(SpearmanTest, SmallSampleHasStudentTPValue) {
  ASSERT_OK_AND_ASSIGN(SpearmanResult r, Spearman({1, 2, 3, 4, 5, 6, 7}, {2, 1, 4, 3, 7, 5, 6}));
  EXPECT_NEAR(r.rho, 23.0 / 28.0, 1e-12);
  EXPECT_NEAR(r.p_value, 0.023448808345691505, 1e-9);
}

// With ties the d^2 shortcut is wrong; rho is Pearson on average ranks.
// x ranks 1, 2.5, 2.5, 4, 5 and y ranks 1, 3, 2, 4.5, 4.5, both of mean 3:
// sum dx*dy = 4 + 0 + 0.5 + 1.5 + 3 = 9, sum dx^2 = sum dy^2 = 9.5 -> rho = 18/19.
TEST(SpearmanTest, TiesUseAverageRanks) {
  ASSERT_OK_AND_ASSIGN(SpearmanResult r, Spearman({1, 2, 2, 3, 4}, {1, 3, 2, 4, 4}));
  EXPECT_NEAR(r.rho, 18.0 / 19.0, 1e-12);
  EXPECT_NEAR(r.p_value, 0.014379533619930501, 1e-9);
}

TEST(SpearmanTest, PerfectAgreementUnderAMonotoneTransformHasPZero) {
  // y = exp(x) changes every value but no rank.
  ASSERT_OK_AND_ASSIGN(SpearmanResult r, Spearman({1, 2, 3, 4}, {2.7, 7.4, 20.1, 54.6}));
  EXPECT_DOUBLE_EQ(r.rho, 1.0);
  EXPECT_DOUBLE_EQ(r.p_value, 0.0);
  ASSERT_OK_AND_ASSIGN(SpearmanResult reversed, Spearman({1, 2, 3, 4}, {4, 3, 2, 1}));
  EXPECT_DOUBLE_EQ(reversed.rho, -1.0);
}

TEST(SpearmanTest, RejectsTooFewPairsMismatchedSizesAndConstantSamples) {
  EXPECT_THAT(Spearman({1, 2}, {2, 1}), StatusIs(StatusCode::kInvalidArgument, "at least 3 pairs"));
  EXPECT_THAT(Spearman({1, 2, 3}, {2, 1}), StatusIs(StatusCode::kInvalidArgument, "paired"));
  EXPECT_THAT(Spearman({1, 2, 3}, {5, 5, 5}),
              StatusIs(StatusCode::kInvalidArgument, "all 3 values equal"));
}

// scipy's documented example: x = 12,2,1,12,2 and y = 1,4,7,1,0. Of the 10 pairs,
// (0,4) and (3,4) are concordant, (0,1) (0,2) (1,2) (1,3) (2,3) (2,4) discordant,
// (0,3) tied in both and (1,4) tied in x. n1 = 2 pairs tied in x, n2 = 1 in y:
// tau_b = (2 - 6) / sqrt((10 - 2) * (10 - 1)) = -4 / sqrt(72) = -0.4714045.
TEST(KendallTest, TauBCorrectsForTies) {
  ASSERT_OK_AND_ASSIGN(double tau, KendallTauB({12, 2, 1, 12, 2}, {1, 4, 7, 1, 0}));
  EXPECT_NEAR(tau, -4.0 / std::sqrt(72.0), 1e-12);
}

// Without ties tau_b is tau_a: x = 1..7, y = 2,1,4,3,7,5,6 has 4 discordant pairs
// ((1,2) (3,4) (5,6) (5,7), 1-based) of 21, so tau = (17 - 4) / 21 = 13/21.
TEST(KendallTest, WithoutTiesIsConcordantMinusDiscordantOverPairs) {
  ASSERT_OK_AND_ASSIGN(double tau, KendallTauB({1, 2, 3, 4, 5, 6, 7}, {2, 1, 4, 3, 7, 5, 6}));
  EXPECT_NEAR(tau, 13.0 / 21.0, 1e-12);
  ASSERT_OK_AND_ASSIGN(double reversed, KendallTauB({1, 2, 3}, {30, 20, 10}));
  EXPECT_DOUBLE_EQ(reversed, -1.0);
}

TEST(KendallTest, RejectsConstantSamples) {
  EXPECT_THAT(KendallTauB({1, 1, 1}, {1, 2, 3}),
              StatusIs(StatusCode::kInvalidArgument, "undefined"));
  EXPECT_THAT(KendallTauB({1}, {1}), StatusIs(StatusCode::kInvalidArgument, "at least 2 pairs"));
}

}  // namespace
}  // namespace distir::analysis
