// Tests of the tiled GEMM model (sim/gemm_model.h, docs/cost_model.md §2.2.1):
// the wave staircase, the approach to max_efficiency of the peak, small
// problems bound by memory or launch latency, monotonicity, a case worked by
// hand, and that profiles without a gemm section keep the roofline exactly.
//
// The device is A100-like: f16 peak P = 312e12 FLOP/s, DRAM B = 2039e9 B/s,
// launch L = 5e-6 s; the tiling 108 SMs x 1 block, 128x128 tiles, efficiency
// e = 0.8, no per-wave overhead unless a test sets one.

#include "sim/gemm_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/cost_model.h"
#include "sim_test_util.h"

namespace distir::sim {
namespace {

using testing::F16;
using testing::MakeOp;

DeviceSpec A100Like() {
  DeviceSpec d = testing::TestHardware().device;
  d.peak_flops_f16 = 312e12;
  d.peak_flops_bf16 = 312e12;
  d.peak_flops_f32 = 19.5e12;
  d.dram_bandwidth = 2039e9;
  d.kernel_launch_overhead = 5e-6;
  d.gemm = GemmTiling{108, 1, 128, 128, 0.8, 0};
  return d;
}

// A, B and C once each, f16.
double F16Bytes(const GemmShape& s) { return 2 * s.batch * (s.m * s.k + s.k * s.n + s.m * s.n); }

TiledGemmEstimate Estimate(const GemmShape& s, const DeviceSpec& d = A100Like()) {
  return EstimateTiledGemm(d, *d.gemm, DType::kF16, s, F16Bytes(s));
}

void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * expected + 1e-18) << "expected " << expected;
}

TEST(GemmModelTest, WorkedExampleByHand) {
  // 1536 x 1152 x 4096 f16: 12 x 9 = 108 tiles of 128x128, exactly one wave of
  // 108 SMs. A wave: 2 * 128 * 128 * 4096 * 108 = 14495514624 FLOPs at
  // 0.8 * 312e12 = 2.496e14 FLOP/s = 5.8075e-5 s. Memory: (1536*4096 +
  // 4096*1152 + 1536*1152) * 2 = 25559040 B / 2039e9 = 1.2535e-5 s, so the
  // kernel is compute-bound: 14495514624 / 2.496e14 + 5e-6 s.
  TiledGemmEstimate e = Estimate({1, 1536, 1152, 4096});
  EXPECT_EQ(e.tiles, 108);
  EXPECT_EQ(e.waves, 1);
  ExpectSeconds(e.memory_s, 25559040 / 2039e9);
  ExpectSeconds(e.compute_s, 14495514624.0 / 2.496e14);
  ExpectSeconds(e.time_s, 14495514624.0 / 2.496e14 + 5e-6);
}

TEST(GemmModelTest, OneMoreColumnPastAWaveCostsAWholeWave) {
  // N = 1152 fills 108 tiles (one wave); N = 1153 needs a 10th column of tiles,
  // 120 tiles, 2 waves: the time jumps by exactly one wave, then stays flat up
  // to N = 18 * 128 = 2304 (216 tiles, still 2 waves), then jumps again.
  const double one_wave = Estimate({1, 1536, 1152, 4096}).compute_s;
  EXPECT_EQ(Estimate({1, 1536, 1153, 4096}).waves, 2);
  ExpectSeconds(Estimate({1, 1536, 1153, 4096}).compute_s, 2 * one_wave);
  for (double n = 1153; n <= 2304; n += 37) {
    ExpectSeconds(Estimate({1, 1536, n, 4096}).compute_s, 2 * one_wave);
  }
  ExpectSeconds(Estimate({1, 1536, 2304, 4096}).compute_s, 2 * one_wave);
  ExpectSeconds(Estimate({1, 1536, 2305, 4096}).compute_s, 3 * one_wave);
}

TEST(GemmModelTest, BatchMultipliesTiles) {
  // 4 products of 384 x 384 (3 x 3 tiles each) = 36 tiles, one wave; 13 of them
  // = 117 tiles, two waves.
  EXPECT_EQ(Estimate({4, 384, 384, 1024}).tiles, 36);
  EXPECT_EQ(Estimate({4, 384, 384, 1024}).waves, 1);
  EXPECT_EQ(Estimate({13, 384, 384, 1024}).waves, 2);
}

TEST(GemmModelTest, LargeSquareGemmApproachesMaxEfficiencyOfThePeak) {
  // 16384^3: 128 x 128 = 16384 tiles in 152 waves (151.7 full): the achieved
  // rate is 0.8 * 151.7 / 152 of the peak, within 0.2 % of max_efficiency.
  const double n = 16384;
  TiledGemmEstimate e = Estimate({1, n, n, n});
  const double achieved = 2 * n * n * n / (e.time_s * 312e12);
  EXPECT_LT(achieved, 0.8);
  EXPECT_GT(achieved, 0.8 * 0.995);
  // ... while the flat roofline would claim the whole peak.
  DeviceSpec flat = A100Like();
  flat.gemm.reset();
  EXPECT_GT(
      2 * n * n * n /
          (MatMulKernelTime(flat, DType::kF16, 2 * n * n * n, F16Bytes({1, n, n, n})) * 312e12),
      0.99);
}

TEST(GemmModelTest, TinyGemmIsLaunchBound) {
  // 16^3: one 16x16 tile (cut down from 128), 2*16*16*16*108 / 2.496e14 =
  // 3.5e-9 s of compute, 1536 B of memory: the launch (5 us) is 99.9 % of it.
  TiledGemmEstimate e = Estimate({1, 16, 16, 16});
  EXPECT_EQ(e.tiles, 1);
  EXPECT_LT(e.time_s, 5e-6 * 1.001);
  EXPECT_GT(e.time_s, 5e-6);
}

TEST(GemmModelTest, SkinnyGemmIsMemoryBound) {
  // 16 x 8192 x 8192 (a GEMV-like product with a small batch of rows): 64 tiles
  // of 16 x 128, one wave of 2*16*128*8192*108 / 2.496e14 = 1.45e-5 s, while
  // the 8192^2 f16 weight alone is 134 MB, 6.6e-5 s at 2039 GB/s: the time is
  // the memory time plus the launch.
  const GemmShape s{1, 16, 8192, 8192};
  TiledGemmEstimate e = Estimate(s);
  EXPECT_EQ(e.tiles, 64);
  EXPECT_LT(e.compute_s, e.memory_s);
  ExpectSeconds(e.time_s, F16Bytes(s) / 2039e9 + 5e-6);
}

TEST(GemmModelTest, TimeNeverDecreasesAsAnyDimensionGrows) {
  for (double base : {16.0, 100.0, 1000.0}) {
    double prev_m = 0, prev_n = 0, prev_k = 0, prev_b = 0;
    for (double x = 1; x <= 3000; x = x * 1.3 + 1) {
      const double tm = Estimate({1, x, base, base}).time_s;
      const double tn = Estimate({1, base, x, base}).time_s;
      const double tk = Estimate({1, base, base, x}).time_s;
      const double tb = Estimate({std::floor(x), base, base, base}).time_s;
      EXPECT_GE(tm, prev_m) << "m = " << x;
      EXPECT_GE(tn, prev_n) << "n = " << x;
      EXPECT_GE(tk, prev_k) << "k = " << x;
      EXPECT_GE(tb, prev_b) << "batch = " << x;
      prev_m = tm, prev_n = tn, prev_k = tk, prev_b = tb;
    }
  }
}

// Split-K (split_k_min > 0), measured on an H200 (docs/calibration.md §5.4):
// GPT-3 1.3B's projection weight gradient at t = 8, 256 x 2048 x 8192, ran in
// 17 us where one thread block per output tile needs 92 us.
DeviceSpec H200LikeWithSplitK() {
  DeviceSpec d = A100Like();
  d.peak_flops_f16 = 989e12;
  d.dram_bandwidth = 4.8e12;
  d.gemm = GemmTiling{132, 1, 256, 128, 0.8, 0, 256};
  return d;
}

TEST(GemmModelTest, SplitKFillsTheSmsThatAPartialWaveLeavesIdle) {
  // 256 x 2048: 1 x 16 = 16 tiles of 256x128 on 132 SMs. Slices: min(132 / 16,
  // 8192 / 256) = 8, so 128 thread blocks in one wave, each over k = 1024:
  // 2 * 256 * 128 * 1024 * 132 / (0.8 * 989e12) s. The slices' f32 partials
  // are summed in L2: no DRAM traffic beyond A, B and C.
  const DeviceSpec d = H200LikeWithSplitK();
  const GemmShape s{1, 256, 2048, 8192};
  TiledGemmEstimate e = Estimate(s, d);
  EXPECT_EQ(e.tiles, 16);
  EXPECT_EQ(e.splits, 8);
  EXPECT_EQ(e.waves, 1);
  ExpectSeconds(e.compute_s, 2.0 * 256 * 128 * 1024 * 132 / (0.8 * 989e12));
  ExpectSeconds(e.memory_s, F16Bytes(s) / 4.8e12);
  ExpectSeconds(e.time_s, std::max(e.compute_s, e.memory_s) + 5e-6);
  DeviceSpec plain = d;
  plain.gemm->split_k_min = 0;
  EXPECT_EQ(Estimate(s, plain).splits, 1);
  EXPECT_GT(Estimate(s, plain).time_s, 4 * e.time_s);
}

TEST(GemmModelTest, SplitKNeverSlowsAKernelAndLeavesFullWavesAlone) {
  const DeviceSpec d = H200LikeWithSplitK();
  DeviceSpec plain = d;
  plain.gemm->split_k_min = 0;
  for (double m : {16.0, 256.0, 1024.0, 4096.0}) {
    for (double n : {64.0, 1024.0, 8192.0}) {
      for (double k : {128.0, 512.0, 4096.0, 16384.0}) {
        const GemmShape s{1, m, n, k};
        TiledGemmEstimate split = Estimate(s, d), one = Estimate(s, plain);
        EXPECT_LE(split.time_s, one.time_s) << m << "x" << n << "x" << k;
        // A kernel with at least a full wave of tiles, or K under two slices, is not split.
        if (one.tiles >= 132 || k < 512) {
          EXPECT_EQ(split.splits, 1) << m << "x" << n << "x" << k;
        }
      }
    }
  }
}

TEST(GemmModelTest, EachWavePaysTheTileOverhead) {
  DeviceSpec d = A100Like();
  d.gemm->tile_overhead_s = 2e-6;
  // Two waves (1536 x 1153): twice the one-wave compute, plus 2 x 2 us.
  const double one_wave = Estimate({1, 1536, 1152, 4096}).compute_s;
  ExpectSeconds(Estimate({1, 1536, 1153, 4096}, d).compute_s, 2 * one_wave + 4e-6);
}

TEST(GemmModelTest, WithoutAGemmSectionTheRooflineIsUnchanged) {
  DeviceSpec d = A100Like();
  d.gemm.reset();
  const GemmShape s{1, 1536, 1153, 4096};
  const double flops = 2 * s.m * s.n * s.k;
  EXPECT_EQ(GemmKernelTime(d, DType::kF16, s, flops, F16Bytes(s)),
            MatMulKernelTime(d, DType::kF16, flops, F16Bytes(s)));
}

HardwareProfile TiledHardware() {
  HardwareProfile hw = testing::TestHardware();
  hw.device = A100Like();
  return hw;
}

double OpCost(OpKind kind, const std::vector<Type>& in, const std::vector<Type>& out) {
  testing::OneOp one = MakeOp(kind, in, out);
  CostModel model(TiledHardware(), nullptr);
  StatusOr<double> cost = model.OpCost(*one.op);
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  return cost.ok() ? *cost : -1;
}

TEST(GemmModelTest, MatMulFoldsTheBatchIntoRowsAgainstAMatrix) {
  // [4, 384, 1024] x [1024, 1152] is one GEMM of 1536 x 1152 x 1024 (the GPU
  // executor's call): 108 tiles, one wave.
  const GemmShape folded{1, 1536, 1152, 1024};
  ExpectSeconds(
      OpCost(OpKind::kMatMul, {F16({4, 384, 1024}), F16({1024, 1152})}, {F16({4, 384, 1152})}),
      Estimate(folded).time_s);
}

TEST(GemmModelTest, BatchedMatMulIsStridedBatched) {
  // Attention scores [8, 16, 128, 64] x [8, 16, 64, 128]: 128 products of
  // 128 x 128 x 64, 128 tiles, 2 waves on 108 SMs.
  const GemmShape s{128, 128, 128, 64};
  EXPECT_EQ(Estimate(s).waves, 2);
  ExpectSeconds(OpCost(OpKind::kMatMul, {F16({8, 16, 128, 64}), F16({8, 16, 64, 128})},
                       {F16({8, 16, 128, 128})}),
                Estimate(s).time_s);
}

TEST(GemmModelTest, MatMulGradIsTwoGemms) {
  // x [1536, 1024], w [1024, 1152], dy [1536, 1152]: dx = dy wT is 1536 x 1024
  // by 1152, dw = xT dy is 1024 x 1152 by 1536.
  const DeviceSpec d = A100Like();
  const double dx_bytes = 2.0 * (1536 * 1152 + 1024 * 1152 + 1536 * 1024);
  const double dw_bytes = 2.0 * (1536 * 1024 + 1536 * 1152 + 1024 * 1152);
  const double expected =
      EstimateTiledGemm(d, *d.gemm, DType::kF16, {1, 1536, 1024, 1152}, dx_bytes).time_s +
      EstimateTiledGemm(d, *d.gemm, DType::kF16, {1, 1024, 1152, 1536}, dw_bytes).time_s;
  ExpectSeconds(
      OpCost(OpKind::kMatMulGrad, {F16({1536, 1024}), F16({1024, 1152}), F16({1536, 1152})},
             {F16({1536, 1024}), F16({1024, 1152})}),
      expected);
}

TEST(GemmModelTest, F32UsesTheF32Peak) {
  // The same one-wave shape in f32 runs at 0.8 * 19.5e12: 16x slower compute.
  const GemmShape s{1, 1536, 1152, 4096};
  const DeviceSpec d = A100Like();
  TiledGemmEstimate e = EstimateTiledGemm(d, *d.gemm, DType::kF32, s, 2 * F16Bytes(s));
  ExpectSeconds(e.compute_s, 14495514624.0 / (0.8 * 19.5e12));
}

}  // namespace
}  // namespace distir::sim
