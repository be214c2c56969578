// One hand-checked case per shape rule, and the errors each rule reports.
// Programs run in the shape domain (abstract only); the mixed domain has its
// own tests in mixed_domain_test.cc.

#include <gtest/gtest.h>

#include "infer_test_util.h"
#include "interp/shape_domain.h"

namespace distir {
namespace {

using testing::Fn;
using testing::InferError;
using testing::InferredType;

constexpr char kX[] = "%x: tensor<8x16xf32, d0>";

TEST(ShapeRulesTest, EveryOpKindHasARule) {
  for (const OpInfo& info : AllOps()) {
    EXPECT_TRUE(DefaultShapeDomain().HasRule(info.kind)) << info.name;
  }
}

TEST(ShapeRulesTest, ElementwiseOpsBroadcastLikeNumpy) {
  // [8,1] with [16] -> [8,16]; [2,1,4] with [3,1] -> [2,3,4].
  EXPECT_EQ(
      InferredType(Fn("%a: tensor<8x1xf32, d0>, %b: tensor<16xf32, d0>", "  %y = Add(%a, %b)")),
      "tensor<8x16xf32, d0>");
  EXPECT_EQ(
      InferredType(Fn("%a: tensor<2x1x4xf32, d0>, %b: tensor<3x1xf32, d0>", "  %y = Mul(%a, %b)")),
      "tensor<2x3x4xf32, d0>");
  EXPECT_EQ(
      InferredType(Fn("%a: tensor<?x4xf32, d0>, %b: tensor<5x1xf32, d0>", "  %y = Sub(%a, %b)")),
      "tensor<5x4xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4xf32, d0>, %b: tensor<f32, d0>", "  %y = Div(%a, %b)")),
            "tensor<4xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4xf32, d0>, %b: tensor<f32, d0>", "  %y = Pow(%a, %b)")),
            "tensor<4xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4x1xf32, d0>, %b: tensor<4xf32, d0>, %c: tensor<1xf32, d0>",
                            "  %y = Sum(%a, %b, %c)")),
            "tensor<4x4xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<3xi64, d0>, %b: tensor<3xi64, d0>", "  %y = Max(%a, %b)")),
            "tensor<3xi64, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<3xi64, d0>, %b: tensor<3xi64, d0>", "  %y = Min(%a, %b)")),
            "tensor<3xi64, d0>");
}

TEST(ShapeRulesTest, ElementwiseOpsRejectBadOperands) {
  EXPECT_EQ(
      InferError(Fn("%a: tensor<8x16xf32, d0>, %b: tensor<8x32xf32, d0>", "  %y = Add(%a, %b)")),
      "Add operands cannot be broadcast together: shapes [8x16] and [8x32] differ at "
      "dimension 1 of the result (16 vs 32)");
  EXPECT_EQ(InferError(Fn("%a: tensor<8xf32, d0>, %b: tensor<8xf16, d0>", "  %y = Add(%a, %b)")),
            "Add inputs have different dtypes (f32 and f16)");
  EXPECT_EQ(InferError(Fn("%a: tensor<8xf32, d0>, %b: tensor<8xf32, d1>", "  %y = Mul(%a, %b)")),
            "Mul inputs are on different devices (d0 and d1)");
  EXPECT_EQ(
      InferError(Fn("%a: tuple<tensor<8xf32, d0>>, %b: tensor<8xf32, d0>", "  %y = Add(%a, %b)")),
      "Add input 0 must be a tensor, got tuple<tensor<8xf32, d0>>");
}

TEST(ShapeRulesTest, ComparisonsGiveBool) {
  EXPECT_EQ(
      InferredType(Fn("%a: tensor<4x1xi64, d0>, %b: tensor<3xi64, d0>", "  %y = Equal(%a, %b)")),
      "tensor<4x3xbool, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4xf32, d0>, %b: tensor<4xf32, d0>", "  %y = Less(%a, %b)")),
            "tensor<4xbool, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4xbool, d0>", "  %y = Not(%a)")), "tensor<4xbool, d0>");
  EXPECT_EQ(InferError(Fn("%a: tensor<4xf32, d0>", "  %y = Not(%a)")),
            "Not input must be bool, got f32");
}

TEST(ShapeRulesTest, WhereBroadcastsAllThreeInputs) {
  EXPECT_EQ(InferredType(Fn("%c: tensor<1x1x4x4xbool, d0>, %a: tensor<2x8x4x4xf32, d0>, "
                            "%b: tensor<f32, d0>",
                            "  %y = Where(%c, %a, %b)")),
            "tensor<2x8x4x4xf32, d0>");
  EXPECT_EQ(InferError(Fn("%c: tensor<4xf32, d0>, %a: tensor<4xf32, d0>, %b: tensor<4xf32, d0>",
                          "  %y = Where(%c, %a, %b)")),
            "Where condition must be bool, got f32");
}

TEST(ShapeRulesTest, UnaryOpsKeepTheType) {
  for (const char* op :
       {"Neg", "Sqrt", "Exp", "Relu", "Gelu", "Erf", "Tanh", "Sigmoid", "Sin", "Cos", "Identity"}) {
    EXPECT_EQ(InferredType(Fn(kX, std::string("  %y = ") + op + "(%x)")), "tensor<8x16xf32, d0>")
        << op;
  }
  EXPECT_EQ(InferredType(Fn(kX, "  %y = Softmax(%x) {axis = -1}")), "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferError(Fn(kX, "  %y = Softmax(%x) {axis = 2}")),
            "axis 2 is out of range for rank-2 input of Softmax");
  EXPECT_EQ(InferredType(Fn(kX, "  %y = Cast(%x) {to = f16}")), "tensor<8x16xf16, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8x8xf32, d0>", "  %y = Trilu(%x) {upper = 0}")),
            "tensor<4x8x8xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<8xf32, d0>", "  %y = Trilu(%x)")),
            "Trilu input must have rank >= 2, got tensor<8xf32, d0>");
}

TEST(ShapeRulesTest, MatMulIsBatchedOverLeadingDims) {
  EXPECT_EQ(InferredType(
                Fn("%a: tensor<8x32xf32, d0>, %b: tensor<32x16xf32, d0>", "  %y = MatMul(%a, %b)")),
            "tensor<8x16xf32, d0>");
  // [2,1,8,32] x [4,32,16]: batch [2,1] with [4] -> [2,4].
  EXPECT_EQ(InferredType(Fn("%a: tensor<2x1x8x32xf32, d0>, %b: tensor<4x32x16xf32, d0>",
                            "  %y = MatMul(%a, %b)")),
            "tensor<2x4x8x16xf32, d0>");
  EXPECT_EQ(InferredType(
                Fn("%a: tensor<32xf32, d0>, %b: tensor<3x32x16xf32, d0>", "  %y = MatMul(%a, %b)")),
            "tensor<3x16xf32, d0>");
  EXPECT_EQ(
      InferredType(Fn("%a: tensor<8x32xf32, d0>, %b: tensor<32xf32, d0>", "  %y = MatMul(%a, %b)")),
      "tensor<8xf32, d0>");
}

TEST(ShapeRulesTest, MatMulRejectsMismatchedContractionAndDevices) {
  EXPECT_EQ(
      InferError(Fn("%a: tensor<4x8xf32, d0>, %b: tensor<16x4xf32, d0>", "  %y = MatMul(%a, %b)")),
      "MatMul contraction sizes differ: lhs has 8 columns, rhs has 16 rows");
  EXPECT_EQ(
      InferError(Fn("%a: tensor<4x8xf32, d0>, %b: tensor<8x4xf32, d1>", "  %y = MatMul(%a, %b)")),
      "MatMul inputs are on different devices (d0 and d1)");
  EXPECT_EQ(
      InferError(Fn("%a: tensor<4x8xf32, d0>, %b: tensor<8x4xf16, d0>", "  %y = MatMul(%a, %b)")),
      "MatMul inputs have different dtypes (f32 and f16)");
}

TEST(ShapeRulesTest, GemmTransposesAndBroadcastsTheBias) {
  EXPECT_EQ(InferredType(Fn("%a: tensor<8x32xf32, d0>, %b: tensor<32x16xf32, d0>, "
                            "%c: tensor<16xf32, d0>",
                            "  %y = Gemm(%a, %b, %c)")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<32x8xf32, d0>, %b: tensor<16x32xf32, d0>",
                            "  %y = Gemm(%a, %b) {transA = 1, transB = 1}")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(
      InferError(Fn("%a: tensor<8x32xf32, d0>, %b: tensor<16x32xf32, d0>", "  %y = Gemm(%a, %b)")),
      "Gemm contraction sizes differ: lhs has 32 columns, rhs has 16 rows");
  EXPECT_EQ(InferError(Fn("%a: tensor<8x32xf32, d0>, %b: tensor<32x16xf32, d0>, "
                          "%c: tensor<8xf32, d0>",
                          "  %y = Gemm(%a, %b, %c)")),
            "Gemm bias of shape [8] cannot be broadcast to [8x16]");
}

TEST(ShapeRulesTest, LayerNormalizationGivesMeanAndInvStdWithReducedShape) {
  const std::string text =
      Fn("%x: tensor<4x8x16xf32, d0>, %s: tensor<16xf32, d0>, "
         "%b: tensor<16xf32, d0>",
         "  %y, %mean, %inv = LayerNormalization(%x, %s, %b) {axis = -1}");
  EXPECT_EQ(InferredType(text, "y"), "tensor<4x8x16xf32, d0>");
  EXPECT_EQ(InferredType(text, "mean"), "tensor<4x8x1xf32, d0>");
  EXPECT_EQ(InferredType(text, "inv"), "tensor<4x8x1xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<4x16xf32, d0>, %s: tensor<8xf32, d0>",
                          "  %y = LayerNormalization(%x, %s)")),
            "LayerNormalization scale of shape [8] does not fit the normalized shape [16]");
}

TEST(ShapeRulesTest, RMSNormalizationKeepsTheShapeAndFitsTheScale) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8x16xf32, d0>, %s: tensor<16xf32, d0>",
                            "  %y = RMSNormalization(%x, %s) {axis = -1, epsilon = 1e-06}")),
            "tensor<4x8x16xf32, d0>");
  // Over the last two dims: a [16] scale broadcasts along the 8.
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8x16xf32, d0>, %s: tensor<16xf32, d0>",
                            "  %y = RMSNormalization(%x, %s) {axis = 1}")),
            "tensor<4x8x16xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<4x16xf32, d0>, %s: tensor<8xf32, d0>",
                          "  %y = RMSNormalization(%x, %s)")),
            "RMSNormalization scale of shape [8] does not fit the normalized shape [16]");
  EXPECT_EQ(InferError(Fn("%x: tensor<4x16xf32, d0>, %s: tensor<16xf32, d0>",
                          "  %y = RMSNormalization(%x, %s) {axis = 2}")),
            "axis 2 is out of range for rank-2 input of RMSNormalization");
  // As ONNX's: Y has the scale's dtype.
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x16xf32, d0>, %s: tensor<16xbf16, d0>",
                            "  %y = RMSNormalization(%x, %s)")),
            "tensor<4x16xbf16, d0>");
}

TEST(ShapeRulesTest, ReductionsHonourAxesAndKeepdims) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8x16xf32, d0>",
                            "  %y = ReduceMean(%x) {axes = [-1], keepdims = 1}")),
            "tensor<4x8x1xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8x16xf32, d0>",
                            "  %y = ReduceSum(%x) {axes = [0, 2], keepdims = 0}")),
            "tensor<8xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8xf32, d0>", "  %y = ReduceSum(%x) {keepdims = 0}")),
            "tensor<f32, d0>");
  // Axes as an (abstract) input: which dims are reduced is unknown.
  EXPECT_EQ(InferredType(Fn("%x: tensor<4x8xf32, d0>, %a: tensor<1xi64, d0>",
                            "  %y = ReduceSum(%x, %a) {keepdims = 0}")),
            "tensor<?xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<4x8xf32, d0>", "  %y = ReduceMean(%x) {axes = [2]}")),
            "axis 2 is out of range for rank-2 input of ReduceMean");
}

TEST(ShapeRulesTest, GatherIndexesAlongTheAxis) {
  // data [10,20,30], indices [4,5], axis 1 -> [10] + [4,5] + [30].
  EXPECT_EQ(InferredType(Fn("%d: tensor<10x20x30xf32, d0>, %i: tensor<4x5xi64, d0>",
                            "  %y = Gather(%d, %i) {axis = 1}")),
            "tensor<10x4x5x30xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%d: tensor<3xi64, d0>, %i: tensor<i64, d0>", "  %y = Gather(%d, %i)")),
            "tensor<i64, d0>");
  EXPECT_EQ(InferError(Fn("%d: tensor<3xi64, d0>, %i: tensor<f32, d0>", "  %y = Gather(%d, %i)")),
            "Gather indices must be i32 or i64, got f32");
}

TEST(ShapeRulesTest, TransposePermutesExtents) {
  EXPECT_EQ(
      InferredType(Fn("%x: tensor<2x3x4xf32, d0>", "  %y = Transpose(%x) {perm = [0, 2, 1]}")),
      "tensor<2x4x3xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<2x3x4xf32, d0>", "  %y = Transpose(%x)")),
            "tensor<4x3x2xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<2x3xf32, d0>", "  %y = Transpose(%x) {perm = [0, 0]}")),
            "Transpose perm [0, 0] is not a permutation of the 2 axes of tensor<2x3xf32, d0>");
}

TEST(ShapeRulesTest, SplitMakesEqualPartsOrGivenSizes) {
  EXPECT_EQ(InferredType(Fn(kX, "  %y, %z = Split(%x) {axis = 1}")), "tensor<8x8xf32, d0>");
  const std::string sized = Fn(kX, "  %y, %z = Split(%x) {axis = 1, split = [4, 12]}", "%z");
  EXPECT_EQ(InferredType(sized, "y"), "tensor<8x4xf32, d0>");
  EXPECT_EQ(InferredType(sized, "z"), "tensor<8x12xf32, d0>");
  EXPECT_EQ(InferError(Fn(kX, "  %y, %z, %w = Split(%x) {axis = 1}")),
            "Split cannot divide extent 16 into 3 equal parts");
  EXPECT_EQ(InferError(Fn(kX, "  %y, %z = Split(%x) {axis = 1, split = [4, 8]}")),
            "Split sizes [4, 8] sum to 12, but the split axis has extent 16");
}

TEST(ShapeRulesTest, ConcatAddsExtentsAlongTheAxis) {
  EXPECT_EQ(InferredType(Fn("%a: tensor<2x3xf32, d0>, %b: tensor<2x5xf32, d0>",
                            "  %y = Concat(%a, %b) {axis = 1}")),
            "tensor<2x8xf32, d0>");
  EXPECT_EQ(InferError(Fn("%a: tensor<2x3xf32, d0>, %b: tensor<2x5xf32, d0>",
                          "  %y = Concat(%a, %b) {axis = 3}")),
            "axis 3 is out of range for rank-2 input of Concat");
  EXPECT_EQ(InferError(Fn("%a: tensor<2x3xf32, d0>, %b: tensor<4x5xf32, d0>",
                          "  %y = Concat(%a, %b) {axis = 1}")),
            "Concat inputs must agree except on axis 1: got [2x3] and [4x5]");
}

TEST(ShapeRulesTest, SliceWithAbstractBoundsGivesDynamicExtents) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<8x16x4xf32, d0>, %s: tensor<2xi64, d0>, "
                            "%e: tensor<2xi64, d0>",
                            "  %y = Slice(%x, %s, %e)")),
            "tensor<?x?x4xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<8x16xf32, d0>, %s: tensor<1xi64, d0>, "
                            "%e: tensor<1xi64, d0>, %a: tensor<1xi64, d0>",
                            "  %y = Slice(%x, %s, %e, %a)")),
            "tensor<?x?xf32, d0>");
}

TEST(ShapeRulesTest, ShapeGivesAnI64VectorOfTheRank) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<256x8x768xf32, d0>", "  %y = Shape(%x)")),
            "tensor<3xi64, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<256x8x768xf32, d0>", "  %y = Shape(%x) {start = -2}")),
            "tensor<2xi64, d0>");
}

TEST(ShapeRulesTest, ShapeOnlyReshapeKnowsTheRankOnly) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<256x8x768xf32, d0>, %s: tensor<2xi64, d0>",
                            "  %y = Reshape(%x, %s)")),
            "tensor<?x?xf32, d0>");
  EXPECT_EQ(
      InferredType(Fn("%x: tensor<8x1xf32, d0>, %s: tensor<3xi64, d0>", "  %y = Expand(%x, %s)")),
      "tensor<?x8x?xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%s: tensor<2xi64, d0>", "  %y = ConstantOfShape(%s)")),
            "tensor<?x?xf32, d0>");
  EXPECT_EQ(
      InferError(Fn("%x: tensor<8xf32, d0>, %s: tensor<?xi64, d0>", "  %y = Reshape(%x, %s)")),
      "Reshape input 1 must be a 1-D tensor of static length, got tensor<?xi64, d0>");
}

TEST(ShapeRulesTest, UnsqueezeAndSqueezeWithAxesAttribute) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<3x4xf32, d0>", "  %y = Unsqueeze(%x) {axes = [0, -1]}")),
            "tensor<1x3x4x1xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<1x3x1x4xf32, d0>", "  %y = Squeeze(%x) {axes = [2]}")),
            "tensor<1x3x4xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<1x3x1x4xf32, d0>", "  %y = Squeeze(%x)")),
            "tensor<3x4xf32, d0>");
  EXPECT_EQ(InferredType(
                Fn("%x: tensor<3x4xf32, d0>, %a: tensor<1xi64, d0>", "  %y = Unsqueeze(%x, %a)")),
            "tensor<?x?x?xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<1x3xf32, d0>", "  %y = Squeeze(%x) {axes = [1]}")),
            "Squeeze axis 1 must have extent 1, got 3 in [1x3]");
}

TEST(ShapeRulesTest, ConstantRangeAndTuples) {
  EXPECT_EQ(InferredType(Fn("%x: tensor<f32, d1>",
                            "  %y = Constant() {device = d1, value = dense<2xi64>[-1, 16]}")),
            "tensor<2xi64, d1>");
  EXPECT_EQ(InferredType(Fn("", "  %y = Constant() {value = dense<f32>[0.5]}")), "tensor<f32>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<i64, d0>, %b: tensor<i64, d0>, %c: tensor<i64, d0>",
                            "  %y = Range(%a, %b, %c)")),
            "tensor<?xi64, d0>");
  const std::string tuples = Fn("%a: tensor<4xf32, d1>, %b: tensor<2x2xf32, d1>",
                                "  %t = Tuple(%a, %b)\n  %y, %z = UnpackTuple(%t)", "%z");
  EXPECT_EQ(InferredType(tuples, "t"), "tuple<tensor<4xf32, d1>, tensor<2x2xf32, d1>>");
  EXPECT_EQ(InferredType(tuples, "z"), "tensor<2x2xf32, d1>");
  EXPECT_EQ(InferError(Fn("%a: tensor<4xf32, d0>, %b: tensor<4xf32, d1>", "  %y = Tuple(%a, %b)")),
            "Tuple inputs are on different devices (d0 and d1)");
  EXPECT_EQ(InferError(Fn("%a: tensor<4xf32, d0>", "  %t = Tuple(%a)\n  %y, %z = UnpackTuple(%t)")),
            "UnpackTuple of a 1-element tuple has 2 results");
}

TEST(ShapeRulesTest, GradientLossAndOptimizerOps) {
  const std::string mm =
      Fn("%x: tensor<8x32xf32, d0>, %w: tensor<32x16xf32, d0>, "
         "%dy: tensor<8x16xf32, d0>",
         "  %dx, %dw = MatMulGrad(%x, %w, %dy)", "%dx");
  EXPECT_EQ(InferredType(mm, "dx"), "tensor<8x32xf32, d0>");
  EXPECT_EQ(InferredType(mm, "dw"), "tensor<32x16xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<8x32xf32, d0>, %w: tensor<32x16xf32, d0>, "
                          "%dy: tensor<8x32xf32, d0>",
                          "  %y, %z = MatMulGrad(%x, %w, %dy)")),
            "MatMulGrad dy must match the product of x and w: expected tensor<8x16xf32, d0>, "
            "got tensor<8x32xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<8x16xf32, d0>, %dy: tensor<8x16xf32, d0>",
                            "  %y = ReluGrad(%x, %dy)")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<8x16xf32, d0>, %dy: tensor<8x16xf32, d0>",
                            "  %y = GeluGrad(%x, %dy)")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%x: tensor<8x16xf32, d0>, %dy: tensor<8x16xf32, d0>",
                            "  %y = SoftmaxGrad(%x, %dy)")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<8x16xf32, d0>, %dy: tensor<8x8xf32, d0>",
                          "  %y = ReluGrad(%x, %dy)")),
            "ReluGrad dy must match x: expected tensor<8x16xf32, d0>, got tensor<8x8xf32, d0>");
  const std::string ln =
      Fn("%x: tensor<8x16xf32, d0>, %s: tensor<16xf32, d0>, "
         "%dy: tensor<8x16xf32, d0>",
         "  %dx, %ds, %db = LayerNormalizationGrad(%x, %s, %dy)", "%dx");
  EXPECT_EQ(InferredType(ln, "dx"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(ln, "db"), "tensor<16xf32, d0>");
  const std::string rms =
      Fn("%x: tensor<2x8x16xf32, d0>, %s: tensor<16xf32, d0>, %dy: tensor<2x8x16xf32, d0>",
         "  %dx, %ds = RMSNormalizationGrad(%x, %s, %dy) {epsilon = 1e-06}", "%dx");
  EXPECT_EQ(InferredType(rms, "dx"), "tensor<2x8x16xf32, d0>");
  EXPECT_EQ(InferredType(rms, "ds"), "tensor<16xf32, d0>");
  EXPECT_EQ(InferError(Fn("%x: tensor<8x16xf32, d0>, %s: tensor<8xf32, d0>, "
                          "%dy: tensor<8x16xf32, d0>",
                          "  %dx, %ds = RMSNormalizationGrad(%x, %s, %dy)", "%dx")),
            "RMSNormalizationGrad scale of shape [8] does not fit the normalized shape [16]");
  EXPECT_EQ(InferError(Fn("%x: tensor<8x16xf32, d0>, %s: tensor<16xf32, d0>, "
                          "%dy: tensor<8x8xf32, d0>",
                          "  %dx, %ds = RMSNormalizationGrad(%x, %s, %dy)", "%dx")),
            "RMSNormalizationGrad dy must match x: expected tensor<8x16xf32, d0>, got "
            "tensor<8x8xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%y: tensor<8x16xf32, d0>, %dy: tensor<8x16xf32, d0>",
                            "  %dx = SigmoidGrad(%y, %dy)", "%dx"),
                         "dx"),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferError(Fn("%y: tensor<8x16xf32, d0>, %dy: tensor<8xf32, d0>",
                          "  %dx = SigmoidGrad(%y, %dy)", "%dx")),
            "SigmoidGrad dy must match y: expected tensor<8x16xf32, d0>, got tensor<8xf32, d0>");
  EXPECT_EQ(InferredType(
                Fn("%p: tensor<8x16xf32, d0>, %t: tensor<8x16xf32, d0>", "  %y = MSELoss(%p, %t)")),
            "tensor<f32, d0>");
  EXPECT_EQ(InferredType(Fn("%p: tensor<8x16xf32, d0>, %t: tensor<8x16xf32, d0>",
                            "  %y = MSELossGrad(%p, %t)")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%w: tensor<16x16xf32, d0>, %dw: tensor<16x16xf32, d0>",
                            "  %y = SGD(%w, %dw) {lr = 0.1}")),
            "tensor<16x16xf32, d0>");
  const std::string adam =
      Fn("%w: tensor<16xf32, d0>, %dw: tensor<16xf32, d0>, "
         "%m: tensor<16xf32, d0>, %v: tensor<16xf32, d0>",
         "  %y, %m2, %v2 = Adam(%w, %dw, %m, %v)");
  EXPECT_EQ(InferredType(adam, "v2"), "tensor<16xf32, d0>");
  EXPECT_EQ(InferError(Fn("%w: tensor<16xf32, d0>, %dw: tensor<8xf32, d0>", "  %y = SGD(%w, %dw)")),
            "SGD dw must match w: expected tensor<16xf32, d0>, got tensor<8xf32, d0>");
}

TEST(ShapeRulesTest, SendRetypesToTheTargetDevice) {
  EXPECT_EQ(InferredType(Fn(kX, "  %y = Send(%x) {device = d3}")), "tensor<8x16xf32, d3>");
  EXPECT_EQ(InferError(Fn(kX, "  %y = Send(%x) {device = d0}")),
            "Send must move data to another device: input is already on d0");
}

TEST(ShapeRulesTest, AllReduceKeepsOneTypePerDevice) {
  const std::string text = Fn("%a: tensor<8x16xf32, d0>, %b: tensor<8x16xf32, d1>",
                              "  %y, %z = AllReduce(%a, %b)", "%z");
  EXPECT_EQ(InferredType(text, "y"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(text, "z"), "tensor<8x16xf32, d1>");
  EXPECT_EQ(InferError(
                Fn("%a: tensor<8xf32, d0>, %b: tensor<8xf32, d0>", "  %y, %z = AllReduce(%a, %b)")),
            "AllReduce inputs must be on distinct devices: inputs 0 and 1 are both on d0");
  EXPECT_EQ(InferError(
                Fn("%a: tensor<8xf32, d0>, %b: tensor<4xf32, d1>", "  %y, %z = AllReduce(%a, %b)")),
            "AllReduce inputs must have one shape and dtype: input 0 is tensor<8xf32, d0>, "
            "input 1 is tensor<4xf32, d1>");
}

TEST(ShapeRulesTest, AllGatherConcatenatesOnEveryDevice) {
  const std::string text = Fn("%a: tensor<4x16xf32, d0>, %b: tensor<4x16xf32, d1>",
                              "  %y, %z = AllGather(%a, %b) {axis = 0}", "%z");
  EXPECT_EQ(InferredType(text, "y"), "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(text, "z"), "tensor<8x16xf32, d1>");
}

TEST(ShapeRulesTest, ReduceScatterShardsTheAxis) {
  const std::string text = Fn("%a: tensor<8x16xf32, d0>, %b: tensor<8x16xf32, d1>",
                              "  %y, %z = ReduceScatter(%a, %b) {axis = 1}", "%z");
  EXPECT_EQ(InferredType(text, "y"), "tensor<8x8xf32, d0>");
  EXPECT_EQ(InferredType(text, "z"), "tensor<8x8xf32, d1>");
  EXPECT_EQ(InferError(Fn("%a: tensor<8x3xf32, d0>, %b: tensor<8x3xf32, d1>",
                          "  %y, %z = ReduceScatter(%a, %b) {axis = 1}")),
            "ReduceScatter cannot divide extent 3 of axis 1 into 2 equal parts");
}

TEST(ShapeRulesTest, AllToAllSplitsOneAxisAndConcatenatesAnother) {
  const std::string text =
      Fn("%a: tensor<8x16xf32, d0>, %b: tensor<8x16xf32, d1>",
         "  %y, %z = AllToAll(%a, %b) {concat_axis = 1, split_axis = 0}", "%z");
  EXPECT_EQ(InferredType(text, "y"), "tensor<4x32xf32, d0>");
  EXPECT_EQ(InferredType(text, "z"), "tensor<4x32xf32, d1>");
}

// A part of a program's collective holds some of its participants' pieces
// (docs/ir.md): n is the participants, every piece of the inputs' shape.
TEST(ShapeRulesTest, APartsCollectiveCountsEveryParticipant) {
  const std::string a = "%a: tensor<4x16xf32, d1>";
  EXPECT_EQ(
      InferredType(Fn(a, "  %y = AllGather(%a) {axis = 0, participants = [d0, d1, d2, d3]}", "%y")),
      "tensor<16x16xf32, d1>");
  EXPECT_EQ(
      InferredType(Fn(a, "  %y = ReduceScatter(%a) {axis = 0, participants = [d0, d1]}", "%y")),
      "tensor<2x16xf32, d1>");
  EXPECT_EQ(InferredType(Fn(a,
                            "  %y = AllToAll(%a) {concat_axis = 1, participants = [d0, d1], "
                            "split_axis = 0}",
                            "%y")),
            "tensor<2x32xf32, d1>");
  EXPECT_EQ(InferredType(Fn(a, "  %y = AllReduce(%a) {participants = [d1, d5]}", "%y")),
            "tensor<4x16xf32, d1>");
  EXPECT_EQ(InferError(Fn(a, "  %y = AllReduce(%a) {participants = [d0, d2]}")),
            "AllReduce input 0 is on d1, not one of its participants");
  EXPECT_EQ(InferError(Fn(a, "  %y = AllReduce(%a) {participants = [d1, d1]}")),
            "AllReduce participants must be distinct, d1 appears twice");
}

TEST(ShapeRulesTest, BroadcastScatterGatherAndReduce) {
  const std::string bc = Fn(kX, "  %y, %z = Broadcast(%x) {devices = [d1, d2]}", "%z");
  EXPECT_EQ(InferredType(bc, "y"), "tensor<8x16xf32, d1>");
  EXPECT_EQ(InferredType(bc, "z"), "tensor<8x16xf32, d2>");
  const std::string sc = Fn(kX, "  %y, %z = Scatter(%x) {axis = 0, devices = [d1, d2]}", "%z");
  EXPECT_EQ(InferredType(sc, "y"), "tensor<4x16xf32, d1>");
  EXPECT_EQ(InferredType(sc, "z"), "tensor<4x16xf32, d2>");
  EXPECT_EQ(InferError(Fn(kX, "  %y, %z, %w = Scatter(%x) {axis = 0, devices = [d1, d2, d3]}")),
            "Scatter cannot divide extent 8 of axis 0 into 3 equal parts");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4x16xf32, d1>, %b: tensor<4x16xf32, d2>",
                            "  %y = MPIGather(%a, %b) {axis = 0, device = d0}")),
            "tensor<8x16xf32, d0>");
  EXPECT_EQ(InferredType(Fn("%a: tensor<4x16xf32, d1>, %b: tensor<4x16xf32, d2>",
                            "  %y = Reduce(%a, %b) {device = d0}")),
            "tensor<4x16xf32, d0>");
}

TEST(ShapeRulesTest, RuleErrorsAreLocatedAtTheOp) {
  Module m = testing::ParseOrDie(
      "func @f(%a: tensor<4x8xf32, d0>, %b: tensor<16x4xf32, d0>) {\n"
      "  %y = MatMul(%a, %b)\n"
      "  return %y\n"
      "}\n");
  Status s = InferTypes(m, {InferDomain::kShape});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.loc().line, 2);
  EXPECT_GT(s.loc().col, 0);
}

}  // namespace
}  // namespace distir
