#include "ir/printer.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseOrDie;

Type T(std::vector<int64_t> shape, int device) {
  return Type::Tensor(DType::kF32, std::move(shape), DeviceId(device));
}

TEST(PrinterTest, PrintsOpWithoutTypesWhenAnyResultIsUntyped) {
  Function fn("f");
  Value* x = fn.AddParam("x", T({4, 6}, 0));
  Op* split = fn.AddOp(OpKind::kSplit, {x}, {{"axis", 1}}, {"a", "b"});
  split->result(0)->set_type(T({4, 3}, 0));
  EXPECT_EQ(PrintOp(*split), "%a, %b = Split(%x) {axis = 1}");
  split->result(1)->set_type(T({4, 3}, 0));
  EXPECT_EQ(PrintOp(*split),
            "%a, %b = Split(%x) {axis = 1} : tensor<4x3xf32, d0>, tensor<4x3xf32, d0>");
}

TEST(PrinterTest, PrintsAttributesSortedByName) {
  Function fn("f");
  Value* x = fn.AddParam("x", T({4, 4}, 0));
  AttrMap attrs = {{"transB", 1}, {"alpha", 0.5}, {"beta", 2.0}};
  Op* gemm = fn.AddOp(OpKind::kGemm, {x, x}, attrs, {"y"});
  EXPECT_EQ(PrintOp(*gemm), "%y = Gemm(%x, %x) {alpha = 0.5, beta = 2.0, transB = 1}");
}

TEST(PrinterTest, PrintsEveryAttributeKind) {
  Function fn("f");
  DenseTensor shape{DType::kI64, {2}, {-1, 16}};
  DenseTensor scalar{DType::kF32, {}, {0.25}};
  AttrMap attrs = {{"a", int64_t{-3}},
                   {"b", 1e-5},
                   {"c", "s\"q"},
                   {"d", std::vector<int64_t>{1, 2}},
                   {"e", std::vector<double>{1.0, 0.5}},
                   {"f", std::vector<std::string>{"x", "y"}},
                   {"g", DeviceId(3)},
                   {"h", std::vector<DeviceId>{DeviceId(0), DeviceId(1)}},
                   {"i", DType::kBF16},
                   {"j", shape},
                   {"k", scalar},
                   {"l", std::vector<int64_t>{}}};
  // Calls are the one kind whose attributes the registry does not constrain.
  Op* op = fn.AddOp(OpKind::kCall, {}, attrs, {"y"}, {}, "g");
  EXPECT_EQ(PrintOp(*op),
            "%y = @g() {a = -3, b = 1e-05, c = \"s\\\"q\", d = [1, 2], e = [1.0, 0.5], "
            "f = [\"x\", \"y\"], g = d3, h = [d0, d1], i = bf16, j = dense<2xi64>[-1, 16], "
            "k = dense<f32>[0.25], l = []}");
}

TEST(PrinterTest, PrintsAnonymousResultsAndEmptyReturn) {
  Function fn("f");
  Value* x = fn.AddParam("x", T({8, 4}, 1));
  Value* w = fn.AddParam("w", T({4, 4}, 1));
  fn.AddOp(OpKind::kMatMulGrad, {x, w, x}, {}, {"", "dw"});
  fn.SetReturns({});
  EXPECT_EQ(PrintFunction(fn),
            "func @f(%x: tensor<8x4xf32, d1>, %w: tensor<4x4xf32, d1>) {\n"
            "  _, %dw = MatMulGrad(%x, %w, %x)\n"
            "  return\n"
            "}\n");
}

TEST(PrinterTest, SeparatesFunctionsWithOneBlankLine) {
  Module m = ParseOrDie(
      "func @a() {\n  return\n}\n\n\n// comment\nfunc @b(%x: tensor<f32>) {\n  return %x\n}");
  EXPECT_EQ(PrintModule(m),
            "func @a() {\n  return\n}\n\nfunc @b(%x: tensor<f32>) {\n  return %x\n}\n");
}

TEST(PrinterTest, PrintedFloatsParseBackExactly) {
  for (double v : {0.1, 1.0 / 3.0, 1e300, 5e-324, -2.5e-05, 123456789.0}) {
    Function fn("f");
    Value* x = fn.AddParam("x", T({4}, 0));
    fn.AddOp(OpKind::kSGD, {x, x}, {{"lr", v}}, {"y"});
    fn.SetReturns({});
    std::string text = PrintFunction(fn);
    ASSERT_OK_AND_ASSIGN(Module m, ParseModule(text));
    EXPECT_EQ(m.entry()->ops()[0]->GetFloat("lr", 0), v) << text;
    EXPECT_EQ(PrintModule(m), text);
  }
}

}  // namespace
}  // namespace distir
