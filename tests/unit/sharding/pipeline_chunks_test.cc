// The layers counted on the sequential program (grid.h PipelineLayers) are
// the layers AnnotateGrid's stage assignment finds after splitting it into
// microbatches, so CheckPipelineChunks refuses exactly the grid points whose
// stages AnnotateGrid refuses, with the same words, before anything is built:
// every P from 1 to L + 2 with v = 1 to 3, with and without microbatches and
// recomputation, on models with a layer pattern (the transformers, GPT-2) and
// without (the MLP, whose layers are the forward ops that read new weights).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "interp/infer_types.h"
#include "ir/clone.h"
#include "models/model_sharding.h"
#include "models/model_zoo.h"
#include "sharding/annotate.h"
#include "sharding/grid.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

// A refusal of the stages by AnnotateGrid (stages.h CheckStageChunks).
bool IsChunkRefusal(const Status& s) {
  return s.message().find("pipeline stages, but") != std::string::npos ||
         s.message().find("model chunks of equal length") != std::string::npos;
}

class PipelineChunksTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PipelineChunksTest, RefusesWhatAnnotateGridRefuses) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(GetParam()));
  const ModelSharding sharding = ModelShardingOf(spec);
  ASSERT_OK_AND_ASSIGN(std::vector<ParamRule> rules, ParseParamRules(sharding.rules));
  // Batch 12: divides into K = 1, 2, 3, 4, 6, 12 microbatches.
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(WithBatch(spec, 12)));
  ASSERT_OK(InferTypes(seq));
  const Function& fn = *seq.entry();
  ASSERT_OK_AND_ASSIGN(const int64_t layers,
                       PipelineLayers(fn, BatchParams(fn, rules), sharding.layer_pattern));
  EXPECT_EQ(layers, ModelLayers(spec)) << GetParam();
  int refused = 0, checked = 0;
  for (int64_t pp = 1; pp <= layers + 2; ++pp) {
    for (int64_t v = 1; v <= 3; ++v) {
      for (int64_t k : {int64_t{1}, int64_t{12}}) {
        for (RecomputeKind recompute : {RecomputeKind::kNone, RecomputeKind::kFull}) {
          GridOptions grid;
          grid.pp = pp;
          grid.virtual_stages = v;
          grid.microbatches = k;
          grid.recompute = recompute;
          grid.layer_pattern = sharding.layer_pattern;
          grid.axes = {{"dp", 1}, {"tp", 1}};
          // Only the stage check differs between the two: the others first.
          if (!CheckGridPoint(fn, grid, rules).ok()) continue;
          Module m;
          m.AddFunction(CloneFunction(fn));
          const Status built = AnnotateGrid(m, fn.name(), grid, rules);
          const Status checked_first = CheckPipelineChunks(fn, grid, layers);
          const std::string what = std::string(GetParam()) + " P " + std::to_string(pp) + " v " +
                                   std::to_string(v) + " K " + std::to_string(k);
          ++checked;
          if (!checked_first.ok()) {
            ++refused;
            EXPECT_EQ(built.ToString(), checked_first.ToString()) << what;
          } else {
            EXPECT_FALSE(IsChunkRefusal(built)) << what << ": " << built.ToString();
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0) << GetParam();
  EXPECT_GT(refused, 0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Models, PipelineChunksTest,
                         ::testing::Values("mlp-tiny", "gpt-tiny", "gpt2-tiny", "llama-tiny"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = p.param;
                           for (char& c : name) c = (c == '-') ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace distir::sharding
