// Tests of the tiled attention model (sim/attention_model.h, docs/cost_model.md
// §2.2.2): the greedy schedule of a causal kernel's uneven blocks worked by hand,
// the mask's alignment, Graham's bound for huge grids, one kernel timed by hand,
// and the cost rule's choice between this model and the matrix-kernel roofline.
//
// The device is H100-like: bf16 peak P = 989e12 FLOP/s, DRAM 3.35e12 B/s, launch
// L = 5e-6 s, 132 SMs; blocks of 128 rows, 3.75 steps of overhead a block,
// efficiencies 0.812 forward and 0.582 backward (the h100-sxm.yaml figures).

#include "sim/attention_model.h"

#include <gtest/gtest.h>

#include "sim/cost_model.h"
#include "sim_test_util.h"

namespace distir::sim {
namespace {

DeviceSpec H100Like() {
  DeviceSpec d = testing::TestHardware().device;
  d.peak_flops_bf16 = 989e12;
  d.dram_bandwidth = 3.35e12;
  d.kernel_launch_overhead = 5e-6;
  d.gemm = GemmTiling{132, 1, 256, 128, 0.827, 0};
  d.attention = AttentionTiling{128, 3.75, 0.812, 0.582};
  return d;
}

void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * expected + 1e-18) << "expected " << expected;
}

TEST(AttentionModelTest, CausalBlocksAreScheduledGreedilyInLaunchOrder) {
  // One head of 4 query blocks meeting 1, 2, 3, 4 key blocks, on 2 SMs: SM a
  // takes 1, SM b 2; a frees at 1 and takes 3 (ends at 4), b frees at 2 and
  // takes 4 (ends at 6). The even split would be 10 / 2 = 5.
  EXPECT_EQ(GreedyMakespan(1, 4, 4, /*causal=*/true, /*backward=*/false, 0, 2), 6);
  // The backward hands out 4, 3, 2, 1: a 4, b 3 then 2 (ends 5), a 1 (ends 5).
  EXPECT_EQ(GreedyMakespan(1, 4, 4, true, true, 0, 2), 5);
  // Each block's overhead is paid once: lengths 1.5, 2.5, 3.5, 4.5 -> a: 1.5 + 3.5,
  // b: 2.5 + 4.5 = 7.
  EXPECT_EQ(GreedyMakespan(1, 4, 4, true, false, 0.5, 2), 7);
}

TEST(AttentionModelTest, UnmaskedBlocksRunInWaves) {
  // 3 heads x 2 blocks of 5 steps on 4 SMs: 6 equal blocks, 2 waves.
  EXPECT_EQ(GreedyMakespan(3, 2, 5, false, false, 0, 4), 10);
}

TEST(AttentionModelTest, ACausalMaskWithMoreKeysIsAlignedBottomRight) {
  // 2 query blocks, 4 key blocks: the queries are the last two blocks' worth,
  // meeting 3 and 4 key blocks (FlashAttention-2's alignment); on 1 SM: 7.
  EXPECT_EQ(GreedyMakespan(1, 2, 4, true, false, 0, 1), 7);
  // The backward over those 4 key blocks: key blocks 0..2 meet both query blocks
  // (j <= rows - cols = 2), key block 3 meets only the last: 2 + 2 + 2 + 1.
  EXPECT_EQ(GreedyMakespan(1, 4, 2, true, true, 0, 1), 7);
}

TEST(AttentionModelTest, HugeGridsUseGrahamsBound) {
  // 1000 heads x 100 blocks of 1 step = 100000 blocks (> 2^16) on 132 SMs:
  // 100000 / 132 + 1 (the exact schedule would be ceil(100000 / 132) = 758).
  EXPECT_DOUBLE_EQ(GreedyMakespan(1000, 100, 1, false, false, 0, 132), 100000.0 / 132 + 1);
}

TEST(AttentionModelTest, StepsOfAHeadInClosedFormMatchTheBlockByBlockSum) {
  // The block steps of one head on 1 SM with no overhead are the head's steps, the
  // exact schedule summing them block by block; EstimateTiledAttention's `steps`
  // uses the closed form.
  const DeviceSpec d = H100Like();
  for (double q : {1.0, 3.0, 7.0, 16.0}) {
    for (double k : {1.0, 2.0, 7.0, 20.0}) {
      for (bool backward : {false, true}) {
        const double rows = backward ? k : q, cols = backward ? q : k;
        const AttentionShape s{1, q * 128, k * 128, 128, true, backward};
        const double exact = GreedyMakespan(1, rows, cols, true, backward, 0, 1);
        EXPECT_EQ(EstimateTiledAttention(d, *d.attention, 132, DType::kBF16, s, 0).steps, exact)
            << q << " x " << k << (backward ? " backward" : " forward");
      }
    }
  }
}

TEST(AttentionModelTest, AHugeSequenceIsTimedInClosedForm) {
  // 2^40 tokens: 2^33 blocks, far past the exact schedule; no block list is built.
  const DeviceSpec d = H100Like();
  const AttentionShape s{1, 1099511627776.0, 1099511627776.0, 128, true, false};
  TiledAttentionEstimate e = EstimateTiledAttention(d, *d.attention, 132, DType::kBF16, s, 0);
  const double n = 8589934592.0;
  EXPECT_EQ(e.steps, n * (n + 1) / 2);
  EXPECT_DOUBLE_EQ(e.makespan, (n * (n + 1) / 2 + n * 3.75) / 132 + 3.75 + n);
}

TEST(AttentionModelTest, WorkedExampleByHand) {
  // 2 heads of 256 causal queries and keys, d = 128, bf16, forward: 4 blocks of
  // 128 rows meeting 1, 2, 1, 2 key blocks, each + 3.75, on 132 SMs: makespan 5.75
  // steps. A step: 4 * 128^3 = 8388608 FLOPs at 989e12 * 0.812 / 132 FLOP/s per SM
  // = 1.3637e-6 s. Bytes (q, k, v, o bf16 and the f32 lse) 4 * 131072 + 2048 =
  // 526336 B: 1.57e-7 s at 3.35 TB/s, so compute-bound.
  const DeviceSpec d = H100Like();
  AttentionShape s{2, 256, 256, 128, true, false};
  TiledAttentionEstimate e = EstimateTiledAttention(d, *d.attention, 132, DType::kBF16, s, 526336);
  EXPECT_EQ(e.blocks, 4);
  EXPECT_EQ(e.steps, 6);
  EXPECT_EQ(e.makespan, 5.75);
  const double step_s = 8388608.0 / (989e12 * 0.812 / 132);
  ExpectSeconds(e.step_s, step_s);
  ExpectSeconds(e.time_s, 5.75 * step_s + 5e-6);
  // The backward: 2.5x the FLOPs a step at its own efficiency; blocks of keys
  // meeting 2, 1, 2, 1 query blocks.
  s.backward = true;
  TiledAttentionEstimate b = EstimateTiledAttention(d, *d.attention, 132, DType::kBF16, s, 526336);
  EXPECT_EQ(b.makespan, 5.75);
  ExpectSeconds(b.step_s, 20971520.0 / (989e12 * 0.582 / 132));
}

TEST(AttentionModelTest, UnevenCausalBlocksCostMoreThanHalfTheSquare) {
  // LLaMA-2 7B at t = 8 (4 heads), 2048 tokens: 64 blocks on 132 SMs run as one
  // ragged wave whose longest block (16 steps + overhead) sets the time, so the
  // causal kernel takes as long as the unmasked one.
  const DeviceSpec d = H100Like();
  const double causal = AttentionKernelTime(d, DType::kBF16, {4, 2048, 2048, 128, true}, 0, 0);
  const double full = AttentionKernelTime(d, DType::kBF16, {4, 2048, 2048, 128, false}, 0, 0);
  EXPECT_EQ(causal, full);
  // At 96 heads the blocks fill many waves and the mask saves nearly half.
  const double causal96 = AttentionKernelTime(d, DType::kBF16, {96, 8192, 8192, 128, true}, 0, 0);
  const double full96 = AttentionKernelTime(d, DType::kBF16, {96, 8192, 8192, 128, false}, 0, 0);
  EXPECT_LT(causal96, 0.56 * full96);
}

TEST(AttentionModelTest, WithoutTheSectionAttentionIsAMatrixKernel) {
  DeviceSpec d = H100Like();
  d.attention.reset();
  const AttentionShape s{8, 4096, 4096, 128, false, false};
  const double flops = 4.0 * 8 * 4096 * 4096 * 128;
  EXPECT_EQ(AttentionKernelTime(d, DType::kBF16, s, flops, 1e6),
            MatMulKernelTime(d, DType::kBF16, flops, 1e6));
}

}  // namespace
}  // namespace distir::sim
