// The shipped examples type-check, and printing their typed form is a fixed
// point: `distir opt --print-types` output fed back through `distir opt`
// reproduces it byte for byte.

#include <gtest/gtest.h>

#include <filesystem>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/str_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

TEST(ExamplesTest, TypedPrintIsAFixedPoint) {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::SourcePath("data/examples"))) {
    if (entry.path().extension() != ".distir") continue;
    ++count;
    std::string text;
    ASSERT_TRUE(ReadFileToString(entry.path().string(), &text));
    SCOPED_TRACE(entry.path().string());
    ASSERT_OK_AND_ASSIGN(Module m, ParseModule(text, entry.path().string()));
    ASSERT_OK(VerifyModule(m));
    ASSERT_OK(InferTypes(m));
    std::string typed = PrintModule(m);
    ASSERT_OK_AND_ASSIGN(Module again, ParseModule(typed, "typed"));
    ASSERT_OK(VerifyModule(again));
    ASSERT_OK(InferTypes(again));
    EXPECT_EQ(PrintModule(again), typed);
    // Every value is typed.
    for (const auto& fn : again.functions()) {
      for (const auto& op : fn->ops()) {
        for (const auto& r : op->results()) EXPECT_FALSE(r->type().is_unknown()) << r->Ref();
      }
    }
  }
  EXPECT_GE(count, 5);
}

}  // namespace
}  // namespace distir
