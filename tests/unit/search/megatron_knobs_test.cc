#include "search/megatron_knobs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "search/experiment.h"
#include "search/grid.h"
#include "testing/experiment_error.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentErrorOf;
using ::distir::testing::SourcePath;

// gpt-tiny (8 layers) on 2 devices through the sharding path; tests add
// space keys after line 9.
const char* const kMegatronTiny =
    "name: t\n"                              // 1
    "model: gpt-tiny\n"                      // 2
    "hardware: ../hardware/dgx-a100.yaml\n"  // 3
    "world_size: 2\n"                        // 4
    "sharding: model\n"                      // 5
    "space:\n"                               // 6
    "  batch: 16\n"                          // 7
    "  dp: [1, 2]\n"                         // 8
    "  tp: 1\n"                              // 9
    "  pp: [1, 2]\n";                        // 10

StatusOr<Experiment> ParseTiny(const std::string& extra) {
  return ParseExperiment(kMegatronTiny + extra, SourcePath("configs/experiments/t.yaml"));
}

TEST(MegatronKnobsTest, RecomputeKindsAndTruthValues) {
  EXPECT_EQ(ParseRecomputeKind("none"), RecomputeKind::kNone);
  EXPECT_EQ(ParseRecomputeKind("false"), RecomputeKind::kNone);
  EXPECT_EQ(ParseRecomputeKind("true"), RecomputeKind::kFull);
  EXPECT_EQ(ParseRecomputeKind("full"), RecomputeKind::kFull);
  EXPECT_EQ(ParseRecomputeKind("selective"), RecomputeKind::kSelective);
  EXPECT_EQ(ParseRecomputeKind("partial"), std::nullopt);
  for (RecomputeKind k : {RecomputeKind::kNone, RecomputeKind::kFull, RecomputeKind::kSelective})
    EXPECT_EQ(ParseRecomputeKind(RecomputeKindName(k)), k) << RecomputeKindName(k);
}

TEST(MegatronKnobsTest, MicroBatchGivesKOrTheReason) {
  EXPECT_EQ(MicrobatchesOfMicroBatch(16, 2, 4).value(), 2);  // 16 = 4 x 2 x 2
  StatusOr<int64_t> k = MicrobatchesOfMicroBatch(16, 2, 3);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().message(),
            "micro_batch 3 x D 2 does not divide the batch 16 (Megatron's global batch = micro "
            "batch x D x K)");
  EXPECT_FALSE(MicrobatchesOfMicroBatch(16, INT64_MAX, 2).ok());  // D x micro_batch overflows
  EXPECT_EQ(MicroBatchOf(16, 2, 4), 2);
  EXPECT_EQ(MicroBatchOf(16, 3, 1), 0);
}

TEST(MegatronKnobsTest, ChunkLayersGiveVOrTheReason) {
  EXPECT_EQ(VirtualStagesOfChunkLayers(8, 2, 2).value(), 2);
  EXPECT_EQ(VirtualStagesOfChunkLayers(8, 2, 1).value(), 4);
  EXPECT_EQ(VirtualStagesOfChunkLayers(8, 2, 3).status().message(),
            "num_layers_per_virtual_pipeline_stage 3: the 8 layers do not divide into P = 2 "
            "stages of chunks of 3 layers");
  EXPECT_EQ(VirtualStagesOfChunkLayers(8, 2, 4).status().message(),
            "num_layers_per_virtual_pipeline_stage 4 gives one model chunk per stage (L / P = 4): "
            "Megatron's interleaved schedule with one chunk is not modelled; give "
            "space.virtual_stages: 1 for plain 1F1B");
}

TEST(MegatronKnobsTest, ParsesTheKeys) {
  ASSERT_OK_AND_ASSIGN(Experiment e, ParseTiny("  virtual_stages: [1, 2]\n"
                                               "  micro_batch: [2, 4]\n"
                                               "  recompute: [none, full, selective]\n"));
  EXPECT_EQ(e.space.virtual_stages, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(e.space.micro_batch, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(e.space.recompute,
            (std::vector<RecomputeKind>{RecomputeKind::kNone, RecomputeKind::kFull,
                                        RecomputeKind::kSelective}));
  ASSERT_OK_AND_ASSIGN(e, ParseTiny("  num_layers_per_virtual_pipeline_stage: 2\n"));
  EXPECT_EQ(e.space.chunk_layers, (std::vector<int64_t>{2}));
}

TEST(MegatronKnobsTest, ErrorsAreLocated) {
  EXPECT_EQ(ExperimentErrorOf(std::string(kMegatronTiny) + "  microbatches: 2\n  micro_batch: 2\n"),
            "t.yaml:12:16: error: space.micro_batch and space.microbatches both give K; keep one");
  EXPECT_EQ(ExperimentErrorOf(std::string(kMegatronTiny) +
                              "  virtual_stages: 2\n  num_layers_per_virtual_pipeline_stage: 2\n"),
            "t.yaml:12:42: error: space.num_layers_per_virtual_pipeline_stage and "
            "space.virtual_stages both give v; keep one");
  EXPECT_EQ(ExperimentErrorOf(std::string(kMegatronTiny) + "  recompute: [none, partial]\n"),
            "t.yaml:11:21: error: space.recompute must be none, full, selective, true or false");
  EXPECT_EQ(ExperimentErrorOf(std::string(kMegatronTiny) + "  recompute: [full, true]\n"),
            "t.yaml:11:21: error: space.recompute lists full twice");
  EXPECT_EQ(ExperimentErrorOf(std::string(kMegatronTiny) + "  micro_batch: [2, 0]\n"),
            "t.yaml:11:20: error: space.micro_batch must be >= 1, got 0");
}

TEST(MegatronKnobsTest, SelectiveNeedsAModelWithMarks) {
  const std::string mlp =
      "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 2\n"
      "space:\n  batch: 16\n  dp: 2\n  tp: 1\n  pp: 1\n  recompute: [full, selective]\n";
  EXPECT_EQ(ExperimentErrorOf(mlp),
            "t.yaml:10:21: error: space.recompute: selective recomputes the ops a model marks "
            "(Megatron's core attention); only the transformer-training models (gpt-tiny, "
            "gpt3-*, ...) mark them, mlp-tiny does not");
}

// Every model is distributed by the sharding path, which interleaves any
// model's layers (an MLP's too).
TEST(MegatronKnobsTest, InterleavingAppliesToEveryModel) {
  const std::string mlp =
      "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 2\n"
      "space:\n  batch: 16\n  dp: 1\n  tp: 1\n  pp: 2\n  virtual_stages: [1, 2]\n";
  EXPECT_EQ(ExperimentErrorOf(mlp), "ok");
}

TEST(MegatronKnobsTest, EnumeratesVAndMicroBatch) {
  ASSERT_OK_AND_ASSIGN(Experiment e, ParseTiny("  virtual_stages: [1, 2]\n"
                                               "  micro_batch: [4, 3]\n"
                                               "  recompute: [none, selective]\n"));
  const std::vector<Config> configs = EnumerateConfigs(e);
  // D 2 P 1: v 1 only, two micro batches, two recomputations; D 1 P 2: two v.
  ASSERT_EQ(configs.size(), 2u * 2u + 2u * 2u * 2u);
  const Config& first = configs[0];  // D 1 (dp: [1, 2]) P 2 (the product is 2) v 1 micro batch 4
  EXPECT_EQ(first.options.dp, 1);
  EXPECT_EQ(first.options.pp, 2);
  EXPECT_EQ(first.options.virtual_stages, 1);
  EXPECT_EQ(first.options.microbatches, 4);  // 16 / (1 x 4)
  EXPECT_EQ(first.micro_batch, 4);
  EXPECT_TRUE(first.invalid.empty());
  EXPECT_EQ(configs[1].options.recompute, RecomputeKind::kSelective);
  const Config& odd = configs[2];  // micro batch 3
  EXPECT_EQ(odd.micro_batch, 3);
  EXPECT_EQ(odd.options.microbatches, 0);
  EXPECT_NE(odd.invalid.find("micro_batch 3 x D 1 does not divide the batch 16"),
            std::string::npos);
  EXPECT_EQ(configs[4].options.virtual_stages, 2);
  const Config& d2 = configs[8];  // D 2 P 1: K = 16 / (2 x 4), gradient accumulation
  EXPECT_EQ(d2.options.dp, 2);
  EXPECT_EQ(d2.options.pp, 1);
  EXPECT_EQ(d2.options.virtual_stages, 1);
  EXPECT_EQ(d2.options.microbatches, 2);
}

TEST(MegatronKnobsTest, ChunkLayersEnumerateVPerP) {
  ASSERT_OK_AND_ASSIGN(Experiment e, ParseTiny("  num_layers_per_virtual_pipeline_stage: [2, 3]\n"
                                               "  microbatches: 4\n"));
  const std::vector<Config> configs = EnumerateConfigs(e);
  ASSERT_EQ(configs.size(), 2u + 1u);               // P 2: N 2 and 3; P 1: v 1
  EXPECT_EQ(configs[0].options.virtual_stages, 2);  // 8 / (2 x 2)
  EXPECT_TRUE(configs[0].invalid.empty());
  EXPECT_EQ(configs[1].options.virtual_stages, 0);
  EXPECT_NE(configs[1].invalid.find("do not divide into P = 2"), std::string::npos);
  EXPECT_EQ(configs[2].options.virtual_stages, 1);
}

}  // namespace
}  // namespace distir::search
