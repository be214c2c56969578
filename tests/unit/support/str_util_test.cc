#include "support/str_util.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace distir {
namespace {

TEST(StrUtilTest, FormatDoubleRoundTripsAndLooksLikeAFloat) {
  EXPECT_EQ(FormatDouble(1.0), "1.0");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(2.5e-05), "2.5e-05");
  EXPECT_EQ(FormatDouble(-3.0), "-3.0");
  for (double v : {1.0 / 3.0, 1e300, 6.02214076e23, -1e-300}) {
    EXPECT_EQ(std::strtod(FormatDouble(v).c_str(), nullptr), v);
  }
}

TEST(StrUtilTest, QuoteStringEscapes) {
  EXPECT_EQ(QuoteString("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
}

TEST(StrUtilTest, JoinInts) { EXPECT_EQ(JoinInts({8, 16, 4}, "x"), "8x16x4"); }

}  // namespace
}  // namespace distir
