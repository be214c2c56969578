// The claims of search/unit_queue.h: additions to one slice's word, by its
// owner and by ranks that take from it alike, claim every unit exactly once,
// in order.

#include "search/unit_queue.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

namespace distir::search {
namespace {

// However many ranks add to a slice's word, in whatever order (the word
// counts them all), the additions claim positions 0..n-1 in turn, and every
// addition after the n-th claims nothing.
TEST(UnitQueueTest, AdditionsClaimEveryUnitOnceInOrder) {
  const size_t n = 9;
  uint64_t word = 0;
  for (size_t i = 0; i < n + 5; ++i) {
    const std::optional<size_t> at = ClaimedPosition(word++, n);
    if (i < n) {
      ASSERT_TRUE(at.has_value()) << i;
      EXPECT_EQ(*at, i);
    } else {
      EXPECT_EQ(at, std::nullopt) << i;
    }
  }
  EXPECT_EQ(ClaimedPosition(0, 0), std::nullopt);
}

// What is left is the units after those taken, and their cost.
TEST(UnitQueueTest, LeftAreTheUnitsNotTaken) {
  Slice s;
  s.units = {{0}, {1, 2}, {3}, {4}};
  s.costs = {8, 4, 2, 1};
  auto left = [&](uint64_t word) {
    const UnitsLeft l = LeftOf(s, word);
    return std::pair<size_t, double>(l.units, l.cost);
  };
  EXPECT_EQ(left(0), std::make_pair(size_t{4}, 15.0));
  EXPECT_EQ(left(1), std::make_pair(size_t{3}, 7.0));
  EXPECT_EQ(left(2), std::make_pair(size_t{2}, 3.0));
  EXPECT_EQ(left(4), std::make_pair(size_t{0}, 0.0));
  EXPECT_EQ(left(5), std::make_pair(size_t{0}, 0.0));
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
