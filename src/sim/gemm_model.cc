#include "sim/gemm_model.h"

#include <algorithm>
#include <cmath>

#include "sim/cost_model.h"

namespace distir::sim {
namespace {

// The tensor cores' MMA instruction computes 16-row blocks (mma.sync m16n8k16
// on sm_80 and later), the smallest tile a kernel can use.
constexpr double kMinTile = 16;

// The tile extent a kernel uses along a dimension of `extent`: the profile's
// tile, or, for a dimension shorter than it, the dimension rounded up to
// kMinTile. cuBLAS picks small-tile (and GEMV) kernels for skinny shapes; a
// 128-row tile for a 1-row product would charge 128 times its work.
double TileExtent(int64_t tile, double extent) {
  const double t = static_cast<double>(tile);
  if (extent >= t) return t;
  return std::min(t, std::max(kMinTile, std::ceil(extent / kMinTile) * kMinTile));
}

// The tiled model with K cut into `splits` slices (1: the plain kernel).
TiledGemmEstimate EstimateWithSplits(const DeviceSpec& device, const GemmTiling& tiling,
                                     DType dtype, const GemmShape& shape, double bytes,
                                     double splits) {
  TiledGemmEstimate e;
  e.splits = splits;
  const double tile_m = TileExtent(tiling.tile_m, shape.m);
  const double tile_n = TileExtent(tiling.tile_n, shape.n);
  // A partial tile at the edge of M or N runs as a full one (tile quantization).
  e.tiles = shape.batch * std::ceil(shape.m / tile_m) * std::ceil(shape.n / tile_n);
  const double concurrent = static_cast<double>(tiling.sm_count) * tiling.ctas_per_sm;
  // The last wave costs a full wave however few blocks it holds (wave quantization).
  e.waves = std::ceil(e.tiles * splits / concurrent);
  // A full wave runs `concurrent` blocks that together sustain max_efficiency
  // of the peak; each block does 2·tile_m·tile_n·(k / splits) FLOPs whatever its padding.
  const double rate = device.MatrixFlops(dtype) * tiling.max_efficiency;
  const double wave_flops = 2.0 * tile_m * tile_n * std::ceil(shape.k / splits) * concurrent;
  e.wave_s = (rate > 0 ? wave_flops / rate : 0) + tiling.tile_overhead_s;
  e.compute_s = e.waves * e.wave_s;
  // Split-K's f32 partial products are summed through the L2 cache (the
  // H100/H200's 50 MB hold a partial wave's), not DRAM: counting them at the DRAM
  // bandwidth fitted the H200's sweep worse (docs/cost_model.md §2.2.1).
  e.memory_s = device.dram_bandwidth > 0 ? bytes / device.dram_bandwidth : 0;
  e.time_s = std::max(e.compute_s, e.memory_s) + device.kernel_launch_overhead;
  return e;
}

}  // namespace

TiledGemmEstimate EstimateTiledGemm(const DeviceSpec& device, const GemmTiling& tiling, DType dtype,
                                    const GemmShape& shape, double bytes) {
  TiledGemmEstimate plain = EstimateWithSplits(device, tiling, dtype, shape, bytes, 1);
  if (tiling.split_k_min <= 0 || plain.tiles <= 0) return plain;
  // Split-K fills the SMs that a partial single wave leaves idle: as many
  // slices as fit beside the tiles, none shorter than split_k_min.
  const double concurrent = static_cast<double>(tiling.sm_count) * tiling.ctas_per_sm;
  const double splits = std::min(std::floor(concurrent / plain.tiles),
                                 std::floor(shape.k / static_cast<double>(tiling.split_k_min)));
  if (splits < 2) return plain;
  TiledGemmEstimate split = EstimateWithSplits(device, tiling, dtype, shape, bytes, splits);
  return split.time_s < plain.time_s ? split : plain;
}

double GemmKernelTime(const DeviceSpec& device, DType dtype, const GemmShape& shape, double flops,
                      double bytes) {
  if (!device.gemm.has_value()) return MatMulKernelTime(device, dtype, flops, bytes);
  return EstimateTiledGemm(device, *device.gemm, dtype, shape, bytes).time_s;
}

}  // namespace distir::sim
