// BufferPlan, CallMemoryCache and MemoryTracker on small typed functions.

#include "sim/memory_tracker.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace distir::sim {
namespace {

using distir::testing::ParseOrDie;

TEST(BufferPlanTest, BuffersDieAfterTheirLastUse) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%a) : tensor<1000xf32, d0>
  %c = Relu(%a) : tensor<1000xf32, d0>
  return %c
})");
  ASSERT_OK_AND_ASSIGN(BufferPlan plan, BufferPlan::Build(*m.entry(), &m, false, true, nullptr));
  ASSERT_EQ(plan.buffers().size(), 4u);  // x, a, b, c
  EXPECT_EQ(plan.buffers()[0].last_use, BufferPlan::kResident);
  EXPECT_EQ(plan.fresh_begin(0), 1);
  EXPECT_EQ(plan.fresh_end(0), 2);
  EXPECT_TRUE(plan.dying(0).empty());
  ASSERT_EQ(plan.dying(1).size(), 1u);  // b is never used: it dies with its op
  EXPECT_EQ(plan.dying(1)[0], 2);
  ASSERT_EQ(plan.dying(2).size(), 1u);  // a's last use
  EXPECT_EQ(plan.dying(2)[0], 1);
  EXPECT_EQ(plan.buffers()[3].last_use, BufferPlan::kResident);  // returned
}

TEST(BufferPlanTest, ViewsShareTheirInputsBuffers) {
  Module m = ParseOrDie(R"(
func @main(%p: tensor<4xf32, d0>, %q: tensor<4xf32, d3>) {
  %t = Tuple(%p, %q) : tuple<tensor<4xf32, d0>, tensor<4xf32, d3>>
  %a, %b = UnpackTuple(%t) : tensor<4xf32, d0>, tensor<4xf32, d3>
  %i = Identity(%b) : tensor<4xf32, d3>
  return %a, %i
})");
  ASSERT_OK_AND_ASSIGN(BufferPlan plan, BufferPlan::Build(*m.entry(), &m, false, true, nullptr));
  ASSERT_EQ(plan.buffers().size(), 2u);
  EXPECT_EQ(plan.buffers()[1].device, 3);  // indexed by device id
  const Function& fn = *m.entry();
  auto t = plan.buffers_of(fn.ops()[0]->result(0)->id());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 1);
  EXPECT_EQ(plan.buffers_of(fn.ops()[1]->result(1)->id())[0], 1);
  EXPECT_EQ(plan.buffers_of(fn.ops()[2]->result(0)->id())[0], 1);
}

TEST(CallMemoryCacheTest, SummarisesPeakAndAliases) {
  Module m = ParseOrDie(R"(
func @g(%x: tensor<1000xf32>, %y: tensor<10xf32>) {
  %a = Relu(%x) : tensor<1000xf32>
  %b = Relu(%a) : tensor<1000xf32>
  %i = Identity(%y) : tensor<10xf32>
  return %b, %i
})");
  CallMemoryCache cache(&m);
  ASSERT_OK_AND_ASSIGN(const CallMemory* g, cache.Get(*m.Lookup("g")));
  EXPECT_EQ(g->peak_bytes, 8000);  // a and b; the parameters are the caller's
  ASSERT_EQ(g->result_leaf_alias.size(), 2u);
  EXPECT_EQ(g->result_leaf_alias[0], -1);
  EXPECT_EQ(g->result_leaf_alias[1], 1);  // %y is the second parameter leaf
  ASSERT_OK_AND_ASSIGN(const CallMemory* again, cache.Get(*m.Lookup("g")));
  EXPECT_EQ(again, g);
}

TEST(MemoryTrackerTest, TracksPeakAndTimelinePerDevice) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>, %y: tensor<500xf32, d3>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%y) : tensor<500xf32, d3>
  return %a
})");
  ASSERT_OK_AND_ASSIGN(BufferPlan plan, BufferPlan::Build(*m.entry(), &m, false, true, nullptr));
  MemoryTracker tracker(plan, 4, true);
  EXPECT_EQ(tracker.live(0), 4000);
  EXPECT_EQ(tracker.live(3), 2000);
  tracker.OpStarts(0, false, 1.0);
  tracker.OpEnds(0, false, 2.0);
  tracker.OpStarts(1, false, 1.0);
  tracker.OpEnds(1, false, 3.0);
  EXPECT_EQ(tracker.peak(0), 8000);
  EXPECT_EQ(tracker.peak(3), 4000);
  EXPECT_EQ(tracker.live(3), 2000);  // %b is dead: freed when its op ends
  const std::vector<MemoryPoint>& d1 = tracker.timeline(3);
  ASSERT_EQ(d1.size(), 3u);
  EXPECT_EQ(d1[0].bytes, 2000);
  EXPECT_EQ(d1[1].time_s, 1.0);
  EXPECT_EQ(d1[1].bytes, 4000);
  EXPECT_EQ(d1[2].time_s, 3.0);
  EXPECT_EQ(d1[2].bytes, 2000);
}

}  // namespace
}  // namespace distir::sim
