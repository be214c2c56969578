// The throughput bound (search/throughput_bound.h) is above the simulated
// throughput of every configuration of training and inference spaces, in each
// timing model the shipped profiles use, and the memory lower bound of
// pruning (search/memory_bound.h) below every training configuration's
// simulated peak; the optimum gap counts only the configurations left
// unsimulated.

#include "search/throughput_bound.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "models/transformer_metrics.h"
#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "search/layer_footprint.h"
#include "search/memory_bound.h"
#include "testing/experiment_text.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentOf;

// The memory lower bound of `c` (a transformer-training configuration of
// `e`) is at most its simulated peak `r`.
void ExpectMemoryBelowPeak(const Experiment& e, const Config& c, const ConfigResult& r) {
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(WithBatch(e.model, c.batch)));
  ASSERT_OK(InferTypes(seq));
  EXPECT_LE(MemoryLowerBound(*seq.entry(), c.options), r.peak_memory_bytes)
      << DescribeParallelOptions(c.options) << " batch " << c.batch;
  std::vector<std::string> inputs;
  for (const auto& p : seq.entry()->params()) {
    if (ClassifyTransformerValue(*p) == TransformerValueRole::kInput) inputs.push_back(p->name());
  }
  ASSERT_OK_AND_ASSIGN(LayerFootprint f,
                       LayerFootprintOf(*seq.entry(), inputs, e.sharding.layer_pattern));
  EXPECT_LE(ActivationLowerBound(f, c.options), r.peak_memory_bytes)
      << DescribeParallelOptions(c.options) << " batch " << c.batch;
}

// Every simulated configuration of `text` runs below its throughput bound
// and, for a training model, peaks above its memory bound; returns how many.
int ExpectBelowBound(const std::string& text) {
  const Experiment e = ExperimentOf(text);
  Evaluator evaluator(e);
  int simulated = 0;
  for (const Config& c : EnumerateConfigs(e)) {
    const ConfigResult r = evaluator.Evaluate(c);
    const double bound = evaluator.ThroughputBound(c);
    if (c.invalid.empty()) {
      EXPECT_GT(bound, 0) << DescribeParallelOptions(c.options);
    }
    if (r.status != ConfigStatus::kOk) continue;
    ++simulated;
    EXPECT_LE(r.throughput, bound) << DescribeParallelOptions(c.options) << " batch " << c.batch;
    if (e.model.family == ModelFamily::kTransformerTraining) ExpectMemoryBelowPeak(e, c, r);
  }
  return simulated;
}

// Under the sanitizers (5-20x slower) one model on the profile with both
// tiled models; the Release stage runs them all.
#ifdef DISTIR_SANITIZED_BUILD
constexpr const char* kTrainingHardware[] = {"h100-sxm.yaml"};
constexpr const char* kTrainingModels[] = {"{name: llama-tiny, bf16: true}"};
#else
constexpr const char* kTrainingHardware[] = {"dgx-a100.yaml", "h100-sxm.yaml"};
constexpr const char* kTrainingModels[] = {"{name: gpt-tiny, bf16: true}",
                                           "{name: llama-tiny, bf16: true}"};
#endif

// GPT and LLaMA training steps on 8 GPUs over T, P, interleaving, microbatches,
// recomputation, ZeRO and sequence parallelism: the tiled GEMM model
// (dgx-a100), with split-K and the tiled attention model (h100-sxm).
TEST(ThroughputBoundTest, AboveEveryTrainingConfiguration) {
  for (const char* hardware : kTrainingHardware) {
    for (const char* model : kTrainingModels) {
      SCOPED_TRACE(std::string(model) + " on " + hardware);
      const int simulated = ExpectBelowBound(
          std::string("name: t\nmodel: ") + model + "\nhardware: ../hardware/" + hardware +
          "\nworld_size: 8\nspace:\n  batch: [16]\n  dp: all\n  tp: [1, 2, 4]\n  pp: [1, 2]\n"
          "  microbatches: [4]\n  virtual_stages: [1, 2]\n  recompute: [none, full, selective]\n"
          "  zero: [0, 1]\n  sequence_parallel: [false, true]\n"
          "constraints: {world: equal}\nsharding: model\n");
      EXPECT_GT(simulated, 30);
    }
  }
}

// The paper's GPT-2 inference on a DGX-2 (the roofline), one replica standing
// for all, with fewer devices than the world too.
TEST(ThroughputBoundTest, AboveEveryInferenceConfiguration) {
  const int simulated = ExpectBelowBound(
      "name: t\nmodel: gpt2-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 8\n"
      "space:\n  batch: [16, 64]\n  dp: all\n  tp: all\n  pp: all\n  microbatches: [2, 4]\n"
      "constraints: {world: at_most}\n");
  EXPECT_GT(simulated, 30);
}

ConfigResult Result(int64_t index, ConfigStatus status, double throughput = 0) {
  ConfigResult r;
  r.index = index;
  r.status = status;
  r.throughput = throughput;
  r.fits = status == ConfigStatus::kOk;
  return r;
}

// Open: skipped, too-large and error rows; invalid and pruned ones cannot be
// the optimum, simulated ones are known.
TEST(ThroughputBoundTest, TheGapCountsOnlyConfigurationsLeftOpen) {
  const std::vector<ConfigResult> results = {
      Result(0, ConfigStatus::kOk, 100),  Result(1, ConfigStatus::kSkipped),
      Result(2, ConfigStatus::kInvalid),  Result(3, ConfigStatus::kPruned),
      Result(4, ConfigStatus::kTooLarge), Result(5, ConfigStatus::kOk, 50),
      Result(6, ConfigStatus::kError)};
  const std::vector<double> bounds = {400, 120, 900, 900, 130, 300, 110};
  const OptimumGap g = GapOf(results, bounds, {0, 5});
  EXPECT_EQ(g.best, 0);
  EXPECT_EQ(g.open, 3);
  EXPECT_DOUBLE_EQ(g.open_bound, 130);
  ASSERT_TRUE(g.gap.has_value());
  EXPECT_DOUBLE_EQ(*g.gap, 0.3);
  // Open configurations all below the best: gap 0.
  std::vector<double> low = bounds;
  low[1] = low[4] = low[6] = 90;
  EXPECT_EQ(GapOf(results, low, {0, 5}).gap, std::optional<double>(0));
  // One without a bound: unknown.
  low[4] = 0;
  EXPECT_FALSE(GapOf(results, low, {0, 5}).gap.has_value());
  // Nothing ranked: no best, no gap.
  EXPECT_FALSE(GapOf(results, bounds, {}).gap.has_value());
}

}  // namespace
}  // namespace distir::search
