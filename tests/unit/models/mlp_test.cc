// BuildMlpTraining: the op sequence and names, inferred types, Adam, device-
// generic builds and option errors.

#include "models/mlp.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "interp/infer_types.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "testing/test_util.h"

namespace distir {
namespace {

using testing::ParseOrDie;
using testing::StatusIs;

Module BuildAndInfer(const MlpOptions& options) {
  StatusOr<Module> m = BuildMlpTraining(options);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return Module();
  EXPECT_OK(VerifyModule(*m));
  EXPECT_OK(InferTypes(*m));
  return std::move(m).value();
}

// The whole program for L = 2, with the types InferTypes gives: the op
// sequence, the names and the attributes in one readable expectation.
constexpr char kTwoLayerSgd[] =
    R"(func @mlp(%x: tensor<3x4xf32, d0>, %y: tensor<3x4xf32, d0>, %w0: tensor<4x4xf32, d0>, %w1: tensor<4x4xf32, d0>) {
  %h0 = MatMul(%x, %w0) : tensor<3x4xf32, d0>
  %a0 = Relu(%h0) : tensor<3x4xf32, d0>
  %h1 = MatMul(%a0, %w1) : tensor<3x4xf32, d0>
  %a1 = Relu(%h1) : tensor<3x4xf32, d0>
  %loss = MSELoss(%a1, %y) : tensor<f32, d0>
  %da1 = MSELossGrad(%a1, %y) : tensor<3x4xf32, d0>
  %dh1 = ReluGrad(%h1, %da1) : tensor<3x4xf32, d0>
  %da0, %dw1 = MatMulGrad(%a0, %w1, %dh1) : tensor<3x4xf32, d0>, tensor<4x4xf32, d0>
  %dh0 = ReluGrad(%h0, %da0) : tensor<3x4xf32, d0>
  %dx, %dw0 = MatMulGrad(%x, %w0, %dh0) : tensor<3x4xf32, d0>, tensor<4x4xf32, d0>
  %w0_new = SGD(%w0, %dw0) {lr = 0.01} : tensor<4x4xf32, d0>
  %w1_new = SGD(%w1, %dw1) {lr = 0.01} : tensor<4x4xf32, d0>
  return %loss, %w0_new, %w1_new
}
)";

TEST(MlpTest, TwoLayerSgdProgramIsTheDocumentedOne) {
  MlpOptions o;
  o.n_layer = 2;
  o.d_model = 4;
  o.batch = 3;
  Module m = BuildAndInfer(o);
  EXPECT_EQ(PrintModule(m), kTwoLayerSgd);
}

TEST(MlpTest, PrintedProgramParsesBackToTheSameText) {
  MlpOptions o;
  o.optimizer = MlpOptimizer::kAdam;
  ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(o));
  const std::string text = PrintModule(m);
  EXPECT_EQ(PrintModule(ParseOrDie(text)), text);
}

TEST(MlpTest, EveryLayerHasFiveOpsPlusTwoForTheLoss) {
  MlpOptions o;
  o.n_layer = 6;
  ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(o));
  const Function& fn = *m.entry();
  EXPECT_EQ(fn.ops().size(), 5u * 6 + 2);
  std::map<std::string, int> kinds;
  for (const auto& op : fn.ops()) ++kinds[op->Name()];
  EXPECT_EQ(kinds, (std::map<std::string, int>{{"MatMul", 6},
                                               {"Relu", 6},
                                               {"MSELoss", 1},
                                               {"MSELossGrad", 1},
                                               {"ReluGrad", 6},
                                               {"MatMulGrad", 6},
                                               {"SGD", 6}}));
  // Each layer's values, found by name, come from the op kinds the header promises.
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(fn.LookupValue(mlp_names::PreActivation(i))->def()->Name(), "MatMul");
    EXPECT_EQ(fn.LookupValue(mlp_names::Activation(i))->def()->Name(), "Relu");
    EXPECT_EQ(fn.LookupValue(mlp_names::PreActivationGrad(i))->def()->Name(), "ReluGrad");
    EXPECT_EQ(fn.LookupValue(mlp_names::WeightGrad(i))->def()->Name(), "MatMulGrad");
    EXPECT_EQ(fn.LookupValue(mlp_names::Updated(mlp_names::Weight(i)))->def()->Name(), "SGD");
  }
  // The backward pass runs in reverse: dh5 is computed before dh0.
  EXPECT_LT(fn.LookupValue("dh5")->def()->id(), fn.LookupValue("dh0")->def()->id());
}

TEST(MlpTest, AdamTakesAndReturnsMomentsPerWeight) {
  MlpOptions o;
  o.n_layer = 3;
  o.d_model = 8;
  o.batch = 5;
  o.dtype = DType::kF16;
  o.optimizer = MlpOptimizer::kAdam;
  o.learning_rate = 0.5;
  Module m = BuildAndInfer(o);
  const Function& fn = *m.entry();
  std::vector<std::string> params;
  for (const auto& p : fn.params()) params.push_back(p->name());
  EXPECT_EQ(params, (std::vector<std::string>{"x", "y", "w0", "w1", "w2", "m0", "m1", "m2", "v0",
                                              "v1", "v2"}));
  std::vector<std::string> returns;
  for (const Value* v : fn.returns()) returns.push_back(v->name());
  EXPECT_EQ(returns, (std::vector<std::string>{"loss", "w0_new", "w1_new", "w2_new", "m0_new",
                                               "m1_new", "m2_new", "v0_new", "v1_new", "v2_new"}));
  EXPECT_EQ(fn.ops().size(), 5u * 3 + 2);
  const Op& adam = *fn.LookupValue("w1_new")->def();
  EXPECT_EQ(PrintOp(adam),
            "%w1_new, %m1_new, %v1_new = Adam(%w1, %dw1, %m1, %v1) {beta1 = 0.9, beta2 = 0.999, "
            "epsilon = 1e-08, lr = 0.5, step = 1} : tensor<8x8xf16, d0>, tensor<8x8xf16, d0>, "
            "tensor<8x8xf16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "loss"), "tensor<f16, d0>");
  EXPECT_EQ(testing::EntryValueType(m, "dx"), "tensor<5x8xf16, d0>");
}

TEST(MlpTest, DeviceOptionPlacesEveryValue) {
  MlpOptions o;
  o.device = DeviceId(3);
  Module m = BuildAndInfer(o);
  EXPECT_EQ(testing::EntryValueType(m, "x"), "tensor<8x16xf32, d3>");
  EXPECT_EQ(testing::EntryValueType(m, "w3_new"), "tensor<16x16xf32, d3>");
  EXPECT_EQ(testing::EntryValueType(m, "loss"), "tensor<f32, d3>");
}

TEST(MlpTest, NoDeviceGivesADeviceGenericFunction) {
  MlpOptions o;
  o.device = DeviceId();
  Module m = BuildAndInfer(o);
  EXPECT_TRUE(m.entry()->IsDeviceGeneric());
  EXPECT_EQ(testing::EntryValueType(m, "a3"), "tensor<8x16xf32>");
  EXPECT_EQ(testing::EntryValueType(m, "dw0"), "tensor<16x16xf32>");
}

TEST(MlpTest, ParameterCountIsLayersTimesWidthSquared) {
  MlpOptions o;
  o.n_layer = 16;
  o.d_model = 8192;
  EXPECT_EQ(MlpParameterCount(o), 16LL * 8192 * 8192);  // 1,073,741,824
}

TEST(MlpTest, BadOptionsAreErrorsNamingTheOption) {
  auto build = [](auto edit) {
    MlpOptions o;
    edit(o);
    return BuildMlpTraining(o).status();
  };
  EXPECT_THAT(build([](MlpOptions& o) { o.n_layer = 0; }),
              StatusIs(StatusCode::kInvalidArgument, "mlp option n_layer must be >= 1, got 0"));
  EXPECT_THAT(build([](MlpOptions& o) { o.batch = 0; }),
              StatusIs(StatusCode::kInvalidArgument, "mlp option batch must be >= 1, got 0"));
  EXPECT_THAT(build([](MlpOptions& o) { o.d_model = -4; }),
              StatusIs(StatusCode::kInvalidArgument, "mlp option d_model must be >= 1, got -4"));
  EXPECT_THAT(
      build([](MlpOptions& o) { o.dtype = DType::kI64; }),
      StatusIs(StatusCode::kInvalidArgument, "mlp option dtype must be a float type, got i64"));
  EXPECT_THAT(build([](MlpOptions& o) { o.learning_rate = -1; }),
              StatusIs(StatusCode::kInvalidArgument, "learning_rate must be finite and >= 0"));
  EXPECT_THAT(build([](MlpOptions& o) {
                o.optimizer = MlpOptimizer::kAdam;
                o.adam_beta2 = 1.0;
              }),
              StatusIs(StatusCode::kInvalidArgument, "adam_beta2 must be in [0, 1), got 1"));
  EXPECT_THAT(build([](MlpOptions& o) {
                o.optimizer = MlpOptimizer::kAdam;
                o.adam_epsilon = 0;
              }),
              StatusIs(StatusCode::kInvalidArgument, "adam_epsilon must be finite and > 0"));
  // SGD ignores the Adam hyper-parameters.
  EXPECT_OK(build([](MlpOptions& o) { o.adam_beta1 = 7; }));
}

}  // namespace
}  // namespace distir
