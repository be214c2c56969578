// The building blocks of LLaMA-style programs on the reference executor, as
// opset-17 ONNX exports write them: RMSNorm decomposed into Pow, ReduceMean,
// Add, Sqrt, Div and Mul equals the RMSNormalization op; SiLU is
// Mul(x, Sigmoid(x)); rotary embeddings (RoPE) rotate pairs (i, i + d/2) with
// rotate_half = Concat(Neg(second half), first half) from Slice, and Cos/Sin
// of the position angles.

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
using testing::ParseAndInferOrDie;
using testing::RunText;

std::vector<HostValue> RunRandom(std::string_view text, uint64_t seed) {
  const Module m = ParseAndInferOrDie(text);
  StatusOr<std::vector<HostValue>> in = RandomInputs(*m.entry(), seed);
  DISTIR_CHECK(in.ok()) << in.status().ToString();
  StatusOr<std::vector<HostValue>> out = Execute(m, *m.entry(), *std::move(in));
  DISTIR_CHECK(out.ok()) << out.status().ToString();
  return *std::move(out);
}

TEST(CpuLlamaOpsTest, DecomposedRMSNormEqualsRMSNormalization) {
  // HF LlamaRMSNorm: w * (x * rsqrt(mean(x^2, -1) + eps)), rsqrt exported as Div(1, Sqrt).
  const std::vector<HostValue> out = RunRandom(R"(
  func @f(%x: tensor<2x3x8xf64, d0>, %w: tensor<8xf64, d0>) {
    %two = Constant() {device = d0, value = dense<f64>[2.0]}
    %eps = Constant() {device = d0, value = dense<f64>[1e-06]}
    %one = Constant() {device = d0, value = dense<f64>[1.0]}
    %sq = Pow(%x, %two)
    %ms = ReduceMean(%sq) {axes = [-1], keepdims = 1}
    %mse = Add(%ms, %eps)
    %rms = Sqrt(%mse)
    %inv = Div(%one, %rms)
    %xn = Mul(%x, %inv)
    %y = Mul(%w, %xn)
    %ref = RMSNormalization(%x, %w) {axis = -1, epsilon = 1e-06}
    return %y, %ref
  })",
                                               1);
  EXPECT_OK(AllClose(out[0], out[1], 1e-14, 1e-15));
}

TEST(CpuLlamaOpsTest, SiluIsXTimesSigmoid) {
  // silu(x) = x / (1 + e^-x): 0 at 0, ln 3 * 3/4 at ln 3, -ln 3 / 4 at -ln 3.
  const double ln3 = std::log(3.0);
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, RunText(R"(
  func @f(%x: tensor<3xf64, d0>) {
    %s = Sigmoid(%x)
    %y = Mul(%x, %s)
    return %y
  })",
                                                           {F64({3}, {0, ln3, -ln3})}));
  EXPECT_THAT(Elems(out[0]),
              ElementsAre(0, DoubleNear(0.75 * ln3, 1e-15), DoubleNear(-0.25 * ln3, 1e-15)));
}

TEST(CpuLlamaOpsTest, RotaryEmbeddingRotatesHalfPairs) {
  // d = 4 at position 1 with inv_freq [pi/2, pi]: emb = Concat(freqs, freqs) =
  // [pi/2, pi, pi/2, pi], cos = [0, -1, 0, -1], sin = [1, 0, 1, 0]. For
  // x = [1, 2, 0, 0], rotate_half(x) = [-x2, -x3, x0, x1] = [0, 0, 1, 2] and
  // x cos + rotate_half(x) sin = [0, -2, 1, 0]: pair (0, 2) = (1, 0) turned by
  // pi/2 is (0, 1), pair (1, 3) = (2, 0) turned by pi is (-2, 0). The second
  // half's end (INT64_MAX in exports) is any bound past the end: Slice clamps.
  const double pi = std::numbers::pi;
  ASSERT_OK_AND_ASSIGN(
      std::vector<HostValue> out,
      RunText(R"(
  func @f(%x: tensor<1x4xf64, d0>, %pos: tensor<1x1xf64, d0>, %inv_freq: tensor<2xf64, d0>) {
    %freqs = Mul(%pos, %inv_freq)
    %emb = Concat(%freqs, %freqs) {axis = -1}
    %cos = Cos(%emb)
    %sin = Sin(%emb)
    %zero = Constant() {device = d0, value = dense<1xi64>[0]}
    %half = Constant() {device = d0, value = dense<1xi64>[2]}
    %end = Constant() {device = d0, value = dense<1xi64>[100]}
    %last = Constant() {device = d0, value = dense<1xi64>[-1]}
    %x1 = Slice(%x, %zero, %half, %last)
    %x2 = Slice(%x, %half, %end, %last)
    %nx2 = Neg(%x2)
    %rot = Concat(%nx2, %x1) {axis = -1}
    %a = Mul(%x, %cos)
    %b = Mul(%rot, %sin)
    %y = Add(%a, %b)
    return %y
  })",
              {F64({1, 4}, {1, 2, 0, 0}), F64({1, 1}, {1}), F64({2}, {pi / 2, pi})}));
  EXPECT_EQ(out[0].type().ToString(), "tensor<1x4xf64, d0>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(DoubleNear(0, 1e-15), DoubleNear(-2, 1e-15),
                                         DoubleNear(1, 1e-15), DoubleNear(0, 1e-15)));
}

TEST(CpuLlamaOpsTest, PowTakesATensorExponent) {
  // Pow broadcasts its exponent like any binary op: [2, 3, 4] ^ [[2], [0.5]].
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out,
                       RunText(R"(
  func @f(%x: tensor<3xf64, d0>, %e: tensor<2x1xf64, d0>) {
    %y = Pow(%x, %e)
    return %y
  })",
                               {F64({3}, {4, 9, 16}), F64({2, 1}, {2, 0.5})}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(16, 81, 256, 2, 3, 4));
}

}  // namespace
}  // namespace distir
