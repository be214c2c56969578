// The grid point as annotations (sharding/annotate.h) on the built-in MLP:
// every D x T distribution through propagation, materialisation, clean-up and
// partition computes the sequential training step exactly, and simulates like
// the per-model emitter it is meant to replace (src/transforms/parallelize.h).

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
#include "transforms/parallelize.h"

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

// MLP 1B at batch 8192 on a DGX-2, every D x T = 16: the same peak memory as
// the emitter, and no slower. The emitter also all-reduces the unused input
// gradient dx of the first layer over T; the sharding path leaves a partial
// value nobody reads unreduced, hence its slightly lower times for T > 1.
TEST(MlpGridSimulationTest, MatchesThePerModelEmitterOnMlp1b) {
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  MlpOptions o;
  o.n_layer = 16;
  o.d_model = 8192;
  o.batch = 8192;
  o.dtype = DType::kF16;
  for (int64_t tp : {1, 2, 4, 8, 16}) {
    int64_t dp = 16 / tp;
    ASSERT_OK_AND_ASSIGN(Module seq, BuildMlpTraining(o));
    ASSERT_OK(InferTypes(seq));
    ParallelOptions po;
    po.dp = dp;
    po.tp = tp;
    ASSERT_OK_AND_ASSIGN(DistributedProgram old, Parallelize(*seq.entry(), po));
    ASSERT_OK_AND_ASSIGN(sim::SimulationResult a, sim::Simulate(old.module, old.program(), hw));

    ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(o));
    ASSERT_OK(ToGlobalView(m, dp, tp));
    ASSERT_OK(PartitionShardings(m, "mlp"));
    ASSERT_OK_AND_ASSIGN(sim::SimulationResult b, sim::Simulate(m, *m.entry(), hw));
    SCOPED_TRACE("D=" + std::to_string(dp) + " T=" + std::to_string(tp));
    EXPECT_EQ(b.PeakMemoryBytes(), a.PeakMemoryBytes());
    EXPECT_LE(b.iteration_time_s, a.iteration_time_s * (1 + 1e-12));
    EXPECT_GE(b.iteration_time_s, a.iteration_time_s * 0.97);
  }
}

}  // namespace
}  // namespace distir::sharding
