// BuildGpt2Inference: inferred types of a tiny model, the op sequence of a
// block, weight names, block self-containment (what the pipeline transform
// relies on), the untied head and option errors.

#include "models/gpt.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "interp/infer_types.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/str_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseOrDie;
using testing::StatusIs;

// batch 2, 4 tokens, vocab 10, 6 positions, d 8 = 2 heads of 4, 3 blocks.
GptOptions Small() {
  GptOptions o;
  o.batch = 2;
  o.seq_len = 4;
  o.vocab = 10;
  o.n_ctx = 6;
  o.d_model = 8;
  o.n_head = 2;
  o.n_layer = 3;
  return o;
}

Module BuildAndInfer(const GptOptions& options) {
  StatusOr<Module> m = BuildGpt2Inference(options);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return Module();
  EXPECT_OK(VerifyModule(*m));
  EXPECT_OK(InferTypes(*m));
  return std::move(m).value();
}

// The block's op (by its first result's name) -> op line without types.
std::string OpOf(const Module& m, const std::string& value) {
  const Value* v = m.entry()->LookupValue(value);
  return v == nullptr ? "<no value %" + value + ">" : PrintOp(*v->def());
}

TEST(GptTest, TinyModelTypeChecksWithTheExpectedShapes) {
  Module m = BuildAndInfer(Small());
  EXPECT_EQ(testing::EntryValueType(m, "input_ids"), "tensor<2x4xi64, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "embed.positions"), "tensor<4x8xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "embed"), "tensor<2x4x8xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.1.attn.c_attn"), "tensor<2x4x24xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.1.attn.q_t"),
            "tensor<2x2x4x4xf32, d0>");  // [b, h, s, hd]
  EXPECT_EQ(testing::EntryValueType(m, "h.1.attn.causal_mask"), "tensor<4x4xbool, d0>");  // [s, s]
  EXPECT_EQ(testing::EntryValueType(m, "h.1.attn.probs"),
            "tensor<2x2x4x4xf32, d0>");  // [b, h, s, s]
  EXPECT_EQ(testing::EntryValueType(m, "h.1.attn.context"), "tensor<2x4x8xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.1.mlp.gelu"), "tensor<2x4x32xf32, d0>");  // [b, s, 4d]
  EXPECT_EQ(testing::EntryValueType(m, "h.2.out"), "tensor<2x4x8xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "lm_head.rows"), "tensor<8x8xf32, d0>");     // [b s, d]
  EXPECT_EQ(testing::EntryValueType(m, "lm_head.logits"), "tensor<8x10xf32, d0>");  // [b s, vocab]
  EXPECT_EQ(testing::EntryValueType(m, "logits"), "tensor<2x4x10xf32, d0>");
  ASSERT_EQ(m.entry()->returns().size(), 1u);
  EXPECT_EQ(m.entry()->returns()[0]->name(), "logits");
}

TEST(GptTest, KeysAreTransposedForTheScoreProduct) {
  GptOptions o = Small();
  o.d_model = 12;
  o.n_head = 4;  // head dim 3, so [b, h, hd, s] and [b, h, s, hd] differ
  Module m = BuildAndInfer(o);
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.q_t"), "tensor<2x4x4x3xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.k_t"), "tensor<2x4x3x4xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.v_t"), "tensor<2x4x4x3xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.scores"), "tensor<2x4x4x4xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.context_heads"), "tensor<2x4x4x3xf32, d0>");
  EXPECT_EQ(OpOf(m, "h.0.attn.scale"),
            "%h.0.attn.scale = Constant() {device = d0, value = dense<f32>[1.7320508075688772]} "
            ": tensor<f32, d0>");  // sqrt(3)
}

// Megatron's grouped QKV layout: qkv [b, s, 3d] is read as [b, s, h, 3, hd]
// and split on the 3; q, k, v reach the same shapes as in the HF layout.
TEST(GptTest, GroupedQkvSplitsPerHead) {
  GptOptions o = Small();
  o.grouped_qkv = true;
  o.d_model = 12;
  o.n_head = 4;  // head dim 3
  Module m = BuildAndInfer(o);
  EXPECT_EQ(m.entry()->ops().size(), 4u + kGroupedBlockOps * 3 + kTiedHeadOps);
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.qkv_grouped"),
            "tensor<2x4x4x3x3xf32, d0>");  // [b, s, h, 3, hd]
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.q"), "tensor<2x4x4x1x3xf32, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.q_t"),
            "tensor<2x4x4x3xf32, d0>");  // [b, h, s, hd] as before
  EXPECT_EQ(testing::EntryValueType(m, "logits"), "tensor<2x4x10xf32, d0>");
}

TEST(GptTest, BlockHasTheDocumentedOps) {
  const GptOptions o = Small();
  ASSERT_OK_AND_ASSIGN(Module m, BuildGpt2Inference(o));
  const Function& fn = *m.entry();
  EXPECT_EQ(fn.ops().size(), 4u + kBlockOps * 3 + kTiedHeadOps);
  for (int64_t layer = 0; layer < 3; ++layer) {
    std::map<std::string, int> kinds;
    for (const auto& op : fn.ops()) {
      if (StartsWith(op->result(0)->name(), gpt_names::BlockPrefix(layer))) ++kinds[op->Name()];
    }
    EXPECT_EQ(kinds, (std::map<std::string, int>{{"Add", 6},
                                                 {"Constant", 5},
                                                 {"ConstantOfShape", 1},
                                                 {"Div", 1},
                                                 {"Gelu", 1},
                                                 {"LayerNormalization", 2},
                                                 {"MatMul", 6},
                                                 {"Reshape", 4},
                                                 {"Softmax", 1},
                                                 {"Split", 1},
                                                 {"Transpose", 4},
                                                 {"Trilu", 1},
                                                 {"Where", 1}}))
        << "block " << layer;
  }
  EXPECT_EQ(OpOf(m, "h.1.ln_1"),
            "%h.1.ln_1 = LayerNormalization(%h.0.out, %h.1.ln_1.weight, %h.1.ln_1.bias) "
            "{axis = -1, epsilon = 1e-05}");
  EXPECT_EQ(OpOf(m, "h.1.attn.q"),
            "%h.1.attn.q, %h.1.attn.k, %h.1.attn.v = Split(%h.1.attn.c_attn) {axis = -1}");
  EXPECT_EQ(OpOf(m, "h.1.attn.masked"),
            "%h.1.attn.masked = Where(%h.1.attn.causal_mask, %h.1.attn.scores, "
            "%h.1.attn.mask_value)");
  EXPECT_EQ(OpOf(m, "h.1.attn.causal_mask"),
            "%h.1.attn.causal_mask = Trilu(%h.1.attn.ones) {upper = 0}");
  EXPECT_EQ(OpOf(m, "h.1.mlp.c_proj"),
            "%h.1.mlp.c_proj = Add(%h.1.mlp.c_proj.mm, %h.1.mlp.c_proj.bias)");
  EXPECT_EQ(OpOf(m, "h.1.out"), "%h.1.out = Add(%h.1.resid_1, %h.1.mlp.c_proj)");
  EXPECT_EQ(OpOf(m, "position_ids"),
            "%position_ids = Constant() {device = d0, value = dense<4xi64>[0, 1, 2, 3]}");
}

TEST(GptTest, WeightsHaveHuggingFaceNamesAndShapes) {
  ASSERT_OK_AND_ASSIGN(Module m, BuildGpt2Inference(Small()));
  const Function& fn = *m.entry();
  ASSERT_EQ(fn.num_params(), 3 + 12 * 3 + 2);
  std::vector<std::string> block1;
  for (const auto& p : fn.params()) {
    EXPECT_TRUE(std::regex_match(p->name(), std::regex("[A-Za-z0-9_.]+"))) << p->name();
    if (StartsWith(p->name(), "h.1.")) block1.push_back(p->name() + ": " + p->type().ToString());
  }
  EXPECT_EQ(block1, (std::vector<std::string>{
                        "h.1.ln_1.weight: tensor<8xf32, d0>",
                        "h.1.ln_1.bias: tensor<8xf32, d0>",
                        "h.1.attn.c_attn.weight: tensor<8x24xf32, d0>",
                        "h.1.attn.c_attn.bias: tensor<24xf32, d0>",
                        "h.1.attn.c_proj.weight: tensor<8x8xf32, d0>",
                        "h.1.attn.c_proj.bias: tensor<8xf32, d0>",
                        "h.1.ln_2.weight: tensor<8xf32, d0>",
                        "h.1.ln_2.bias: tensor<8xf32, d0>",
                        "h.1.mlp.c_fc.weight: tensor<8x32xf32, d0>",
                        "h.1.mlp.c_fc.bias: tensor<32xf32, d0>",
                        "h.1.mlp.c_proj.weight: tensor<32x8xf32, d0>",
                        "h.1.mlp.c_proj.bias: tensor<8xf32, d0>",
                    }));
  EXPECT_EQ(fn.param(1)->name(), "wte.weight");
  EXPECT_EQ(fn.param(2)->type().ToString(), "tensor<6x8xf32, d0>");  // wpe: [n_ctx, d]
  EXPECT_EQ(fn.params().back()->name(), "ln_f.bias");
}

// A block reads only the previous block's output and its own weights, so a
// pipeline transform can cut between blocks with one Send per boundary.
TEST(GptTest, EachBlockReadsOnlyThePreviousOutputAndItsOwnWeights) {
  ASSERT_OK_AND_ASSIGN(Module m, BuildGpt2Inference(Small()));
  for (int64_t layer = 0; layer < 3; ++layer) {
    const std::string prefix = gpt_names::BlockPrefix(layer);
    const std::string previous = layer == 0 ? "embed" : gpt_names::BlockOutput(layer - 1);
    int ops = 0;
    for (const auto& op : m.entry()->ops()) {
      if (!StartsWith(op->result(0)->name(), prefix)) continue;
      ++ops;
      for (const Value* in : op->inputs()) {
        EXPECT_TRUE(StartsWith(in->name(), prefix) || in->name() == previous)
            << PrintOp(*op) << " reads " << in->name();
      }
    }
    EXPECT_EQ(ops, kBlockOps);
  }
}

TEST(GptTest, PrintedProgramParsesBackToTheSameText) {
  ASSERT_OK_AND_ASSIGN(Module m, BuildGpt2Inference(Small()));
  const std::string text = PrintModule(m);
  EXPECT_EQ(PrintModule(ParseOrDie(text)), text);
}

TEST(GptTest, UntiedHeadHasItsOwnWeightAndNoTranspose) {
  GptOptions o = Small();
  o.tied_lm_head = false;
  Module m = BuildAndInfer(o);
  const Function& fn = *m.entry();
  EXPECT_EQ(fn.ops().size(), 4u + kBlockOps * 3 + 2);
  EXPECT_EQ(fn.params().back()->name(), "lm_head.weight");
  EXPECT_EQ(testing::EntryValueType(m, "lm_head.weight"), "tensor<8x10xf32, d0>");
  EXPECT_EQ(fn.LookupValue("lm_head.logits"), nullptr);  // no Gemm on the tied table
  EXPECT_EQ(testing::EntryValueType(m, "logits"), "tensor<2x4x10xf32, d0>");
  EXPECT_EQ(GptParameterCount(o), GptParameterCount(Small()) + 8 * 10);
}

TEST(GptTest, HalfPrecisionModelKeepsIdsIntegral) {
  GptOptions o = Small();
  o.dtype = DType::kF16;
  Module m = BuildAndInfer(o);
  EXPECT_EQ(testing::EntryValueType(m, "input_ids"), "tensor<2x4xi64, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.mask_value"), "tensor<f16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "logits"), "tensor<2x4x10xf16, d0>");
}

TEST(GptTest, NoDeviceGivesADeviceGenericFunction) {
  GptOptions o = Small();
  o.device = DeviceId();
  Module m = BuildAndInfer(o);
  EXPECT_TRUE(m.entry()->IsDeviceGeneric());
  EXPECT_EQ(testing::EntryValueType(m, "h.0.attn.split_shape"), "tensor<4xi64>");
  EXPECT_EQ(testing::EntryValueType(m, "logits"), "tensor<2x4x10xf32>");
}

TEST(GptTest, ParameterCountMatchesTheWeightsOfGpt2Small) {
  // GPT-2 small (the defaults): 124,439,808 parameters, HuggingFace's count.
  EXPECT_EQ(GptParameterCount(GptOptions()), 124439808);
  // (10 + 6) * 8 + 3 * (12 * 64 + 13 * 8) + 2 * 8 = 128 + 2616 + 16.
  EXPECT_EQ(GptParameterCount(Small()), 2760);
}

TEST(GptTest, BadOptionsAreErrorsNamingTheOption) {
  auto build = [](auto edit) {
    GptOptions o = Small();
    edit(o);
    return BuildGpt2Inference(o).status();
  };
  EXPECT_THAT(build([](GptOptions& o) { o.n_head = 3; }),
              StatusIs(StatusCode::kInvalidArgument,
                       "gpt2 option n_head must divide d_model, got d_model 8 and n_head 3 "
                       "(remainder 2)"));
  EXPECT_THAT(build([](GptOptions& o) { o.n_layer = 0; }),
              StatusIs(StatusCode::kInvalidArgument, "gpt2 option n_layer must be >= 1, got 0"));
  EXPECT_THAT(build([](GptOptions& o) { o.batch = 0; }),
              StatusIs(StatusCode::kInvalidArgument, "gpt2 option batch must be >= 1, got 0"));
  EXPECT_THAT(build([](GptOptions& o) { o.n_head = 0; }),
              StatusIs(StatusCode::kInvalidArgument, "gpt2 option n_head must be >= 1, got 0"));
  EXPECT_THAT(build([](GptOptions& o) { o.seq_len = 7; }),
              StatusIs(StatusCode::kInvalidArgument,
                       "gpt2 option seq_len must be <= n_ctx (the rows of wpe), got seq_len 7 "
                       "and n_ctx 6"));
  EXPECT_THAT(
      build([](GptOptions& o) { o.dtype = DType::kI32; }),
      StatusIs(StatusCode::kInvalidArgument, "gpt2 option dtype must be a float type, got i32"));
  EXPECT_THAT(build([](GptOptions& o) { o.layer_norm_epsilon = 0; }),
              StatusIs(StatusCode::kInvalidArgument, "layer_norm_epsilon must be finite and > 0"));
}

}  // namespace
}  // namespace distir
