// The claims of search/unit_queue.h: additions to one slice's word, from the
// front (its owner) and the back (ranks that steal), in any interleaving,
// claim every unit exactly once.

#include "search/unit_queue.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

namespace distir::search {
namespace {

constexpr uint64_t kFront = kTakeFront, kBack = kTakeBack;

// Every interleaving of 7 front and 7 back additions on a slice of 9 units
// (bit i of `pattern`: the i-th addition is from the back): the claims cover
// positions 0..8 once each, the front's ascending, the back's descending, and
// every addition after the ninth claims nothing.
TEST(UnitQueueTest, FrontAndBackClaimEveryUnitOnce) {
  const size_t n = 9;
  for (uint32_t pattern = 0; pattern < (1u << 14); ++pattern) {
    if (__builtin_popcount(pattern) != 7) continue;
    uint64_t word = 0;
    std::vector<int> claimed(n, 0);
    int valid = 0;
    for (int i = 0; i < 14; ++i) {
      const bool back = (pattern >> i) & 1u;
      const std::optional<size_t> at = ClaimedPosition(word, n, back);
      word += back ? kBack : kFront;
      if (!at) continue;
      ASSERT_LT(*at, n);
      ++claimed[*at];
      ++valid;
    }
    EXPECT_EQ(valid, static_cast<int>(n)) << pattern;
    for (size_t p = 0; p < n; ++p) EXPECT_EQ(claimed[p], 1) << "position " << p << ", " << pattern;
  }
}

TEST(UnitQueueTest, ClaimsFromEitherEnd) {
  EXPECT_EQ(ClaimedPosition(0, 3, false), 0u);
  EXPECT_EQ(ClaimedPosition(0, 3, true), 2u);
  EXPECT_EQ(ClaimedPosition(kFront + kBack, 3, false), 1u);
  EXPECT_EQ(ClaimedPosition(kFront + kBack, 3, true), 1u);
  EXPECT_EQ(ClaimedPosition(2 * kFront + kBack, 3, true), std::nullopt);
  EXPECT_EQ(ClaimedPosition(0, 0, false), std::nullopt);
}

// What is left is the units between the front and the back taken, and their cost.
TEST(UnitQueueTest, LeftAreTheUnitsNotTaken) {
  Slice s;
  s.units = {{0}, {1, 2}, {3}, {4}};
  s.costs = {8, 4, 2, 1};
  auto left = [&](uint64_t word) {
    const UnitsLeft l = LeftOf(s, word);
    return std::pair<size_t, double>(l.units, l.cost);
  };
  EXPECT_EQ(left(0), std::make_pair(size_t{4}, 15.0));
  EXPECT_EQ(left(kFront), std::make_pair(size_t{3}, 7.0));
  EXPECT_EQ(left(kFront + kBack), std::make_pair(size_t{2}, 6.0));
  EXPECT_EQ(left(2 * kFront + 2 * kBack), std::make_pair(size_t{0}, 0.0));
  EXPECT_EQ(left(5 * kFront), std::make_pair(size_t{0}, 0.0));
}

// One process (no MPI): the queue hands out its slice front to back, and
// what it has not handed out yet is what the progress lines count as left.
TEST(UnitQueueTest, NotTakenAreTheUnitsNotHandedOut) {
  Slice s;
  s.units = {{0}, {1, 2}, {3}};
  s.costs = {4, 2, 1};
  UnitQueue queue({s}, MPI_COMM_NULL);
  ASSERT_EQ(queue.NotTaken().size(), 3u);
  std::optional<UnitQueue::Taken> first = queue.Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->own);
  EXPECT_EQ(*first->unit, std::vector<int64_t>{0});
  const std::vector<const std::vector<int64_t>*> left = queue.NotTaken();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(*left[0], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(*left[1], std::vector<int64_t>{3});
  ASSERT_TRUE(queue.Next().has_value());
  ASSERT_TRUE(queue.Next().has_value());
  EXPECT_TRUE(queue.NotTaken().empty());
  EXPECT_FALSE(queue.Next().has_value());
}

}  // namespace
}  // namespace distir::search
