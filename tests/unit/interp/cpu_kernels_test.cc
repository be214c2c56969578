// The CPU kernels of the ONNX compute ops, one hand-computed case (or more)
// per op, with the arithmetic in a comment.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "cpu_test_util.h"

namespace distir {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using testing::Elems;
using testing::F64;
using testing::I64;
using testing::RunText;
using testing::StatusIs;
using testing::T;

#define RUN(out, text, ...) \
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, RunText(text, {__VA_ARGS__}))

TEST(CpuKernelsTest, MatMulMultipliesMatrices) {
  // [[1, 2], [3, 4]] [[5, 6], [7, 8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]].
  RUN(out, R"(func @f(%a: tensor<2x2xf32, d0>, %b: tensor<2x2xf32, d0>) {
    %y = MatMul(%a, %b)
    return %y
  })",
      T({2, 2}, {1, 2, 3, 4}), T({2, 2}, {5, 6, 7, 8}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(19, 22, 43, 50));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2x2xf32, d0>");
}

TEST(CpuKernelsTest, MatMulBroadcastsBatchDimsAndPromotesVectors) {
  // Batch [2] x no batch: [[1, 2]] [1, 1]^T = 3 and [[3, 4]] [1, 1]^T = 7.
  RUN(batched, R"(func @f(%a: tensor<2x1x2xf32, d0>, %b: tensor<2x1xf32, d0>) {
    %y = MatMul(%a, %b)
    return %y
  })",
      T({2, 1, 2}, {1, 2, 3, 4}), T({2, 1}, {1, 1}));
  EXPECT_EQ(batched[0].type().ToString(), "tensor<2x1x1xf32, d0>");
  EXPECT_THAT(Elems(batched[0]), ElementsAre(3, 7));
  // [1, 2] [[1, 2, 3], [4, 5, 6]] = [1+8, 2+10, 3+12]; the vector's 1 is dropped.
  RUN(vec, R"(func @f(%a: tensor<2xf32, d0>, %b: tensor<2x3xf32, d0>) {
    %y = MatMul(%a, %b)
    return %y
  })",
      T({2}, {1, 2}), T({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(vec[0].type().ToString(), "tensor<3xf32, d0>");
  EXPECT_THAT(Elems(vec[0]), ElementsAre(9, 12, 15));
}

TEST(CpuKernelsTest, GemmAppliesTransposesAlphaBetaAndBroadcastBias) {
  // A^T = [[1, 3], [2, 4]], B^T = I: 2 A^T + 0.5 [10, 20] = [[2+5, 6+10], [4+5, 8+10]].
  RUN(out, R"(func @f(%a: tensor<2x2xf32, d0>, %b: tensor<2x2xf32, d0>, %c: tensor<2xf32, d0>) {
    %y = Gemm(%a, %b, %c) {alpha = 2.0, beta = 0.5, transA = 1, transB = 1}
    return %y
  })",
      T({2, 2}, {1, 2, 3, 4}), T({2, 2}, {1, 0, 0, 1}), T({2}, {10, 20}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(7, 16, 9, 18));
  // Without bias and attributes: a plain product, [1, 2] [[1], [2]] = 5.
  RUN(plain, R"(func @f(%a: tensor<1x2xf32, d0>, %b: tensor<2x1xf32, d0>) {
    %y = Gemm(%a, %b)
    return %y
  })",
      T({1, 2}, {1, 2}), T({2, 1}, {1, 2}));
  EXPECT_THAT(Elems(plain[0]), ElementsAre(5));
}

constexpr char kBinary[] = R"(func @f(%a: tensor<2x3xf32, d0>, %b: tensor<3xf32, d0>) {
  %add = Add(%a, %b)
  %sub = Sub(%a, %b)
  %mul = Mul(%a, %b)
  %div = Div(%a, %b)
  %pow = Pow(%a, %b)
  return %add, %sub, %mul, %div, %pow
})";

TEST(CpuKernelsTest, ArithmeticBroadcastsTheRowOverTheMatrix) {
  // a = [[1, 2, 3], [4, 5, 6]], b = [1, 2, 4] broadcast to each row.
  RUN(out, kBinary, T({2, 3}, {1, 2, 3, 4, 5, 6}), T({3}, {1, 2, 4}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(2, 4, 7, 5, 7, 10));
  EXPECT_THAT(Elems(out[1]), ElementsAre(0, 0, -1, 3, 3, 2));
  EXPECT_THAT(Elems(out[2]), ElementsAre(1, 4, 12, 4, 10, 24));
  EXPECT_THAT(Elems(out[3]), ElementsAre(1, 1, 0.75, 4, 2.5, 1.5));
  // 1^1, 2^2, 3^4, 4^1, 5^2, 6^4.
  EXPECT_THAT(Elems(out[4]), ElementsAre(1, 4, 81, 4, 25, 1296));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2x3xf32, d0>");
}

TEST(CpuKernelsTest, IntegerDivisionTruncatesAndRejectsZero) {
  constexpr char kDiv[] = R"(func @f(%a: tensor<2xi64, d0>, %b: tensor<2xi64, d0>) {
    %y = Div(%a, %b)
    return %y
  })";
  // 7 / 2 = 3.5 -> 3 and -7 / 2 = -3.5 -> -3 (toward zero).
  RUN(out, kDiv, I64({2}, {7, -7}), I64({2}, {2, 2}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(3, -3));
  EXPECT_THAT(RunText(kDiv, {I64({2}, {1, 1}), I64({2}, {1, 0})}),
              StatusIs(StatusCode::kInvalidArgument, "Div divides an integer by zero"));
}

TEST(CpuKernelsTest, VariadicSumMaxMinBroadcastAllInputs) {
  // [1, 5] and [3] and [[0], [4]] broadcast to 2x2:
  // Sum = [[1+3+0, 5+3+0], [1+3+4, 5+3+4]], Max = [[3, 5], [4, 5]], Min = [[0, 0], [1, 3]].
  RUN(out, R"(func @f(%a: tensor<2xf32, d0>, %b: tensor<1xf32, d0>, %c: tensor<2x1xf32, d0>) {
    %s = Sum(%a, %b, %c)
    %mx = Max(%a, %b, %c)
    %mn = Min(%a, %b, %c)
    %one = Sum(%a)
    return %s, %mx, %mn, %one
  })",
      T({2}, {1, 5}), T({1}, {3}), T({2, 1}, {0, 4}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(4, 8, 8, 12));
  EXPECT_THAT(Elems(out[1]), ElementsAre(3, 5, 4, 5));
  EXPECT_THAT(Elems(out[2]), ElementsAre(0, 0, 1, 3));
  EXPECT_THAT(Elems(out[3]), ElementsAre(1, 5));
}

TEST(CpuKernelsTest, ComparisonsNotAndWhere) {
  // a = [1, 2, 3], b = [2, 2, 2]: Equal = [0, 1, 0], Less = [1, 0, 0],
  // Not(Less) = [0, 1, 1], Where(Less, a, b) = [1, 2, 2].
  RUN(out, R"(func @f(%a: tensor<3xf32, d0>, %b: tensor<3xf32, d0>) {
    %eq = Equal(%a, %b)
    %lt = Less(%a, %b)
    %ge = Not(%lt)
    %w = Where(%lt, %a, %b)
    return %eq, %lt, %ge, %w
  })",
      T({3}, {1, 2, 3}), T({3}, {2, 2, 2}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(0, 1, 0));
  EXPECT_EQ(out[0].type().dtype(), DType::kBool);
  EXPECT_THAT(Elems(out[1]), ElementsAre(1, 0, 0));
  EXPECT_THAT(Elems(out[2]), ElementsAre(0, 1, 1));
  EXPECT_THAT(Elems(out[3]), ElementsAre(1, 2, 2));
}

TEST(CpuKernelsTest, UnaryMathInF64) {
  // Neg, Sqrt(4) = 2, Exp(0) = 1, Relu(-1) = 0, erf(0.5) and tanh(0.5) from libm.
  RUN(out, R"(func @f(%x: tensor<2xf64, d0>) {
    %n = Neg(%x)
    %s = Sqrt(%x)
    %e = Exp(%x)
    %r = Relu(%x)
    %erf = Erf(%x)
    %t = Tanh(%x)
    return %n, %s, %e, %r, %erf, %t
  })",
      F64({2}, {4, 0}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(-4, 0));
  EXPECT_THAT(Elems(out[1]), ElementsAre(2, 0));
  EXPECT_THAT(Elems(out[2]), ElementsAre(std::exp(4.0), 1));
  EXPECT_THAT(Elems(out[3]), ElementsAre(4, 0));
  RUN(neg, R"(func @f(%x: tensor<2xf64, d0>) {
    %r = Relu(%x)
    %erf = Erf(%x)
    %t = Tanh(%x)
    return %r, %erf, %t
  })",
      F64({2}, {-1, 0.5}));
  EXPECT_THAT(Elems(neg[0]), ElementsAre(0, 0.5));
  EXPECT_THAT(Elems(neg[1])[1], DoubleNear(0.5204998778130465, 1e-15));
  EXPECT_THAT(Elems(neg[2])[1], DoubleNear(0.46211715726000974, 1e-15));
}

TEST(CpuKernelsTest, SigmoidSinAndCos) {
  // Sigmoid: 1/(1 + e^0) = 1/2; 1/(1 + 1/3) = 3/4 at ln 3, 1/4 at -ln 3;
  // exp(800) overflows to inf, giving exactly 0, and exp(-800) = 0 gives 1.
  const double ln3 = std::log(3.0);
  RUN(out, R"(func @f(%x: tensor<5xf64, d0>) {
    %y = Sigmoid(%x)
    return %y
  })",
      F64({5}, {0, ln3, -ln3, -800, 800}));
  EXPECT_THAT(Elems(out[0]),
              ElementsAre(0.5, DoubleNear(0.75, 1e-15), DoubleNear(0.25, 1e-15), 0, 1));
  // sin and cos at 0, pi/6, pi/2: [0, 1/2, 1] and [1, sqrt(3)/2, 0].
  const double pi = std::numbers::pi;
  RUN(trig, R"(func @f(%x: tensor<3xf64, d0>) {
    %s = Sin(%x)
    %c = Cos(%x)
    return %s, %c
  })",
      F64({3}, {0, pi / 6, pi / 2}));
  EXPECT_THAT(Elems(trig[0]), ElementsAre(0, DoubleNear(0.5, 1e-15), 1));
  EXPECT_THAT(Elems(trig[1]),
              ElementsAre(1, DoubleNear(std::sqrt(3.0) / 2, 1e-15), DoubleNear(0, 1e-15)));
}

TEST(CpuKernelsTest, GeluExactAndTanhApproximation) {
  // Exact: x Phi(x); Phi(1) = 0.841344746..., -Phi(-1) = -0.158655253...
  // Tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = 0.841191990... at 1.
  RUN(out, R"(func @f(%x: tensor<3xf64, d0>) {
    %e = Gelu(%x)
    %t = Gelu(%x) {approximate = "tanh"}
    return %e, %t
  })",
      F64({3}, {1, -1, 0}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(DoubleNear(0.8413447460685429, 1e-15),
                                         DoubleNear(-0.15865525393145707, 1e-15), 0));
  EXPECT_THAT(Elems(out[1]), ElementsAre(DoubleNear(0.8411919906082768, 1e-15),
                                         DoubleNear(-0.15880800939172324, 1e-15), 0));
}

TEST(CpuKernelsTest, SoftmaxNormalizesAlongTheAxis) {
  // Along the last axis: softmax([0, ln 3]) = [1/4, 3/4]; along axis 0 of
  // [[0, 0], [ln 3, 0]]: column 0 is [1/4, 3/4], column 1 is [1/2, 1/2].
  const double ln3 = std::log(3.0);
  RUN(out, R"(func @f(%x: tensor<2x2xf64, d0>) {
    %last = Softmax(%x)
    %first = Softmax(%x) {axis = 0}
    return %last, %first
  })",
      F64({2, 2}, {0, ln3, ln3, 0}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(DoubleNear(0.25, 1e-15), DoubleNear(0.75, 1e-15),
                                         DoubleNear(0.75, 1e-15), DoubleNear(0.25, 1e-15)));
  EXPECT_THAT(Elems(out[1]), ElementsAre(DoubleNear(0.25, 1e-15), DoubleNear(0.75, 1e-15),
                                         DoubleNear(0.75, 1e-15), DoubleNear(0.25, 1e-15)));
  // Large inputs do not overflow: softmax([1000, 1000]) = [0.5, 0.5].
  RUN(big, R"(func @f(%x: tensor<2xf32, d0>) {
    %y = Softmax(%x)
    return %y
  })",
      T({2}, {1000, 1000}));
  EXPECT_THAT(Elems(big[0]), ElementsAre(0.5, 0.5));
}

TEST(CpuKernelsTest, LayerNormalizationWithStatistics) {
  // Rows [0, 3, 6] and [1, 1, 1]: means 3 and 1, variances 6 and 0, so with
  // epsilon 0.25 the inverse std devs are 1/sqrt(6.25) = 0.4 and 1/sqrt(0.25) = 2.
  // Row 0: (x - 3) 0.4 = [-1.2, 0, 1.2], times scale [1, 2, 3] plus bias [0, 0, 1]
  // = [-1.2, 0, 4.6]; row 1: all zero before bias, so [0, 0, 1].
  RUN(out, R"(func @f(%x: tensor<2x3xf64, d0>, %s: tensor<3xf64, d0>, %b: tensor<3xf64, d0>) {
    %y, %mean, %inv = LayerNormalization(%x, %s, %b) {epsilon = 0.25}
    return %y, %mean, %inv
  })",
      F64({2, 3}, {0, 3, 6, 1, 1, 1}), F64({3}, {1, 2, 3}), F64({3}, {0, 0, 1}));
  EXPECT_THAT(Elems(out[0]),
              ElementsAre(DoubleNear(-1.2, 1e-14), 0, DoubleNear(4.6, 1e-14), 0, 0, 1));
  EXPECT_EQ(out[1].type().ToString(), "tensor<2x1xf64, d0>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(3, 1));
  EXPECT_THAT(Elems(out[2]), ElementsAre(DoubleNear(0.4, 1e-15), 2));
}

TEST(CpuKernelsTest, LayerNormalizationOverTheLastTwoDims) {
  // axis = 1 on [1, 2, 2]: normalize all four values [1, 2, 3, 4]; mean 2.5,
  // variance 1.25, epsilon 0: y = (x - 2.5) / sqrt(1.25).
  RUN(out, R"(func @f(%x: tensor<1x2x2xf64, d0>, %s: tensor<2x2xf64, d0>) {
    %y = LayerNormalization(%x, %s) {axis = 1, epsilon = 0.0}
    return %y
  })",
      F64({1, 2, 2}, {1, 2, 3, 4}), F64({2, 2}, {1, 1, 1, 1}));
  const double r = 1 / std::sqrt(1.25);
  EXPECT_THAT(Elems(out[0]), ElementsAre(DoubleNear(-1.5 * r, 1e-15), DoubleNear(-0.5 * r, 1e-15),
                                         DoubleNear(0.5 * r, 1e-15), DoubleNear(1.5 * r, 1e-15)));
}

TEST(CpuKernelsTest, RMSNormalizationScalesByTheRootMeanSquare) {
  // Rows [1, 7] and [1, -1]: mean squares 25 and 1, epsilon 0, so the rows are
  // divided by 5 and by 1: [0.2, 1.4] and [1, -1]; times scale [2, 0.5]:
  // [0.4, 0.7] and [2, -0.5]. No centring: a constant row is not zeroed.
  RUN(out, R"(func @f(%x: tensor<2x2xf64, d0>, %s: tensor<2xf64, d0>) {
    %y = RMSNormalization(%x, %s) {epsilon = 0.0}
    return %y
  })",
      F64({2, 2}, {1, 7, 1, -1}), F64({2}, {2, 0.5}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(DoubleNear(0.4, 1e-15), DoubleNear(0.7, 1e-15), 2, -0.5));
  // epsilon inside the root: [3, 4] has mean square 12.5; with epsilon 12.5
  // the divisor is sqrt(25) = 5: [0.6, 0.8]. The default epsilon is 1e-5.
  RUN(eps, R"(func @f(%x: tensor<1x2xf64, d0>, %s: tensor<2xf64, d0>) {
    %y = RMSNormalization(%x, %s) {epsilon = 12.5}
    %d = RMSNormalization(%x, %s)
    return %y, %d
  })",
      F64({1, 2}, {3, 4}), F64({2}, {1, 1}));
  EXPECT_THAT(Elems(eps[0]), ElementsAre(DoubleNear(0.6, 1e-15), DoubleNear(0.8, 1e-15)));
  const double r = 1 / std::sqrt(12.5 + 1e-5);
  EXPECT_THAT(Elems(eps[1]), ElementsAre(DoubleNear(3 * r, 1e-15), DoubleNear(4 * r, 1e-15)));
}

TEST(CpuKernelsTest, RMSNormalizationOverTheLastTwoDimsWithABroadcastScale) {
  // axis = 1 on [1, 2, 2]: [1, 3, 5, 5] has mean square (1 + 9 + 25 + 25) / 4
  // = 15; epsilon 1 gives 1/sqrt(16) = 0.25: [0.25, 0.75, 1.25, 1.25], times
  // the scale [1, 2] repeated along the rows: [0.25, 1.5, 1.25, 2.5].
  RUN(out, R"(func @f(%x: tensor<1x2x2xf64, d0>, %s: tensor<2xf64, d0>) {
    %y = RMSNormalization(%x, %s) {axis = 1, epsilon = 1.0}
    return %y
  })",
      F64({1, 2, 2}, {1, 3, 5, 5}), F64({2}, {1, 2}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(0.25, 1.5, 1.25, 2.5));
  // The result has the scale's dtype (ONNX): -2 / 2 * (1/3) rounds to bf16's
  // nearest, -0.333984375 (1.0101011b x 2^-2).
  RUN(mixed, R"(func @f(%x: tensor<1x1xf32, d0>, %s: tensor<1xbf16, d0>) {
    %y = RMSNormalization(%x, %s) {epsilon = 0.0}
    return %y
  })",
      T({1, 1}, {-2}), T({1}, {1.0 / 3}, DType::kBF16));
  EXPECT_EQ(mixed[0].type().ToString(), "tensor<1x1xbf16, d0>");
  EXPECT_THAT(Elems(mixed[0]), ElementsAre(-0.333984375));
}

TEST(CpuKernelsTest, ReductionsOverAxes) {
  // x = [[1, 2, 3], [4, 5, 6]]: sums over axis 0 = [5, 7, 9], means over
  // axis 1 = [[2], [5]] (kept), total 21, mean over axis -1 by input = [2, 5].
  RUN(out, R"(func @f(%x: tensor<2x3xf32, d0>, %axes: tensor<1xi64, d0>) {
    %s0 = ReduceSum(%x) {axes = [0], keepdims = 0}
    %m1 = ReduceMean(%x) {axes = [1]}
    %all = ReduceSum(%x) {keepdims = 0}
    %by_input = ReduceMean(%x, %axes) {keepdims = 0}
    return %s0, %m1, %all, %by_input
  })",
      T({2, 3}, {1, 2, 3, 4, 5, 6}), I64({1}, {-1}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(5, 7, 9));
  EXPECT_EQ(out[1].type().ToString(), "tensor<2x1xf32, d0>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(2, 5));
  EXPECT_EQ(out[2].type().ToString(), "tensor<f32, d0>");
  EXPECT_THAT(Elems(out[2]), ElementsAre(21));
  EXPECT_EQ(out[3].type().ToString(), "tensor<2xf32, d0>");
  EXPECT_THAT(Elems(out[3]), ElementsAre(2, 5));
}

TEST(CpuKernelsTest, CastRoundsToTheTargetDType) {
  // To i64: -2.7 -> -2, 2.7 -> 2 (toward zero). To f16: 1 + 2^-11 -> 1 (tie,
  // even). To bool: nonzero -> 1.
  RUN(out, R"(func @f(%x: tensor<4xf64, d0>) {
    %i = Cast(%x) {to = i64}
    %h = Cast(%x) {to = f16}
    %b = Cast(%x) {to = bool}
    return %i, %h, %b
  })",
      F64({4}, {-2.7, 2.7, 1 + std::ldexp(1.0, -11), 0}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(-2, 2, 1, 0));
  EXPECT_EQ(out[1].type().ToString(), "tensor<4xf16, d0>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(-2.69921875, 2.69921875, 1, 0));
  EXPECT_THAT(Elems(out[2]), ElementsAre(1, 1, 1, 0));
}

TEST(CpuKernelsTest, TriluKeepsTheUpperOrLowerPart) {
  // 3x3 of ones at positions (i, j): upper keeps j - i >= k, lower j - i <= k.
  constexpr char kTrilu[] = R"(func @f(%x: tensor<3x3xf32, d0>, %k: tensor<i64, d0>) {
    %u = Trilu(%x)
    %l1 = Trilu(%x, %k) {upper = 0}
    %u1 = Trilu(%x, %k)
    return %u, %l1, %u1
  })";
  RUN(out, kTrilu, T({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), I64({}, {1}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 2, 3, 0, 5, 6, 0, 0, 9));
  EXPECT_THAT(Elems(out[1]), ElementsAre(1, 2, 0, 4, 5, 6, 7, 8, 9));
  EXPECT_THAT(Elems(out[2]), ElementsAre(0, 2, 3, 0, 0, 6, 0, 0, 0));
}

TEST(CpuKernelsTest, ResultsAreRoundedToF32) {
  // 1 + 2^-30 is not an f32: the sum rounds to 1 in an f32 program, not in f64.
  const double tiny = std::ldexp(1.0, -30);
  RUN(f32, R"(func @f(%a: tensor<1xf32, d0>, %b: tensor<1xf32, d0>) {
    %y = Add(%a, %b)
    return %y
  })",
      T({1}, {1}), T({1}, {tiny}));
  EXPECT_THAT(Elems(f32[0]), ElementsAre(1));
  RUN(f64, R"(func @f(%a: tensor<1xf64, d0>, %b: tensor<1xf64, d0>) {
    %y = Add(%a, %b)
    return %y
  })",
      F64({1}, {1}), F64({1}, {tiny}));
  EXPECT_THAT(Elems(f64[0]), ElementsAre(1 + tiny));
}

TEST(CpuKernelsTest, ScalarsComputeAsRankZero) {
  // scalar 2 + scalar 3 = scalar 5.
  RUN(out, R"(func @f(%a: scalar<f32, d0>, %b: scalar<f32, d0>) {
    %y = Add(%a, %b)
    return %y
  })",
      HostValue::Scalar(DType::kF32, 2, DeviceId(0)),
      HostValue::Scalar(DType::kF32, 3, DeviceId(0)));
  EXPECT_EQ(out[0].type().ToString(), "scalar<f32, d0>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(5));
}

}  // namespace
}  // namespace distir
