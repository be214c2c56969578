// The model zoo: lookup, the named sizes' parameter counts against the paper's
// Table 1, and that every named model builds, verifies and type-checks.

#include "models/model_zoo.h"

#include <gtest/gtest.h>

#include "interp/infer_types.h"
#include "ir/verifier.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::StatusIs;

TEST(ModelZooTest, LooksUpEveryNameInTableOrder) {
  EXPECT_EQ(KnownModelNames(),
            "mlp-tiny, gpt2-tiny, mlp-1b, mlp-17b, mlp-103b, gpt2-1.6b, gpt2-13b, gpt2-175b, "
            "gpt-tiny, llama-tiny, gpt3-1.3b, gpt3-22b, gpt3-175b, gpt3-530b, gpt3-1t, "
            "gpt2-1.6b-train, gpt2-13b-train, gpt2-175b-train, llama-7b, llama-7b-2l, llama-13b, "
            "llama-70b");
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("gpt2-13b"));
  EXPECT_EQ(spec.family, ModelFamily::kGpt2Inference);
  EXPECT_EQ(spec.gpt.n_layer, 40);
  EXPECT_EQ(spec.gpt.d_model, 5140);
  EXPECT_EQ(spec.gpt.n_head, 20);  // 5140 = 20 x 257; 40 heads would not divide it
  EXPECT_EQ(spec.gpt.dtype, DType::kF16);
  ASSERT_OK_AND_ASSIGN(spec, LookupModel("mlp-17b"));
  EXPECT_EQ(spec.family, ModelFamily::kMlpTraining);
  EXPECT_EQ(spec.mlp.n_layer, 64);
  EXPECT_EQ(spec.mlp.d_model, 16384);
  EXPECT_EQ(spec.mlp.dtype, DType::kF16);
}

// GPT-2 trains as the transformer builder's GPT blocks at GPT-2's sizes: the
// same weights as the inference model of the same size, plus the step.
TEST(ModelZooTest, Gpt2TrainingSizesAreTheInferenceSizesAsTrainingSteps) {
  for (const char* size : {"gpt2-1.6b", "gpt2-13b", "gpt2-175b"}) {
    ASSERT_OK_AND_ASSIGN(ModelSpec inference, LookupModel(size));
    ASSERT_OK_AND_ASSIGN(ModelSpec train, LookupModel(std::string(size) + "-train"));
    EXPECT_EQ(train.family, ModelFamily::kTransformerTraining) << size;
    const TransformerOptions& t = train.transformer;
    EXPECT_EQ(t.variant, TransformerVariant::kGpt) << size;
    EXPECT_EQ(t.num_layers, inference.gpt.n_layer) << size;
    EXPECT_EQ(t.hidden_size, inference.gpt.d_model) << size;
    EXPECT_EQ(t.num_attention_heads, inference.gpt.n_head) << size;
    EXPECT_EQ(t.vocab_size, 50257) << size;
    EXPECT_EQ(t.seq_length, 1024) << size;
    EXPECT_EQ(t.params_dtype, DType::kBF16) << size;
  }
}

TEST(ModelZooTest, UnknownNameListsTheKnownOnes) {
  EXPECT_THAT(LookupModel("gpt3"),
              StatusIs(StatusCode::kNotFound,
                       "unknown model 'gpt3': known models are mlp-tiny, gpt2-tiny, mlp-1b, "
                       "mlp-17b, mlp-103b, gpt2-1.6b, gpt2-13b, gpt2-175b, gpt-tiny, llama-tiny, "
                       "gpt3-1.3b, gpt3-22b, gpt3-175b, gpt3-530b, gpt3-1t, gpt2-1.6b-train, "
                       "gpt2-13b-train, gpt2-175b-train, llama-7b, llama-7b-2l, llama-13b, "
                       "llama-70b"));
}

struct PaperSize {
  const char* name;
  int64_t parameters;  // our exact count
  double paper_gb;     // Table 1, fp16
};

// The MLPs are n_layer d^2; GPT-2 is (vocab + n_ctx) d + n_layer (12 d^2 + 13 d)
// + 2 d with vocab 50257 and n_ctx 1024 (docs/models.md).
constexpr PaperSize kPaperSizes[] = {
    {"mlp-1b", 1073741824, 2.2},         // 16 x 8192^2
    {"mlp-17b", 17179869184, 34.4},      // 64 x 16384^2
    {"mlp-103b", 103079215104, 206.2},   // 96 x 32768^2
    {"gpt2-1.6b", 1313626112, 3.2},      // 51281 x 2048 + 24 x 50358272 + 4096
    {"gpt2-13b", 12947675420, 25.8},     // 51281 x 5140 + 40 x 317102020 + 10280
    {"gpt2-175b", 174591676416, 394.4},  // 51281 x 12288 + 96 x 1812099072 + 24576
};

TEST(ModelZooTest, BuiltModelsHaveTheClosedFormParameterCounts) {
  for (const PaperSize& size : kPaperSizes) {
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(size.name));
    EXPECT_EQ(ParameterCount(spec), size.parameters) << size.name;
    ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
    EXPECT_EQ(CountWeightElements(*m.entry()), size.parameters) << size.name;
    EXPECT_DOUBLE_EQ(spec.paper_size_gb, size.paper_gb) << size.name;
  }
}

// Size in GB at 2 bytes per parameter over the paper's figure.
double RatioToPaper(const PaperSize& size) {
  return static_cast<double>(size.parameters) * 2 / 1e9 / size.paper_gb;
}

TEST(ModelZooTest, MlpsAndGpt2_13bMatchThePaperWithinTenPercent) {
  for (const PaperSize& size : kPaperSizes) {
    const std::string name = size.name;
    if (name == "gpt2-1.6b" || name == "gpt2-175b") continue;
    EXPECT_NEAR(RatioToPaper(size), 1.0, 0.10) << name;
  }
  EXPECT_NEAR(RatioToPaper(kPaperSizes[0]), 0.976, 0.001);  // 2.147 GB vs 2.2
  EXPECT_NEAR(RatioToPaper(kPaperSizes[4]), 1.004, 0.001);  // 25.90 GB vs 25.8
}

// The faithful GPT-2 architecture at 24 x 2048 has 1.31 B parameters (GPT-3 XL's
// 1.3 B in Brown et al.), 2.63 GB at fp16, not the paper's 3.2 GB; at 96 x 12288
// it has 174.6 B (349.2 GB), not 394.4 GB. No one per-layer formula gives all
// three GPT-2 rows of Table 1 (docs/models.md), so we assert our honest figures.
TEST(ModelZooTest, Gpt2_1_6bAnd175bAreBelowThePaperByTheDocumentedMargin) {
  EXPECT_NEAR(RatioToPaper(kPaperSizes[3]), 0.821, 0.001);  // 2.627 GB vs 3.2
  EXPECT_NEAR(RatioToPaper(kPaperSizes[5]), 0.885, 0.001);  // 349.18 GB vs 394.4
}

TEST(ModelZooTest, EveryNamedModelVerifiesAndTypeChecks) {
  for (const ModelSpec& spec : ModelZoo()) {
    ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
    EXPECT_OK(VerifyModule(m));
    EXPECT_OK(InferTypes(m));
  }
}

TEST(ModelZooTest, TinyModelsHaveTheExpectedTypes) {
  ASSERT_OK_AND_ASSIGN(ModelSpec mlp, LookupModel("mlp-tiny"));
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(mlp));
  ASSERT_OK(InferTypes(m));
  const Function& f = *m.entry();
  EXPECT_EQ(f.ops().size(), 5u * 8 + 2);
  EXPECT_EQ(f.LookupValue("x")->type().ToString(), "tensor<32x16xf32, d0>");
  EXPECT_EQ(f.LookupValue("loss")->type().ToString(), "tensor<f32, d0>");
  EXPECT_EQ(f.LookupValue("w7_new")->type().ToString(), "tensor<16x16xf32, d0>");

  ASSERT_OK_AND_ASSIGN(ModelSpec gpt, LookupModel("gpt2-tiny"));
  ASSERT_OK_AND_ASSIGN(Module g, BuildModel(gpt));
  ASSERT_OK(InferTypes(g));
  const Function& fg = *g.entry();
  EXPECT_EQ(fg.ops().size(), 4u + kBlockOps * 8 + kTiedHeadOps);
  EXPECT_EQ(fg.LookupValue("input_ids")->type().ToString(), "tensor<16x8xi64, d0>");
  EXPECT_EQ(fg.LookupValue("h.7.attn.probs")->type().ToString(), "tensor<16x8x8x8xf32, d0>");
  EXPECT_EQ(fg.LookupValue("logits")->type().ToString(), "tensor<16x8x64xf32, d0>");
}

TEST(ModelZooTest, TinySizesHaveSmallParameterCounts) {
  ASSERT_OK_AND_ASSIGN(ModelSpec mlp, LookupModel("mlp-tiny"));
  EXPECT_EQ(ParameterCount(mlp), 2048);  // 8 x 16^2
  ASSERT_OK_AND_ASSIGN(ModelSpec gpt, LookupModel("gpt2-tiny"));
  // (64 + 16) x 32 + 8 x (12 x 32^2 + 13 x 32) + 2 x 32 = 2560 + 101632 + 64.
  EXPECT_EQ(ParameterCount(gpt), 104256);
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(gpt));
  EXPECT_EQ(CountWeightElements(*m.entry()), 104256);
}

TEST(ModelZooTest, TinySizesAdmitEveryParallelDegreeUpToEight) {
  ASSERT_OK_AND_ASSIGN(ModelSpec mlp, LookupModel("mlp-tiny"));
  ASSERT_OK_AND_ASSIGN(ModelSpec gpt, LookupModel("gpt2-tiny"));
  for (int64_t degree : {1, 2, 4, 8}) {
    EXPECT_EQ(mlp.mlp.n_layer % degree, 0);
    EXPECT_EQ(mlp.mlp.d_model % degree, 0);
    EXPECT_EQ(gpt.gpt.n_layer % degree, 0);
    EXPECT_EQ(gpt.gpt.n_head % degree, 0);
  }
  EXPECT_GE(BatchOf(mlp), 16);
  EXPECT_GE(BatchOf(gpt), 16);
}

TEST(ModelZooTest, WithBatchSetsTheGlobalBatch) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("gpt2-1.6b"));
  EXPECT_EQ(BatchOf(spec), 1024);
  spec = WithBatch(spec, 64);
  EXPECT_EQ(BatchOf(spec), 64);
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
  EXPECT_EQ(m.entry()->LookupValue("input_ids")->type().ToString(), "tensor<64x8xi64, d0>");
  EXPECT_THAT(BuildModel(WithBatch(spec, 0)),
              StatusIs(StatusCode::kInvalidArgument, "gpt2 option batch must be >= 1, got 0"));
  ASSERT_OK_AND_ASSIGN(ModelSpec mlp, LookupModel("mlp-1b"));
  EXPECT_EQ(BatchOf(WithBatch(mlp, 8192)), 8192);
}

TEST(ModelZooTest, ModelLayersReadsTheFamilysLayerCount) {
  ASSERT_OK_AND_ASSIGN(ModelSpec mlp, LookupModel("mlp-1b"));
  EXPECT_EQ(ModelLayers(mlp), 16);  // n_layer
  ASSERT_OK_AND_ASSIGN(ModelSpec gpt, LookupModel("gpt2-tiny"));
  EXPECT_EQ(ModelLayers(gpt), 8);  // n_layer
  ASSERT_OK_AND_ASSIGN(ModelSpec gpt3, LookupModel("gpt3-175b"));
  EXPECT_EQ(ModelLayers(gpt3), 96);  // num_layers
}

TEST(ModelZooTest, AdamStateIsNotCountedAsWeights) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("mlp-tiny"));
  spec.mlp.optimizer = MlpOptimizer::kAdam;
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
  EXPECT_EQ(m.entry()->num_params(), 2 + 3 * 8);
  EXPECT_EQ(CountWeightElements(*m.entry()), 8 * 16 * 16);
}

}  // namespace
}  // namespace distir
