// Lawson-Hanson NNLS and the relative-error linear fit on synthetic data with
// known coefficients.

#include "calibrate/nnls.h"

#include <gtest/gtest.h>

#include <random>

#include "calibrate/linear_fit.h"
#include "testing/test_util.h"

namespace distir::calibrate {
namespace {

using ::distir::testing::StatusIs;

TEST(NnlsTest, RecoversAPositiveSolutionExactly) {
  // b = A * (1, 2, 3) with a well-conditioned 5x3 A: the unconstrained solution
  // is already feasible, so NNLS must return it.
  Eigen::MatrixXd a(5, 3);
  a << 1, 0, 2, 0, 1, 1, 3, 1, 0, 1, 1, 1, 2, 5, 1;
  Eigen::VectorXd x(3);
  x << 1, 2, 3;
  ASSERT_OK_AND_ASSIGN(NnlsResult r, SolveNnls(a, a * x));
  EXPECT_NEAR(r.x(0), 1, 1e-10);
  EXPECT_NEAR(r.x(1), 2, 1e-10);
  EXPECT_NEAR(r.x(2), 3, 1e-10);
  EXPECT_NEAR(r.residual_norm, 0, 1e-10);
}

TEST(NnlsTest, ClampsANegativeCoefficientAndRefitsTheRest) {
  // b = 2*x1 - 1*x2 with orthonormal columns: least squares gives (2, -1); the
  // non-negative optimum drops x2 and keeps x1 = 2 (columns are orthogonal), with
  // residual |(-1) * e2| = 1.
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(3, 2);
  Eigen::VectorXd b(3);
  b << 2, -1, 0;
  ASSERT_OK_AND_ASSIGN(NnlsResult r, SolveNnls(a, b));
  EXPECT_NEAR(r.x(0), 2, 1e-12);
  EXPECT_EQ(r.x(1), 0);
  EXPECT_NEAR(r.residual_norm, 1, 1e-12);
}

TEST(NnlsTest, RejectsMismatchedAndNonFiniteSystems) {
  EXPECT_THAT(SolveNnls(Eigen::MatrixXd::Ones(3, 2), Eigen::VectorXd::Ones(2)),
              StatusIs(StatusCode::kInvalidArgument, "3 rows"));
  Eigen::MatrixXd a = Eigen::MatrixXd::Ones(2, 2);
  a(0, 0) = std::numeric_limits<double>::infinity();
  EXPECT_THAT(SolveNnls(a, Eigen::VectorXd::Ones(2)),
              StatusIs(StatusCode::kInvalidArgument, "non-finite"));
}

// A MatMul-like regression t = 10 us + 2e-11 s/FLOP * flops + 1e-10 s/B * bytes over
// features spanning 6 orders of magnitude, with 1 % multiplicative noise: the
// fit recovers every coefficient within a few percent, which an unscaled,
// unweighted solve does not (the intercept drowns).
TEST(LinearFitTest, RecoversKnownCoefficientsFromNoisyTimings) {
  const std::vector<double> truth{1e-5, 2e-11, 1e-10};
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<std::vector<double>> features;
  std::vector<double> times;
  for (double d : {8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0}) {
    for (double k : {d / 2, d, 2 * d}) {
      std::vector<double> f{1.0, 2 * d * d * k, 4 * (2 * d * k + d * d)};
      double t = truth[0] + truth[1] * f[1] + truth[2] * f[2];
      features.push_back(f);
      times.push_back(t * (1 + noise(rng)));
    }
  }
  ASSERT_OK_AND_ASSIGN(LinearFit fit, FitNonNegative(features, times));
  for (size_t j = 0; j < truth.size(); ++j) {
    EXPECT_NEAR(fit.coefficients[j] / truth[j], 1.0, 0.05) << "coefficient " << j;
  }
  EXPECT_GT(fit.quality.r2, 0.999);
  EXPECT_LT(fit.quality.median_relative_error, 0.02);
  EXPECT_EQ(fit.quality.n, times.size());
}

TEST(LinearFitTest, EvaluatesQualityByHand) {
  // Model t = 2x on x = 1, 2, 3 against times 2, 4, 7: residuals 0, 0, -1;
  // mean 13/3, SS_tot = 49/9 + 1/9 + 64/9 = 114/9, SS_res = 1 -> R^2 = 1 - 9/114.
  // Relative errors 0, 0, 1/7: median 0, max 1/7.
  FitQuality q = EvaluateFit({2.0}, {{1}, {2}, {3}}, {2, 4, 7});
  EXPECT_NEAR(q.r2, 1.0 - 9.0 / 114.0, 1e-12);
  EXPECT_EQ(q.median_relative_error, 0);
  EXPECT_NEAR(q.max_relative_error, 1.0 / 7.0, 1e-12);
}

TEST(LinearFitTest, RejectsNonPositiveTimes) {
  EXPECT_THAT(FitNonNegative({{1}, {2}}, {1, 0}),
              StatusIs(StatusCode::kInvalidArgument, "sample 1"));
}

}  // namespace
}  // namespace distir::calibrate
