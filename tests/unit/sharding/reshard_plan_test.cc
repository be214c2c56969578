// Reshard plans (src/sharding/reshard_plan.h): the primitive per case (G35)
// and the order that shrinks data first.

#include "sharding/reshard_plan.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace distir::sharding {
namespace {

using ::distir::testing::ParseOrDie;
using ::distir::testing::StatusIs;

Sharding S(std::vector<std::vector<std::string>> dims, std::vector<std::string> partial = {}) {
  Sharding s;
  s.mesh = "m";
  s.dims = std::move(dims);
  s.partial = std::move(partial);
  return s;
}

const Mesh& AbcMesh() {
  static const Mesh mesh("m", {{"a", 2}, {"b", 2}, {"c", 2}});
  return mesh;
}

std::vector<OpKind> Kinds(const std::vector<ReshardStep>& steps) {
  std::vector<OpKind> kinds;
  for (const ReshardStep& s : steps) kinds.push_back(s.kind);
  return kinds;
}

TEST(ReshardPlanTest, EqualShardingsNeedNothing) {
  ASSERT_OK_AND_ASSIGN(auto steps, PlanReshard(S({{"a"}, {}}), S({{"a"}, {}}), AbcMesh()));
  EXPECT_TRUE(steps.empty());
}

TEST(ReshardPlanTest, PartialToSplitIsAReduceScatter) {
  ASSERT_OK_AND_ASSIGN(auto steps, PlanReshard(S({{}, {}}, {"a"}), S({{"a"}, {}}), AbcMesh()));
  ASSERT_EQ(Kinds(steps), std::vector<OpKind>{OpKind::kMeshReduceScatter});
  EXPECT_EQ(steps[0].axis, 0);
  EXPECT_EQ(steps[0].result, S({{"a"}, {}}));
}

TEST(ReshardPlanTest, MovingAnAxisBetweenDimsIsAnAllToAll) {
  ASSERT_OK_AND_ASSIGN(auto steps, PlanReshard(S({{"a"}, {}}), S({{}, {"a"}}), AbcMesh()));
  ASSERT_EQ(Kinds(steps), std::vector<OpKind>{OpKind::kMeshAllToAll});
  EXPECT_EQ(steps[0].split_axis, 1);
  EXPECT_EQ(steps[0].concat_axis, 0);
}

TEST(ReshardPlanTest, SlicesOverFreeAxesComeBeforeGathers) {
  // [{a}, {}] -> [{}, {b}]: slice dim 1 over the unused b first (the gather
  // then moves half the bytes), then gather dim 0 over a.
  ASSERT_OK_AND_ASSIGN(auto steps, PlanReshard(S({{"a"}, {}}), S({{}, {"b"}}), AbcMesh()));
  EXPECT_EQ(Kinds(steps), (std::vector<OpKind>{OpKind::kMeshSlice, OpKind::kMeshAllGather}));
}

TEST(ReshardPlanTest, RemovingANonSuffixAxisGathersTheAxesAfterIt) {
  // G35's negative case: [{a}, {b, c}] -> [{a}, {c}] is not one gather over b.
  ASSERT_OK_AND_ASSIGN(auto steps,
                       PlanReshard(S({{"a"}, {"b", "c"}}), S({{"a"}, {"c"}}), AbcMesh()));
  ASSERT_EQ(Kinds(steps), (std::vector<OpKind>{OpKind::kMeshAllGather, OpKind::kMeshSlice}));
  EXPECT_EQ(steps[0].axes, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(steps[1].axes, std::vector<std::string>{"c"});
}

TEST(ReshardPlanTest, AReplicatedValueCannotBecomePartial) {
  EXPECT_THAT(PlanReshard(S({{}}), S({{}}, {"a"}), AbcMesh()).status(),
              StatusIs(StatusCode::kUnimplemented, "would have to become partial"));
}

}  // namespace
}  // namespace distir::sharding
