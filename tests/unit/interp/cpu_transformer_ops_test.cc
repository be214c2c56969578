// Reference kernels of the fused transformer ops: FlashAttention against the
// composed softmax attention it replaces, grouped-query attention against
// multi-head attention on repeated key/value heads, hand-computed losses,
// and every gradient (FlashAttentionGrad, Rope with -sin, CrossEntropyGrad,
// EmbeddingGrad) by central differences in f64, as cpu_grad_test.cc does:
// for y = F(args) and random c of y's shape, L = sum(c * y) has dL/dargs[k]
// = the backward program's output with dy = c; |diff| <= 1e-8 + 1e-6 |numeric|.

#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_util.h"
#include "grad_check_util.h"

namespace distir {
namespace {

using testing::F64;
using testing::I64;
using testing::NumericGradient;
using testing::ParseAndInferOrDie;
using testing::RunOrDie;
using testing::StatusIs;

// Uniform random f64 inputs for every float parameter of `text`; integer
// parameters take `ints` in order.
std::vector<HostValue> Inputs(const char* text, uint64_t seed, std::vector<HostValue> ints = {}) {
  const Module m = ParseAndInferOrDie(text);
  RandomInputOptions uniform;
  uniform.distribution = RandomInputOptions::Distribution::kUniform;
  StatusOr<std::vector<HostValue>> in = RandomInputs(*m.entry(), seed, uniform);
  DISTIR_CHECK(in.ok()) << in.status().ToString();
  size_t next = 0;
  for (HostValue& v : *in) {
    if (IsIntegral(v.type().dtype())) v = ints.at(next++);
  }
  return *std::move(in);
}

// `backward` takes the forward's inputs plus dy and returns the gradients of
// the inputs `wrt`, in order.
void CheckGradients(const char* forward_text, const char* backward_text,
                    const std::vector<int>& wrt, const std::vector<HostValue>& args,
                    uint64_t seed) {
  const Module forward = ParseAndInferOrDie(forward_text);
  const Module backward = ParseAndInferOrDie(backward_text);
  const HostValue y = RunOrDie(forward, args)[0];
  RandomInputOptions uniform;
  uniform.distribution = RandomInputOptions::Distribution::kUniform;
  const HostValue c = RandomValue(y.type(), seed, uniform);
  std::vector<HostValue> backward_args = args;
  backward_args.push_back(c);
  const std::vector<HostValue> grads = RunOrDie(backward, backward_args);
  ASSERT_EQ(grads.size(), wrt.size());
  for (size_t g = 0; g < wrt.size(); ++g) {
    SCOPED_TRACE("gradient of input " + std::to_string(wrt[g]));
    EXPECT_OK(AllClose(grads[g], NumericGradient(forward, args, wrt[g], c), 1e-6, 1e-8));
  }
}

// Causal attention with 2 query heads per key/value head, s = t = 4, d = 3.
constexpr char kAttentionForward[] = R"(func @f(%q: tensor<2x4x4x3xf64, d0>,
    %k: tensor<2x2x4x3xf64, d0>, %v: tensor<2x2x4x3xf64, d0>) {
  %o, %lse = FlashAttention(%q, %k, %v) {causal = 1}
  return %o
})";

TEST(CpuTransformerOpsTest, FlashAttentionGradOfQueriesKeysAndValues) {
  const char* backward = R"(func @g(%q: tensor<2x4x4x3xf64, d0>, %k: tensor<2x2x4x3xf64, d0>,
      %v: tensor<2x2x4x3xf64, d0>, %do: tensor<2x4x4x3xf64, d0>) {
    %o, %lse = FlashAttention(%q, %k, %v) {causal = 1}
    %dq, %dk, %dv = FlashAttentionGrad(%q, %k, %v, %o, %lse, %do) {causal = 1}
    return %dq, %dk, %dv
  })";
  CheckGradients(kAttentionForward, backward, {0, 1, 2}, Inputs(kAttentionForward, 201), 202);
}

TEST(CpuTransformerOpsTest, FlashAttentionGradWithScaleAndNoMask) {
  const char* forward = R"(func @f(%q: tensor<1x2x3x4xf64, d0>, %k: tensor<1x1x5x4xf64, d0>,
      %v: tensor<1x1x5x4xf64, d0>) {
    %o, %lse = FlashAttention(%q, %k, %v) {scale = 0.7}
    return %o
  })";
  const char* backward = R"(func @g(%q: tensor<1x2x3x4xf64, d0>, %k: tensor<1x1x5x4xf64, d0>,
      %v: tensor<1x1x5x4xf64, d0>, %do: tensor<1x2x3x4xf64, d0>) {
    %o, %lse = FlashAttention(%q, %k, %v) {scale = 0.7}
    %dq, %dk, %dv = FlashAttentionGrad(%q, %k, %v, %o, %lse, %do) {scale = 0.7}
    return %dq, %dk, %dv
  })";
  CheckGradients(forward, backward, {0, 1, 2}, Inputs(forward, 203), 204);
}

// The formula FlashAttention computes without the s x s scores: causal
// softmax attention, multi-head (g = h), and its log-sum-exp.
TEST(CpuTransformerOpsTest, FlashAttentionMatchesTheSoftmaxAttentionFormula) {
  const char* fused = R"(func @f(%q: tensor<2x2x4x3xf64, d0>, %k: tensor<2x2x4x3xf64, d0>,
      %v: tensor<2x2x4x3xf64, d0>) {
    %o, %lse = FlashAttention(%q, %k, %v) {causal = 1}
    return %o, %lse
  })";
  const std::vector<HostValue> args = Inputs(fused, 205);
  const Module m = ParseAndInferOrDie(fused);
  const std::vector<HostValue> out = RunOrDie(m, args);
  // Hand loop: o[b, h, i] = sum_{j <= i} softmax_j(q_i . k_j / sqrt(3)) v_j.
  const DenseTensor& q = args[0].tensor();
  const DenseTensor& k = args[1].tensor();
  const DenseTensor& v = args[2].tensor();
  for (int64_t bh = 0; bh < 4; ++bh) {
    for (int64_t i = 0; i < 4; ++i) {
      std::vector<double> w;
      double total = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < 3; ++c)
          dot += q.values[(bh * 4 + i) * 3 + c] * k.values[(bh * 4 + j) * 3 + c];
        w.push_back(std::exp(dot / std::sqrt(3.0)));
        total += w.back();
      }
      EXPECT_NEAR(out[1].tensor().values[bh * 4 + i], std::log(total), 1e-12);
      for (int64_t c = 0; c < 3; ++c) {
        double expected = 0;
        for (int64_t j = 0; j <= i; ++j) expected += w[j] / total * v.values[(bh * 4 + j) * 3 + c];
        EXPECT_NEAR(out[0].tensor().values[(bh * 4 + i) * 3 + c], expected, 1e-12);
      }
    }
  }
}

// Grouped-query attention is multi-head attention with each key/value head
// repeated for the r = h / g query heads of its group (HuggingFace's repeat_kv).
TEST(CpuTransformerOpsTest, GroupedQueryAttentionEqualsRepeatedKeyValueHeads) {
  const std::vector<HostValue> args = Inputs(kAttentionForward, 206);
  const char* mha = R"(func @f(%q: tensor<2x4x4x3xf64, d0>, %k: tensor<2x4x4x3xf64, d0>,
      %v: tensor<2x4x4x3xf64, d0>) {
    %o, %lse = FlashAttention(%q, %k, %v) {causal = 1}
    return %o
  })";
  auto repeat = [](const HostValue& kv) {
    DenseTensor t = kv.tensor();
    DenseTensor r{t.dtype, {2, 4, 4, 3}, {}};
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t h = 0; h < 4; ++h) {
        const auto* row = t.values.data() + (b * 2 + h / 2) * 12;
        r.values.insert(r.values.end(), row, row + 12);
      }
    }
    return HostValue::Tensor(r, kv.device());
  };
  const std::vector<HostValue> gqa = RunOrDie(ParseAndInferOrDie(kAttentionForward), args);
  const std::vector<HostValue> full =
      RunOrDie(ParseAndInferOrDie(mha), {args[0], repeat(args[1]), repeat(args[2])});
  EXPECT_OK(AllClose(gqa[0], full[0], 1e-14, 1e-15));
}

TEST(CpuTransformerOpsTest, RopeGradIsRopeWithNegatedSine) {
  const char* forward = R"(func @f(%x: tensor<2x3x4x6xf64, d0>, %cos: tensor<4x3xf64, d0>,
      %sin: tensor<4x3xf64, d0>) {
    %y = Rope(%x, %cos, %sin)
    return %y
  })";
  const char* backward = R"(func @g(%x: tensor<2x3x4x6xf64, d0>, %cos: tensor<4x3xf64, d0>,
      %sin: tensor<4x3xf64, d0>, %dy: tensor<2x3x4x6xf64, d0>) {
    %neg = Neg(%sin)
    %dx = Rope(%dy, %cos, %neg)
    return %dx
  })";
  // Real rotations: cos = cos(a), sin = sin(a) for random angles a.
  std::vector<HostValue> args = Inputs(forward, 207);
  DenseTensor c = args[1].tensor(), s = args[2].tensor();
  for (size_t i = 0; i < c.values.size(); ++i) {
    const double a = 3 * c.values[i];
    c.values[i] = std::cos(a), s.values[i] = std::sin(a);
  }
  args[1] = HostValue::Tensor(c, args[1].device());
  args[2] = HostValue::Tensor(s, args[2].device());
  CheckGradients(forward, backward, {0}, args, 208);
}

TEST(CpuTransformerOpsTest, RopeRotatesTheHalvesOfTheLastAxis) {
  // x = [1, 2, 3, 4] at one position, cos = [0, 1], sin = [1, 0]: pair 0
  // (1, 3) turns by 90 degrees to (-3, 1), pair 1 (2, 4) stays.
  StatusOr<std::vector<HostValue>> out = testing::RunText(
      R"(func @f(%x: tensor<1x4xf64, d0>, %c: tensor<1x2xf64, d0>, %s: tensor<1x2xf64, d0>) {
        %y = Rope(%x, %c, %s)
        return %y
      })",
      {F64({1, 4}, {1, 2, 3, 4}), F64({1, 2}, {0, 1}), F64({1, 2}, {1, 0})});
  ASSERT_OK(out.status());
  EXPECT_OK(AllClose((*out)[0], F64({1, 4}, {-3, 2, 1, 4}), 0, 1e-15));
}

constexpr char kLossForward[] = R"(func @f(%logits: tensor<2x3x5xf64, d0>,
    %labels: tensor<2x3xi64, d0>) {
  %loss = CrossEntropy(%logits, %labels)
  return %loss
})";

HostValue Labels() { return I64({2, 3}, {0, 4, 2, 1, 1, 3}); }

TEST(CpuTransformerOpsTest, CrossEntropyGradIsTheGradientOfCrossEntropy) {
  const char* backward = R"(func @g(%logits: tensor<2x3x5xf64, d0>,
      %labels: tensor<2x3xi64, d0>, %dy: tensor<f64, d0>) {
    %g = CrossEntropyGrad(%logits, %labels)
    %dl = Mul(%g, %dy)
    return %dl
  })";
  CheckGradients(kLossForward, backward, {0}, Inputs(kLossForward, 209, {Labels()}), 210);
}

TEST(CpuTransformerOpsTest, CrossEntropyHandComputedWithDenominatorAndScale) {
  // Two tokens over a vocabulary of 2: logits (0, 0) label 0 and (ln 3, 0)
  // label 1. Losses ln 2 and ln 4; the sum over denominator 4 is (ln 8) / 4.
  // Gradients: (0.5 - 1, 0.5) and (0.75, 0.25 - 1), times scale 8 / 4 = 2.
  const char* text = R"(func @f(%l: tensor<2x2xf64, d0>, %y: tensor<2xi64, d0>) {
    %loss = CrossEntropy(%l, %y) {denominator = 4}
    %g = CrossEntropyGrad(%l, %y) {denominator = 4, scale = 8.0}
    return %loss, %g
  })";
  StatusOr<std::vector<HostValue>> out =
      testing::RunText(text, {F64({2, 2}, {0, 0, std::log(3.0), 0}), I64({2}, {0, 1})});
  ASSERT_OK(out.status());
  EXPECT_EQ((*out)[0].type().dtype(), DType::kF64);
  EXPECT_NEAR((*out)[0].tensor().values[0], std::log(8.0) / 4, 1e-15);
  EXPECT_OK(AllClose((*out)[1], F64({2, 2}, {-1, 1, 1.5, -1.5}), 1e-15, 1e-15));
}

TEST(CpuTransformerOpsTest, CrossEntropyRejectsALabelOutsideTheVocabulary) {
  StatusOr<std::vector<HostValue>> out = testing::RunText(
      kLossForward,
      {F64({2, 3, 5}, std::vector<double>(30, 0.0)), I64({2, 3}, {0, 1, 2, 3, 4, 5})});
  EXPECT_THAT(out.status(), StatusIs(StatusCode::kInvalidArgument,
                                     "label 5 of token 5 is outside the vocabulary [0, 5)"));
}

TEST(CpuTransformerOpsTest, LogSumExpHandComputed) {
  // Rows (0, ln 3) and (ln 2, ln 2, ln 4): ln 4 and ln 8.
  const char* text = R"(func @f(%a: tensor<2xf64, d0>, %b: tensor<1x3xf64, d0>) {
    %x = LogSumExp(%a)
    %y = LogSumExp(%b)
    return %x, %y
  })";
  StatusOr<std::vector<HostValue>> out = testing::RunText(
      text,
      {F64({2}, {0, std::log(3.0)}), F64({1, 3}, {std::log(2.0), std::log(2.0), std::log(4.0)})});
  ASSERT_OK(out.status());
  EXPECT_TRUE((*out)[0].type().shape().empty());
  EXPECT_NEAR((*out)[0].tensor().values[0], std::log(4.0), 1e-15);
  EXPECT_OK(AllClose((*out)[1], F64({1}, {std::log(8.0)}), 1e-15, 1e-15));
}

// Megatron's vocab-parallel cross-entropy: the vocabulary of 5 cut into
// columns [0, 3) and [3, 5); given each token's log-sum-exp over all 5, the
// pieces' losses (each over the tokens whose label it holds) sum to the
// whole loss, and the pieces' gradients are the columns of the whole one.
TEST(CpuTransformerOpsTest, CrossEntropyOverVocabularyPiecesSumsToTheWholeLoss) {
  const char* text = R"(func @f(%l: tensor<2x3x5xf64, d0>, %a: tensor<2x3x3xf64, d0>,
      %b: tensor<2x3x2xf64, d0>, %y: tensor<2x3xi64, d0>) {
    %lse = LogSumExp(%l)
    %whole = CrossEntropy(%l, %y) {denominator = 4}
    %la = CrossEntropy(%a, %y, %lse) {denominator = 4, vocab_start = 0}
    %lb = CrossEntropy(%b, %y, %lse) {denominator = 4, vocab_start = 3}
    %loss = Add(%la, %lb)
    %g = CrossEntropyGrad(%l, %y) {denominator = 4, scale = 2.0}
    %ga = CrossEntropyGrad(%a, %y, %lse) {denominator = 4, scale = 2.0, vocab_start = 0}
    %gb = CrossEntropyGrad(%b, %y, %lse) {denominator = 4, scale = 2.0, vocab_start = 3}
    %pieces = Concat(%ga, %gb) {axis = 2}
    return %whole, %loss, %la, %g, %pieces
  })";
  const HostValue logits = Inputs(kLossForward, 211, {Labels()})[0];
  const DenseTensor& l = logits.tensor();
  DenseTensor a{DType::kF64, {2, 3, 3}, {}}, b{DType::kF64, {2, 3, 2}, {}};
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < 5; ++c) (c < 3 ? a : b).values.push_back(l.values[r * 5 + c]);
  }
  StatusOr<std::vector<HostValue>> out =
      testing::RunText(text, {logits, HostValue::Tensor(a, logits.device()),
                              HostValue::Tensor(b, logits.device()), Labels()});
  ASSERT_OK(out.status());
  EXPECT_NEAR((*out)[1].tensor().values[0], (*out)[0].tensor().values[0], 1e-14);
  // Labels 0, 2, 1, 1 are in the first piece, 4 and 3 in the second: neither piece alone is the
  // loss.
  EXPECT_GT(std::fabs((*out)[2].tensor().values[0] - (*out)[0].tensor().values[0]), 1e-3);
  EXPECT_OK(AllClose((*out)[4], (*out)[3], 1e-14, 1e-14));
}

TEST(CpuTransformerOpsTest, EmbeddingGradIsTheAdjointOfGather) {
  const char* forward = R"(func @f(%w: tensor<5x3xf64, d0>, %ids: tensor<2x3xi64, d0>) {
    %y = Gather(%w, %ids) {axis = 0}
    return %y
  })";
  const char* backward = R"(func @g(%w: tensor<5x3xf64, d0>, %ids: tensor<2x3xi64, d0>,
      %dy: tensor<2x3x3xf64, d0>) {
    %dw = EmbeddingGrad(%ids, %dy) {num_rows = 5}
    return %dw
  })";
  // Id 1 appears twice: its row sums two gradients; row 3 gets none.
  CheckGradients(forward, backward, {0}, Inputs(forward, 211, {I64({2, 3}, {1, 0, 4, 1, 2, 0})}),
                 212);
}

}  // namespace
}  // namespace distir
