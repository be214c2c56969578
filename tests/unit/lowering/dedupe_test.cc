#include "lowering/dedupe.h"

#include "lowering_test_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::LoadExample;
using testing::ParseAndInferOrDie;

std::vector<RankGroup> Groups(const Module& m) {
  StatusOr<Placement> p = ComputePlacement(m, *m.entry());
  EXPECT_OK(p);
  StatusOr<std::vector<RankProgram>> ranks = ProjectToRanks(*p);
  EXPECT_OK(ranks);
  return GroupIdenticalRanks(*ranks);
}

TEST(DedupeTest, DataParallelReplicasShareOneProgram) {
  std::vector<RankGroup> groups = Groups(LoadExample("mlp_dp.distir"));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].program, 0);
  EXPECT_EQ(groups[0].ranks, (std::vector<DeviceId>{DeviceId(1), DeviceId(2)}));
}

TEST(DedupeTest, PipelineStagesKeepTheirOwnPrograms) {
  std::vector<RankGroup> groups = Groups(LoadExample("mlp_pp.distir"));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].program, 1);
  EXPECT_EQ(groups[1].ranks, std::vector<DeviceId>{DeviceId(2)});
}

TEST(DedupeTest, ZeroOwnersDifferInWhatTheySendFirst) {
  EXPECT_EQ(Groups(LoadExample("mlp_zero.distir")).size(), 2u);
}

TEST(DedupeTest, SharingIgnoresValueNames) {
  // d0 and d2 run the same program up to their own device: one all-reduce
  // group and the same peer d1.
  Module m = ParseAndInferOrDie(R"(
func @main(%a: tensor<4xf32, d0>, %b: tensor<4xf32, d1>, %c: tensor<4xf32, d2>) {
  %ra = Relu(%a)
  %rc = Relu(%c)
  %s0, %s2 = AllReduce(%ra, %rc)
  %b0 = Send(%b) {device = d0}
  %b2 = Send(%b) {device = d2}
  %x0 = Add(%s0, %b0)
  %x2 = Add(%s2, %b2)
  return %x0, %x2
}
)");
  std::vector<RankGroup> groups = Groups(m);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].ranks, (std::vector<DeviceId>{DeviceId(0), DeviceId(2)}));
  EXPECT_EQ(groups[1].ranks, std::vector<DeviceId>{DeviceId(1)});
}

TEST(DedupeTest, DifferentPeersDoNotShare) {
  // d0 receives from d1, d2 from d3: a rank runs a shared program by renaming
  // its own device only, so these programs differ.
  Module m = ParseAndInferOrDie(R"(
func @main(%b: tensor<4xf32, d1>, %d: tensor<4xf32, d3>) {
  %b0 = Send(%b) {device = d0}
  %d2 = Send(%d) {device = d2}
  return %b0, %d2
}
)");
  std::vector<RankGroup> groups = Groups(m);
  ASSERT_EQ(groups.size(), 4u);
}

TEST(DedupeTest, DifferentShapesDoNotShare) {
  Module m = ParseAndInferOrDie(R"(
func @main(%a: tensor<4xf32, d0>, %b: tensor<8xf32, d1>) {
  %x = Relu(%a)
  %y = Relu(%b)
  return %x, %y
}
)");
  EXPECT_EQ(Groups(m).size(), 2u);
}

}  // namespace
}  // namespace distir
