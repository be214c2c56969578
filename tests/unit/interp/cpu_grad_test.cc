// Finite-difference checks of the gradient kernels, in f64.
//
// For a forward program y = F(args) and random weights c of y's shape, the
// objective L = sum(c * y) has dL/d(args[k]) = the backward program's output
// with dy = c. Each gradient element is compared with the central difference
// (L(a + h) - L(a - h)) / 2h, h = 1e-5: its truncation error is O(h^2) ~ 1e-10
// and its rounding error about 1e-16 * |L| / h ~ 1e-10 for the O(1) values
// used here, so the tolerance is |diff| <= 1e-8 + 1e-6 |numeric|.

#include <gtest/gtest.h>

#include "cpu_test_util.h"
#include "grad_check_util.h"

namespace distir {
namespace {

using testing::F64;
using testing::NumericGradient;
using testing::RunOrDie;
using testing::ParseAndInferOrDie;

constexpr double kRtol = 1e-6;
constexpr double kAtol = 1e-8;

struct GradCase {
  /// Entry takes the inputs and returns y (its first result).
  const char* forward;
  /// Entry takes the same inputs plus dy and returns one gradient per entry of `wrt`.
  const char* backward;
  /// The inputs the backward program's results are gradients of, in order.
  std::vector<int> wrt;
};

void CheckGradients(const GradCase& gc, const std::vector<HostValue>& args, uint64_t seed) {
  const Module forward = ParseAndInferOrDie(gc.forward);
  const Module backward = ParseAndInferOrDie(gc.backward);
  const HostValue y = RunOrDie(forward, args)[0];
  RandomInputOptions uniform;
  uniform.distribution = RandomInputOptions::Distribution::kUniform;
  const HostValue c = RandomValue(y.type(), seed, uniform);
  std::vector<HostValue> backward_args = args;
  backward_args.push_back(c);
  const std::vector<HostValue> grads = RunOrDie(backward, backward_args);
  ASSERT_EQ(grads.size(), gc.wrt.size());
  for (size_t g = 0; g < gc.wrt.size(); ++g) {
    const HostValue numeric = NumericGradient(forward, args, gc.wrt[g], c);
    SCOPED_TRACE("gradient of input " + std::to_string(gc.wrt[g]));
    EXPECT_OK(AllClose(grads[g], numeric, kRtol, kAtol));
  }
}

// Inputs of `fn`'s entry drawn U(-1, 1) (seeded), shifted away from 0 by
// `away_from_zero` so that kinks (Relu at 0) stay out of the stencil.
std::vector<HostValue> Inputs(const char* text, uint64_t seed, double away_from_zero = 0) {
  const Module m = ParseAndInferOrDie(text);
  RandomInputOptions uniform;
  uniform.distribution = RandomInputOptions::Distribution::kUniform;
  StatusOr<std::vector<HostValue>> in = RandomInputs(*m.entry(), seed, uniform);
  DISTIR_CHECK(in.ok()) << in.status().ToString();
  for (HostValue& v : *in) {
    DenseTensor t = v.tensor();
    for (double& x : t.values) x += x < 0 ? -away_from_zero : away_from_zero;
    v = HostValue::Tensor(t, v.device());
  }
  return *std::move(in);
}

TEST(CpuGradTest, MatMulGradOfMatrices) {
  GradCase gc{
      R"(func @f(%x: tensor<3x4xf64, d0>, %w: tensor<4x2xf64, d0>) {
      %y = MatMul(%x, %w)
      return %y
    })",
      R"(func @g(%x: tensor<3x4xf64, d0>, %w: tensor<4x2xf64, d0>, %dy: tensor<3x2xf64, d0>) {
      %dx, %dw = MatMulGrad(%x, %w, %dy)
      return %dx, %dw
    })",
      {0, 1}};
  CheckGradients(gc, Inputs(gc.forward, 1), 101);
}

TEST(CpuGradTest, MatMulGradSumsOverBroadcastBatchDims) {
  // x is batched, w shared: dw sums the per-batch products.
  GradCase shared_w{R"(func @f(%x: tensor<2x3x4xf64, d0>, %w: tensor<4x2xf64, d0>) {
      %y = MatMul(%x, %w)
      return %y
    })",
                    R"(func @g(%x: tensor<2x3x4xf64, d0>, %w: tensor<4x2xf64, d0>,
                               %dy: tensor<2x3x2xf64, d0>) {
      %dx, %dw = MatMulGrad(%x, %w, %dy)
      return %dx, %dw
    })",
                    {0, 1}};
  CheckGradients(shared_w, Inputs(shared_w.forward, 2), 102);
  // x shared, w batched; and a vector x, promoted to [1, 4].
  GradCase shared_x{R"(func @f(%x: tensor<3x4xf64, d0>, %w: tensor<2x4x5xf64, d0>) {
      %y = MatMul(%x, %w)
      return %y
    })",
                    R"(func @g(%x: tensor<3x4xf64, d0>, %w: tensor<2x4x5xf64, d0>,
                               %dy: tensor<2x3x5xf64, d0>) {
      %dx, %dw = MatMulGrad(%x, %w, %dy)
      return %dx, %dw
    })",
                    {0, 1}};
  CheckGradients(shared_x, Inputs(shared_x.forward, 3), 103);
  GradCase vector{
      R"(func @f(%x: tensor<4xf64, d0>, %w: tensor<4x2xf64, d0>) {
      %y = MatMul(%x, %w)
      return %y
    })",
      R"(func @g(%x: tensor<4xf64, d0>, %w: tensor<4x2xf64, d0>, %dy: tensor<2xf64, d0>) {
      %dx, %dw = MatMulGrad(%x, %w, %dy)
      return %dx, %dw
    })",
      {0, 1}};
  CheckGradients(vector, Inputs(vector.forward, 4), 104);
}

TEST(CpuGradTest, ReluGrad) {
  GradCase gc{R"(func @f(%x: tensor<3x5xf64, d0>) {
      %y = Relu(%x)
      return %y
    })",
              R"(func @g(%x: tensor<3x5xf64, d0>, %dy: tensor<3x5xf64, d0>) {
      %dx = ReluGrad(%x, %dy)
      return %dx
    })",
              {0}};
  CheckGradients(gc, Inputs(gc.forward, 5, /*away_from_zero=*/1e-3), 105);
}

TEST(CpuGradTest, GeluGradExactAndTanh) {
  for (const char* mode : {"none", "tanh"}) {
    const std::string attr = std::string(" {approximate = \"") + mode + "\"}";
    const std::string forward = R"(func @f(%x: tensor<3x5xf64, d0>) {
        %y = Gelu(%x))" + attr + R"(
        return %y
      })";
    const std::string backward = R"(func @g(%x: tensor<3x5xf64, d0>, %dy: tensor<3x5xf64, d0>) {
        %dx = GeluGrad(%x, %dy))" +
                                 attr + R"(
        return %dx
      })";
    SCOPED_TRACE(mode);
    CheckGradients({forward.c_str(), backward.c_str(), {0}}, Inputs(forward.c_str(), 6, 0), 106);
  }
}

TEST(CpuGradTest, SigmoidGradTakesTheSigmoidOutput) {
  GradCase gc{R"(func @f(%x: tensor<3x5xf64, d0>) {
      %y = Sigmoid(%x)
      return %y
    })",
              R"(func @g(%x: tensor<3x5xf64, d0>, %dy: tensor<3x5xf64, d0>) {
      %y = Sigmoid(%x)
      %dx = SigmoidGrad(%y, %dy)
      return %dx
    })",
              {0}};
  CheckGradients(gc, Inputs(gc.forward, 12, 0), 112);
}

// SwiGLU, LLaMA's MLP: y = (silu(x W1) * (x W3)) W2 with silu(a) = a * Sigmoid(a),
// differentiated with MatMulGrad, Mul, Add and SigmoidGrad only: for
// u = a * s, s = Sigmoid(a), du/da = s + a * s (1 - s), so
// da = du * s + SigmoidGrad(s, du * a).
TEST(CpuGradTest, SwiGluNeedsOnlySigmoidGradBeyondMulAndMatMul) {
  GradCase gc{R"(func @f(%x: tensor<3x4xf64, d0>, %w1: tensor<4x5xf64, d0>,
                         %w3: tensor<4x5xf64, d0>, %w2: tensor<5x4xf64, d0>) {
      %a = MatMul(%x, %w1)
      %b = MatMul(%x, %w3)
      %s = Sigmoid(%a)
      %u = Mul(%a, %s)
      %h = Mul(%u, %b)
      %y = MatMul(%h, %w2)
      return %y
    })",
              R"(func @g(%x: tensor<3x4xf64, d0>, %w1: tensor<4x5xf64, d0>,
                         %w3: tensor<4x5xf64, d0>, %w2: tensor<5x4xf64, d0>,
                         %dy: tensor<3x4xf64, d0>) {
      %a = MatMul(%x, %w1)
      %b = MatMul(%x, %w3)
      %s = Sigmoid(%a)
      %u = Mul(%a, %s)
      %h = Mul(%u, %b)
      %dh, %dw2 = MatMulGrad(%h, %w2, %dy)
      %du = Mul(%dh, %b)
      %db = Mul(%dh, %u)
      %da_direct = Mul(%du, %s)
      %dsa = Mul(%du, %a)
      %da_sigmoid = SigmoidGrad(%s, %dsa)
      %da = Add(%da_direct, %da_sigmoid)
      %dx1, %dw1 = MatMulGrad(%x, %w1, %da)
      %dx3, %dw3 = MatMulGrad(%x, %w3, %db)
      %dx = Add(%dx1, %dx3)
      return %dx, %dw1, %dw3, %dw2
    })",
              {0, 1, 2, 3}};
  CheckGradients(gc, Inputs(gc.forward, 13), 113);
}

TEST(CpuGradTest, SoftmaxGradAlongAMiddleAxisAndTheLast) {
  GradCase middle{R"(func @f(%x: tensor<2x3x4xf64, d0>) {
      %y = Softmax(%x) {axis = 1}
      return %y
    })",
                  R"(func @g(%x: tensor<2x3x4xf64, d0>, %dy: tensor<2x3x4xf64, d0>) {
      %y = Softmax(%x) {axis = 1}
      %dx = SoftmaxGrad(%y, %dy) {axis = 1}
      return %dx
    })",
                  {0}};
  CheckGradients(middle, Inputs(middle.forward, 7), 107);
  GradCase last{R"(func @f(%x: tensor<3x4xf64, d0>) {
      %y = Softmax(%x)
      return %y
    })",
                R"(func @g(%x: tensor<3x4xf64, d0>, %dy: tensor<3x4xf64, d0>) {
      %y = Softmax(%x)
      %dx = SoftmaxGrad(%y, %dy)
      return %dx
    })",
                {0}};
  CheckGradients(last, Inputs(last.forward, 8), 108);
}

TEST(CpuGradTest, LayerNormalizationGradOfInputScaleAndBias) {
  GradCase gc{R"(func @f(%x: tensor<3x4xf64, d0>, %s: tensor<4xf64, d0>, %b: tensor<4xf64, d0>) {
      %y = LayerNormalization(%x, %s, %b) {epsilon = 1e-05}
      return %y
    })",
              R"(func @g(%x: tensor<3x4xf64, d0>, %s: tensor<4xf64, d0>, %b: tensor<4xf64, d0>,
                         %dy: tensor<3x4xf64, d0>) {
      %dx, %ds, %db = LayerNormalizationGrad(%x, %s, %dy) {epsilon = 1e-05}
      return %dx, %ds, %db
    })",
              {0, 1, 2}};
  CheckGradients(gc, Inputs(gc.forward, 9), 109);
}

TEST(CpuGradTest, LayerNormalizationGradWithABroadcastScale) {
  // Normalizes over [3, 4] (axis 1) with a scale and bias of shape [4]:
  // dscale and dbias also sum over the 3 rows the scale is broadcast along.
  GradCase gc{R"(func @f(%x: tensor<2x3x4xf64, d0>, %s: tensor<4xf64, d0>, %b: tensor<4xf64, d0>) {
      %y = LayerNormalization(%x, %s, %b) {axis = 1, epsilon = 0.001}
      return %y
    })",
              R"(func @g(%x: tensor<2x3x4xf64, d0>, %s: tensor<4xf64, d0>, %b: tensor<4xf64, d0>,
                         %dy: tensor<2x3x4xf64, d0>) {
      %dx, %ds, %db = LayerNormalizationGrad(%x, %s, %dy) {axis = 1, epsilon = 0.001}
      return %dx, %ds, %db
    })",
              {0, 1, 2}};
  CheckGradients(gc, Inputs(gc.forward, 10), 110);
}

TEST(CpuGradTest, RMSNormalizationGradOfInputAndScale) {
  GradCase gc{R"(func @f(%x: tensor<3x4xf64, d0>, %s: tensor<4xf64, d0>) {
      %y = RMSNormalization(%x, %s) {epsilon = 1e-05}
      return %y
    })",
              R"(func @g(%x: tensor<3x4xf64, d0>, %s: tensor<4xf64, d0>,
                         %dy: tensor<3x4xf64, d0>) {
      %dx, %ds = RMSNormalizationGrad(%x, %s, %dy) {epsilon = 1e-05}
      return %dx, %ds
    })",
              {0, 1}};
  CheckGradients(gc, Inputs(gc.forward, 14), 114);
}

TEST(CpuGradTest, RMSNormalizationGradWithABroadcastScale) {
  // Normalizes over [3, 4] (axis 1) with a scale of shape [4]: dscale also
  // sums over the 3 rows the scale is broadcast along.
  GradCase gc{R"(func @f(%x: tensor<2x3x4xf64, d0>, %s: tensor<4xf64, d0>) {
      %y = RMSNormalization(%x, %s) {axis = 1, epsilon = 0.001}
      return %y
    })",
              R"(func @g(%x: tensor<2x3x4xf64, d0>, %s: tensor<4xf64, d0>,
                         %dy: tensor<2x3x4xf64, d0>) {
      %dx, %ds = RMSNormalizationGrad(%x, %s, %dy) {axis = 1, epsilon = 0.001}
      return %dx, %ds
    })",
              {0, 1}};
  CheckGradients(gc, Inputs(gc.forward, 15), 115);
}

TEST(CpuGradTest, MSELossGradIsTheGradientOfMSELoss) {
  // dy is a rank-0 weight on the loss; the gradient scales with it.
  GradCase gc{R"(func @f(%p: tensor<4x3xf64, d0>, %y: tensor<4x3xf64, d0>) {
      %l = MSELoss(%p, %y)
      return %l
    })",
              R"(func @g(%p: tensor<4x3xf64, d0>, %y: tensor<4x3xf64, d0>, %dl: tensor<f64, d0>) {
      %g = MSELossGrad(%p, %y)
      %dp = Mul(%g, %dl)
      %ng = Neg(%g)
      %dy = Mul(%ng, %dl)
      return %dp, %dy
    })",
              {0, 1}};
  CheckGradients(gc, Inputs(gc.forward, 11), 111);
}

TEST(CpuGradTest, TrainingKernelsHandComputed) {
  // MatMulGrad: x = [[1, 2]], w = [[1], [1]], dy = [[3]]: dx = dy w^T = [[3, 3]],
  // dw = x^T dy = [[3], [6]]. ReluGrad([-1, 0, 2], [5, 6, 7]) = [0, 0, 7].
  // SoftmaxGrad(y = [1/4, 3/4], dy = [1, 0]): sum(dy y) = 1/4, so
  // dx = [1/4 (1 - 1/4), 3/4 (0 - 1/4)] = [3/16, -3/16].
  // MSELoss([1, 2, 3, 4], [0, 2, 1, 4]) = (1 + 0 + 4 + 0) / 4 = 1.25 and
  // MSELossGrad = 2 [1, 0, 2, 0] / 4 = [0.5, 0, 1, 0].
  ASSERT_OK_AND_ASSIGN(
      std::vector<HostValue> out,
      testing::RunText(R"(
  func @f(%x: tensor<1x2xf64, d0>, %w: tensor<2x1xf64, d0>, %dy: tensor<1x1xf64, d0>,
          %r: tensor<3xf64, d0>, %dr: tensor<3xf64, d0>, %s: tensor<2xf64, d0>,
          %ds: tensor<2xf64, d0>, %p: tensor<4xf64, d0>, %t: tensor<4xf64, d0>) {
    %dx, %dw = MatMulGrad(%x, %w, %dy)
    %drelu = ReluGrad(%r, %dr)
    %dsm = SoftmaxGrad(%s, %ds)
    %l = MSELoss(%p, %t)
    %dp = MSELossGrad(%p, %t)
    return %dx, %dw, %drelu, %dsm, %l, %dp
  })",
                       {F64({1, 2}, {1, 2}), F64({2, 1}, {1, 1}), F64({1, 1}, {3}),
                        F64({3}, {-1, 0, 2}), F64({3}, {5, 6, 7}), F64({2}, {0.25, 0.75}),
                        F64({2}, {1, 0}), F64({4}, {1, 2, 3, 4}), F64({4}, {0, 2, 1, 4})}));
  EXPECT_EQ(out[0].tensor().values, (std::vector<double>{3, 3}));
  EXPECT_EQ(out[1].tensor().values, (std::vector<double>{3, 6}));
  EXPECT_EQ(out[2].tensor().values, (std::vector<double>{0, 0, 7}));
  EXPECT_EQ(out[3].tensor().values, (std::vector<double>{0.1875, -0.1875}));
  EXPECT_EQ(out[4].type().ToString(), "tensor<f64, d0>");
  EXPECT_EQ(out[4].tensor().values, (std::vector<double>{1.25}));
  EXPECT_EQ(out[5].tensor().values, (std::vector<double>{0.5, 0, 1, 0}));
}

TEST(CpuGradTest, LayerNormalizationGradHandComputed) {
  // x = [0, 3, 6], scale 1, dy = [1, 0, 0], epsilon 0: mean 3, variance 6,
  // r = 1/sqrt(6), xh = [-3, 0, 3] r. g = dy, mean(g) = 1/3,
  // mean(g xh) = -3 r / 3 = -r, so dx = r (g - 1/3 + xh r) with
  // xh r = [-1/2, 0, 1/2]: dx = r [1/6, -1/3, 1/6]; dscale = dy xh = [-3 r, 0, 0];
  // dbias = dy.
  ASSERT_OK_AND_ASSIGN(
      std::vector<HostValue> out,
      testing::RunText(R"(
  func @f(%x: tensor<1x3xf64, d0>, %s: tensor<3xf64, d0>, %dy: tensor<1x3xf64, d0>) {
    %dx, %ds, %db = LayerNormalizationGrad(%x, %s, %dy) {epsilon = 0.0}
    return %dx, %ds, %db
  })",
                       {F64({1, 3}, {0, 3, 6}), F64({3}, {1, 1, 1}), F64({1, 3}, {1, 0, 0})}));
  const double r = 1 / std::sqrt(6.0);
  EXPECT_OK(AllClose(out[0], F64({1, 3}, {r / 6, -r / 3, r / 6}), 1e-14, 1e-15));
  EXPECT_OK(AllClose(out[1], F64({3}, {-3 * r, 0, 0}), 1e-14, 1e-15));
  EXPECT_OK(AllClose(out[2], F64({3}, {1, 0, 0}), 0, 0));
}

TEST(CpuGradTest, RMSNormalizationGradAndSigmoidGradHandComputed) {
  // RMSNorm: x = [1, 7], scale 1, dy = [1, 0], epsilon 0: mean square 25,
  // r = 1/5, xh = x r = [0.2, 1.4], g = dy, mean(g xh) = 0.2 / 2 = 0.1, so
  // dx = r (g - xh 0.1) = 0.2 [1 - 0.02, -0.14] = [0.196, -0.028] and
  // dscale = dy xh = [0.2, 0]. SigmoidGrad(y = [0.5, 0.25], dy = [2, 4]) =
  // dy y (1 - y) = [0.5, 0.75].
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out,
                       testing::RunText(R"(
  func @f(%x: tensor<1x2xf64, d0>, %s: tensor<2xf64, d0>, %dy: tensor<1x2xf64, d0>,
          %y: tensor<2xf64, d0>, %dsig: tensor<2xf64, d0>) {
    %dx, %ds = RMSNormalizationGrad(%x, %s, %dy) {epsilon = 0.0}
    %dz = SigmoidGrad(%y, %dsig)
    return %dx, %ds, %dz
  })",
                                        {F64({1, 2}, {1, 7}), F64({2}, {1, 1}), F64({1, 2}, {1, 0}),
                                         F64({2}, {0.5, 0.25}), F64({2}, {2, 4})}));
  EXPECT_OK(AllClose(out[0], F64({1, 2}, {0.196, -0.028}), 1e-14, 1e-15));
  EXPECT_OK(AllClose(out[1], F64({2}, {0.2, 0}), 1e-14, 1e-15));
  EXPECT_OK(AllClose(out[2], F64({2}, {0.5, 0.75}), 0, 0));
}

TEST(CpuGradTest, OptimizersHandComputed) {
  // SGD: w = [1, 2], dw = [10, 20]: lr 0.1 gives [0, 0], the default lr 0.01
  // gives [0.9, 1.8]. Adam at step 1 from m = v = 0 with epsilon 0: the bias
  // corrections make m_hat = dw and v_hat = dw^2, so w' = w - lr sign(dw):
  // [1, 1] with dw = [2, -4], lr 0.1 -> [0.9, 1.1]; m' = 0.1 dw = [0.2, -0.4],
  // v' = 0.001 dw^2 = [0.004, 0.016].
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out,
                       testing::RunText(R"(
  func @f(%w: tensor<2xf64, d0>, %dw: tensor<2xf64, d0>, %a: tensor<2xf64, d0>,
          %da: tensor<2xf64, d0>, %z: tensor<2xf64, d0>) {
    %w1 = SGD(%w, %dw) {lr = 0.1}
    %w2 = SGD(%w, %dw)
    %a1, %m1, %v1 = Adam(%a, %da, %z, %z) {epsilon = 0.0, lr = 0.1}
    %a2, %m2, %v2 = Adam(%a, %da, %z, %z) {epsilon = 0.0, lr = 0.1, step = 2}
    return %w1, %w2, %a1, %m1, %v1, %a2
  })",
                                        {F64({2}, {1, 2}), F64({2}, {10, 20}), F64({2}, {1, 1}),
                                         F64({2}, {2, -4}), F64({2}, {0, 0})}));
  EXPECT_OK(AllClose(out[0], F64({2}, {0, 0}), 0, 1e-15));
  EXPECT_OK(AllClose(out[1], F64({2}, {0.9, 1.8}), 1e-15, 0));
  EXPECT_OK(AllClose(out[2], F64({2}, {0.9, 1.1}), 1e-15, 0));
  EXPECT_OK(AllClose(out[3], F64({2}, {0.2, -0.4}), 1e-15, 0));
  EXPECT_OK(AllClose(out[4], F64({2}, {0.004, 0.016}), 1e-14, 0));
  // Step 2: m_hat = 0.1 dw / (1 - 0.9^2) = dw / 1.9, v_hat = 0.001 dw^2 / (1 - 0.999^2)
  // = dw^2 / 1.999, so w' = w - 0.1 sign(dw) sqrt(1.999) / 1.9.
  const double step = 0.1 * std::sqrt(1.999) / 1.9;
  EXPECT_OK(AllClose(out[5], F64({2}, {1 - step, 1 + step}), 1e-14, 0));
}

}  // namespace
}  // namespace distir
