// The layers' footprint of a sequential training step (search/layer_footprint.h)
// and the activation bound of pruning built on it (search/memory_bound.h
// ActivationLowerBound): below the simulated peak of every configuration of
// pipelines of 1 to 8 stages, interleaved or not, 1F1B and GPipe, over the
// three recomputation modes, and pruning with it removes only configurations
// that do not fit.

#include "search/layer_footprint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "models/transformer_metrics.h"
#include "pruning_check.h"
#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "search/memory_bound.h"
#include "testing/experiment_text.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentOf;

// The footprint of experiment `e`'s sequential step at `batch`.
LayerFootprint FootprintAt(const Experiment& e, int64_t batch) {
  StatusOr<Module> seq = BuildModel(WithBatch(e.model, batch));
  EXPECT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_TRUE(InferTypes(*seq).ok());
  std::vector<std::string> inputs;
  for (const auto& p : seq->entry()->params()) {
    if (ClassifyTransformerValue(*p) == TransformerValueRole::kInput) inputs.push_back(p->name());
  }
  StatusOr<LayerFootprint> f = LayerFootprintOf(*seq->entry(), inputs, e.sharding.layer_pattern);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : LayerFootprint{};
}

// Under the sanitizers (the simulator 5-20x slower) the sweeps keep one
// microbatch count; the Release stage runs them whole.
#ifdef DISTIR_SANITIZED_BUILD
constexpr const char* kInterleavedK = "[8]";
constexpr const char* kGPipeK = "[8]";
#else
constexpr const char* kInterleavedK = "[4, 8]";
constexpr const char* kGPipeK = "[2, 8]";
#endif

std::string Space(const std::string& model, const std::string& more) {
  return "name: t\nmodel: " + model +
         "\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 8\nspace:\n  batch: [16]\n"
         "  dp: all\n  tp: [1, 2]\n  pp: [1, 2, 4, 8]\n" +
         more + "constraints: {world: equal}\nsharding: model\n";
}

// gpt-tiny (8 layers, hidden 32, 8 heads, sequence 16, batch 16, bf16 with
// f32 masters and Adam): every layer alike. Without recomputation its
// backward keeps the attention probabilities (b h s s) among the rest; with
// selective recomputation not those.
TEST(LayerFootprintTest, GptTinyKeepsMoreWithoutRecomputation) {
  const Experiment e =
      ExperimentOf(Space("{name: gpt-tiny, bf16: true, use_flash_attn: false}", ""));
  const LayerFootprint f = FootprintAt(e, 16);
  EXPECT_EQ(f.layers, 8);
  EXPECT_EQ(f.batch, 16);
  // The probabilities alone: 16 x 8 x 16 x 16 bf16 values.
  EXPECT_GE(f.saved - f.saved_selective, 16.0 * 8 * 16 * 16 * 2);
  EXPECT_GT(f.saved_selective, 0);
  // bf16 weights (QKV, projection, two MLP matrices, biases, two norms) and
  // 12 bytes of f32 state per weight element.
  EXPECT_GT(f.weights, 2.0 * (4 * 32 * 32 + 2 * 32 * 128));
  EXPECT_DOUBLE_EQ(f.optimizer_state, 6 * f.weights);
}

// Every simulated configuration peaks at or above its activation bound, and
// the bound is not vacuous where nothing is recomputed.
void ExpectActivationBoundBelowPeaks(const std::string& text, int min_simulated) {
  const Experiment e = ExperimentOf(text);
  const LayerFootprint f = FootprintAt(e, 16);
  Evaluator evaluator(e);
  int simulated = 0, positive = 0;
  for (const Config& c : EnumerateConfigs(e)) {
    const ConfigResult r = evaluator.Evaluate(c);
    if (r.status != ConfigStatus::kOk) continue;
    ++simulated;
    const int64_t bound = ActivationLowerBound(f, c.options);
    EXPECT_LE(bound, r.peak_memory_bytes) << DescribeParallelOptions(c.options);
    positive += bound > 0 ? 1 : 0;
  }
  EXPECT_GE(simulated, min_simulated);
  EXPECT_EQ(positive, simulated);
}

TEST(LayerFootprintTest, BelowEveryPeakOver1F1BAndInterleaving) {
  ExpectActivationBoundBelowPeaks(
      Space("{name: gpt-tiny, bf16: true, use_flash_attn: false}",
            std::string("  microbatches: ") + kInterleavedK +
                "\n  virtual_stages: [1, 2]\n"
                "  recompute: [none, full, selective]\n  zero: [0, 1]\n"),
      25);
}

TEST(LayerFootprintTest, BelowEveryPeakOfGPipeAndSequenceParallelism) {
  ExpectActivationBoundBelowPeaks(
      Space("{name: llama-tiny, bf16: true}",
            std::string("  microbatches: ") + kGPipeK +
                "\n  schedule: [gpipe, 1f1b]\n"
                "  recompute: [none, selective]\n  sequence_parallel: [false, true]\n"),
      15);
}

// With a limit between the activation bounds, pruning removes configurations
// whose simulated peak is above it and leaves the others as they were.
TEST(LayerFootprintTest, PruningByActivationsRemovesOnlyWhatDoesNotFit) {
  const std::string text = Space("{name: gpt-tiny, bf16: true, use_flash_attn: false}",
                                 "  microbatches: [4, 8]\n  recompute: [none, selective]\n");
  const Experiment all = ExperimentOf(text);
  const LayerFootprint f = FootprintAt(all, 16);
  Evaluator full(all);
  std::vector<ConfigResult> unlimited;
  std::vector<int64_t> bounds;
  const std::vector<Config> configs = EnumerateConfigs(all);
  for (const Config& c : configs) {
    unlimited.push_back(full.Evaluate(c));
    if (unlimited.back().status == ConfigStatus::kOk)
      bounds.push_back(ActivationLowerBound(f, c.options));
  }
  ASSERT_GT(bounds.size(), 10u);
  std::sort(bounds.begin(), bounds.end());
  const int64_t limit = bounds[bounds.size() / 2];
  int by_activations = 0;
  for (const std::string& reason : ExpectPrunedOnlyAboveLimit(text, limit, unlimited))
    by_activations += reason.find("first backward op") != std::string::npos ? 1 : 0;
  EXPECT_GT(by_activations, 0);
}

}  // namespace
}  // namespace distir::search
