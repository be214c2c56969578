#include "support/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace distir {
namespace {

TEST(CheckedMathTest, ProductsThatFitAndThoseThatDoNot) {
  EXPECT_EQ(CheckedMul(3, 4), 12);
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);  // 2^63
  EXPECT_EQ(CheckedMul(-(int64_t{1} << 32), int64_t{1} << 31), INT64_MIN);
  EXPECT_EQ(CheckedMul(4, int64_t{1} << 62), std::nullopt);  // wraps to 0
  EXPECT_EQ(CheckedAdd(INT64_MAX - 1, 1), INT64_MAX);
  EXPECT_EQ(CheckedAdd(INT64_MAX, 1), std::nullopt);
  EXPECT_EQ(CheckedProduct({}), 1);
  EXPECT_EQ(CheckedProduct({2, 3, 7}), 42);
  EXPECT_EQ(CheckedProduct({int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31}), std::nullopt);
  EXPECT_EQ(CheckedProduct({int64_t{1} << 40, int64_t{1} << 40, 0}), std::nullopt);  // documented
}

}  // namespace
}  // namespace distir
