#include "ir/type.h"

#include <gtest/gtest.h>

#include <vector>

#include "ir/parser.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::StatusIs;

TEST(TypeTest, PrintsCanonicalForms) {
  EXPECT_EQ(Type::Tensor(DType::kF32, {8, 512}, DeviceId(0)).ToString(), "tensor<8x512xf32, d0>");
  EXPECT_EQ(Type::Tensor(DType::kF32, {}, DeviceId(1)).ToString(), "tensor<f32, d1>");
  EXPECT_EQ(Type::Tensor(DType::kF16, {kDynamicDim, 768}).ToString(), "tensor<?x768xf16>");
  EXPECT_EQ(Type::Scalar(DType::kI64, DeviceId(0)).ToString(), "scalar<i64, d0>");
  EXPECT_EQ(Type::Tuple({Type::Tensor(DType::kF32, {4, 4}, DeviceId(0)),
                         Type::Tensor(DType::kF32, {4}, DeviceId(0))})
                .ToString(),
            "tuple<tensor<4x4xf32, d0>, tensor<4xf32, d0>>");
  EXPECT_EQ(Type().ToString(), "?");
}

TEST(TypeTest, EveryFormRoundTripsThroughParseType) {
  for (const char* text :
       {"tensor<8x512xf32, d0>", "tensor<f32, d1>", "tensor<?x768xf16>", "tensor<0xbool, d2>",
        "scalar<i64, d0>", "scalar<f64>", "tuple<>", "tuple<tensor<4x4xbf16, d0>, tensor<4xi32>>",
        "tuple<tuple<scalar<i32, d7>>, tensor<1x?x3xf32, d12>>", "?"}) {
    ASSERT_OK_AND_ASSIGN(Type t, ParseType(text));
    EXPECT_EQ(t.ToString(), text);
  }
}

TEST(TypeTest, ComparesByValue) {
  Type a = Type::Tensor(DType::kF32, {4, 4}, DeviceId(0));
  EXPECT_EQ(a, Type::Tensor(DType::kF32, {4, 4}, DeviceId(0)));
  EXPECT_NE(a, Type::Tensor(DType::kF32, {4, 4}, DeviceId(1)));
  EXPECT_NE(a, Type::Tensor(DType::kF16, {4, 4}, DeviceId(0)));
  EXPECT_NE(a, Type::Tensor(DType::kF32, {4, 4}));
  EXPECT_NE(a, Type::Tuple({a}));
  EXPECT_EQ(Type(), Type());
}

TEST(TypeTest, SizesCountBytesAndSumOverTuples) {
  Type w = Type::Tensor(DType::kF32, {16, 16}, DeviceId(1));
  Type b = Type::Tensor(DType::kF16, {16}, DeviceId(1));
  EXPECT_EQ(w.NumElements(), 256);
  EXPECT_EQ(w.SizeInBytes(), 1024);
  EXPECT_EQ(Type::Tuple({w, b}).SizeInBytes(), 1024 + 32);
  EXPECT_EQ(Type::Tensor(DType::kI64, {}, DeviceId(0)).SizeInBytes(), 8);
  EXPECT_EQ(Type::Scalar(DType::kBool, DeviceId(0)).SizeInBytes(), 1);
  EXPECT_FALSE(Type::Tensor(DType::kF32, {kDynamicDim, 4}).HasStaticShape());
}

TEST(TypeTest, TupleDeviceIsSharedDeviceOrNone) {
  Type a = Type::Tensor(DType::kF32, {4}, DeviceId(1));
  Type b = Type::Tensor(DType::kF32, {4}, DeviceId(2));
  EXPECT_EQ(Type::Tuple({a, a}).device(), DeviceId(1));
  EXPECT_FALSE(Type::Tuple({a, b}).device().has_value());
  EXPECT_EQ(Type::Tuple({a, b, a}).Devices(), (std::vector<DeviceId>{DeviceId(1), DeviceId(2)}));
  Type moved = Type::Tuple({a, b}).WithDevice(DeviceId(3));
  EXPECT_EQ(moved.ToString(), "tuple<tensor<4xf32, d3>, tensor<4xf32, d3>>");
}

TEST(TypeTest, ParseTypeReportsBadTypes) {
  EXPECT_THAT(ParseType("tensor<4xf31>"),
              StatusIs(StatusCode::kInvalidArgument, "unknown dtype 'f31'"));
  EXPECT_THAT(ParseType("tensor<-3xf32>"),
              StatusIs(StatusCode::kInvalidArgument, "bad extent '-3' in tensor type"));
  EXPECT_THAT(ParseType("tensor<4xf32, x3>"),
              StatusIs(StatusCode::kInvalidArgument, "bad device 'x3'"));
  EXPECT_THAT(ParseType("tensor<4xf32, d01>"),
              StatusIs(StatusCode::kInvalidArgument, "bad device 'd01'"));
  EXPECT_THAT(ParseType("tuple<tensor<4xf32>"),
              StatusIs(StatusCode::kInvalidArgument, "expected '>' but found end of file"));
  EXPECT_THAT(ParseType(""),
              StatusIs(StatusCode::kInvalidArgument, "expected a type but found end of file"));
  StatusOr<Type> bad = ParseType("tensor<4x4xf33>");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().loc().col, 12);
}

TEST(DimsTest, BehavesLikeAVectorInPlaceAndOnTheHeap) {
  Dims small{2, 3};
  Dims big{1, 2, 3, 4, 5, 6, 7};  // more than kInlineRank: on the heap
  EXPECT_EQ(small.size(), 2u);
  EXPECT_EQ(big.size(), 7u);
  EXPECT_EQ(big.back(), 7);
  big.push_back(8);
  big.insert(big.begin(), int64_t{0});
  EXPECT_EQ(big, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  for (int64_t d = 4; d < 10; ++d) small.push_back(d);  // grows onto the heap
  EXPECT_EQ(small, (std::vector<int64_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  small.erase(small.begin() + 1, small.end());
  EXPECT_EQ(small, Dims{2});
  Dims copy = big;
  Dims moved = std::move(copy);
  EXPECT_EQ(moved, big);
  copy = moved;  // a moved-from Dims can be assigned again
  EXPECT_EQ(copy, big);
  std::vector<int64_t> as_vector = big;
  EXPECT_EQ(Dims(as_vector), big);
}

TEST(TypeTest, HighRankTensorsCopyAndCompare) {
  Type t = Type::Tensor(DType::kF32, {1, 2, 3, 4, 5, 6}, DeviceId(1));
  Type u = t;
  EXPECT_EQ(u, t);
  EXPECT_EQ(u.ToString(), "tensor<1x2x3x4x5x6xf32, d1>");
  EXPECT_EQ(u.NumElements(), 720);
  Type tuple = Type::Tuple({t, Type::Scalar(DType::kI64, DeviceId(1))});
  Type tuple_copy = tuple;
  EXPECT_EQ(tuple_copy, tuple);
  EXPECT_EQ(tuple_copy.WithDevice(DeviceId(2)).device(), DeviceId(2));
  EXPECT_EQ(tuple.device(), DeviceId(1));
}

}  // namespace
}  // namespace distir
