// MicrobatchScaling (sharding/retype_template.h) on hand-written templates:
// what it learns and writes, and how a refusal names the integer at fault
// (the walk spells that place only when a check fails).

#include "sharding/retype_template.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

using ::distir::testing::ParseOrDie;
using ::testing::HasSubstr;

// A template whose batch extent is `rows`, with an integer attribute (the
// Softmax's axis, 0 or 1): one parameter, one op.
GridTemplate Template(int rows, int axis) {
  GridTemplate t;
  t.module = ParseOrDie("func @f(%x: tensor<" + std::to_string(rows) +
                        "x8xf32>) {\n  %y = Softmax(%x) {axis = " + std::to_string(axis) +
                        "}\n  return %y\n}\n");
  return t;
}

TEST(MicrobatchScalingTest, WritesTheIntegersProportionalToTheMicroBatch) {
  ASSERT_OK_AND_ASSIGN(MicrobatchScaling s,
                       MicrobatchScaling::Learn(Template(4, 1), 1, Template(8, 1), 2));
  ASSERT_OK_AND_ASSIGN(GridTemplate at3, s.Retype(Template(4, 1), 3));
  EXPECT_EQ(PrintModule(at3.module), PrintModule(Template(12, 1).module));
}

TEST(MicrobatchScalingTest, ARefusalNamesTheValueOrTheAttribute) {
  StatusOr<MicrobatchScaling> extent =
      MicrobatchScaling::Learn(Template(4, 1), 1, Template(6, 1), 2);
  EXPECT_EQ(extent.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(extent.status().message(), HasSubstr("micro-batches 1 and 2: @f %x is not c * m"));
  StatusOr<MicrobatchScaling> attr = MicrobatchScaling::Learn(Template(4, 1), 1, Template(8, 0), 2);
  EXPECT_THAT(attr.status().message(),
              HasSubstr("micro-batches 1 and 2: @f op 0 (Softmax) axis is not c * m"));
  ASSERT_OK_AND_ASSIGN(MicrobatchScaling s,
                       MicrobatchScaling::Learn(Template(3, 1), 2, Template(6, 1), 4));
  StatusOr<GridTemplate> odd = s.Retype(Template(3, 1), 1);
  EXPECT_THAT(odd.status().message(),
              HasSubstr("micro-batch 1 from 2: @f %x = c * m is not whole"));
}

}  // namespace
}  // namespace distir::sharding
