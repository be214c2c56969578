// The mixed abstract/concrete domain: the paper's Figure 4 chain, the concrete
// rules on small integer tensors, and the mixed rules in which a concrete shape
// argument gives an abstract tensor a static shape.

#include "interp/mixed_domain.h"

#include <gtest/gtest.h>

#include "infer_test_util.h"
#include "interp/interpreter.h"

namespace distir {
namespace {

using testing::Fn;
using testing::InferredType;
using testing::ParseOrDie;

// Paper Figure 4, with %3114 a constant [-1] and a Gemm consuming the Reshape.
constexpr char kFigure4[] = R"(
func @gpt2_snippet(%211: tensor<256x8x768xf32, d0>, %w: tensor<768x768xf32, d0>) {
  %3114 = Constant() {device = d0, value = dense<1xi64>[-1]}
  %218 = Shape(%211)
  %219 = Constant() {device = d0, value = dense<i64>[2]}
  %220 = Gather(%218, %219) {axis = 0}
  %223 = Unsqueeze(%220) {axes = [0]}
  %224 = Concat(%3114, %223) {axis = 0}
  %225 = Reshape(%211, %224)
  %226 = Gemm(%225, %w)
  return %226
}
)";

// Interprets the entry function of `text` in the mixed domain on its declared
// parameter types, and returns the value of %`name` as text.
std::string MixedValueOf(std::string_view text, const std::string& name) {
  Module m = ParseOrDie(text);
  const Function& fn = *m.entry();
  std::vector<MixedValue> args;
  for (const auto& p : fn.params()) args.emplace_back(p->type());
  StatusOr<std::vector<MixedValue>> values = InterpretValues(m, fn, args, DefaultMixedDomain());
  if (!values.ok()) return "error: " + values.status().message();
  return (*values)[fn.LookupValue(name)->id()].ToString();
}

TEST(MixedDomainTest, Figure4ChainResolvesTheReshapeInTheMixedDomain) {
  EXPECT_EQ(MixedValueOf(kFigure4, "3114"), "dense<1xi64>[-1] on d0");
  EXPECT_EQ(MixedValueOf(kFigure4, "218"), "dense<3xi64>[256, 8, 768] on d0");
  EXPECT_EQ(MixedValueOf(kFigure4, "220"), "dense<i64>[768] on d0");
  EXPECT_EQ(MixedValueOf(kFigure4, "223"), "dense<1xi64>[768] on d0");
  EXPECT_EQ(MixedValueOf(kFigure4, "224"), "dense<2xi64>[-1, 768] on d0");
  EXPECT_EQ(MixedValueOf(kFigure4, "225"), "tensor<2048x768xf32, d0>");
  EXPECT_EQ(InferredType(kFigure4, "225", InferDomain::kMixed), "tensor<2048x768xf32, d0>");
  EXPECT_EQ(InferredType(kFigure4, "226", InferDomain::kMixed), "tensor<2048x768xf32, d0>");
  // The concrete values are typed like their abstractions in the IR.
  EXPECT_EQ(InferredType(kFigure4, "224", InferDomain::kMixed), "tensor<2xi64, d0>");
}

TEST(MixedDomainTest, Figure4ChainStaysDynamicInTheShapeDomain) {
  EXPECT_EQ(InferredType(kFigure4, "220", InferDomain::kShape), "tensor<i64, d0>");
  EXPECT_EQ(InferredType(kFigure4, "224", InferDomain::kShape), "tensor<2xi64, d0>");
  EXPECT_EQ(InferredType(kFigure4, "225", InferDomain::kShape), "tensor<?x?xf32, d0>");
  EXPECT_EQ(InferredType(kFigure4, "226", InferDomain::kShape), "tensor<?x768xf32, d0>");
}

TEST(MixedDomainTest, ConcreteArithmeticBroadcasts) {
  const std::string text = Fn("",
                              "  %a = Constant() {device = d0, value = dense<2x1xi64>[1, 2]}\n"
                              "  %b = Constant() {device = d0, value = dense<3xi64>[10, 20, 30]}\n"
                              "  %s = Add(%a, %b)\n"
                              "  %m = Mul(%a, %b)\n"
                              "  %d = Div(%b, %a)\n"
                              "  %n = Neg(%b)\n"
                              "  %e = Equal(%s, %m)\n"
                              "  %l = Less(%a, %b)\n"
                              "  %y = Where(%l, %a, %b)",
                              "%y");
  EXPECT_EQ(MixedValueOf(text, "s"), "dense<2x3xi64>[11, 21, 31, 12, 22, 32] on d0");
  EXPECT_EQ(MixedValueOf(text, "m"), "dense<2x3xi64>[10, 20, 30, 20, 40, 60] on d0");
  EXPECT_EQ(MixedValueOf(text, "d"), "dense<2x3xi64>[10, 20, 30, 5, 10, 15] on d0");
  EXPECT_EQ(MixedValueOf(text, "n"), "dense<3xi64>[-10, -20, -30] on d0");
  EXPECT_EQ(MixedValueOf(text, "e"), "dense<2x3xbool>[0, 0, 0, 0, 0, 0] on d0");
  EXPECT_EQ(MixedValueOf(text, "y"), "dense<2x3xi64>[1, 1, 1, 2, 2, 2] on d0");
}

TEST(MixedDomainTest, IntegerDivisionByZeroIsAnError) {
  const std::string text = Fn("",
                              "  %a = Constant() {device = d0, value = dense<1xi64>[4]}\n"
                              "  %b = Constant() {device = d0, value = dense<1xi64>[0]}\n"
                              "  %y = Div(%a, %b)");
  EXPECT_EQ(MixedValueOf(text, "y"), "error: Div divides an integer by zero");
}

TEST(MixedDomainTest, ConcreteIndexingAndShapeOps) {
  const std::string text =
      Fn("",
         "  %c = Constant() {device = d0, value = dense<2x3xi64>[1, 2, 3, 4, 5, 6]}\n"
         "  %i = Constant() {device = d0, value = dense<2xi64>[-1, 0]}\n"
         "  %g = Gather(%c, %i) {axis = 1}\n"
         "  %st = Constant() {device = d0, value = dense<1xi64>[1]}\n"
         "  %en = Constant() {device = d0, value = dense<1xi64>[100]}\n"
         "  %ax = Constant() {device = d0, value = dense<1xi64>[1]}\n"
         "  %sl = Slice(%c, %st, %en, %ax)\n"
         "  %cat = Concat(%c, %c) {axis = 0}\n"
         "  %u = Unsqueeze(%c, %ax)\n"
         "  %sq = Squeeze(%u, %ax)\n"
         "  %r = ReduceSum(%c) {axes = [1], keepdims = 0}\n"
         "  %mean = ReduceMean(%c) {axes = [0], keepdims = 1}\n"
         "  %p, %q = Split(%c) {axis = 1, split = [1, 2]}\n"
         "  %f = Cast(%c) {to = f32}\n"
         "  %y = Identity(%g)");
  EXPECT_EQ(MixedValueOf(text, "g"), "dense<2x2xi64>[3, 1, 6, 4] on d0");
  EXPECT_EQ(MixedValueOf(text, "sl"), "dense<2x2xi64>[2, 3, 5, 6] on d0");
  EXPECT_EQ(MixedValueOf(text, "cat"), "dense<4x3xi64>[1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6] on d0");
  EXPECT_EQ(MixedValueOf(text, "u"), "dense<2x1x3xi64>[1, 2, 3, 4, 5, 6] on d0");
  EXPECT_EQ(MixedValueOf(text, "sq"), "dense<2x3xi64>[1, 2, 3, 4, 5, 6] on d0");
  EXPECT_EQ(MixedValueOf(text, "r"), "dense<2xi64>[6, 15] on d0");
  EXPECT_EQ(MixedValueOf(text, "mean"), "dense<1x3xi64>[2, 3, 4] on d0");
  EXPECT_EQ(MixedValueOf(text, "q"), "dense<2x2xi64>[2, 3, 5, 6] on d0");
  // Float results are not kept concrete.
  EXPECT_EQ(MixedValueOf(text, "f"), "tensor<2x3xf32, d0>");
  EXPECT_EQ(MixedValueOf(text, "y"), "dense<2x2xi64>[3, 1, 6, 4] on d0");
}

TEST(MixedDomainTest, GatherIndexOutOfRangeIsAnError) {
  const std::string text = Fn("",
                              "  %c = Constant() {device = d0, value = dense<3xi64>[1, 2, 3]}\n"
                              "  %i = Constant() {device = d0, value = dense<i64>[3]}\n"
                              "  %y = Gather(%c, %i)");
  EXPECT_EQ(MixedValueOf(text, "y"),
            "error: Gather index 3 is out of range for axis 0 of extent 3");
}

TEST(MixedDomainTest, RangeAndConstantOfShape) {
  const std::string text = Fn("",
                              "  %a = Constant() {device = d0, value = dense<i64>[2]}\n"
                              "  %b = Constant() {device = d0, value = dense<i64>[11]}\n"
                              "  %c = Constant() {device = d0, value = dense<i64>[3]}\n"
                              "  %r = Range(%a, %b, %c)\n"
                              "  %s = Constant() {device = d0, value = dense<2xi64>[2, 2]}\n"
                              "  %z = ConstantOfShape(%s) {value = dense<1xi64>[7]}\n"
                              "  %y = ConstantOfShape(%s)",
                              "%y");
  // [start, limit) in steps of delta: 2, 5, 8 (11 is excluded).
  EXPECT_EQ(MixedValueOf(text, "r"), "dense<3xi64>[2, 5, 8] on d0");
  EXPECT_EQ(MixedValueOf(text, "z"), "dense<2x2xi64>[7, 7, 7, 7] on d0");
  EXPECT_EQ(MixedValueOf(text, "y"), "tensor<2x2xf32, d0>");
}

TEST(MixedDomainTest, ConcreteShapeArgumentsGiveAbstractTensorsStaticShapes) {
  const std::string program =
      Fn("%x: tensor<4x6xf32, d0>, %v: tensor<4x1xf32, d0>",
         "  %t = Constant() {device = d0, value = dense<3xi64>[0, 3, -1]}\n"
         "  %rs = Reshape(%x, %t)\n"
         "  %shape = Constant() {device = d0, value = dense<3xi64>[5, 1, 6]}\n"
         "  %ex = Expand(%v, %shape)\n"
         "  %st = Constant() {device = d0, value = dense<2xi64>[1, -4]}\n"
         "  %en = Constant() {device = d0, value = dense<2xi64>[3, 100]}\n"
         "  %sl = Slice(%x, %st, %en)\n"
         "  %ax = Constant() {device = d0, value = dense<2xi64>[0, 2]}\n"
         "  %us = Unsqueeze(%x, %ax)\n"
         "  %sq = Squeeze(%us, %ax)\n"
         "  %sp = Constant() {device = d0, value = dense<2xi64>[2, 4]}\n"
         "  %p, %q = Split(%x, %sp) {axis = 1}\n"
         "  %r1 = Constant() {device = d0, value = dense<1xi64>[1]}\n"
         "  %red = ReduceSum(%x, %r1) {keepdims = 0}\n"
         "  %y = Identity(%rs)",
         "%y");
  EXPECT_EQ(MixedValueOf(program, "rs"), "tensor<4x3x2xf32, d0>");
  EXPECT_EQ(MixedValueOf(program, "ex"), "tensor<5x4x6xf32, d0>");
  EXPECT_EQ(MixedValueOf(program, "sl"), "tensor<2x4xf32, d0>");
  EXPECT_EQ(MixedValueOf(program, "us"), "tensor<1x4x1x6xf32, d0>");
  EXPECT_EQ(MixedValueOf(program, "sq"), "tensor<4x6xf32, d0>");
  EXPECT_EQ(MixedValueOf(program, "q"), "tensor<4x4xf32, d0>");
  EXPECT_EQ(MixedValueOf(program, "red"), "tensor<4xf32, d0>");
  // The same program in the shape domain leaves these extents dynamic.
  EXPECT_EQ(InferredType(program, "rs", InferDomain::kShape), "tensor<?x?x?xf32, d0>");
  EXPECT_EQ(InferredType(program, "sl", InferDomain::kShape), "tensor<?x?xf32, d0>");
}

TEST(MixedDomainTest, ReshapeChecksTheElementCount) {
  const std::string text = Fn("%x: tensor<4x6xf32, d0>",
                              "  %t = Constant() {device = d0, value = dense<2xi64>[5, 5]}\n"
                              "  %y = Reshape(%x, %t)");
  EXPECT_EQ(MixedValueOf(text, "y"),
            "error: Reshape must keep the element count: input [4x6] has 24 elements, target "
            "[5, 5] has 25");
}

TEST(MixedDomainTest, ReshapeFollowsOnnxZeroAndMinusOne) {
  auto reshape = [](const std::string& target, const std::string& attrs = "") {
    return MixedValueOf(
        Fn("%x: tensor<4x6xf32, d0>", "  %t = Constant() {device = d0, value = " + target +
                                          "}\n"
                                          "  %y = Reshape(%x, %t)" +
                                          attrs),
        "y");
  };
  EXPECT_EQ(reshape("dense<1xi64>[-1]"), "tensor<24xf32, d0>");
  EXPECT_EQ(reshape("dense<3xi64>[2, 0, -1]"), "tensor<2x6x2xf32, d0>");  // 0 copies the 6
  EXPECT_EQ(reshape("dense<2xi64>[-1, -1]"),
            "error: Reshape target may contain at most one -1, got [-1, -1]");
  EXPECT_EQ(reshape("dense<2xi64>[0, 5]", " {allowzero = 1}"),
            "error: Reshape must keep the element count: input [4x6] has 24 elements, target "
            "[0, 5] has 0");
  EXPECT_EQ(reshape("dense<2xi64>[-1, 5]"),
            "error: Reshape cannot infer the -1 in [-1, 5] from an input of 24 elements");
}

TEST(MixedDomainTest, SliceClampsBoundsAndSupportsNegativeSteps) {
  const std::string text =
      Fn("",
         "  %c = Constant() {device = d0, value = dense<5xi64>[1, 2, 3, 4, 5]}\n"
         "  %s = Constant() {device = d0, value = dense<1xi64>[-1]}\n"
         "  %e = Constant() {device = d0, value = dense<1xi64>[-6]}\n"
         "  %a = Constant() {device = d0, value = dense<1xi64>[0]}\n"
         "  %st = Constant() {device = d0, value = dense<1xi64>[-2]}\n"
         "  %y = Slice(%c, %s, %e, %a, %st)");
  EXPECT_EQ(MixedValueOf(text, "y"), "dense<3xi64>[5, 3, 1] on d0");
}

TEST(MixedDomainTest, ConcreteValuesFlowThroughDeviceGenericCalls) {
  const std::string text = R"(
func @flatten(%x: tensor<4x6xf32>) {
  %s = Shape(%x)
  %i = Constant() {value = dense<i64>[1]}
  %n = Gather(%s, %i) {axis = 0}
  %u = Unsqueeze(%n) {axes = [0]}
  %m = Constant() {value = dense<1xi64>[-1]}
  %t = Concat(%m, %u) {axis = 0}
  %y = Reshape(%x, %t)
  return %y
}
func @main(%x: tensor<4x6xf32, d1>) {
  %y = @flatten(%x)
  return %y
}
)";
  EXPECT_EQ(MixedValueOf(text, "y"), "tensor<4x6xf32, d1>");
  EXPECT_EQ(InferredType(text, "y", InferDomain::kMixed), "tensor<4x6xf32, d1>");
  EXPECT_EQ(InferredType(text, "y", InferDomain::kShape), "tensor<?x?xf32, d1>");
}

TEST(MixedDomainTest, ConcreteShapeArgumentsMustBeValidExtents) {
  const std::string text = Fn("%x: tensor<4x1xf32, d0>",
                              "  %t = Constant() {device = d0, value = dense<2xi64>[4, -3]}\n"
                              "  %y = Expand(%x, %t)");
  EXPECT_EQ(MixedValueOf(text, "y"),
            "error: Expand shape must have extents >= 0 and fit in int64, got [4x-3]");
}

TEST(MixedDomainTest, LargeOrFloatTensorsAreAbstracted) {
  EXPECT_FALSE(MixedValue::Make(DenseTensor{DType::kF32, {2}, {1, 2}}, DeviceId(0)).is_concrete());
  DenseTensor big{
      DType::kI64, {kMaxConcreteElements + 1}, std::vector<double>(kMaxConcreteElements + 1, 1.0)};
  MixedValue v = MixedValue::Make(big, DeviceId(1));
  EXPECT_FALSE(v.is_concrete());
  EXPECT_EQ(v.ToString(), "tensor<1025xi64, d1>");
  EXPECT_TRUE(MixedValue::Make(DenseTensor{DType::kI64, {2}, {1, 2}}, DeviceId(0)).is_concrete());
}

TEST(MixedDomainTest, ConcreteValuesKeepTheirDeviceThroughSend) {
  const std::string text = Fn("",
                              "  %a = Constant() {device = d0, value = dense<2xi64>[3, 4]}\n"
                              "  %y = Send(%a) {device = d1}");
  EXPECT_EQ(MixedValueOf(text, "y"), "dense<2xi64>[3, 4] on d1");
}

}  // namespace
}  // namespace distir
