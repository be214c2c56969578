// The matrix-work floor (sim/work_floor.h): under every matrix op's time in
// each timing model, and under the summed times of its pieces, whatever the
// split; no floor where a fitted regression has a negative term.

#include "sim/work_floor.h"

#include <gtest/gtest.h>

#include "sim/cost_model.h"
#include "sim_test_util.h"

namespace distir::sim {
namespace {

using testing::F16;
using testing::F32;
using testing::MakeOp;
using testing::TestHardware;

double Cost(const Op& op, const HardwareProfile& hw) {
  CostModel model(hw, nullptr);
  StatusOr<double> cost = model.OpCost(op);
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  return cost.ok() ? *cost : -1;
}

// The floor of MatMul [m, k] x [k, n] in f16.
double MatMulFloor(int64_t m, int64_t k, int64_t n, const HardwareProfile& hw) {
  testing::OneOp one = MakeOp(OpKind::kMatMul, {F16({m, k}), F16({k, n})}, {F16({m, n})});
  std::optional<double> floor = MatrixWorkFloorS(*one.fn, hw.device);
  EXPECT_TRUE(floor.has_value());
  return floor.value_or(-1);
}

double MatMulCost(int64_t m, int64_t k, int64_t n, const HardwareProfile& hw) {
  testing::OneOp one = MakeOp(OpKind::kMatMul, {F16({m, k}), F16({k, n})}, {F16({m, n})});
  return Cost(*one.op, hw);
}

HardwareProfile Tiled(int64_t split_k_min) {
  HardwareProfile hw = TestHardware();
  hw.device.gemm = GemmTiling{.sm_count = 108,
                              .ctas_per_sm = 1,
                              .tile_m = 256,
                              .tile_n = 128,
                              .max_efficiency = 0.7,
                              .tile_overhead_s = 2e-6,
                              .split_k_min = split_k_min};
  return hw;
}

// The shapes of a transformer's products and skinny and odd ones; each also
// split in 2, 4 and 8 along m (batch), n (a column-parallel weight) and k (a
// row-parallel weight, partial sums): the pieces together never run faster
// than the whole's floor.
TEST(WorkFloorTest, BelowEveryMatMulAndItsPiecesInEachModel) {
  const int64_t shapes[][3] = {{4096, 12288, 36864}, {2048, 4096, 4096}, {1, 4096, 4096},
                               {8, 64, 8},           {333, 777, 129},    {16384, 128, 2048}};
  for (const HardwareProfile& hw : {TestHardware(), Tiled(0), Tiled(256)}) {
    for (const auto& s : shapes) {
      const int64_t m = s[0], k = s[1], n = s[2];
      const double floor = MatMulFloor(m, k, n, hw);
      EXPECT_GT(floor, 0);
      EXPECT_LE(floor, MatMulCost(m, k, n, hw)) << m << "x" << k << "x" << n;
      for (int64_t p : {2, 4, 8}) {
        if (m % p == 0) {
          EXPECT_LE(floor, p * MatMulCost(m / p, k, n, hw)) << m << " / " << p;
        }
        if (n % p == 0) {
          EXPECT_LE(floor, p * MatMulCost(m, k, n / p, hw)) << n << " / " << p;
        }
        if (k % p == 0) {
          EXPECT_LE(floor, p * MatMulCost(m, k / p, n, hw)) << k << " / " << p;
        }
      }
    }
  }
}

// The roofline runs a big product at the peak: the floor is its FLOPs there.
TEST(WorkFloorTest, TheRooflineFloorIsThePeak) {
  EXPECT_DOUBLE_EQ(MatMulFloor(1024, 1024, 1024, TestHardware()), 2.0 * 1024 * 1024 * 1024 / 1e14);
  EXPECT_DOUBLE_EQ(MatMulFloor(1024, 1024, 1024, Tiled(0)),
                   2.0 * 1024 * 1024 * 1024 / (1e14 * 0.7));
}

// MatMulGrad is two products (dx and dw), each under its floor.
TEST(WorkFloorTest, BelowMatMulGrad) {
  for (const HardwareProfile& hw : {TestHardware(), Tiled(256)}) {
    testing::OneOp one =
        MakeOp(OpKind::kMatMulGrad, {F16({2048, 4096}), F16({4096, 1024}), F16({2048, 1024})},
               {F16({2048, 4096}), F16({4096, 1024})});
    const std::optional<double> floor = MatrixWorkFloorS(*one.fn, hw.device);
    ASSERT_TRUE(floor.has_value());
    EXPECT_DOUBLE_EQ(*floor, 2 * 2.0 * 2048 * 4096 * 1024 / (1e14 * (hw.device.gemm ? 0.7 : 1)));
    EXPECT_LE(*floor, Cost(*one.op, hw));
  }
}

// A regression bounds the rate by 1 / per_flop when no term is negative; a
// negative intercept (distir calibrate may fit one) leaves no floor.
TEST(WorkFloorTest, ARegressionBoundsTheRateOnlyWithoutNegativeTerms) {
  HardwareProfile hw = TestHardware();
  hw.device.matmul_regression = MatMulRegression{1e-6, 2e-14, 1e-12};
  testing::OneOp one = MakeOp(OpKind::kMatMul, {F16({64, 64}), F16({64, 64})}, {F16({64, 64})});
  EXPECT_EQ(MatrixRateCeiling(*one.op, hw.device), std::optional<double>(1 / 2e-14));
  EXPECT_LE(*MatrixWorkFloorS(*one.fn, hw.device), Cost(*one.op, hw));
  hw.device.matmul_regression->intercept_s = -1e-6;
  EXPECT_FALSE(MatrixRateCeiling(*one.op, hw.device).has_value());
  EXPECT_FALSE(MatrixWorkFloorS(*one.fn, hw.device).has_value());
}

// Other ops add nothing to the matrix floor: their time is not bounded by a
// FLOP rate.
TEST(WorkFloorTest, OnlyMatrixOpsCountInTheMatrixFloor) {
  testing::OneOp one = MakeOp(OpKind::kAdd, {F16({64, 64}), F16({64, 64})}, {F16({64, 64})});
  EXPECT_FALSE(MatrixRateCeiling(*one.op, TestHardware().device).has_value());
  EXPECT_EQ(MatrixWorkFloorS(*one.fn, TestHardware().device), std::optional<double>(0));
}

// The whole floor adds a split-invariant streaming kernel's own time, which
// its pieces together never undercut (split along a kept dim here: bytes,
// FLOPs and launches only add); data movement and casts add nothing.
TEST(WorkFloorTest, StreamingKernelsAddTheirRooflineTime) {
  const HardwareProfile hw = TestHardware();
  testing::OneOp softmax = MakeOp(OpKind::kSoftmax, {F16({256, 4096})}, {F16({256, 4096})});
  const double whole = Cost(*softmax.op, hw);
  EXPECT_EQ(WorkFloorS(*softmax.fn, hw), std::optional<double>(whole));
  testing::OneOp half = MakeOp(OpKind::kSoftmax, {F16({128, 4096})}, {F16({128, 4096})});
  EXPECT_LE(whole, 2 * Cost(*half.op, hw));
  testing::OneOp add = MakeOp(OpKind::kAdd, {F16({64, 64}), F16({1, 64})}, {F16({64, 64})});
  testing::OneOp add_half = MakeOp(OpKind::kAdd, {F16({32, 64}), F16({1, 64})}, {F16({32, 64})});
  EXPECT_LE(*WorkFloorS(*add.fn, hw), 2 * Cost(*add_half.op, hw));
  for (OpKind kind : {OpKind::kCast, OpKind::kTranspose, OpKind::kReduceSum}) {
    EXPECT_FALSE(IsSplitInvariantStreaming(kind));
  }
  testing::OneOp cast = MakeOp(OpKind::kCast, {F16({64, 64})}, {F32({64, 64})});
  EXPECT_EQ(WorkFloorS(*cast.fn, hw), std::optional<double>(0));
}

}  // namespace
}  // namespace distir::sim
