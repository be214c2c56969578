// A template written for another micro-batch from two built ones of its
// family (sharding/retype_template.h, EvaluatorOptions::retyped_templates) is
// the template built for it, op for op, and the search's results do not
// change: every configuration of grids over Megatron's knobs and of an MLP
// grid gives the same printed template and bit-identical results with and
// without writing, evaluated family by family in the search's order
// (AssignUnits: the smallest and largest micro-batch of each family first).

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "search/evaluator.h"
#include "search/grid.h"
#include "search/grid_search.h"
#include "testing/experiment_text.h"
#include "testing/written_templates.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentOf;
using ::distir::testing::TemplateGrid;

// Every configuration of `e` with and without written templates, in the
// search's order (testing/written_templates.h); returns how many were written.
int64_t ExpectWrittenTemplatesExact(const Experiment& e) {
  Evaluator written(e), built(e, EvaluatorOptions{.retyped_templates = false});
  const int64_t checked = ::distir::testing::ExpectWrittenTemplatesExact(
      e, written, built, [](const Evaluator& x) { return x.templates_written(); });
  std::cout << checked << " of " << EnumerateConfigs(e).size() << " templates written\n";
  return checked;
}

class RetypedTemplateTest : public ::testing::TestWithParam<TemplateGrid> {};

TEST_P(RetypedTemplateTest, EqualsTheBuiltTemplateAndResults) {
  EXPECT_GT(ExpectWrittenTemplatesExact(ExperimentOf(GetParam().text)), GetParam().min_written);
}

INSTANTIATE_TEST_SUITE_P(
    Grids, RetypedTemplateTest,
    ::testing::Values(
        // Interleaving, tensor and sequence parallelism over micro batches 1
        // to 8 (1 and 8 built per family, 2 and 4 written where they can be).
        TemplateGrid{
            "MegatronPipelines",
            "name: t\nmodel: gpt-tiny\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 8\n"
            "space:\n  batch: 32\n  dp: all\n  tp: [1, 2]\n  pp: " DISTIR_THIN(
                "[2, 4]", "[4]") "\n"
                                 "  virtual_stages: [1, 2]\n  micro_batch: [1, 2, 4, 8]\n"
                                 "  sequence_parallel: [false, true]\nconstraints: {world: "
                                 "equal}\nsharding: model\n",
            DISTIR_THIN(10, 4)},
        // Recomputation (full, selective) and the distributed optimizer.
        TemplateGrid{
            "RecomputationAndZero",
            "name: t\nmodel: {name: gpt-tiny, bf16: true}\nhardware: ../hardware/dgx-a100.yaml\n"
            "world_size: 8\nspace:\n  batch: 32\n  dp: all\n  tp: [2]\n  pp: [2]\n"
            "  micro_batch: [1, 2, 4, 8]\n  recompute: [full, selective]\n"
            "  zero: " DISTIR_THIN("[0, 1]",
                                   "[1]") "\n"
                                          "constraints: {world: equal}\nsharding: model\n",
            DISTIR_THIN(4, 2)},
        // Odd micro batches between even ones (3 between 2 and 6 on T = 2
        // with sequence parallelism): written where c * m is whole.
        TemplateGrid{
            "OddMicroBatches",
            "name: t\nmodel: gpt-tiny\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 4\n"
            "space:\n  batch: 48\n  dp: 1\n  tp: [2]\n  pp: [2]\n"
            "  virtual_stages: " DISTIR_THIN(
                "[1, 2]",
                "[2]") "\n"
                       "  micro_batch: [1, 2, 3, 4, 6]\n  sequence_parallel: [false, true]\n"
                       "constraints: {world: equal}\nsharding: model\n",
            DISTIR_THIN(4, 2)},
        // The paper's MLP grid (K from 2 to 32 at one batch), replicas
        // standing for all.
        TemplateGrid{
            "MlpPipelines",
            "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 16\n"
            "space:\n  batch: 256\n  dp: all\n  tp: all\n  pp: all\n"
            "  microbatches: {pow2: [1, 5]}\n  schedule: [1f1b]\nconstraints: {world: equal}\n",
            10}),
    [](const ::testing::TestParamInfo<TemplateGrid>& grid) {
      return std::string(grid.param.name);
    });

}  // namespace
}  // namespace distir::search
