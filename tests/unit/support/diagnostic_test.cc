#include "support/diagnostic.h"

#include <gtest/gtest.h>

namespace distir {
namespace {

TEST(DiagnosticTest, ShowsSourceLineAndCaret) {
  std::string source = "func @f() {\n  %y = Relu(%x)\n}\n";
  Status s = InvalidArgument(SourceLoc{"m.distir", 2, 13, ""}) << "undefined value %x";
  EXPECT_EQ(RenderDiagnostic(s, source),
            "m.distir:2:13: error: undefined value %x\n"
            "  %y = Relu(%x)\n"
            "            ^\n");
}

TEST(DiagnosticTest, WithoutSourceIsOneLine) {
  Status s = InvalidArgument(SourceLoc{"m.distir", 0, 0, ""}) << "cannot read file";
  EXPECT_EQ(RenderDiagnostic(s), "m.distir: error: cannot read file\n");
}

TEST(DiagnosticTest, LineOfOutOfRangeIsEmpty) {
  EXPECT_EQ(LineOf("a\nb", 2), "b");
  EXPECT_EQ(LineOf("a\nb", 3), "");
  EXPECT_EQ(LineOf("a\nb", 0), "");
}

}  // namespace
}  // namespace distir
