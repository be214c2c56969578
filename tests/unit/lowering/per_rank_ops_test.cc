// The per-rank communication ops of lowered programs (SendTo, RecvFrom,
// Collective): their shape rules (interp/comm_shape_rules.cc) and their cost
// rule (sim/collective_cost_rules.cc), seen through whole programs.

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "lowering/lower.h"
#include "lowering_test_util.h"
#include "sim/cost_model.h"
#include "sim/hardware_profile.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::LoadExample;
using testing::ParseAndInferOrDie;
using testing::ParseOrDie;
using testing::SourcePath;
using testing::StatusIs;

Status Infer(const char* text) {
  Module m = ParseOrDie(text);
  DISTIR_RETURN_IF_ERROR(VerifyModule(m));
  return InferTypes(m);
}

TEST(PerRankOpsTest, TokensAreTheInputAndReceivedTypesAreWritten) {
  Module m = ParseAndInferOrDie(R"(
func @f(%a: tensor<4xf32, d1>) {
  %t = SendTo(%a) {device = d2}
  %r = RecvFrom() {device = d2} : tensor<2x2xf16, d1>
  %s = Collective(%a) {group = [d0, d1], kind = "AllReduce", rank = 1}
  %u = Collective(%a) {device = d0, group = [d1, d0], kind = "Reduce", rank = 0}
  %g = Collective(%a) {axis = 0, group = [d1, d0], kind = "AllGather", rank = 0} : tensor<8xf32, d1>
  return %t, %r, %s, %u, %g
}
)");
  const Function& fn = *m.entry();
  for (const char* name : {"t", "s", "u"}) {
    EXPECT_EQ(fn.LookupValue(name)->type().ToString(), "tensor<4xf32, d1>") << name;
  }
  EXPECT_EQ(fn.LookupValue("r")->type().ToString(), "tensor<2x2xf16, d1>");
  EXPECT_EQ(fn.LookupValue("g")->type().ToString(), "tensor<8xf32, d1>");
}

TEST(PerRankOpsTest, RecvFromNeedsItsTypeWritten) {
  EXPECT_THAT(Infer(R"(
func @f(%a: tensor<4xf32, d1>) {
  %r = RecvFrom() {device = d2}
  return %r
}
)"),
              StatusIs(StatusCode::kInvalidArgument,
                       "RecvFrom needs the type of the received value written after ':'"));
}

TEST(PerRankOpsTest, CollectiveChecksItsPositionInTheGroup) {
  EXPECT_THAT(Infer(R"(
func @f(%a: tensor<4xf32, d1>) {
  %s = Collective(%a) {group = [d0, d1], kind = "AllReduce", rank = 0}
  return %s
}
)"),
              StatusIs(StatusCode::kInvalidArgument,
                       "Collective input must be on d0, this rank's device in the group"));
  EXPECT_THAT(Infer(R"(
func @f(%a: tensor<4xf32, d1>) {
  %s = Collective(%a) {group = [d0, d1], kind = "AllReduce", rank = 2}
  return %s
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "Collective rank 2 is not a position"));
  EXPECT_THAT(Infer(R"(
func @f(%a: tensor<4xf32, d1>) {
  %s = Collective(%a) {group = [d1, d0], kind = "MatMul", rank = 0}
  return %s
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "Collective kind must name a collective"));
}

TEST(PerRankOpsTest, SendToMustLeaveItsDevice) {
  EXPECT_THAT(Infer(R"(
func @f(%a: tensor<4xf32, d1>) {
  _ = SendTo(%a) {device = d1}
  return %a
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "SendTo must send to another device"));
}

// Each rank's share of a collective costs what the global collective costs.
TEST(PerRankOpsTest, RankCostEqualsTheGlobalCollectiveCost) {
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  for (const char* name : {"mlp_dp.distir", "mlp_zero.distir", "mlp_pp.distir"}) {
    SCOPED_TRACE(name);
    Module m = LoadExample(name);
    ASSERT_OK_AND_ASSIGN(LoweredModule lowered, LowerToRanks(m));
    sim::CostModel global(hw, &m);
    sim::CostModel ranks(hw, &lowered.module);
    std::vector<double> global_costs;
    for (const auto& op : m.entry()->ops()) {
      if (!op->is_call() && IsCommunication(op->kind())) {
        ASSERT_OK_AND_ASSIGN(double c, global.OpCost(*op));
        global_costs.push_back(c);
      }
    }
    // Every global communication op of these examples involves d1, whose
    // program keeps their order.
    const Function& d1 = *lowered.module.Lookup("rank_d1");
    std::vector<double> rank_costs;
    for (const auto& op : d1.ops()) {
      if (op->is_call() || !IsCommunication(op->kind())) continue;
      ASSERT_OK_AND_ASSIGN(double c, ranks.OpCost(*op));
      rank_costs.push_back(c);
    }
    EXPECT_EQ(rank_costs, global_costs);
  }
}

TEST(PerRankOpsTest, CostDependsOnTheGroupNotOnlyOnTypes) {
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  Module m = ParseAndInferOrDie(R"(
func @f(%a: tensor<1024xf32, d0>) {
  %s = Collective(%a) {group = [d0, d1], kind = "AllReduce", rank = 0}
  %t = Collective(%a) {group = [d0, d1, d2, d3], kind = "AllReduce", rank = 0}
  return %s, %t
}
)");
  sim::CostModel model(hw, &m);
  ASSERT_OK_AND_ASSIGN(double two, model.OpCost(*m.entry()->ops()[0]));
  ASSERT_OK_AND_ASSIGN(double four, model.OpCost(*m.entry()->ops()[1]));
  EXPECT_GT(four, two);
}

}  // namespace
}  // namespace distir
