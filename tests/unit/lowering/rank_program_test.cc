#include "lowering/rank_program.h"

#include "ir/printer.h"
#include "lowering_test_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::LoadExample;
using testing::ParseAndInferOrDie;
using testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

StatusOr<std::vector<RankProgram>> Project(const Module& m) {
  DISTIR_ASSIGN_OR_RETURN(Placement p, ComputePlacement(m, *m.entry()));
  return ProjectToRanks(p);
}

// Printed program of every rank, in device order.
std::vector<std::string> PrintRanks(const Module& m) {
  StatusOr<std::vector<RankProgram>> ranks = Project(m);
  EXPECT_OK(ranks);
  std::vector<std::string> out;
  if (!ranks.ok()) return out;
  for (const RankProgram& r : *ranks) out.push_back(PrintFunction(*r.function));
  return out;
}

TEST(RankProgramTest, PipelineSendsSplitIntoSendToAndRecvFrom) {
  Module m = LoadExample("mlp_pp.distir");
  std::vector<std::string> ranks = PrintRanks(m);
  ASSERT_EQ(ranks.size(), 2u);
  const std::string& d1 = ranks[0];
  const std::string& d2 = ranks[1];
  EXPECT_THAT(d1, HasSubstr("func @rank_d1(%w1: tuple<tensor<16x16xf32, d1>, tensor<16xf32, d1>>, "
                            "%x: tensor<16x16xf32, d1>)"));
  EXPECT_THAT(d1, HasSubstr("_ = SendTo(%as_1) {device = d2} : tensor<8x16xf32, d1>"));
  EXPECT_THAT(d1, HasSubstr("%dar_1 = RecvFrom() {device = d2} : tensor<8x16xf32, d1>"));
  EXPECT_THAT(d1, HasSubstr("return %w1_new\n"));
  EXPECT_THAT(d1, Not(HasSubstr("%p_1")));
  EXPECT_THAT(d2, HasSubstr("%ar_1 = RecvFrom() {device = d1} : tensor<8x16xf32, d2>"));
  EXPECT_THAT(d2, HasSubstr("_ = SendTo(%das_2) {device = d1}"));
  EXPECT_THAT(d2, HasSubstr("%p_1 = @dense(%w2, %ar_1)"));
  EXPECT_THAT(d2, HasSubstr("return %w2_new\n"));
  EXPECT_THAT(d2, Not(HasSubstr("%x_1")));
}

TEST(RankProgramTest, AllReduceBecomesOneParticipationPerRank) {
  Module m = LoadExample("mlp_dp.distir");
  std::vector<std::string> ranks = PrintRanks(m);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_THAT(ranks[0], HasSubstr("%sw1_1_A = Collective(%dw1_1_A) {group = [d1, d2], "
                                  "kind = \"AllReduce\", rank = 0} : tensor<128x128xf32, d1>"));
  EXPECT_THAT(ranks[1], HasSubstr("%sw1_2_A = Collective(%dw1_2_A) {group = [d1, d2], "
                                  "kind = \"AllReduce\", rank = 1} : tensor<128x128xf32, d2>"));
  EXPECT_THAT(ranks[1], HasSubstr("return %w1_2_new, %w2_2_new\n"));
}

TEST(RankProgramTest, RootedCollectiveGivesOtherRanksAToken) {
  Module m = LoadExample("mlp_zero.distir");
  std::vector<std::string> ranks = PrintRanks(m);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_THAT(ranks[0], HasSubstr("%dw1_A = Collective(%dw1_1_A) {device = d1, group = [d1, d2], "
                                  "kind = \"Reduce\", rank = 0}"));
  EXPECT_THAT(ranks[1], HasSubstr("_ = Collective(%dw1_2_A) {device = d1, group = [d1, d2], "
                                  "kind = \"Reduce\", rank = 1} : tensor<128x128xf32, d2>"));
  // %w1 is sent twice to d2; each send is its own pair of halves.
  EXPECT_THAT(ranks[1], HasSubstr("%w1_2_f = RecvFrom() {device = d1}"));
  EXPECT_THAT(ranks[1], HasSubstr("%w1_2_b = RecvFrom() {device = d1}"));
}

TEST(RankProgramTest, BroadcastGroupListsTheSourceThenTheReceivers) {
  Module m = ParseAndInferOrDie(R"(
func @main(%x: tensor<4xf32, d3>) {
  %y0, %y1 = Broadcast(%x) {devices = [d0, d1]}
  return %y0, %y1
}
)");
  std::vector<std::string> ranks = PrintRanks(m);
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_THAT(ranks[0], HasSubstr("%y0 = Collective() {devices = [d0, d1], group = [d3, d0, d1], "
                                  "kind = \"Broadcast\", rank = 1} : tensor<4xf32, d0>"));
  EXPECT_THAT(ranks[2], HasSubstr("_ = Collective(%x) {devices = [d0, d1], group = [d3, d0, d1], "
                                  "kind = \"Broadcast\", rank = 0} : tensor<4xf32, d3>"));
}

TEST(RankProgramTest, RejectsAnOpWithNoDevice) {
  Module m = ParseAndInferOrDie(R"(
func @main(%a: tensor<f32, d0>) {
  %k = Constant() {value = dense<f32>[1.0]}
  return %a
}
)");
  EXPECT_THAT(Project(m), StatusIs(StatusCode::kInvalidArgument, "Constant has no device"));
}

TEST(RankProgramTest, RejectsADeviceGenericEntry) {
  Module m = ParseAndInferOrDie(R"(
func @main(%a: tensor<4xf32>) {
  %y = Relu(%a)
  return %y
}
)");
  EXPECT_THAT(Project(m), StatusIs(StatusCode::kInvalidArgument,
                                   "parameter %a of @main has no device; lowering needs"));
}

TEST(RankProgramTest, RejectsACallThatCommunicates) {
  Module m = ParseAndInferOrDie(R"(
func @hop(%x: tensor<4xf32, d0>) {
  %y = Send(%x) {device = d1}
  return %y
}

func @main(%a: tensor<4xf32, d0>) {
  %b = @hop(%a)
  return %b
}
)");
  EXPECT_THAT(Project(m), StatusIs(StatusCode::kUnimplemented, "call of @hop communicates (Send"));
}

TEST(RankProgramTest, OriginMapsLocalValuesToGlobalOnes) {
  Module m = LoadExample("mlp_pp.distir");
  ASSERT_OK_AND_ASSIGN(std::vector<RankProgram> ranks, Project(m));
  const RankProgram& d2 = ranks[1];
  const Value* ar = d2.function->LookupValue("ar_1");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(d2.origin[ar->id()], m.entry()->LookupValue("ar_1"));
  EXPECT_EQ(d2.origin[d2.function->param(0)->id()], m.entry()->param(1));  // %w2
}

}  // namespace
}  // namespace distir
