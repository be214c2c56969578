// Host kernels (src/backend/cpu/host_kernels.h) against straightforward loops
// in double: products with every transpose combination, elementwise ops with
// broadcasting, softmax, layer norm and RMS norm with their gradients (checked
// against central differences), layout kernels, losses, optimizers, and the
// f16/bf16 conversions against the compiler's _Float16 and an independent
// rounding.

#include "backend/cpu/host_kernels.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace distir::backend {
namespace {

std::vector<double> RandomVector(size_t n, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

std::vector<float> ToFloat(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// a is m x k (k x m when trans_a), b is k x n (n x k when trans_b).
double RefProduct(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                  const std::vector<double>& a, const std::vector<double>& b, int64_t i,
                  int64_t j) {
  double s = 0;
  for (int64_t p = 0; p < k; ++p) {
    const double av = trans_a ? a[p * m + i] : a[i * k + p];
    const double bv = trans_b ? b[j * k + p] : b[p * n + j];
    s += av * bv;
  }
  return s;
}

class HostKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override { InitHostKernels(); }
};

TEST_F(HostKernelsTest, InitSetsOneBlasThread) { EXPECT_EQ(HostBlasThreads(), 1); }

TEST_F(HostKernelsTest, GemmMatchesLoopsForEveryTransposeInFloatAndDouble) {
  const int64_t m = 5, n = 7, k = 3;
  const std::vector<double> a = RandomVector(m * k, 1), b = RandomVector(k * n, 2);
  const std::vector<double> c0 = RandomVector(m * n, 3);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      std::vector<double> cd = c0;
      Gemm<double>(ta, tb, m, n, k, 0.5, a.data(), b.data(), 2.0, cd.data());
      const std::vector<float> af = ToFloat(a), bf = ToFloat(b);
      std::vector<float> cf = ToFloat(c0);
      Gemm<float>(ta, tb, m, n, k, 0.5f, af.data(), bf.data(), 2.0f, cf.data());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const double want = 0.5 * RefProduct(ta, tb, m, n, k, a, b, i, j) + 2.0 * c0[i * n + j];
          EXPECT_NEAR(cd[i * n + j], want, 1e-12) << "trans " << ta << tb << " at " << i << "," << j;
          EXPECT_NEAR(cf[i * n + j], want, 1e-5) << "trans " << ta << tb << " at " << i << "," << j;
        }
      }
    }
  }
}

TEST_F(HostKernelsTest, GemmWithEmptyContractionScalesC) {
  std::vector<float> c = {1, 2, 3, 4, 5, 6};
  Gemm<float>(false, false, 2, 3, 0, 1.0f, nullptr, nullptr, 3.0f, c.data());
  EXPECT_EQ(c, (std::vector<float>{3, 6, 9, 12, 15, 18}));
}

TEST_F(HostKernelsTest, BatchedMatMulBroadcastsAZeroStride) {
  const int64_t batch = 3, m = 2, n = 4, k = 3;
  const std::vector<double> a = RandomVector(batch * m * k, 4), b = RandomVector(k * n, 5);
  std::vector<double> c(batch * m * n, -7);
  BatchedMatMul<double>(batch, m, n, k, a.data(), m * k, b.data(), 0, c.data(), m * n);
  for (int64_t t = 0; t < batch; ++t) {
    const std::vector<double> at(a.begin() + t * m * k, a.begin() + (t + 1) * m * k);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_NEAR(c[(t * m + i) * n + j], RefProduct(false, false, m, n, k, at, b, i, j), 1e-12);
      }
    }
  }
}

double RefBinary(BinaryKind kind, double a, double b) {
  switch (kind) {
    case BinaryKind::kAdd: return a + b;
    case BinaryKind::kSub: return a - b;
    case BinaryKind::kMul: return a * b;
    case BinaryKind::kDiv: return a / b;
    case BinaryKind::kPow: return std::pow(a, b);
    case BinaryKind::kMax: return a > b ? a : b;
    case BinaryKind::kMin: return a < b ? a : b;
  }
  return 0;
}

constexpr std::array kBinaryKinds = {BinaryKind::kAdd, BinaryKind::kSub, BinaryKind::kMul,
                                     BinaryKind::kDiv, BinaryKind::kPow, BinaryKind::kMax,
                                     BinaryKind::kMin};

TEST_F(HostKernelsTest, BinaryRepeatAndScalarMatchLoops) {
  const int64_t outer = 3, inner = 4;
  const std::vector<double> a = RandomVector(outer * inner, 6, 0.5, 2);
  const std::vector<double> b = RandomVector(inner, 7, 0.5, 2);
  std::vector<double> out(outer * inner);
  for (BinaryKind kind : kBinaryKinds) {
    Binary<double>(kind, inner, a.data(), b.data(), out.data());
    for (int64_t i = 0; i < inner; ++i) EXPECT_DOUBLE_EQ(out[i], RefBinary(kind, a[i], b[i]));
    for (bool b_first : {false, true}) {
      BinaryRepeat<double>(kind, outer, inner, a.data(), b.data(), out.data(), b_first);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const double x = a[o * inner + i];
          EXPECT_DOUBLE_EQ(out[o * inner + i],
                           b_first ? RefBinary(kind, b[i], x) : RefBinary(kind, x, b[i]));
        }
      }
      BinaryScalar<double>(kind, outer * inner, a.data(), 1.5, out.data(), b_first);
      for (int64_t i = 0; i < outer * inner; ++i) {
        EXPECT_DOUBLE_EQ(out[i], b_first ? RefBinary(kind, 1.5, a[i]) : RefBinary(kind, a[i], 1.5));
      }
    }
  }
}

TEST_F(HostKernelsTest, BinaryBroadcastAndWhereFollowNumpyRules) {
  // out [2,3,4] = a [2,1,4] (op) b [1,3,1].
  const std::array<int64_t, 3> out_shape = {2, 3, 4}, a_shape = {2, 1, 4}, b_shape = {1, 3, 1};
  const std::vector<double> a = RandomVector(8, 8), b = RandomVector(3, 9);
  std::vector<double> out(24);
  BinaryBroadcast<double>(BinaryKind::kSub, out_shape, a_shape, a.data(), b_shape, b.data(),
                          out.data());
  const std::array<uint8_t, 4> cond = {1, 0, 0, 1};  // [1,1,4]
  const std::array<int64_t, 3> cond_shape = {1, 1, 4};
  std::vector<double> where(24);
  Where<double>(out_shape, cond_shape, cond.data(), a_shape, a.data(), b_shape, b.data(),
                where.data());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t l = 0; l < 4; ++l) {
        const int64_t flat = (i * 3 + j) * 4 + l;
        EXPECT_DOUBLE_EQ(out[flat], a[i * 4 + l] - b[j]);
        EXPECT_DOUBLE_EQ(where[flat], cond[l] != 0 ? a[i * 4 + l] : b[j]);
      }
    }
  }
}

TEST_F(HostKernelsTest, UnaryAndGradientsMatchFormulas) {
  const std::vector<double> x = RandomVector(32, 10, -3, 3), dy = RandomVector(32, 11);
  std::vector<double> y(32), dx(32);
  Unary<double>(UnaryKind::kGeluErf, 32, x.data(), y.data());
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_NEAR(y[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))), 1e-14);
  }
  Unary<double>(UnaryKind::kRelu, 32, x.data(), y.data());
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0);
  ReluGrad<double>(32, x.data(), dy.data(), dx.data());
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.0);
  // Gelu' by central differences of Gelu itself, both variants.
  for (bool tanh_approx : {false, true}) {
    const UnaryKind kind = tanh_approx ? UnaryKind::kGeluTanh : UnaryKind::kGeluErf;
    GeluGrad<double>(32, x.data(), dy.data(), dx.data(), tanh_approx);
    for (size_t i = 0; i < 32; ++i) {
      const double h = 1e-6;
      double lo, hi;
      const double xl = x[i] - h, xh = x[i] + h;
      Unary<double>(kind, 1, &xl, &lo);
      Unary<double>(kind, 1, &xh, &hi);
      EXPECT_NEAR(dx[i], dy[i] * (hi - lo) / (2 * h), 1e-7) << "tanh " << tanh_approx;
    }
  }
}

TEST_F(HostKernelsTest, SigmoidSinCosAndSigmoidGradMatchFormulas) {
  const std::vector<double> x = RandomVector(32, 20, -6, 6), dy = RandomVector(32, 21);
  std::vector<double> y(32), s(32), c(32), dx(32);
  Unary<double>(UnaryKind::kSigmoid, 32, x.data(), y.data());
  Unary<double>(UnaryKind::kSin, 32, x.data(), s.data());
  Unary<double>(UnaryKind::kCos, 32, x.data(), c.data());
  for (size_t i = 0; i < 32; ++i) {
    EXPECT_NEAR(y[i], 1 / (1 + std::exp(-x[i])), 1e-15);
    EXPECT_EQ(s[i], std::sin(x[i]));
    EXPECT_EQ(c[i], std::cos(x[i]));
  }
  // SigmoidGrad takes the output y: dx = dy * sigmoid'(x), checked by central differences.
  SigmoidGrad<double>(32, y.data(), dy.data(), dx.data());
  for (size_t i = 0; i < 32; ++i) {
    const double h = 1e-6, xl = x[i] - h, xh = x[i] + h;
    double lo, hi;
    Unary<double>(UnaryKind::kSigmoid, 1, &xl, &lo);
    Unary<double>(UnaryKind::kSigmoid, 1, &xh, &hi);
    EXPECT_NEAR(dx[i], dy[i] * (hi - lo) / (2 * h), 1e-8);
  }
  // float: a large negative input gives 0, not NaN.
  const float big[2] = {-200.0f, 200.0f};
  float out[2];
  Unary<float>(UnaryKind::kSigmoid, 2, big, out);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 1.0f);
}

TEST_F(HostKernelsTest, SoftmaxRowsSumToOneAndGradientMatchesDifferences) {
  const int64_t rows = 3, cols = 5;
  // Large logits: the max subtraction must keep exp finite.
  std::vector<double> x = RandomVector(rows * cols, 12, -2, 2);
  x[0] = 800;
  std::vector<double> y(rows * cols);
  Softmax<double>(rows, cols, x.data(), y.data());
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, denom = 0, mx = x[r * cols];
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) denom += std::exp(x[r * cols + c] - mx);
    for (int64_t c = 0; c < cols; ++c) {
      EXPECT_NEAR(y[r * cols + c], std::exp(x[r * cols + c] - mx) / denom, 1e-15);
      sum += y[r * cols + c];
    }
    EXPECT_NEAR(sum, 1.0, 1e-14);
  }
  // d/dx of L = sum(dy * softmax(x)) on row 1.
  const std::vector<double> dy = RandomVector(rows * cols, 13);
  std::vector<double> dx(rows * cols);
  SoftmaxGrad<double>(rows, cols, y.data(), dy.data(), dx.data());
  for (int64_t c = 0; c < cols; ++c) {
    auto loss = [&](double delta) {
      std::vector<double> xp(x.begin() + cols, x.begin() + 2 * cols), yp(cols);
      xp[c] += delta;
      Softmax<double>(1, cols, xp.data(), yp.data());
      double l = 0;
      for (int64_t j = 0; j < cols; ++j) l += dy[cols + j] * yp[j];
      return l;
    };
    EXPECT_NEAR(dx[cols + c], (loss(1e-6) - loss(-1e-6)) / 2e-6, 1e-8);
  }
}

TEST_F(HostKernelsTest, LayerNormMatchesFormulaAndGradientsMatchDifferences) {
  const int64_t rows = 2, cols = 6;
  const double eps = 1e-5;
  const std::vector<double> x = RandomVector(rows * cols, 14, -2, 2);
  const std::vector<double> scale = RandomVector(cols, 15, 0.5, 1.5), bias = RandomVector(cols, 16);
  const std::vector<double> dy = RandomVector(rows * cols, 17);
  auto forward = [&](const std::vector<double>& xs, const std::vector<double>& sc,
                     const std::vector<double>& bs) {
    std::vector<double> y(rows * cols);
    LayerNorm<double>(rows, cols, xs.data(), sc.data(), bs.data(), eps, y.data());
    double l = 0;
    for (int64_t i = 0; i < rows * cols; ++i) l += dy[i] * y[i];
    return std::pair{y, l};
  };
  const std::vector<double> y = forward(x, scale, bias).first;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c] / cols;
    for (int64_t c = 0; c < cols; ++c) var += std::pow(x[r * cols + c] - mean, 2) / cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double want = (x[r * cols + c] - mean) / std::sqrt(var + eps) * scale[c] + bias[c];
      EXPECT_NEAR(y[r * cols + c], want, 1e-12);
    }
  }
  std::vector<double> dx(rows * cols), dscale(cols, 99), dbias(cols, 99);
  LayerNormGrad<double>(rows, cols, x.data(), scale.data(), dy.data(), eps, dx.data(),
                        dscale.data(), dbias.data());
  const double h = 1e-6;
  std::vector<double> xs = x, sc = scale, bs = bias;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double keep = xs[i];
    xs[i] = keep + h;
    const double hi = forward(xs, sc, bs).second;
    xs[i] = keep - h;
    const double lo = forward(xs, sc, bs).second;
    xs[i] = keep;
    EXPECT_NEAR(dx[i], (hi - lo) / (2 * h), 1e-7) << "dx " << i;
  }
  for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
    double keep = sc[c];
    sc[c] = keep + h;
    double hi = forward(xs, sc, bs).second;
    sc[c] = keep - h;
    double lo = forward(xs, sc, bs).second;
    sc[c] = keep;
    EXPECT_NEAR(dscale[c], (hi - lo) / (2 * h), 1e-7) << "dscale " << c;
    keep = bs[c];
    bs[c] = keep + h;
    hi = forward(xs, sc, bs).second;
    bs[c] = keep - h;
    lo = forward(xs, sc, bs).second;
    bs[c] = keep;
    EXPECT_NEAR(dbias[c], (hi - lo) / (2 * h), 1e-7) << "dbias " << c;
  }
}

TEST_F(HostKernelsTest, RmsNormMatchesFormulaAndGradientsMatchDifferences) {
  const int64_t rows = 3, cols = 5;
  const double eps = 1e-5;
  const std::vector<double> x = RandomVector(rows * cols, 22, -2, 2);
  const std::vector<double> scale = RandomVector(cols, 23, 0.5, 1.5);
  const std::vector<double> dy = RandomVector(rows * cols, 24);
  auto forward = [&](const std::vector<double>& xs, const std::vector<double>& sc) {
    std::vector<double> y(rows * cols);
    RmsNorm<double>(rows, cols, xs.data(), sc.data(), eps, y.data());
    double l = 0;
    for (int64_t i = 0; i < rows * cols; ++i) l += dy[i] * y[i];
    return std::pair{y, l};
  };
  const std::vector<double> y = forward(x, scale).first;
  for (int64_t r = 0; r < rows; ++r) {
    double ms = 0;
    for (int64_t c = 0; c < cols; ++c) ms += x[r * cols + c] * x[r * cols + c] / cols;
    for (int64_t c = 0; c < cols; ++c) {
      EXPECT_NEAR(y[r * cols + c], x[r * cols + c] / std::sqrt(ms + eps) * scale[c], 1e-12);
    }
  }
  std::vector<double> dx(rows * cols), dscale(cols, 99);
  RmsNormGrad<double>(rows, cols, x.data(), scale.data(), dy.data(), eps, dx.data(), dscale.data());
  const double h = 1e-6;
  std::vector<double> xs = x, sc = scale;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double keep = xs[i];
    xs[i] = keep + h;
    const double hi = forward(xs, sc).second;
    xs[i] = keep - h;
    const double lo = forward(xs, sc).second;
    xs[i] = keep;
    EXPECT_NEAR(dx[i], (hi - lo) / (2 * h), 1e-7) << "dx " << i;
  }
  for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
    const double keep = sc[c];
    sc[c] = keep + h;
    const double hi = forward(xs, sc).second;
    sc[c] = keep - h;
    const double lo = forward(xs, sc).second;
    sc[c] = keep;
    EXPECT_NEAR(dscale[c], (hi - lo) / (2 * h), 1e-7) << "dscale " << c;
  }
}

TEST_F(HostKernelsTest, GatherPicksSlicesAndRejectsOutOfRangeIndices) {
  // table [outer 2, axis 3, inner 2]; indices {2, -3, 1}.
  const std::vector<double> table = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
  const std::vector<int64_t> indices = {2, -3, 1};
  std::vector<double> out(12);
  ASSERT_TRUE(Gather<double>(2, 3, 2, table.data(), 3, indices.data(), out.data()));
  EXPECT_EQ(out, (std::vector<double>{4, 5, 0, 1, 2, 3, 14, 15, 10, 11, 12, 13}));
  const std::vector<int64_t> bad = {0, 3};
  EXPECT_FALSE(Gather<double>(2, 3, 2, table.data(), 2, bad.data(), out.data()));
  const std::vector<int64_t> bad_negative = {-4};
  EXPECT_FALSE(Gather<double>(2, 3, 2, table.data(), 1, bad_negative.data(), out.data()));
}

TEST_F(HostKernelsTest, TransposePermutesAxesOfAnyElementSize) {
  // x [2,3,4] int16, perm {2,0,1}: out[l][i][j] = x[i][j][l].
  std::vector<int16_t> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int16_t>(i * 3 - 7);
  const std::array<int64_t, 3> shape = {2, 3, 4}, perm = {2, 0, 1};
  std::vector<int16_t> out(24);
  Transpose(shape, perm, sizeof(int16_t), x.data(), out.data());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t l = 0; l < 4; ++l) EXPECT_EQ(out[(l * 2 + i) * 3 + j], x[(i * 3 + j) * 4 + l]);
    }
  }
}

TEST_F(HostKernelsTest, CopyAxisRangeSliceAxisAndTriluMatchLoops) {
  // src [outer 2, axis 4, inner 3] floats; copy axis range [1, 3) into dst
  // [2, 5, 3] at 2.
  std::vector<float> src(24), dst(30, -1);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
  CopyAxisRange(2, 3, sizeof(float), src.data(), 4, 1, 2, dst.data(), 5, 2);
  for (int64_t o = 0; o < 2; ++o) {
    for (int64_t j = 0; j < 5; ++j) {
      for (int64_t i = 0; i < 3; ++i) {
        const float want = (j >= 2 && j < 4) ? src[(o * 4 + (j - 1)) * 3 + i] : -1.0f;
        EXPECT_EQ(dst[(o * 5 + j) * 3 + i], want) << o << "," << j << "," << i;
      }
    }
  }
  // Slice with step -2 from 3: axis rows 3, 1.
  std::vector<float> sliced(12);
  SliceAxis(2, 3, sizeof(float), src.data(), 4, 3, -2, 2, sliced.data());
  for (int64_t o = 0; o < 2; ++o) {
    for (int64_t j = 0; j < 2; ++j) {
      for (int64_t i = 0; i < 3; ++i) {
        EXPECT_EQ(sliced[(o * 2 + j) * 3 + i], src[(o * 4 + 3 - 2 * j) * 3 + i]);
      }
    }
  }
  // Trilu on [2 batches, 3 x 4], lower with k = 1 and upper with k = -1.
  std::vector<double> m(24), t(24);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<double>(i + 1);
  for (bool upper : {false, true}) {
    const int64_t k = upper ? -1 : 1;
    Trilu(2, 3, 4, k, upper, sizeof(double), m.data(), t.data());
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t r = 0; r < 3; ++r) {
        for (int64_t c = 0; c < 4; ++c) {
          const size_t f = static_cast<size_t>((b * 3 + r) * 4 + c);
          const bool keep = upper ? c >= r + k : c <= r + k;
          EXPECT_EQ(t[f], keep ? m[f] : 0.0) << "upper " << upper << " at " << b << r << c;
        }
      }
    }
  }
}

TEST_F(HostKernelsTest, SumRowsLossesAndOptimizersMatchFormulas) {
  const std::vector<double> x = RandomVector(12, 18);
  std::vector<double> sums(4, 42);
  SumRows<double>(3, 4, x.data(), sums.data());
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(sums[i], x[i] + x[4 + i] + x[8 + i], 1e-15);

  const std::vector<double> p = RandomVector(6, 19), y = RandomVector(6, 20);
  double sq = 0;
  for (size_t i = 0; i < 6; ++i) sq += (p[i] - y[i]) * (p[i] - y[i]);
  EXPECT_NEAR(MseLoss<double>(6, p.data(), y.data(), 3.0), sq / 3.0, 1e-15);
  std::vector<double> dp(6);
  MseLossGrad<double>(6, p.data(), y.data(), 3.0, dp.data());
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(dp[i], 2 * (p[i] - y[i]) / 3.0, 1e-15);

  // SGD in place.
  std::vector<double> w = p;
  Sgd<double>(6, w.data(), y.data(), 0.1, w.data());
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(w[i], p[i] - 0.1 * y[i], 1e-15);

  // Adam step 2 in place, bias-corrected.
  AdamParams ap;
  ap.lr = 0.01;
  ap.step = 2;
  std::vector<double> aw = p, m = RandomVector(6, 21), v = RandomVector(6, 22, 0, 1);
  const std::vector<double> m0 = m, v0 = v;
  Adam<double>(6, aw.data(), y.data(), m.data(), v.data(), ap, aw.data(), m.data(), v.data());
  for (size_t i = 0; i < 6; ++i) {
    const double mi = 0.9 * m0[i] + 0.1 * y[i];
    const double vi = 0.999 * v0[i] + 0.001 * y[i] * y[i];
    const double mhat = mi / (1 - 0.9 * 0.9), vhat = vi / (1 - 0.999 * 0.999);
    EXPECT_NEAR(m[i], mi, 1e-15);
    EXPECT_NEAR(v[i], vi, 1e-15);
    EXPECT_NEAR(aw[i], p[i] - 0.01 * mhat / (std::sqrt(vhat) + 1e-8), 1e-12);
  }
}

// ---- f16 / bf16

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Every half, decoded independently of the kernel: (-1)^s 2^(e-15) (1 + m/1024),
// subnormals 2^-14 (m/1024).
double DecodeHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0x1f) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, e - 25);
}

TEST(HostConversionTest, EveryHalfDecodesExactlyAndRoundTrips) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> f(all.size());
  HalfToFloat(static_cast<int64_t>(all.size()), all.data(), f.data());
  std::vector<uint16_t> back(all.size());
  FloatToHalf(static_cast<int64_t>(f.size()), f.data(), back.data());
  for (size_t i = 0; i < all.size(); ++i) {
    const double want = DecodeHalf(all[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f[i])) << std::hex << i;
      EXPECT_EQ(back[i] & 0x7c00, 0x7c00) << std::hex << i;
      EXPECT_NE(back[i] & 0x3ff, 0) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f[i]), want) << std::hex << i;
    ASSERT_EQ(back[i], all[i]) << std::hex << i;  // includes -0 and subnormals
  }
}

// The float nearest to `x` among halves, ties to the even mantissa; 65520 and
// beyond round to infinity (IEEE 754 round to nearest even).
uint16_t RefFloatToHalf(float x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return sign | 0x7c00;
  // Halves are monotone in their bits for non-negative values: binary search.
  uint16_t lo = 0, hi = 0x7bff;
  while (hi - lo > 1) {
    const auto mid = static_cast<uint16_t>((lo + hi) / 2);
    (DecodeHalf(mid) <= a ? lo : hi) = mid;
  }
  if (DecodeHalf(hi) <= a) lo = hi;  // a is the largest finite half or above it
  const uint16_t up = lo == 0x7bff ? lo : static_cast<uint16_t>(lo + 1);
  const double dl = a - DecodeHalf(lo), du = DecodeHalf(up) - a;
  if (dl < du || up == lo) return sign | lo;
  if (du < dl) return sign | up;
  return sign | ((lo & 1) == 0 ? lo : up);
}

TEST(HostConversionTest, FloatToHalfRoundsToNearestEven) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, -1e9f, 1e-9f,
                          0x1.0p-24f, 0x1.8p-25f, 0x1.0p-25f, 0x1.0p-14f, 0x1.ffcp-15f,
                          1.0f + 0x1.0p-11f, 1.0f + 0x1.8p-11f, 1.0f + 0x1.0p-10f + 0x1.0p-11f,
                          INFINITY, -INFINITY};
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> exponent(-27, 17);
  std::uniform_real_distribution<float> unit(-1, 1);
  for (int i = 0; i < 20000; ++i) x.push_back(unit(rng) * std::exp2(exponent(rng)));
  std::vector<uint16_t> h(x.size());
  FloatToHalf(static_cast<int64_t>(x.size()), x.data(), h.data());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(x[i])) {
      EXPECT_EQ(h[i], std::signbit(x[i]) ? 0xfc00 : 0x7c00);
      continue;
    }
    ASSERT_EQ(h[i], RefFloatToHalf(x[i])) << std::hexfloat << x[i];
#ifdef __FLT16_MAX__
    const _Float16 c = static_cast<_Float16>(x[i]);  // the compiler's conversion agrees
    uint16_t cb;
    std::memcpy(&cb, &c, 2);
    ASSERT_EQ(h[i], cb) << std::hexfloat << x[i];
#endif
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint16_t hn;
  FloatToHalf(1, &nan, &hn);
  EXPECT_EQ(hn & 0x7c00, 0x7c00);
  EXPECT_NE(hn & 0x3ff, 0);
}

TEST(HostConversionTest, BFloat16KeepsTheHighBitsRoundedToNearestEven) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -3.5f, INFINITY, -INFINITY,
                          std::numeric_limits<float>::max(), 0x1.0p-130f};
  // Exact ties: 1 + 2^-8 (between 1 and 1 + 2^-7, even is 1), 1 + 3*2^-8 (even is 1 + 2^-6).
  x.push_back(1.0f + 0x1.0p-8f);
  x.push_back(1.0f + 0x1.8p-7f);
  std::mt19937 rng(24);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
  for (int i = 0; i < 20000; ++i) {
    float f;
    const uint32_t u = bits(rng);
    std::memcpy(&f, &u, 4);
    if (!std::isnan(f)) x.push_back(f);
  }
  std::vector<uint16_t> b(x.size());
  FloatToBFloat16(static_cast<int64_t>(x.size()), x.data(), b.data());
  std::vector<float> back(x.size());
  BFloat16ToFloat(static_cast<int64_t>(b.size()), b.data(), back.data());
  for (size_t i = 0; i < x.size(); ++i) {
    // The two candidates: truncation and the next bfloat16 away from zero.
    const uint32_t u = Bits(x[i]);
    const uint32_t down = u >> 16, rest = u & 0xffffu;
    uint32_t want = down;
    if (rest > 0x8000u || (rest == 0x8000u && (down & 1u) != 0)) want = down + 1;
    ASSERT_EQ(b[i], want) << std::hexfloat << x[i];
    ASSERT_EQ(Bits(back[i]), want << 16) << std::hexfloat << x[i];
  }
  EXPECT_EQ(b[8], 0x3f80);   // 1 + 2^-8 ties to 1
  EXPECT_EQ(b[9], 0x3f82);   // 1 + 3*2^-8 ties to 1 + 2^-6
  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint16_t bn;
  FloatToBFloat16(1, &nan, &bn);
  float nan_back;
  BFloat16ToFloat(1, &bn, &nan_back);
  EXPECT_TRUE(std::isnan(nan_back));
}

}  // namespace
}  // namespace distir::backend
