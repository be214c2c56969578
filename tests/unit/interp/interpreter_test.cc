// The interpreter: side-table values, calls, and device-generic callees.

#include "interp/interpreter.h"

#include <gtest/gtest.h>

#include <string>

#include "infer_test_util.h"
#include "interp/shape_domain.h"

namespace distir {
namespace {

using testing::InferredType;
using testing::ParseOrDie;
using testing::StatusIs;

// A device-generic layer called once on d1 and once on d2 (after a Send).
constexpr char kGenericCalls[] = R"(
func @dense(%w: tuple<tensor<16x16xf32>, tensor<16xf32>>, %x: tensor<8x16xf32>) {
  %A, %b = UnpackTuple(%w)
  %h = Gemm(%x, %A, %b)
  %a = Relu(%h)
  return %a
}

func @main(%w1: tuple<tensor<16x16xf32, d1>, tensor<16xf32, d1>>,
           %w2: tuple<tensor<16x16xf32, d2>, tensor<16xf32, d2>>, %x: tensor<8x16xf32, d1>) {
  %h1 = @dense(%w1, %x)
  %s = Send(%h1) {device = d2}
  %h2 = @dense(%w2, %s)
  return %h2
}
)";

TEST(InterpreterTest, DeviceGenericCalleeRunsOnTheCallersDevice) {
  EXPECT_EQ(InferredType(kGenericCalls, "h1"), "tensor<8x16xf32, d1>");
  EXPECT_EQ(InferredType(kGenericCalls, "s"), "tensor<8x16xf32, d2>");
  EXPECT_EQ(InferredType(kGenericCalls, "h2"), "tensor<8x16xf32, d2>");
  // The callee's own values are typed without devices.
  Module m = testing::ParseAndInferOrDie(kGenericCalls);
  EXPECT_EQ(m.Lookup("dense")->LookupValue("h")->type().ToString(), "tensor<8x16xf32>");
}

TEST(InterpreterTest, InterpretReturnsTheReturnedValues) {
  Module m = ParseOrDie(kGenericCalls);
  const Function& main = *m.entry();
  std::vector<Type> args;
  for (const auto& p : main.params()) args.push_back(p->type());
  ASSERT_OK_AND_ASSIGN(std::vector<Type> out, Interpret(m, main, args, DefaultShapeDomain()));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ToString(), "tensor<8x16xf32, d2>");
  // Interpretation leaves the IR untouched.
  EXPECT_TRUE(main.LookupValue("h2")->type().is_unknown());
}

TEST(InterpreterTest, InterpretValuesFillsTheSideTableById) {
  Module m = ParseOrDie(kGenericCalls);
  const Function& main = *m.entry();
  std::vector<Type> args;
  for (const auto& p : main.params()) args.push_back(p->type());
  ASSERT_OK_AND_ASSIGN(std::vector<Type> values,
                       InterpretValues(m, main, args, DefaultShapeDomain()));
  ASSERT_EQ(static_cast<int>(values.size()), main.num_values());
  EXPECT_EQ(values[main.LookupValue("x")->id()].ToString(), "tensor<8x16xf32, d1>");
  EXPECT_EQ(values[main.LookupValue("s")->id()].ToString(), "tensor<8x16xf32, d2>");
}

TEST(InterpreterTest, DeviceGenericCallWithArgumentsOnTwoDevicesIsAnError) {
  Module m = ParseOrDie(R"(
func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %c = Add(%a, %b)
  return %c
}
func @main(%a: tensor<4xf32, d1>, %b: tensor<4xf32, d2>) {
  %y = @add(%a, %b)
  return %y
}
)");
  EXPECT_THAT(InferTypes(m, {InferDomain::kShape}),
              StatusIs(StatusCode::kInvalidArgument,
                       "arguments of call @add of a device-generic function must share one "
                       "device, got d1 and d2"));
}

TEST(InterpreterTest, ArgumentThatDoesNotFitTheParameterIsAnError) {
  Module m = ParseOrDie(R"(
func @g(%a: tensor<4xf32, d0>) {
  %c = Relu(%a)
  return %c
}
func @main(%a: tensor<8xf32, d0>) {
  %y = @g(%a)
  return %y
}
)");
  EXPECT_THAT(InferTypes(m, {InferDomain::kShape}),
              StatusIs(StatusCode::kInvalidArgument,
                       "argument 0 of call @g does not fit parameter %a: expected "
                       "tensor<4xf32, d0>, got tensor<8xf32, d0>"));
}

TEST(InterpreterTest, CalleeErrorsAreLocatedInTheCalleeWithANote) {
  Module m = ParseOrDie(R"(func @g(%a: tensor<?x4xf32>) {
  %k = Constant() {value = dense<3x4xf32>[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]}
  %c = Add(%a, %k)
  return %c
}
func @main(%a: tensor<2x4xf32, d0>) {
  %y = @g(%a)
  return %y
}
)");
  // @g alone is fine (its dynamic extent may be 3); called on 2x4 it is not.
  const Function& main = *m.entry();
  StatusOr<std::vector<Type>> out =
      Interpret(m, main, std::vector<Type>{main.param(0)->type()}, DefaultShapeDomain());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Add operands cannot be broadcast together: shapes [2x4] and [3x4] differ at "
            "dimension 0 of the result (2 vs 3)");
  EXPECT_EQ(out.status().loc().line, 3);
  ASSERT_EQ(out.status().notes().size(), 1u);
  EXPECT_EQ(out.status().notes()[0].substr(0, 14), "in call of @g ");
}

TEST(InterpreterTest, CalleeMayReturnOneValueTwice) {
  Module m = testing::ParseAndInferOrDie(R"(
func @twice(%a: tensor<4xf32>) {
  %b = Relu(%a)
  return %b, %b
}
func @main(%a: tensor<4xf32, d3>) {
  %y, %z = @twice(%a)
  return %y, %z
}
)");
  EXPECT_EQ(m.entry()->LookupValue("y")->type().ToString(), "tensor<4xf32, d3>");
  EXPECT_EQ(m.entry()->LookupValue("z")->type().ToString(), "tensor<4xf32, d3>");
  const Function& main = *m.entry();
  ASSERT_OK_AND_ASSIGN(std::vector<Type> out,
                       Interpret(m, main, std::vector<Type>{main.param(0)->type()},
                                 DefaultShapeDomain()));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].ToString(), "tensor<4xf32, d3>");
}

TEST(InterpreterTest, WrongNumberOfArgumentsIsAnError) {
  Module m = ParseOrDie(kGenericCalls);
  EXPECT_THAT(Interpret(m, *m.entry(), std::vector<Type>{}, DefaultShapeDomain()),
              StatusIs(StatusCode::kInvalidArgument, "function @main takes 3 arguments, got 0"));
}

// Issue 20: N functions, each calling the one before it; @main calls the last.
// With `bad`, @f0 types alone (dynamic extent) but not on the 4 elements that
// @main passes down, so the error is N calls deep.
std::string CallChain(int n, bool bad) {
  const std::string param = bad ? "tensor<?xf32>" : "tensor<4xf32>";
  std::string text = "func @f0(%x: " + param + ") {\n";
  text += bad ? "  %c = Constant() {value = dense<2xf32>[1.0, 2.0]}\n  %y = Add(%x, %c)\n"
              : "  %y = Relu(%x)\n";
  text += "  return %y\n}\n";
  for (int i = 1; i < n; ++i) {
    text += "func @f" + std::to_string(i) + "(%x: " + param + ") {\n  %y = @f" +
            std::to_string(i - 1) + "(%x)\n  return %y\n}\n";
  }
  return text + "func @main(%x: tensor<4xf32, d0>) {\n  %y = @f" + std::to_string(n - 1) +
         "(%x)\n  return %y\n}\n";
}

// 100,000 nested calls: far past what one native stack frame per call level
// allows (8 MiB), and linear (the memo answers each function's call once).
TEST(InterpreterTest, CallChainsDeeperThanTheNativeStackRun) {
  Module m = testing::ParseAndInferOrDie(CallChain(100000, false));
  EXPECT_EQ(m.entry()->LookupValue("y")->type().ToString(), "tensor<4xf32, d0>");
  EXPECT_EQ(m.Lookup("f99999")->LookupValue("y")->type().ToString(), "tensor<4xf32>");
}

TEST(InterpreterTest, ErrorsDeepInACallChainNameBothEndsOfTheChain) {
  Module m = ParseOrDie(CallChain(100, true));
  const Function& main = *m.entry();
  StatusOr<std::vector<Type>> out =
      Interpret(m, main, std::vector<Type>{main.param(0)->type()}, DefaultShapeDomain());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().loc().line, 3);  // the Add in @f0
  const std::vector<std::string>& notes = out.status().notes();
  ASSERT_EQ(notes.size(), 21u);  // 10 innermost, the gap, 10 outermost
  EXPECT_EQ(notes[0].substr(0, 15), "in call of @f0 ");
  EXPECT_EQ(notes[9].substr(0, 15), "in call of @f9 ");
  EXPECT_EQ(notes[10], "... 80 more calls ...");
  EXPECT_EQ(notes[11].substr(0, 16), "in call of @f90 ");
  EXPECT_EQ(notes[20].substr(0, 16), "in call of @f99 ");
}

}  // namespace
}  // namespace distir
