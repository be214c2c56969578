// InferTypes: annotations checked and refined, partial results on error,
// function-by-function inference.

#include "interp/infer_types.h"

#include <gtest/gtest.h>

#include "infer_test_util.h"

namespace distir {
namespace {

using testing::Fn;
using testing::InferredType;
using testing::ParseOrDie;
using testing::StatusIs;

TEST(InferTypesTest, WrongAnnotationIsReportedAtTheOp) {
  Module m = ParseOrDie(
      "func @f(%a: tensor<8x16xf32, d0>) {\n"
      "  %x = Relu(%a)\n"
      "  %y = Relu(%x) : tensor<8x32xf32, d0>\n"
      "  %z = Relu(%y)\n"
      "  return %z\n"
      "}\n");
  Status s = InferTypes(m);
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument,
                          "type of %y is annotated as tensor<8x32xf32, d0> but inferred as "
                          "tensor<8x16xf32, d0>"));
  EXPECT_EQ(s.loc().line, 3);
  // Values before the failing op are inferred; the rest are left as they were.
  const Function& f = *m.entry();
  EXPECT_EQ(f.LookupValue("x")->type().ToString(), "tensor<8x16xf32, d0>");
  EXPECT_EQ(f.LookupValue("y")->type().ToString(), "tensor<8x32xf32, d0>");
  EXPECT_TRUE(f.LookupValue("z")->type().is_unknown());
}

TEST(InferTypesTest, AnnotationMayRefineDynamicExtents) {
  const std::string text = Fn("%x: tensor<256x8x768xf32, d0>, %s: tensor<2xi64, d0>",
                              "  %r = Reshape(%x, %s) : tensor<2048x768xf32, d0>\n"
                              "  %y = Relu(%r)");
  // In the shape domain the Reshape is ?x?, the annotation makes it static and
  // later ops see the static shape.
  EXPECT_EQ(InferredType(text, "r", InferDomain::kShape), "tensor<2048x768xf32, d0>");
  EXPECT_EQ(InferredType(text, "y", InferDomain::kShape), "tensor<2048x768xf32, d0>");
  // An annotation cannot change the rank, dtype or device.
  EXPECT_EQ(InferredType(Fn("%x: tensor<8xf32, d0>, %s: tensor<2xi64, d0>",
                            "  %y = Reshape(%x, %s) : tensor<8xf32, d0>"),
                         "y", InferDomain::kShape),
            "error: type of %y is annotated as tensor<8xf32, d0> but inferred as "
            "tensor<?x?xf32, d0>");
}

TEST(InferTypesTest, ConcreteValuesGetTheirAbstractTypeInTheIR) {
  const std::string text = Fn("%x: tensor<4x6xf32, d0>",
                              "  %s = Shape(%x) : tensor<2xi64, d0>\n"
                              "  %y = Reshape(%x, %s)");
  EXPECT_EQ(InferredType(text, "s", InferDomain::kMixed), "tensor<2xi64, d0>");
  EXPECT_EQ(InferredType(text, "y", InferDomain::kMixed), "tensor<4x6xf32, d0>");
}

TEST(InferTypesTest, InfersEveryFunctionInDefinitionOrder) {
  Module m = testing::ParseAndInferOrDie(R"(
func @layer(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) {
  %y = MatMul(%x, %w)
  return %y
}
func @main(%x: tensor<8x16xf32, d0>, %w: tensor<16x4xf32, d0>) {
  %y = @layer(%x, %w)
  %z = Relu(%y)
  return %z
}
)");
  EXPECT_EQ(m.Lookup("layer")->LookupValue("y")->type().ToString(), "tensor<8x4xf32>");
  EXPECT_EQ(m.entry()->LookupValue("z")->type().ToString(), "tensor<8x4xf32, d0>");
}

TEST(InferTypesTest, InferenceIsIdempotent) {
  Module m = testing::ParseAndInferOrDie(
      Fn("%a: tensor<8x16xf32, d0>, %b: tensor<16xf32, d0>", "  %y = Add(%a, %b)"));
  EXPECT_OK(InferTypes(m));
  EXPECT_EQ(m.entry()->LookupValue("y")->type().ToString(), "tensor<8x16xf32, d0>");
}

// Inference stores types op by op while no value can be concrete, and hands
// the function to the interpreter at the first source of concrete values: the
// ops after a late Shape still get the mixed domain's static shapes, and the
// types stored before it are the interpreter's.
TEST(InferTypesTest, ALateSourceOfConcreteValuesStillGetsTheMixedDomain) {
  const std::string text =
      Fn("%x: tensor<4x6xf32, d0>, %w: tensor<6x6xf32, d0>",
         "  %h = MatMul(%x, %w)\n"
         "  %r = Relu(%h) : tensor<4x6xf32, d0>\n"
         "  %s = Shape(%r)\n"
         "  %t = Reshape(%h, %s)\n"
         "  %y = Add(%t, %r)");
  EXPECT_EQ(InferredType(text, "r", InferDomain::kMixed), "tensor<4x6xf32, d0>");
  EXPECT_EQ(InferredType(text, "t", InferDomain::kMixed), "tensor<4x6xf32, d0>");
  EXPECT_EQ(InferredType(text, "y", InferDomain::kMixed), "tensor<4x6xf32, d0>");
  EXPECT_EQ(InferredType(text, "t", InferDomain::kShape), "tensor<?x?xf32, d0>");
  // A wrong annotation before the source is reported as the interpreter does.
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x6xf32, d0>",
                            "  %r = Relu(%x) : tensor<4x7xf32, d0>\n"
                            "  %s = Shape(%r)\n"
                            "  %y = Reshape(%x, %s)"),
                         "y", InferDomain::kMixed),
            "error: type of %r is annotated as tensor<4x7xf32, d0> but inferred as "
            "tensor<4x6xf32, d0>");
}

// A call hands the function to the interpreter too: the callee's concrete
// values (here a Shape feeding a Reshape) give static shapes at the call.
TEST(InferTypesTest, CallsAfterAbstractOpsAreInterpreted) {
  Module m = testing::ParseAndInferOrDie(R"(
func @flat(%x: tensor<4x6xf32, d0>) {
  %s = Shape(%x)
  %y = Reshape(%x, %s)
  return %y
}
func @main(%a: tensor<4x6xf32, d0>) {
  %r = Relu(%a)
  %y = @flat(%r)
  %z = Neg(%y)
  return %z
}
)");
  EXPECT_EQ(m.entry()->LookupValue("r")->type().ToString(), "tensor<4x6xf32, d0>");
  EXPECT_EQ(m.entry()->LookupValue("z")->type().ToString(), "tensor<4x6xf32, d0>");
}

}  // namespace
}  // namespace distir
