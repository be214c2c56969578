#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/parser.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseOrDie;
using testing::StatusIs;

Status VerifyText(const char* text) {
  Module m = ParseOrDie(text);
  return VerifyModule(m);
}

TEST(VerifierTest, AcceptsPipelineWithGenericCallee) {
  EXPECT_OK(VerifyText(R"(
func @dense(%w: tensor<4x4xf32>, %x: tensor<2x4xf32>) {
  %h = MatMul(%x, %w)
  %a = Relu(%h)
  return %a
}
func @main(%w1: tensor<4x4xf32, d1>, %w2: tensor<4x4xf32, d2>, %x: tensor<2x4xf32, d1>) {
  %a1 = @dense(%w1, %x) : tensor<2x4xf32, d1>
  %r = Send(%a1) {device = d2} : tensor<2x4xf32, d2>
  %a2 = @dense(%w2, %r) : tensor<2x4xf32, d2>
  return %a2
}
)"));
}

TEST(VerifierTest, RejectsComputeOnTwoDevices) {
  EXPECT_THAT(VerifyText(R"(
func @f(%a: tensor<2x2xf32, d0>, %b: tensor<2x2xf32, d1>) {
  %c = MatMul(%a, %b)
  return %c
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "MatMul inputs are on different devices (d0 and d1)"));
}

TEST(VerifierTest, RejectsCollectiveWithRepeatedDevice) {
  EXPECT_THAT(VerifyText(R"(
func @f(%a: tensor<2xf32, d0>, %b: tensor<2xf32, d0>) {
  %c, %d = AllReduce(%a, %b)
  return %c
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "AllReduce inputs must be on distinct devices: d0 appears twice"));
}

TEST(VerifierTest, RejectsSendToItsOwnDevice) {
  EXPECT_THAT(VerifyText(R"(
func @f(%a: tensor<2xf32, d0>) {
  %b = Send(%a) {device = d0}
  return %b
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "moves nothing"));
}

TEST(VerifierTest, RejectsMixedParameterPlacement) {
  EXPECT_THAT(VerifyText(R"(
func @f(%a: tensor<2xf32, d0>, %b: tensor<2xf32>) {
  %c = Add(%a, %a)
  return %c
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "parameter %b of @f has no device"));
}

TEST(VerifierTest, RejectsDeviceInsideGenericFunction) {
  EXPECT_THAT(VerifyText(R"(
func @g(%a: tensor<2xf32>) {
  %c = Constant() {device = d1, value = dense<2xf32>[1.0, 2.0]}
  return %c
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "may not name a device"));
}

TEST(VerifierTest, RejectsGenericCallAcrossDevices) {
  EXPECT_THAT(VerifyText(R"(
func @g(%a: tensor<2xf32>, %b: tensor<2xf32>) {
  %c = Add(%a, %b)
  return %c
}
func @f(%a: tensor<2xf32, d0>, %b: tensor<2xf32, d1>) {
  %c = @g(%a, %b)
  return %c
}
)"),
              StatusIs(StatusCode::kInvalidArgument, "must share one device"));
}

TEST(VerifierTest, BuilderCatchesArityAndMissingAttributes) {
  FunctionBuilder b("f");
  Value* x = b.Param("x", Type::Tensor(DType::kF32, {2, 2}, DeviceId(0)));
  b.Add(OpKind::kConcat, {x, x});  // no axis
  b.Return({x});
  EXPECT_THAT(std::move(b).Finish(),
              StatusIs(StatusCode::kInvalidArgument, "missing required attribute 'axis' of Concat"));

  FunctionBuilder c("g");
  Value* y = c.Param("y", Type::Tensor(DType::kF32, {2, 2}, DeviceId(0)));
  c.Add(OpKind::kRelu, {y, y});
  c.Return({y});
  EXPECT_THAT(std::move(c).Finish(), StatusIs(StatusCode::kInvalidArgument, "Relu takes 1 input, got 2"));
}

TEST(VerifierTest, BuilderRejectsWrongAttributeKind) {
  FunctionBuilder b("f");
  Value* x = b.Param("x", Type::Tensor(DType::kF32, {2, 2}, DeviceId(0)));
  Value* y = b.Add(OpKind::kConcat, {x, x}, {{"axis", Attribute("zero")}});
  b.Return({y});
  EXPECT_THAT(std::move(b).Finish(),
              StatusIs(StatusCode::kInvalidArgument, "attribute 'axis' of Concat must be int, got string"));
}

TEST(VerifierTest, BuilderRejectsUseOfForeignValue) {
  FunctionBuilder other("other");
  Value* foreign = other.Param("z", Type::Tensor(DType::kF32, {2}, DeviceId(0)));
  FunctionBuilder b("f");
  b.Param("x", Type::Tensor(DType::kF32, {2}, DeviceId(0)));
  Value* y = b.Add(OpKind::kRelu, {foreign});
  b.Return({y});
  EXPECT_THAT(std::move(b).Finish(), StatusIs(StatusCode::kInvalidArgument, "is not defined before it"));
}

}  // namespace
}  // namespace distir
