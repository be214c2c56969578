// The tiled attention model: how long one fused attention kernel
// (FlashAttention-2, cuDNN's fused attention) takes as a function of its
// shape and mask, not only of its FLOP count.
//
// The kernels give each thread block one block of `block` query rows (forward)
// or key rows (backward) of one head; the block walks the blocks of the other
// side in steps of two (forward) or five (backward) block x block x d products.
// Under a causal mask the i-th query block meets only i + 1 key blocks, so the
// blocks of one head differ in length and the hardware scheduler, which hands
// the next block to whichever SM frees first, ends unevenly. The model
// schedules the blocks that way on the SMs (one block per SM), each block
// costing its steps plus a fixed overhead at max_efficiency of the peak per
// SM, against the bytes at the DRAM bandwidth. It applies when a hardware
// profile has `device.attention` (AttentionTiling in hardware_profile.h) next
// to `device.gemm`. Derivation, fit and sources: docs/cost_model.md §2.2.2.

#pragma once

#include "ir/dtype.h"
#include "sim/hardware_profile.h"

namespace distir::sim {

/// One attention kernel: `heads` = batch x query heads independent heads of
/// `queries` query rows against `keys` key rows, head dimension `head_dim`.
/// REQUIRES: all >= 0.
struct AttentionShape {
  double heads = 0;
  double queries = 0;
  double keys = 0;
  double head_dim = 0;
  bool causal = false;
  bool backward = false;
};

/// The tiled model's terms for one kernel (docs/cost_model.md §2.2.2).
struct TiledAttentionEstimate {
  double blocks = 0;  ///< heads · ⌈queries / block⌉ (forward) or ⌈keys / block⌉ (backward)
  double steps = 0;   ///< block-pair steps of all blocks (the causal triangle or the square)
  double makespan = 0;   ///< steps + overheads of the busiest SM under greedy scheduling
  double step_s = 0;     ///< one step: its FLOPs at one SM's share of the efficient peak
  double compute_s = 0;  ///< makespan · step_s
  double memory_s = 0;   ///< bytes / dram_bandwidth
  double time_s = 0;     ///< max(compute_s, memory_s) + kernel_launch_overhead
};

/// The tiled attention model of one kernel of `shape` in `dtype` moving `bytes`
/// bytes, on `device` with `tiling` and `sm_count` SMs. Pure; finite for finite
/// inputs. A shape with no rows or heads costs max(0, memory) + launch.
TiledAttentionEstimate EstimateTiledAttention(const DeviceSpec& device,
                                              const AttentionTiling& tiling, int sm_count,
                                              DType dtype, const AttentionShape& shape,
                                              double bytes);

/// The busiest SM's load when `heads` copies of the blocks of one head, each
/// block `overhead` plus its steps, are handed in order to the next free of
/// `sm_count` SMs: greedy list scheduling, as the GPU's block scheduler does.
/// A head has `rows` blocks, each meeting the `cols` blocks of the other side.
/// Under `causal` (the mask aligned to the bottom right, as FlashAttention-2
/// aligns it when there are more keys than queries) the forward's i-th query
/// block (from 0) meets min(cols, i + 1 + cols − rows) key blocks and the
/// backward's j-th key block meets cols − max(0, j − (rows − cols)) query
/// blocks, both at least 0: the backward hands a head's longest blocks first.
/// Exact for up to 2^16 blocks; beyond, Graham's bound total / sm_count +
/// longest block, whose tail is a small part of so long a kernel. Memoized
/// (thread-safe), as a search costs the same few shapes many times.
double GreedyMakespan(double heads, double rows, double cols, bool causal, bool backward,
                      double overhead, int sm_count);

/// Seconds of one attention kernel: the tiled attention model when the device
/// has both `attention` and `gemm`, otherwise MatMulKernelTime(device, dtype,
/// flops, bytes) (a matrix kernel of its FLOPs; profiles without the section
/// keep their numbers exactly).
double AttentionKernelTime(const DeviceSpec& device, DType dtype, const AttentionShape& shape,
                           double flops, double bytes);

}  // namespace distir::sim
