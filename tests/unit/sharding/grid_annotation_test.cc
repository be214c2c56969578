// The grid point as annotations (sharding/annotate.h) on the built-in MLP:
// every D x T distribution through propagation, materialisation, clean-up and
// partition computes the sequential training step exactly.

#include <gtest/gtest.h>

#include <cmath>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/mlp.h"
#include "sharding/annotate.h"
#include "sharding/cleanup.h"
#include "sharding/equivalence.h"
#include "sharding/materialize.h"
#include "sharding/partition.h"
#include "sharding/propagate.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

using ::distir::testing::SourcePath;

std::vector<ParamRule> MlpRules() { return *ParseParamRules(MlpShardingRules()); }

// Annotates, propagates, materialises and cleans up `m`'s @mlp for (dp, tp).
Status ToGlobalView(Module& m, int64_t dp, int64_t tp) {
  DISTIR_RETURN_IF_ERROR(AnnotateMesh(m, "mlp", {{"dp", dp}, {"tp", tp}}, MlpRules()));
  DISTIR_RETURN_IF_ERROR(PropagateShardings(m, "mlp"));
  DISTIR_RETURN_IF_ERROR(MaterializeShardings(m, "mlp"));
  RunCleanup(m, "mlp");
  return Status::Ok();
}

struct GridPoint {
  int64_t dp, tp;
  MlpOptimizer optimizer;
};

class MlpGridTest : public ::testing::TestWithParam<GridPoint> {};

TEST_P(MlpGridTest, PartitionComputesTheSequentialStep) {
  const GridPoint& g = GetParam();
  MlpOptions o;
  o.n_layer = 3;  // odd: the last layer is column-parallel with no partner
  o.d_model = 8;
  o.batch = 8;
  o.optimizer = g.optimizer;
  ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(o));
  Status global = ToGlobalView(m, g.dp, g.tp);
  ASSERT_TRUE(global.ok()) << global.ToString();
  ASSERT_OK_AND_ASSIGN(Module parts, ParseModule(PrintModule(m), "global"));
  ASSERT_OK(PartitionShardings(parts, "mlp"));
  // Adam's second moments must be >= 0 (the update takes their square root).
  RandomInputOptions inputs;
  for (const auto& p : m.entry()->params()) {
    if (p->name()[0] != 'v') continue;
    DenseTensor t = RandomValue(p->type(), 11).tensor();
    for (double& x : t.values) x = std::fabs(x);
    inputs.overrides[p->name()] = HostValue::Tensor(std::move(t));
  }
  ASSERT_OK_AND_ASSIGN(EquivalenceReport r,
                       CheckPartitionEquivalence(m, parts, "mlp", 7, 1e-5, 1e-6, inputs));
  EXPECT_EQ(r.devices, g.dp * g.tp);
  EXPECT_EQ(r.outputs, g.optimizer == MlpOptimizer::kSgd ? 4 : 10);
}

INSTANTIATE_TEST_SUITE_P(
    DataAndTensor, MlpGridTest,
    ::testing::Values(GridPoint{2, 1, MlpOptimizer::kSgd}, GridPoint{1, 2, MlpOptimizer::kSgd},
                      GridPoint{2, 2, MlpOptimizer::kSgd}, GridPoint{4, 2, MlpOptimizer::kSgd},
                      GridPoint{2, 4, MlpOptimizer::kSgd}, GridPoint{8, 1, MlpOptimizer::kSgd},
                      GridPoint{2, 2, MlpOptimizer::kAdam}, GridPoint{1, 4, MlpOptimizer::kAdam}));

}  // namespace
}  // namespace distir::sharding
