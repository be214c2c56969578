// A template written for n layers per model chunk from templates of two and
// three (sharding/fold_layers.h, EvaluatorOptions::folded_layers) is the
// template built for all of them, op for op, and the search's results do not
// change: every configuration of grids over Megatron's knobs on gpt-tiny and
// llama-tiny with 12 layers gives the same printed template and
// bit-identical results with and without folding, evaluated family by
// family in the search's order (AssignUnits). And LayerFold itself: learned
// from 2 and 3 layers per chunk, it writes 2 back as built and 4 and 6 as
// built.

#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "models/transformer.h"
#include "search/evaluator.h"
#include "search/grid.h"
#include "search/grid_search.h"
#include "sharding/fold_layers.h"
#include "sharding/grid.h"
#include "testing/experiment_text.h"
#include "testing/written_templates.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentOf;
using ::distir::testing::TemplateGrid;

// Every configuration of `e` with templates folded from three layers per
// chunk (and eight stages) onwards and built, in the search's order
// (testing/written_templates.h); returns how many were folded.
int64_t ExpectFoldedTemplatesExact(const Experiment& e) {
  Evaluator folded(e, EvaluatorOptions{.folded_layers = 3}),
      built(e, EvaluatorOptions{.folded_layers = 0, .folded_stages = 0});
  const int64_t checked = ::distir::testing::ExpectWrittenTemplatesExact(
      e, folded, built, [](const Evaluator& x) { return x.templates_folded(); });
  std::cout << checked << " templates folded over " << EnumerateConfigs(e).size()
            << " configurations\n";
  return checked;
}

class FoldedTemplateTest : public ::testing::TestWithParam<TemplateGrid> {};

TEST_P(FoldedTemplateTest, EqualsTheBuiltTemplateAndResults) {
  EXPECT_GE(ExpectFoldedTemplatesExact(ExperimentOf(GetParam().text)), GetParam().min_written);
}

INSTANTIATE_TEST_SUITE_P(
    Grids, FoldedTemplateTest,
    ::testing::Values(
        // Pipelines with and without interleaving (3, 6 and 12 layers per
        // chunk), tensor and sequence parallelism, recomputation, ZeRO-1.
        TemplateGrid{
            "GptPipelines",
            "name: t\nmodel: {name: gpt-tiny, num_layers: 12}\n"
            "hardware: ../hardware/dgx-a100.yaml\nworld_size: 8\n"
            "space:\n  batch: 32\n  dp: all\n  tp: [1, 2]\n  pp: [1, 2]\n"
            "  virtual_stages: [1, 2]\n  micro_batch: " DISTIR_THIN(
                "[1, 2, 4]", "[2]") "\n"
                                    "  sequence_parallel: [false, true]\n  recompute: " DISTIR_THIN(
                                        "[none, full, selective]",
                                        "[selective]") "\n"
                                                       "  zero: " DISTIR_THIN(
                                                           "[0, 1]",
                                                           "[1]") "\n"
                                                                  "constraints: {world: equal}\n"
                                                                  "sharding: model\n",
            DISTIR_THIN(100, 5)},
        // LLaMA (RMSNorm, SwiGLU, grouped queries) with four tensor-parallel
        // ranks, whose template is built for representatives of them.
        TemplateGrid{
            "LlamaTensorParallel",
            "name: t\nmodel: {name: llama-tiny, num_layers: 12}\n"
            "hardware: ../hardware/dgx-a100.yaml\nworld_size: 8\n"
            "space:\n  batch: 32\n  dp: all\n  tp: " DISTIR_THIN(
                "[2, 4]", "[4]") "\n"
                                 "  pp: [2]\n  virtual_stages: [1, 2]\n  micro_batch: [1, 4]\n"
                                 "  sequence_parallel: [false, true]\n  recompute: " DISTIR_THIN(
                                     "[none, selective, full]",
                                     "[full]") "\n"
                                               "  zero: [0, 1]\n"
                                               "constraints: {world: equal}\n"
                                               "sharding: model\n",
            DISTIR_THIN(60, 8)},
        // Eight stages written from two and four (the stage fold), with and
        // without interleaving, replicas standing for all.
        TemplateGrid{
            "GptStages",
            "name: t\nmodel: {name: gpt-tiny, num_layers: 16}\n"
            "hardware: ../hardware/dgx-a100.yaml\nworld_size: 16\n"
            "space:\n  batch: 64\n  dp: all\n  tp: " DISTIR_THIN(
                "[1, 2]",
                "[2]") "\n"
                       "  pp: [8]\n  virtual_stages: [1, 2]\n  micro_batch: " DISTIR_THIN(
                           "[1, 2]",
                           "[1]") "\n"
                                  "  sequence_parallel: [false, true]\n  recompute: [selective]\n"
                                  "  zero: " DISTIR_THIN(
                                      "[0, 1]",
                                      "[1]") "\nconstraints: {world: equal}\nsharding: model\n",
            DISTIR_THIN(8, 2)},
        // Sixteen stages over 24 layers, Megatron's uneven split: the first
        // eight stages hold two layers, the last eight one (two groups).
        TemplateGrid{"GptUnevenStages",
                     "name: t\nmodel: {name: gpt-tiny, num_layers: 24}\n"
                     "hardware: ../hardware/dgx-a100.yaml\nworld_size: 16\n"
                     "space:\n  batch: 64\n  dp: all\n  tp: [1]\n  pp: [16]\n"
                     "  micro_batch: [1, 2]\n  recompute: [selective, full]\n"
                     "  zero: [0, 1]\nconstraints: {world: equal}\nsharding: model\n",
                     4}),
    [](const ::testing::TestParamInfo<TemplateGrid>& grid) {
      return std::string(grid.param.name);
    });

// Eight stages of four layers each: the stage fold's templates of two and
// four stages are themselves written by the layer fold (from two and three
// layers per chunk; Evaluator::NestsLayerFolds), the second micro-batch's
// four-stage one from its three-layer build alone.
TEST(NestedFoldTest, WritesTheStageFoldsSmallTemplatesByTheLayerFold) {
  const Experiment e = ExperimentOf(
      "name: t\nmodel: {name: gpt-tiny, num_layers: 32}\n"
      "hardware: ../hardware/dgx-a100.yaml\nworld_size: 16\n"
      "space:\n  batch: 64\n  dp: all\n  tp: " DISTIR_THIN("[1, 2]", "[2]") "\n"
      "  pp: [8]\n  virtual_stages: [1]\n  micro_batch: [1, 2]\n"
      "  sequence_parallel: " DISTIR_THIN("[false, true]", "[true]") "\n"
      "  recompute: [selective]\n  zero: " DISTIR_THIN("[0, 1]", "[1]") "\n"
      "constraints: {world: equal}\nsharding: model\n");
  Evaluator folded(e, EvaluatorOptions{.folded_layers = 3}),
      built(e, EvaluatorOptions{.folded_layers = 0, .folded_stages = 0});
  const int64_t checked = ::distir::testing::ExpectWrittenTemplatesExact(
      e, folded, built, [](const Evaluator& x) { return x.templates_folded(); });
  const int64_t configs = static_cast<int64_t>(EnumerateConfigs(e).size());
  EXPECT_EQ(checked, configs);
  // Per family: the two- and four-stage templates of the first micro-batch,
  // the four-stage one of the second.
  EXPECT_EQ(folded.small_templates_folded(), 3 * configs / 2);
}

// LayerFold on its own: the template of gpt-tiny (T 2, P 2, sequence
// parallelism, selective recomputation, ZeRO-1) at 2, 4 and 6 layers per
// chunk written from those of 2 and 3 prints as the one built.
class LayerFoldTest : public ::testing::Test {
 protected:
  // The template of the one configuration of gpt-tiny with `layers` layers,
  // built by a search's evaluator (kept alive with its experiment).
  const sharding::GridTemplate& Built(int64_t layers) {
    experiments_.push_back(std::make_unique<Experiment>(
        ExperimentOf("name: t\nmodel: {name: gpt-tiny, num_layers: " + std::to_string(layers) +
                     "}\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 8\n"
                     "space:\n  batch: 32\n  dp: [2]\n  tp: [2]\n  pp: [2]\n  micro_batch: [2]\n"
                     "  sequence_parallel: [true]\n  recompute: [selective]\n  zero: [1]\n"
                     "constraints: {world: equal}\nsharding: model\n")));
    evaluators_.push_back(
        std::make_unique<Evaluator>(*experiments_.back(), EvaluatorOptions{.folded_layers = 0}));
    const std::vector<Config> configs = EnumerateConfigs(*experiments_.back());
    EXPECT_EQ(configs.size(), 1u);
    const ConfigResult r = evaluators_.back()->Evaluate(configs.at(0));
    EXPECT_EQ(r.status, ConfigStatus::kOk) << r.reason;
    const sharding::GridTemplate* t = evaluators_.back()->last_template();
    EXPECT_NE(t, nullptr);
    return *t;
  }

 private:
  std::vector<std::unique_ptr<Experiment>> experiments_;
  std::vector<std::unique_ptr<Evaluator>> evaluators_;
};

TEST_F(LayerFoldTest, WritesTheBuiltTemplate) {
  const sharding::GridTemplate& two = Built(4);
  const sharding::GridTemplate& three = Built(6);
  StatusOr<sharding::LayerFold> fold =
      sharding::LayerFold::Learn(two, three, sharding::LayerNamePrefix(kTransformerLayerPattern));
  ASSERT_TRUE(fold.ok()) << fold.status().message();
  for (int64_t n : {2, 4, 6}) {
    StatusOr<sharding::GridTemplate> written = fold->Write(three, n);
    ASSERT_TRUE(written.ok()) << written.status().message();
    EXPECT_EQ(PrintModule(written->module), PrintModule(Built(2 * n).module)) << n;
  }
}

TEST_F(LayerFoldTest, RefusesTemplatesOfOtherStructures) {
  const sharding::GridTemplate& two = Built(4);
  const sharding::GridTemplate& three = Built(6);
  const sharding::GridTemplate& four = Built(8);
  const std::string prefix = sharding::LayerNamePrefix(kTransformerLayerPattern);
  StatusOr<sharding::LayerFold> fold = sharding::LayerFold::Learn(two, three, prefix);
  ASSERT_TRUE(fold.ok()) << fold.status().message();
  // Write is given a template of another structure.
  EXPECT_EQ(fold->Write(four, 5).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(fold->Write(three, 1).status().code(), StatusCode::kFailedPrecondition);
  // Learn from templates that are not a layer apart, or without layer names.
  EXPECT_EQ(sharding::LayerFold::Learn(two, four, prefix).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(sharding::LayerFold::Learn(three, two, prefix).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(sharding::LayerFold::Learn(two, three, "").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(LayerNamePrefixTest, ReadsTheLiteralPrefixOfALayerPattern) {
  EXPECT_EQ(sharding::LayerNamePrefix(kTransformerLayerPattern), "layers.");
  EXPECT_EQ(sharding::LayerNamePrefix("^h\\.([0-9]+)\\."), "h.");
  EXPECT_EQ(sharding::LayerNamePrefix("^model\\.layers\\.([0-9]+)\\."), "model.layers.");
  EXPECT_EQ(sharding::LayerNamePrefix(""), "");
  EXPECT_EQ(sharding::LayerNamePrefix("layers\\.([0-9]+)\\."), "");
  EXPECT_EQ(sharding::LayerNamePrefix("^lay.rs\\.([0-9]+)\\."), "");
  EXPECT_EQ(sharding::LayerNamePrefix("^\\.([0-9]+)\\."), "");
}

}  // namespace
}  // namespace distir::search
