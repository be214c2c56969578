// ParallelFor covers [0, n) exactly once in chunks of at least min_chunk.

#include "support/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace distir {
namespace {

TEST(ParallelForTest, CoversEveryIndexOnce) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::mutex m;
    std::vector<int64_t> sizes;
    ParallelFor(n, 100, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
      std::lock_guard<std::mutex> lock(m);
      sizes.push_back(end - begin);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)], 1) << n << " " << i;
    int64_t total = 0, short_chunks = 0;
    for (int64_t s : sizes) {
      total += s;
      short_chunks += s < 100 ? 1 : 0;
    }
    EXPECT_EQ(total, n);
    EXPECT_LE(short_chunks, 1) << "only the last chunk may be shorter than min_chunk";
    EXPECT_EQ(sizes.empty(), n == 0);
  }
}

TEST(ParallelForTest, SmallRangesRunOnTheCallingThread) {
  int calls = 0;  // not atomic: a second thread would be a data race (TSan) or a wrong count
  ParallelFor(50, 100, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 50);
  });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace distir
