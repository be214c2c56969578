#include "ir/parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "ir/lexer.h"
#include "ir/printer.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseOrDie;

// Parses `text`, prints it, and expects the print to be `text` itself, then
// checks that the printed form is a fixed point of Print(Parse(.)).
void ExpectCanonicalRoundTrip(const std::string& text) {
  ASSERT_OK_AND_ASSIGN(Module m, ParseModule(text, "rt.distir"));
  std::string printed = PrintModule(m);
  EXPECT_EQ(printed, text);
  ASSERT_OK_AND_ASSIGN(Module again, ParseModule(printed, "rt2.distir"));
  EXPECT_EQ(PrintModule(again), printed);
}

// Expects parsing `text` to fail at line:col of file "e.distir" with `message`.
void ExpectError(const std::string& text, int line, int col, const std::string& message) {
  StatusOr<Module> m = ParseModule(text, "e.distir");
  ASSERT_FALSE(m.ok()) << "parsed without error:\n" << text;
  const Status& s = m.status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), message) << text;
  EXPECT_EQ(s.loc().file, "e.distir");
  EXPECT_EQ(s.loc().line, line) << s.ToString();
  EXPECT_EQ(s.loc().col, col) << s.ToString();
}

constexpr char kPipeline[] =
    R"(func @dense(%w: tuple<tensor<16x16xf32>, tensor<16xf32>>, %x: tensor<8x16xf32>) {
  %A, %b = UnpackTuple(%w)
  %h = Gemm(%x, %A, %b)
  %a = Relu(%h) : tensor<8x16xf32>
  return %a
}

func @main(%w1: tuple<tensor<16x16xf32, d1>, tensor<16xf32, d1>>, %x: tensor<16x16xf32, d1>) {
  %x_1, %x_2 = Split(%x) {axis = 0}
  %as_1 = @dense(%w1, %x_1)
  %ar_1 = Send(%as_1) {device = d2}
  %c = Constant() {device = d1, value = dense<2xi64>[-1, 16]}
  %y1, %y2 = AllReduce(%x_1, %x_2)
  return %ar_1
}
)";

TEST(ParserTest, RoundTripsPipelineProgram) { ExpectCanonicalRoundTrip(kPipeline); }

TEST(ParserTest, RoundTripsTypedProgramWithAnonymousResults) {
  ExpectCanonicalRoundTrip(R"(func @f(%x: tensor<8x4xf32, d0>, %w: tensor<4x4xf32, d0>) {
  %dx, _ = MatMulGrad(%x, %w, %x) : tensor<8x4xf32, d0>, tensor<4x4xf32, d0>
  _, %b = Split(%x) {axis = 1, split = [2, 2]} : tensor<8x2xf32, d0>, tensor<8x2xf32, d0>
  return %dx, %b
}
)");
}

TEST(ParserTest, RoundTripsEmptyFunctionsAndEmptyReturn) {
  ExpectCanonicalRoundTrip(
      "func @f() {\n  return\n}\n\nfunc @g(%x: scalar<i64, d3>) {\n"
      "  return %x\n}\n");
}

TEST(ParserTest, RoundTripsEveryTypeForm) {
  ExpectCanonicalRoundTrip(
      R"(func @f(%a: tensor<8x512xf32, d0>, %b: tensor<f32, d1>, %c: tensor<?x768xf16>, %d: scalar<i64, d0>, %e: tuple<tensor<4x4xbf16, d0>, tuple<scalar<bool>, tensor<2xi32, d2>>>, %f: tuple<>, %g: tensor<0x3xf64, d10>, %h: ?) {
  return %a, %b, %c, %d, %e, %f, %g, %h
}
)");
}

TEST(ParserTest, RoundTripsEveryAttributeKind) {
  ExpectCanonicalRoundTrip(
      R"(func @f(%x: tensor<4x6xf32, d0>, %y: tensor<4x6xf32, d1>) {
  %g = Gemm(%x, %x) {alpha = 2.5e-05, beta = 1.0, transA = 0, transB = 1}
  %e = Gelu(%g) {approximate = "tanh \"quoted\"\n"}
  %c = Cast(%e) {to = bf16}
  %s = Split(%x) {axis = -1, split = []}
  %t = Transpose(%x) {perm = [1, 0]}
  %k = Constant() {device = d0, value = dense<2x3xi64>[1, 2, 3, 4, 5, 6]}
  %z = Constant() {value = dense<f32>[0.5]}
  %n = Constant() {value = dense<0xf32>[]}
  %b1, %b2 = Broadcast(%x) {devices = [d1, d2]}
  %a, %m, %v = Adam(%x, %x, %x, %x) {beta1 = 0.9, epsilon = 1e-08, lr = inf, step = 9223372036854775807}
  %u = SGD(%x, %x) {lr = -0.0}
  %r = AllToAll(%x, %y) {concat_axis = 1, split_axis = 0}
  return %s
}
)");
}

TEST(ParserTest, StoresAttributesWithTheirKinds) {
  Module m = ParseOrDie(R"(
    func @f(%x: tensor<4x6xf32, d0>) {
      %g = Gemm(%x, %x) {alpha = 2, transB = 1}
      %s = Squeeze(%x) {axes = []}
      %b1, %b2 = Broadcast(%x) {devices = [d1, d2]}
      %c = Constant() {value = dense<2xf32>[1, 2.5]}
      return %g
    })");
  const Function& fn = *m.entry();
  const Op& gemm = *fn.ops()[0];
  ASSERT_NE(gemm.FindAttr("alpha"), nullptr);
  // An integer literal where a float is expected is stored as a float.
  EXPECT_EQ(gemm.FindAttr("alpha")->type(), AttrType::kFloat);
  EXPECT_EQ(gemm.GetFloat("alpha", 0), 2.0);
  EXPECT_EQ(gemm.GetInt("transB", 0), 1);
  // `[]` takes the list kind the op expects.
  EXPECT_EQ(fn.ops()[1]->FindAttr("axes")->type(), AttrType::kInts);
  EXPECT_EQ(fn.ops()[2]->FindAttr("devices")->AsDevices(),
            (std::vector<DeviceId>{DeviceId(1), DeviceId(2)}));
  const DenseTensor& t = fn.ops()[3]->FindAttr("value")->AsTensor();
  EXPECT_EQ(t.dtype, DType::kF32);
  EXPECT_EQ(t.shape, std::vector<int64_t>{2});
  EXPECT_EQ(t.values, (std::vector<double>{1.0, 2.5}));
}

TEST(ParserTest, AcceptsCommentsWhitespaceAndLeftOutTypes) {
  Module m = ParseOrDie(R"(
    // A comment before the function.
    func   @f ( %x : tensor< 4xf32 ,d0 > ) {   // trailing comment
      %y=Relu(%x)
      return %y // done
    })");
  const Function& fn = *m.entry();
  EXPECT_EQ(fn.name(), "f");
  EXPECT_EQ(fn.param(0)->type(), Type::Tensor(DType::kF32, {4}, DeviceId(0)));
  EXPECT_TRUE(fn.ops()[0]->result(0)->type().is_unknown());
  EXPECT_EQ(PrintModule(m), "func @f(%x: tensor<4xf32, d0>) {\n  %y = Relu(%x)\n  return %y\n}\n");
}

TEST(ParserTest, BuildsOpsWithLocationsKindsAndTypes) {
  Module m = ParseOrDie(kPipeline);
  ASSERT_EQ(m.functions().size(), 2u);
  const Function& dense = *m.functions()[0];
  EXPECT_TRUE(dense.IsDeviceGeneric());
  EXPECT_EQ(dense.loc().line, 1);
  const Op& relu = *dense.ops()[2];
  EXPECT_EQ(relu.kind(), OpKind::kRelu);
  EXPECT_EQ(relu.result(0)->type(), Type::Tensor(DType::kF32, {8, 16}));
  EXPECT_EQ(relu.loc().line, 4);
  EXPECT_EQ(relu.loc().col, 3);
  const Op& unpack = *dense.ops()[0];
  // Each result carries its own token's location.
  EXPECT_EQ(unpack.result(1)->loc().line, 2);
  EXPECT_EQ(unpack.result(1)->loc().col, 7);
  const Function& main = *m.entry();
  EXPECT_EQ(main.name(), "main");
  const Op& call = *main.ops()[1];
  EXPECT_TRUE(call.is_call());
  EXPECT_EQ(call.callee(), "dense");
  EXPECT_EQ(call.input(0), main.param(0));
  EXPECT_EQ(main.returns().size(), 1u);
  EXPECT_EQ(main.returns()[0]->name(), "ar_1");
  EXPECT_EQ(main.return_loc().line, 14);
}

TEST(ParserTest, ParsesValueNamesWithDigitsAndDots) {
  Module m = ParseOrDie(R"(func @f(%211: tensor<2xf32, d0>) {
  %3114.1 = Relu(%211)
  %_x.y_ = Relu(%3114.1)
  return %_x.y_
})");
  EXPECT_EQ(m.entry()->ops()[1]->input(0)->name(), "3114.1");
}

TEST(ParserTest, ParsesGeneratedHundredThousandOpProgram) {
  constexpr int kOps = 100000;
  std::string text = "func @big(%x0: tensor<8x8xf32, d0>) {\n";
  for (int i = 1; i <= kOps; ++i) {
    text += "  %x" + std::to_string(i) + " = Add(%x" + std::to_string(i - 1) + ", %x0)" +
            " : tensor<8x8xf32, d0>\n";
  }
  text += "  return %x" + std::to_string(kOps) + "\n}\n";
  auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(Module m, ParseModule(text, "big.distir"));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(m.entry()->ops().size(), static_cast<size_t>(kOps));
  EXPECT_EQ(m.entry()->ops().back()->loc().line, kOps + 1);
  EXPECT_EQ(PrintModule(m), text);
  // Generous for a loaded debug sanitizer build; a release build takes well under 1 s.
  EXPECT_LT(seconds, 60.0);
}

TEST(ParserTest, ParseTypeReadsOneType) {
  ASSERT_OK_AND_ASSIGN(Type t, ParseType("tuple<tensor<4x?xf32, d0>, scalar<i64>>"));
  EXPECT_EQ(t, Type::Tuple({Type::Tensor(DType::kF32, {4, kDynamicDim}, DeviceId(0)),
                            Type::Scalar(DType::kI64)}));
  EXPECT_THAT(
      ParseType("tensor<4xf32> junk"),
      testing::StatusIs(StatusCode::kInvalidArgument, "expected end of type but found 'junk'"));
}

TEST(ParserErrorTest, UndefinedValue) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(%x)\n  return %y\n}\n", 2, 13,
              "undefined value %x");
}

TEST(ParserErrorTest, UseBeforeDefinition) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(%z)\n  %z = Relu(%a)\n  return %y\n}\n", 2,
              13, "undefined value %z");
}

TEST(ParserErrorTest, Redefinition) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(%a)\n  %y = Relu(%a)\n  return %y\n}\n", 3,
              3, "redefinition of value %y (first defined at 2:3)");
}

TEST(ParserErrorTest, RedefinitionOfParameter) {
  ExpectError("func @f(%a: tensor<4xf32>, %a: tensor<4xf32>) {\n  return %a\n}\n", 1, 28,
              "redefinition of value %a (first defined at 1:9)");
}

TEST(ParserErrorTest, RedefinitionWithinOneResultList) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %p, %p = Split(%a)\n  return %p\n}\n", 2, 7,
              "redefinition of value %p (first defined at 2:3)");
}

TEST(ParserErrorTest, UnknownOp) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Matmul(%a, %a)\n  return %y\n}\n", 2, 8,
              "unknown op 'Matmul'");
}

TEST(ParserErrorTest, WrongInputArity) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = MatMul(%a, %a, %a)\n  return %y\n}\n", 2, 8,
              "MatMul takes 2 inputs, got 3");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Gemm(%a)\n  return %y\n}\n", 2, 8,
              "Gemm takes 2 to 3 inputs, got 1");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Sum()\n  return %y\n}\n", 2, 8,
              "Sum takes at least 1 input, got 0");
}

TEST(ParserErrorTest, WrongResultArity) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y, %z = Relu(%a)\n  return %y\n}\n", 2, 12,
              "Relu returns 1 result, got 2");
}

TEST(ParserErrorTest, UnknownAttribute) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a, %a) {axs = 0}\n  return %y\n}\n", 2,
              24, "unknown attribute 'axs' for op Concat");
}

TEST(ParserErrorTest, AttributeOfWrongKind) {
  ExpectError(
      "func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a, %a) {axis = \"0\"}\n  return %y\n}\n", 2, 31,
      "attribute 'axis' of Concat must be int, got string");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a, %a) {axis = 1.5}\n  return %y\n}\n",
              2, 31, "attribute 'axis' of Concat must be int, got float");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a, %a) {axis = []}\n  return %y\n}\n",
              2, 31, "attribute 'axis' of Concat must be int, got list");
}

TEST(ParserErrorTest, DuplicateAttribute) {
  ExpectError(
      "func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a, %a) {axis = 0, axis = 1}\n  return %y\n}\n",
      2, 34, "duplicate attribute 'axis'");
}

TEST(ParserErrorTest, MissingRequiredAttribute) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a, %a)\n  return %y\n}\n", 2, 8,
              "missing required attribute 'axis' of Concat");
}

TEST(ParserErrorTest, TruncatedFile) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(%a", 2, 15,
              "expected ')' but found end of file");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(%a)\n", 2, 16,
              "expected a statement or 'return' but found end of file");
  ExpectError("func @f(%a: tensor<4x", 1, 22, "expected a dtype after '4x'");
  ExpectError("func", 1, 5, "expected a function name such as '@main' but found end of file");
}

TEST(ParserErrorTest, BadTypes) {
  ExpectError("func @f(%a: tensor<4xf31>) {\n  return %a\n}\n", 1, 22, "unknown dtype 'f31'");
  ExpectError("func @f(%a: tensor<-3x4xf32>) {\n  return %a\n}\n", 1, 20,
              "bad extent '-3' in tensor type");
  ExpectError("func @f(%a: tensor<4x-3xf32>) {\n  return %a\n}\n", 1, 22,
              "expected a dtype after '4x'");
  ExpectError("func @f(%a: tensor<99999999999999999999xf32>) {\n  return %a\n}\n", 1, 20,
              "bad extent '99999999999999999999' in tensor type");
  ExpectError("func @f(%a: tensor<4xf32, x3>) {\n  return %a\n}\n", 1, 27, "bad device 'x3'");
  ExpectError("func @f(%a: tensor<4xf32, d99999999999>) {\n  return %a\n}\n", 1, 27,
              "bad device 'd99999999999'");
  ExpectError("func @f(%a: scalar<f7>) {\n  return %a\n}\n", 1, 20, "unknown dtype 'f7'");
  ExpectError("func @f(%a: vector<4xf32>) {\n  return %a\n}\n", 1, 13,
              "expected a type but found 'vector'");
  ExpectError("func @f(%a: tensor<4294967296x4294967296xf32>) {\n  return %a\n}\n", 1, 20,
              "tensor of shape [4294967296x4294967296] is too large: its size overflows 64 bits");
}

TEST(ParserErrorTest, DeepTupleNestingIsCapped) {
  std::string type;
  for (int i = 0; i < 100; ++i) type += "tuple<";
  ExpectError("func @f(%a: " + type, 1, 13 + 64 * 6, "tuple types nest deeper than 64 levels");
}

TEST(ParserErrorTest, ResultTypeCountMismatch) {
  ExpectError(
      "func @f(%a: tensor<4xf32>) {\n  %p, %q = Split(%a) : tensor<2xf32>, tensor<2xf32>, "
      "tensor<2xf32>\n  return %p\n}\n",
      2, 24, "Split has 2 results but 3 types were given");
  ExpectError(
      "func @f(%a: tensor<4xf32>) {\n  %p, %q = Split(%a) : tensor<2xf32>\n  return %p\n}\n", 2, 24,
      "Split has 2 results but 1 type was given");
}

TEST(ParserErrorTest, Calls) {
  ExpectError("func @main(%a: tensor<4xf32>) {\n  %y = @g(%a)\n  return %y\n}\n", 2, 8,
              "undefined function @g");
  ExpectError(
      "func @main(%a: tensor<4xf32>) {\n  %y = @g(%a)\n  return %y\n}\n\n"
      "func @g(%b: tensor<4xf32>) {\n  return %b\n}\n",
      2, 8, "call of @g must follow its definition (at 6:6)");
  ExpectError("func @g(%a: tensor<4xf32>) {\n  %y = @g(%a)\n  return %y\n}\n", 2, 8,
              "recursive call of @g: a function may only call functions defined before it");
  ExpectError(
      "func @g(%b: tensor<4xf32>) {\n  return %b\n}\n"
      "func @main(%a: tensor<4xf32>) {\n  %y = @g(%a, %a)\n  return %y\n}\n",
      5, 8, "@g takes 1 argument, got 2");
  ExpectError(
      "func @g(%b: tensor<4xf32>) {\n  return %b\n}\n"
      "func @main(%a: tensor<4xf32>) {\n  %y, %z = @g(%a)\n  return %y\n}\n",
      5, 12, "@g returns 1 result, got 2");
}

TEST(ParserErrorTest, RedefinitionOfFunction) {
  ExpectError("func @g() {\n  return\n}\nfunc @g() {\n  return\n}\n", 4, 6,
              "redefinition of function @g (first defined at 1:1)");
}

TEST(ParserErrorTest, ReturnMustBeLast) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  return %a\n  %y = Relu(%a)\n}\n", 3, 3,
              "statement after return in function @f: return must be the last statement");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(%a)\n}\n", 3, 1,
              "function @f has no return statement");
}

TEST(ParserErrorTest, AnonymousResultCannotBeUsed) {
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Relu(_)\n  return %y\n}\n", 2, 13,
              "the anonymous result '_' cannot be used");
}

TEST(ParserErrorTest, BadLiterals) {
  ExpectError(
      "func @f(%a: tensor<4xf32>) {\n  %y = Concat(%a) {axis = 99999999999999999999}\n"
      "  return %y\n}\n",
      2, 27, "integer literal '99999999999999999999' is out of range");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = SGD(%a, %a) {lr = 1e999}\n  return %y\n}\n", 2,
              26, "float literal '1e999' is out of range");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = SGD(%a, %a) {lr = 1.2.3}\n  return %y\n}\n", 2,
              26, "bad number '1.2.3'");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Send(%a) {device = x3}\n  return %y\n}\n", 2,
              27, "bad device 'x3'");
  ExpectError(
      "func @f(%a: tensor<4xf32>) {\n  %y = Transpose(%a) {perm = [1, \"a\"]}\n  return %y\n}\n", 2,
      34, "list mixes int and string elements");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Transpose(%a) {perm = [f32]}\n  return %y\n}\n",
              2, 31, "lists of dtype are not supported");
  ExpectError("func @f() {\n  %c = Constant() {value = dense<3xi64>[1, 2]}\n  return %c\n}\n", 2,
              28, "dense tensor of shape [3] needs 3 values, got 2");
  ExpectError("func @f() {\n  %c = Constant() {value = dense<2xi64>[1, 2.5]}\n  return %c\n}\n", 2,
              44, "dense<i64> values must be integers, got 2.5");
  ExpectError("func @f() {\n  %c = Constant() {value = dense<?xi64>[1]}\n  return %c\n}\n", 2, 34,
              "bad extent '?' in dense tensor");
  ExpectError("func @f() {\n  %c = Constant() {value = foo}\n  return %c\n}\n", 2, 28,
              "expected an attribute value but found 'foo'");
}

TEST(ParserErrorTest, LexicalErrors) {
  ExpectError("func @f() {\n  $\n}\n", 2, 3, "unexpected character '$'");
  ExpectError(std::string("func @f() {\n  \x01\n}\n"), 2, 3, "unexpected character '\\x01'");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Gelu(%a) {approximate = \"tanh\n", 2, 32,
              "unterminated string literal");
  ExpectError("func @f(%a: tensor<4xf32>) {\n  %y = Gelu(%a) {approximate = \"a\\qb\"}\n", 2, 34,
              "unknown escape '\\q' in string literal");
  ExpectError("func @(", 1, 6, "expected a name after '@'");
}

TEST(LexerTest, SplitsWordsNumbersAndPunctuation) {
  Lexer lexer("%x_1 = f(-1, 2.5e-05, 8x16xf32, \"s\\\"\")");
  std::vector<std::string> texts;
  for (Token t = lexer.Next(); t.kind != TokenKind::kEof; t = lexer.Next()) {
    texts.emplace_back(t.text);
  }
  EXPECT_EQ(texts, (std::vector<std::string>{"%x_1", "=", "f", "(", "-1", ",", "2.5e-05", ",",
                                             "8x16xf32", ",", "\"s\\\"\"", ")"}));
}

TEST(LexerTest, UnquotesEscapes) {
  Lexer lexer(R"("a\"b\\c\nd\te")");
  Token t = lexer.Next();
  ASSERT_EQ(t.kind, TokenKind::kString);
  EXPECT_EQ(UnquoteString(t), "a\"b\\c\nd\te");
}

}  // namespace
}  // namespace distir
