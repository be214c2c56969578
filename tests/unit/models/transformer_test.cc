// The transformer training builder: option validation, parameter counts of
// the named sizes against the published ones, the names and types of weights,
// gradients and optimizer state under mixed precision, and fp16 loss scaling.

#include "models/transformer.h"

#include <gtest/gtest.h>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::StatusIs;

TransformerOptions Tiny(TransformerVariant variant, DType dtype) {
  TransformerOptions o;
  o.variant = variant;
  o.num_layers = 2;
  o.hidden_size = 8;
  o.num_attention_heads = 4;
  o.num_query_groups = 2;
  o.ffn_hidden_size = 16;
  o.vocab_size = 16;
  o.seq_length = 6;
  o.batch = 2;
  o.params_dtype = dtype;
  return o;
}

Module BuildAndInfer(const TransformerOptions& o) {
  StatusOr<Module> m = BuildTransformerTraining(o);
  DISTIR_CHECK(m.ok()) << m.status().ToString();
  DISTIR_CHECK(InferTypes(*m).ok());
  return std::move(m).value();
}

TEST(TransformerTest, ValidationNamesTheOption) {
  TransformerOptions o = Tiny(TransformerVariant::kLlama, DType::kBF16);
  o.num_query_groups = 3;
  std::string culprit;
  EXPECT_THAT(ValidateTransformerOptions(o, &culprit),
              StatusIs(StatusCode::kInvalidArgument,
                       "transformer option num_query_groups must divide num_attention_heads, got "
                       "num_attention_heads 4 and num_query_groups 3"));
  EXPECT_EQ(culprit, "num_query_groups");
  o = Tiny(TransformerVariant::kGpt, DType::kBF16);
  o.num_attention_heads = 3;
  EXPECT_THAT(BuildTransformerTraining(o),
              StatusIs(StatusCode::kInvalidArgument,
                       "transformer option num_attention_heads must divide hidden_size, got "
                       "hidden_size 8 and num_attention_heads 3 (remainder 2)"));
  o = Tiny(TransformerVariant::kGpt, DType::kBF16);
  o.max_position_embeddings = 4;
  EXPECT_THAT(ValidateTransformerOptions(o, &culprit),
              StatusIs(StatusCode::kInvalidArgument,
                       "transformer option seq_length must be <= max_position_embeddings, got "
                       "seq_length 6 and max_position_embeddings 4"));
  EXPECT_EQ(culprit, "seq_length");
  o = Tiny(TransformerVariant::kGpt, DType::kI64);
  EXPECT_THAT(ValidateTransformerOptions(o, &culprit),
              StatusIs(StatusCode::kInvalidArgument, "params_dtype must be bf16, f16, f32 or f64"));
  o = Tiny(TransformerVariant::kGpt, DType::kBF16);
  o.adam_beta2 = 1;
  EXPECT_THAT(ValidateTransformerOptions(o, &culprit),
              StatusIs(StatusCode::kInvalidArgument,
                       "transformer option adam_beta2 must be finite and >= 0 and < 1, got 1"));
  o = Tiny(TransformerVariant::kGpt, DType::kBF16);
  o.batch = 0;
  EXPECT_THAT(
      ValidateTransformerOptions(o, &culprit),
      StatusIs(StatusCode::kInvalidArgument, "transformer option batch must be >= 1, got 0"));
  EXPECT_EQ(culprit, "batch");
}

// Megatron's mixed precision: bf16 weights, f32 master weights and moments;
// the gradient is cast to f32 before Adam (without gradient accumulation
// fusion) and the new master cast back.
TEST(TransformerTest, MixedPrecisionKeepsMastersAndMomentsInF32) {
  TransformerOptions o = Tiny(TransformerVariant::kLlama, DType::kBF16);
  o.gradient_accumulation_fusion = false;
  const Module m = BuildAndInfer(o);
  const std::string w = "layers.1.attention.qkv.weight";
  // qkv columns: (h + 2 g) d = (4 + 4) x 2.
  EXPECT_EQ(testing::EntryValueType(m, w), "tensor<8x16xbf16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".grad"), "tensor<8x16xbf16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".main_grad"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".master"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".exp_avg"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".exp_avg_sq.new"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".master.new"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, w + ".new"), "tensor<8x16xbf16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "loss"), "tensor<f32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "layers.0.attention.lse"), "tensor<2x4x6xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "layers.0.attention.k_rope"), "tensor<2x2x6x2xbf16, d0>");
  // Untied (LLaMA's default): the output layer has its own weight and state.
  EXPECT_EQ(testing::EntryValueType(m, "output_layer.weight.master"), "tensor<8x16xf32, d0>");
  // AdamW decays matrices only.
  EXPECT_NE(m.entry()->LookupValue(w + ".decayed"), nullptr);
  EXPECT_EQ(m.entry()->LookupValue("layers.1.input_norm.weight.decayed"), nullptr);
  // tokens, labels, then per weight: compute copy, master, two moments.
  const int64_t weights = 1 + 2 * 7 + 1 + 1;  // embedding, 7 per layer, final norm, output
  EXPECT_EQ(m.entry()->num_params(), 2 + 4 * weights);
  EXPECT_EQ(m.entry()->returns().size(), static_cast<size_t>(1 + 4 * weights));
}

// Megatron's gradient accumulation fusion (the default): a linear weight's
// gradient is the f32 result of its MatMulGrad {dw_dtype = f32}, with no cast;
// a norm's is still cast.
TEST(TransformerTest, FusedWeightGradientsAreF32WithoutACast) {
  const Module m = BuildAndInfer(Tiny(TransformerVariant::kLlama, DType::kBF16));
  const std::string w = "layers.1.attention.qkv.weight";
  EXPECT_EQ(testing::EntryValueType(m, w + ".grad"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(m.entry()->LookupValue(w + ".main_grad"), nullptr);
  EXPECT_EQ(testing::EntryValueType(m, "output_layer.weight.grad"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "layers.1.input_norm.weight.main_grad"),
            "tensor<8xf32, d0>");
}

TEST(TransformerTest, Fp16ScalesTheLossGradientAndUnscalesTheMainGradients) {
  TransformerOptions o = Tiny(TransformerVariant::kGpt, DType::kF16);
  o.loss_scale = 1024;
  const Module m = BuildAndInfer(o);
  const Op* ce = m.entry()->LookupValue("logits.grad")->def();
  ASSERT_NE(ce, nullptr);
  EXPECT_EQ(ce->kind(), OpKind::kCrossEntropyGrad);
  EXPECT_DOUBLE_EQ(ce->GetFloat("scale", 0), 1024);
  const Op* unscale = m.entry()->LookupValue("layers.0.mlp.fc1.weight.main_grad.unscaled")->def();
  EXPECT_EQ(unscale->kind(), OpKind::kMul);
  // bf16 does without: no scale attribute, no unscaling.
  const Module b = BuildAndInfer(Tiny(TransformerVariant::kGpt, DType::kBF16));
  EXPECT_EQ(b.entry()->LookupValue("logits.grad")->def()->FindAttr("scale"), nullptr);
  EXPECT_EQ(b.entry()->LookupValue("layers.0.mlp.fc1.weight.main_grad.unscaled"), nullptr);
}

TEST(TransformerTest, TiedGptSumsTheEmbeddingsTwoGradients) {
  const Module m = BuildAndInfer(Tiny(TransformerVariant::kGpt, DType::kF32));
  const Op* sum = m.entry()->LookupValue("embedding.weight.grad")->def();
  EXPECT_EQ(sum->kind(), OpKind::kAdd);
  EXPECT_EQ(sum->input(0)->name(), "embedding.weight.grad.lookup");
  EXPECT_EQ(sum->input(1)->name(), "embedding.weight.grad.output");
  EXPECT_EQ(m.entry()->LookupValue("output_layer.weight"), nullptr);
  // f32: the weights are their own masters; no Cast anywhere.
  EXPECT_EQ(m.entry()->LookupValue("embedding.weight.master"), nullptr);
  for (const auto& op : m.entry()->ops()) EXPECT_NE(op->kind(), OpKind::kCast);
  EXPECT_EQ(testing::EntryValueType(m, "position_embedding.weight.grad"), "tensor<6x8xf32, d0>");
}

struct Published {
  const char* name;
  int64_t parameters;  // TransformerParameterCount, exact
  double published;    // the papers' figure
};

// GPT-3 (Brown et al. 2020; Narayanan et al. 2021, Table 1) and LLaMA
// (Touvron et al. 2023; LLaMA 2 for 70B); the LLaMA counts equal the released
// checkpoints' exactly.
constexpr Published kPublished[] = {
    {"gpt3-1.3b", 1317654528, 1.3e9},   {"gpt3-22b", 22074273792, 22e9},
    {"gpt3-175b", 174615846912, 175e9}, {"gpt3-530b", 529600819200, 530e9},
    {"gpt3-1t", 1008038758400, 1e12},   {"llama-7b", 6738415616, 6.7e9},
    {"llama-13b", 13015864320, 13.0e9}, {"llama-70b", 68976648192, 69e9},
    {"gpt-tiny", 104256, 104256},       {"llama-tiny", 304192, 304192},
};

TEST(TransformerTest, NamedSizesHaveThePublishedParameterCounts) {
  for (const Published& p : kPublished) {
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(p.name));
    EXPECT_EQ(spec.family, ModelFamily::kTransformerTraining);
    EXPECT_EQ(ParameterCount(spec), p.parameters) << p.name;
    EXPECT_NEAR(static_cast<double>(p.parameters) / p.published, 1.0, 0.015) << p.name;
  }
  // The built functions count the same (masters and moments excluded).
  for (const char* name : {"gpt-tiny", "llama-tiny", "gpt3-1.3b", "llama-7b-2l"}) {
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(name));
    ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
    EXPECT_EQ(CountWeightElements(*m.entry()), ParameterCount(spec)) << name;
  }
}

TEST(TransformerTest, TinySizesAdmitEveryParallelDegreeUpToEight) {
  for (const char* name : {"gpt-tiny", "llama-tiny"}) {
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(name));
    const TransformerOptions o = ResolveTransformerOptions(spec.transformer);
    for (int64_t degree : {1, 2, 4, 8}) {
      EXPECT_EQ(o.num_layers % degree, 0) << name;
      EXPECT_EQ(o.num_query_groups % degree, 0) << name;
      EXPECT_EQ(o.ffn_hidden_size % degree, 0) << name;
      EXPECT_EQ(o.batch % degree, 0) << name;
    }
  }
}

TEST(TransformerTest, Llama7bWithTwoLayersHasLlama7bShapes) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("llama-7b-2l"));
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
  ASSERT_OK(InferTypes(m));
  EXPECT_EQ(testing::EntryValueType(m, "layers.1.mlp.fc1_gate.weight"),
            "tensor<4096x11008xbf16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "layers.1.attention.o"), "tensor<1x32x2048x128xbf16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "logits"), "tensor<1x2048x32000xbf16, d0>");
  EXPECT_EQ(m.entry()->LookupValue("layers.2.input_norm.weight"), nullptr);
}

}  // namespace
}  // namespace distir
