// The memory planner (src/backend/memory_plan.h): on random interval sets, no
// two buffers live at the same time overlap in the arena, offsets are
// aligned, and the arena is at least the live peak; and MemoryPlan::Build on
// a small program follows the buffer rules (parameters resident, aliases
// shared, a result freed after its last use so its space is reused).

#include "backend/memory_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "testing/test_util.h"

namespace distir::backend {
namespace {

using ::distir::testing::ParseAndInferOrDie;

int64_t Aligned(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

// Every pair of buffers live at a common op index has disjoint aligned extents.
void ExpectNoOverlap(const std::vector<PlannedBuffer>& buffers, int64_t arena) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlannedBuffer& a = buffers[i];
    ASSERT_EQ(a.offset % kArenaAlignment, 0) << "buffer " << i;
    ASSERT_GE(a.offset, 0) << "buffer " << i;
    ASSERT_LE(a.offset + Aligned(a.bytes), arena) << "buffer " << i;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlannedBuffer& b = buffers[j];
      const bool same_time = a.first <= b.last && b.first <= a.last;
      const bool same_bytes = a.offset < b.offset + Aligned(b.bytes) &&
                              b.offset < a.offset + Aligned(a.bytes);
      ASSERT_FALSE(same_time && same_bytes)
          << "buffers " << i << " [" << a.first << "," << a.last << "] at " << a.offset << "+"
          << a.bytes << " and " << j << " [" << b.first << "," << b.last << "] at " << b.offset
          << "+" << b.bytes;
    }
  }
}

// The live peak by brute force: at every op index, the bytes of the buffers live there.
int64_t BruteLivePeak(const std::vector<PlannedBuffer>& buffers) {
  int64_t peak = 0;
  for (int32_t t = 0; t <= 64; ++t) {
    int64_t live = 0;
    for (const PlannedBuffer& b : buffers) live += (b.first <= t && t <= b.last) ? b.bytes : 0;
    peak = std::max(peak, live);
  }
  return peak;
}

TEST(MemoryPlanTest, RandomIntervalsNeverOverlapAndArenaCoversLivePeak) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::uniform_int_distribution<int> count(0, 40);
    std::uniform_int_distribution<int32_t> start(0, 50);
    std::uniform_int_distribution<int32_t> length(0, 14);
    // Sizes from a few bytes to 64 KiB, with many equal sizes (ties in the order).
    std::uniform_int_distribution<int> size_class(0, 5);
    std::uniform_int_distribution<int64_t> bytes(0, 65536);
    std::vector<PlannedBuffer> buffers(static_cast<size_t>(count(rng)));
    for (PlannedBuffer& b : buffers) {
      b.first = start(rng);
      b.last = b.first + length(rng);
      b.bytes = size_class(rng) == 0 ? 256 : bytes(rng);
      b.offset = -1;
    }
    const int64_t peak = LivePeakBytes(buffers);
    const int64_t arena = PackBuffers(buffers);
    ASSERT_EQ(peak, BruteLivePeak(buffers)) << "trial " << trial;
    ASSERT_GE(arena, peak) << "trial " << trial;
    // No more than every buffer side by side.
    int64_t all = 0;
    for (const PlannedBuffer& b : buffers) all += Aligned(b.bytes);
    ASSERT_LE(arena, all) << "trial " << trial;
    ExpectNoOverlap(buffers, arena);
    if (HasFatalFailure()) return;
  }
}

TEST(MemoryPlanTest, DisjointLifetimesShareOneSlotAndEmptyPlanIsZero) {
  std::vector<PlannedBuffer> none;
  EXPECT_EQ(PackBuffers(none), 0);
  EXPECT_EQ(LivePeakBytes(none), 0);
  // Three buffers one after another: one 128-byte slot; a fourth live with all
  // of them goes beside it.
  std::vector<PlannedBuffer> chain = {{100, 0, 1, -1}, {128, 2, 3, -1}, {64, 4, 5, -1},
                                      {10, 0, 5, -1}};
  EXPECT_EQ(LivePeakBytes(chain), 138);
  EXPECT_EQ(PackBuffers(chain), 192);
  EXPECT_EQ(chain[1].offset, 0);
  EXPECT_EQ(chain[0].offset, 0);
  EXPECT_EQ(chain[2].offset, 0);
  EXPECT_EQ(chain[3].offset, 128);
}

TEST(MemoryPlanTest, BuildFollowsTheSimulatorsBufferRules) {
  // x and w are resident; h dies after Relu; Identity's r shares y's buffer,
  // and r is returned, so y's buffer lives to the end.
  Module m = ParseAndInferOrDie(R"(
    func @f(%x: tensor<4x4xf32, d0>, %w: tensor<4x4xf32, d0>) {
      %h = MatMul(%x, %w) : tensor<4x4xf32, d0>
      %a = Relu(%h) : tensor<4x4xf32, d0>
      %y = MatMul(%a, %w) : tensor<4x4xf32, d0>
      %r = Identity(%y) : tensor<4x4xf32, d0>
      return %r
    })");
  const Function& fn = *m.entry();
  ASSERT_OK_AND_ASSIGN(MemoryPlan plan, MemoryPlan::Build(fn));
  // Buffers: x, w (resident), h [0,1], a [1,2], y [2,4] (returned via r).
  ASSERT_EQ(plan.buffers().size(), 5u);
  const Op& identity = *fn.ops()[3];
  EXPECT_EQ(plan.buffer_of(identity.result(0)->id()), plan.buffer_of(identity.input(0)->id()));
  // Peak: x + w + a + y at op 2 (or x + w + h + a at op 1) = 4 x 64 B.
  EXPECT_EQ(plan.live_peak_bytes(), 256);
  ExpectNoOverlap(plan.buffers(), plan.arena_bytes());
  // h is dead when y is born, so y can take h's place: the arena is the peak.
  EXPECT_EQ(plan.arena_bytes(), 256);
}

}  // namespace
}  // namespace distir::backend
