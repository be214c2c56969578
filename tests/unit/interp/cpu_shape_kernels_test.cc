// The CPU kernels of the indexing, shape and constant ops, hand-computed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cpu_test_util.h"

namespace distir {
namespace {

using ::testing::ElementsAre;
using testing::Elems;
using testing::I64;
using testing::ParseOrDie;
using testing::RunText;
using testing::StatusIs;
using testing::T;

#define RUN(out, text, ...) \
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, RunText(text, {__VA_ARGS__}))

// x = [[1, 2, 3], [4, 5, 6]] used throughout.
HostValue X() { return T({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(CpuShapeKernelsTest, GatherAlongEitherAxisWithNegativeIndices) {
  constexpr char kGather[] = R"(func @f(%x: tensor<2x3xf32, d0>, %i: tensor<2xi64, d0>) {
    %rows = Gather(%x, %i)
    %cols = Gather(%x, %i) {axis = 1}
    return %rows, %cols
  })";
  // Indices [1, -1]: rows 1 and 1 (-1 + 2); columns 1 and 2 (-1 + 3).
  RUN(out, kGather, X(), I64({2}, {1, -1}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(4, 5, 6, 4, 5, 6));
  EXPECT_THAT(Elems(out[1]), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT(RunText(kGather, {X(), I64({2}, {0, 2})}),
              StatusIs(StatusCode::kInvalidArgument, "Gather index 2 is out of range"));
}

TEST(CpuShapeKernelsTest, GatherOfEmbeddingRowsByTokenIds) {
  // A [2, 2] id matrix into a 3-row table gives [2, 2, 2].
  RUN(out, R"(func @f(%table: tensor<3x2xf32, d0>, %ids: tensor<2x2xi64, d0>) {
    %e = Gather(%table, %ids)
    return %e
  })",
      T({3, 2}, {0, 1, 10, 11, 20, 21}), I64({2, 2}, {2, 0, 1, 1}));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2x2x2xf32, d0>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(20, 21, 0, 1, 10, 11, 10, 11));
}

TEST(CpuShapeKernelsTest, TransposeDefaultReversesAndPermMoves) {
  RUN(out, R"(func @f(%x: tensor<2x3xf32, d0>, %y: tensor<1x2x3xf32, d0>) {
    %t = Transpose(%x)
    %p = Transpose(%y) {perm = [2, 0, 1]}
    return %t, %p
  })",
      X(), T({1, 2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 4, 2, 5, 3, 6));
  // p[k][0][j] = y[0][j][k]: shape [3, 1, 2].
  EXPECT_EQ(out[1].type().ToString(), "tensor<3x1x2xf32, d0>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(CpuShapeKernelsTest, SplitEquallyBySizesAndByInput) {
  RUN(out, R"(func @f(%x: tensor<2x3xf32, d0>, %sizes: tensor<2xi64, d0>) {
    %r0, %r1 = Split(%x)
    %c0, %c1 = Split(%x) {axis = 1, split = [1, 2]}
    %d0, %d1 = Split(%x, %sizes) {axis = -1}
    return %r0, %r1, %c0, %c1, %d0, %d1
  })",
      X(), I64({2}, {2, 1}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 2, 3));
  EXPECT_THAT(Elems(out[1]), ElementsAre(4, 5, 6));
  EXPECT_THAT(Elems(out[2]), ElementsAre(1, 4));
  EXPECT_THAT(Elems(out[3]), ElementsAre(2, 3, 5, 6));
  EXPECT_EQ(out[4].type().ToString(), "tensor<2x2xf32, d0>");
  EXPECT_THAT(Elems(out[4]), ElementsAre(1, 2, 4, 5));
  EXPECT_THAT(Elems(out[5]), ElementsAre(3, 6));
}

TEST(CpuShapeKernelsTest, ConcatAlongAnAxis) {
  RUN(out, R"(func @f(%x: tensor<2x3xf32, d0>, %y: tensor<2x1xf32, d0>) {
    %c = Concat(%x, %y) {axis = -1}
    return %c
  })",
      X(), T({2, 1}, {7, 8}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 2, 3, 7, 4, 5, 6, 8));
}

TEST(CpuShapeKernelsTest, SliceWithNegativeClampedAndStepBounds) {
  constexpr char kSlice[] = R"(func @f(%x: tensor<2x3xf32, d0>, %s: tensor<1xi64, d0>,
                                       %e: tensor<1xi64, d0>, %a: tensor<1xi64, d0>,
                                       %st: tensor<1xi64, d0>) {
    %y = Slice(%x, %s, %e, %a, %st)
    return %y
  })";
  // Columns from -2 (= 1) to 100 (clamped to 3): [[2, 3], [5, 6]].
  RUN(cols, kSlice, X(), I64({1}, {-2}), I64({1}, {100}), I64({1}, {1}), I64({1}, {1}));
  EXPECT_EQ(cols[0].type().ToString(), "tensor<2x2xf32, d0>");
  EXPECT_THAT(Elems(cols[0]), ElementsAre(2, 3, 5, 6));
  // Columns backwards from -1 (= 2) to -100 (clamped to before 0), step -2: 2, 0.
  RUN(back, kSlice, X(), I64({1}, {-1}), I64({1}, {-100}), I64({1}, {1}), I64({1}, {-2}));
  EXPECT_THAT(Elems(back[0]), ElementsAre(3, 1, 6, 4));
  // Rows 1..2 without axes and steps.
  RUN(rows, R"(func @f(%x: tensor<2x3xf32, d0>, %s: tensor<1xi64, d0>, %e: tensor<1xi64, d0>) {
    %y = Slice(%x, %s, %e)
    return %y
  })",
      X(), I64({1}, {1}), I64({1}, {2}));
  EXPECT_THAT(Elems(rows[0]), ElementsAre(4, 5, 6));
}

TEST(CpuShapeKernelsTest, ExpandBroadcastsBothWays) {
  // [2, 1] against the target [1, 3] broadcasts to [2, 3]: each row repeats its value.
  RUN(out, R"(func @f(%x: tensor<2x1xf32, d0>, %shape: tensor<2xi64, d0>) {
    %y = Expand(%x, %shape)
    return %y
  })",
      T({2, 1}, {1, 2}), I64({2}, {1, 3}));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2x3xf32, d0>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(1, 1, 1, 2, 2, 2));
}

TEST(CpuShapeKernelsTest, ShapeReshapeAndSqueezes) {
  RUN(out, R"(func @f(%x: tensor<2x3xf32, d0>, %t: tensor<3xi64, d0>, %ax: tensor<1xi64, d0>) {
    %s = Shape(%x)
    %tail = Shape(%x) {start = -1}
    %r = Reshape(%x, %t)
    %u = Unsqueeze(%x) {axes = [0]}
    %u2 = Unsqueeze(%x, %ax)
    %q = Squeeze(%u)
    %q2 = Squeeze(%u2, %ax)
    return %s, %tail, %r, %u, %u2, %q, %q2
  })",
      X(), I64({3}, {0, -1, 1}), I64({1}, {-1}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(2, 3));
  EXPECT_THAT(Elems(out[1]), ElementsAre(3));
  // Target [0, -1, 1]: 0 copies 2, -1 infers 6 / (2 * 1) = 3.
  EXPECT_EQ(out[2].type().ToString(), "tensor<2x3x1xf32, d0>");
  EXPECT_EQ(out[3].type().ToString(), "tensor<1x2x3xf32, d0>");
  EXPECT_EQ(out[4].type().ToString(), "tensor<2x3x1xf32, d0>");
  EXPECT_EQ(out[5].type().ToString(), "tensor<2x3xf32, d0>");
  EXPECT_EQ(out[6].type().ToString(), "tensor<2x3xf32, d0>");
  for (int i = 2; i < 7; ++i) EXPECT_THAT(Elems(out[i]), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(CpuShapeKernelsTest, ReshapeRejectsAWrongElementCount) {
  EXPECT_THAT(RunText(R"(func @f(%x: tensor<2x3xf32, d0>, %t: tensor<1xi64, d0>) {
    %r = Reshape(%x, %t)
    return %r
  })",
                      {X(), I64({1}, {5})}),
              StatusIs(StatusCode::kInvalidArgument, "element count"));
}

TEST(CpuShapeKernelsTest, ConstantsRangeAndConstantOfShape) {
  RUN(out, R"(func @f(%shape: tensor<2xi64, d0>, %start: tensor<f32, d0>, %limit: tensor<f32, d0>,
                      %delta: tensor<f32, d0>) {
    %c = Constant() {device = d0, value = dense<2xi64>[-1, 16]}
    %z = ConstantOfShape(%shape)
    %k = ConstantOfShape(%shape) {value = dense<1xi64>[7]}
    %r = Range(%start, %limit, %delta)
    return %c, %z, %k, %r
  })",
      I64({2}, {1, 2}), T({}, {1}), T({}, {2}), T({}, {0.25}));
  EXPECT_THAT(Elems(out[0]), ElementsAre(-1, 16));
  EXPECT_EQ(out[1].type().ToString(), "tensor<1x2xf32, d0>");
  EXPECT_THAT(Elems(out[1]), ElementsAre(0, 0));
  EXPECT_EQ(out[2].type().ToString(), "tensor<1x2xi64, d0>");
  EXPECT_THAT(Elems(out[2]), ElementsAre(7, 7));
  // ceil((2 - 1) / 0.25) = 4 elements: 1, 1.25, 1.5, 1.75.
  EXPECT_THAT(Elems(out[3]), ElementsAre(1, 1.25, 1.5, 1.75));
}

TEST(CpuShapeKernelsTest, TuplesPackUnpackAndIdentity) {
  RUN(out, R"(func @f(%a: tensor<2xf32, d0>, %b: tensor<1xf32, d0>) {
    %t = Tuple(%a, %b)
    %same = Identity(%t)
    %x, %y = UnpackTuple(%same)
    return %t, %x, %y
  })",
      T({2}, {1, 2}), T({1}, {3}));
  EXPECT_EQ(out[0].type().ToString(), "tuple<tensor<2xf32, d0>, tensor<1xf32, d0>>");
  ASSERT_EQ(out[0].elements().size(), 2u);
  EXPECT_THAT(Elems(out[0].elements()[1]), ElementsAre(3));
  EXPECT_THAT(Elems(out[1]), ElementsAre(1, 2));
  EXPECT_THAT(Elems(out[2]), ElementsAre(3));
}

TEST(CpuShapeKernelsTest, DeviceGenericCalleeRunsOnTheCallersDevice) {
  RUN(out, R"(
  func @double(%x: tensor<2xf32>) {
    %y = Add(%x, %x)
    return %y
  }
  func @f(%a: tensor<2xf32, d3>) {
    %b = @double(%a)
    return %b
  })",
      T({2}, {1, 2}, DType::kF32, DeviceId(3)));
  EXPECT_EQ(out[0].type().ToString(), "tensor<2xf32, d3>");
  EXPECT_THAT(Elems(out[0]), ElementsAre(2, 4));
}

TEST(CpuShapeKernelsTest, IllTypedOpsFailAsInTypeInference) {
  // Not run through inference (it would reject the program first): the kernel
  // applies the shape rule itself.
  Module m = ParseOrDie(R"(func @f(%a: tensor<2x3xf32, d0>, %b: tensor<2x3xf32, d0>) {
    %y = MatMul(%a, %b)
    return %y
  })");
  EXPECT_THAT(Execute(m, *m.entry(), {X(), X()}),
              StatusIs(StatusCode::kInvalidArgument, "MatMul contraction sizes differ"));
}

}  // namespace
}  // namespace distir
