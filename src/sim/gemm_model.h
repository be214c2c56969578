// The tiled GEMM model: how long one matrix-multiplication kernel takes as a
// function of its shape, not only of its FLOP count.
//
// cuBLAS and CUTLASS kernels cut the M x N output into tile_m x tile_n tiles,
// one per thread block, and run the blocks in waves of sm_count x ctas_per_sm;
// a partial tile or a partial last wave costs as much as a full one (tile and
// wave quantization). A dimension shorter than the tile gets a tile cut down
// to it (rounded up to 16 rows), as cuBLAS picks small tiles for skinny shapes. The model charges
// whole waves at max_efficiency of the dtype's peak, each plus a fixed fill/drain overhead, against
// the roofline's memory bound. It applies when a hardware profile has a `device.gemm` section
// (GemmTiling in hardware_profile.h); the compute rules
// (compute_cost_rules.cc) describe each op as a GemmShape and call
// GemmKernelTime. Derivation and sources: docs/cost_model.md §2.2.1.

#pragma once

#include "ir/dtype.h"
#include "sim/hardware_profile.h"

namespace distir::sim {

/// One GEMM kernel: `batch` independent (m x k) · (k x n) products. Extents are
/// doubles so that the products of big programs never overflow. REQUIRES: all >= 0.
struct GemmShape {
  double batch = 1;
  double m = 0;
  double n = 0;
  double k = 0;
};

/// The tiled model's terms for one kernel (docs/cost_model.md §2.2.1).
struct TiledGemmEstimate {
  double tiles = 0;  ///< batch · ⌈m / tile_m'⌉ · ⌈n / tile_n'⌉ (tile' = the cut-down tile)
  double splits = 1;     ///< slices of K (split-K; 1 = none), each slice a thread block per tile
  double waves = 0;      ///< ⌈tiles · splits / (sm_count · ctas_per_sm)⌉
  double wave_s = 0;     ///< one wave: its tiles' FLOPs at the per-block rate, + overhead
  double compute_s = 0;  ///< waves · wave_s
  double memory_s = 0;   ///< bytes / dram_bandwidth
  double time_s = 0;     ///< max(compute_s, memory_s) + kernel_launch_overhead
};

/// The tiled model of one kernel of `shape` in `dtype` moving `bytes` bytes
/// (A, B and C once each) on `device` with `tiling`. With `tiling.split_k_min`
/// > 0 and tiles that fill less than one wave, also the kernel that splits K
/// into ⌊concurrent / tiles⌋ slices (at most ⌊k / split_k_min⌋), of which the
/// faster is taken, as cuBLAS's heuristics pick among its kernels. Pure; the
/// result is finite for finite inputs. A shape with no output (m, n or batch
/// 0) has no tiles and costs max(0, memory) + launch.
TiledGemmEstimate EstimateTiledGemm(const DeviceSpec& device, const GemmTiling& tiling, DType dtype,
                                    const GemmShape& shape, double bytes);

/// Seconds of one matrix-multiplication kernel: the tiled model when
/// `device.gemm` is present, otherwise MatMulKernelTime(device, dtype, flops,
/// bytes) (the calibrated regression, else the flat roofline), so that profiles
/// without a `gemm` section keep their numbers exactly. `flops` is what the
/// roofline charges (it may include an epilogue the tiled model folds into its
/// overhead).
double GemmKernelTime(const DeviceSpec& device, DType dtype, const GemmShape& shape, double flops,
                      double bytes);

}  // namespace distir::sim
