#include "sim/attention_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <tuple>
#include <vector>

#include "sim/cost_model.h"

namespace distir::sim {
namespace {

// Beyond this many blocks the makespan is Graham's bound (GreedyMakespan).
constexpr double kExactBlocks = 65536;

// Steps the block `index` of a head makes (GreedyMakespan's contract).
double BlockSteps(double index, double rows, double cols, bool causal, bool backward) {
  if (!causal) return cols;
  if (backward) return std::clamp(cols - std::max(0.0, index - (rows - cols)), 0.0, cols);
  return std::clamp(index + 1 + cols - rows, 0.0, cols);
}

// Steps of the causal forward's blocks of one head: block i makes
// clamp(i + c, 0, cols) with c = 1 + cols − rows, which reaches cols at the last
// block, so past the blocks above the diagonal it is an arithmetic series.
double CausalForwardSteps(double rows, double cols) {
  const double c = 1 + cols - rows;
  const double skipped = std::clamp(1 - c, 0.0, rows);
  return (rows - skipped) * (skipped + c + cols) / 2;
}

// Steps of all blocks of one head, in closed form (a program may have a
// sequence of 2^40 rows). The backward meets the same block pairs.
double HeadSteps(double rows, double cols, bool causal, bool backward) {
  if (!causal) return rows * cols;
  return backward ? CausalForwardSteps(cols, rows) : CausalForwardSteps(rows, cols);
}

double ComputeMakespan(double heads, double rows, double cols, bool causal, bool backward,
                       double overhead, int sm_count) {
  const double blocks = heads * rows;
  if (blocks <= 0) return 0;
  if (blocks > kExactBlocks) {
    // The steps of a head's blocks rise (forward) or fall (backward) monotonically.
    const double longest = std::max(BlockSteps(0, rows, cols, causal, backward),
                                    BlockSteps(rows - 1, rows, cols, causal, backward));
    const double head_total = HeadSteps(rows, cols, causal, backward) + rows * overhead;
    return heads * head_total / sm_count + overhead + longest;
  }
  std::vector<double> lengths(static_cast<size_t>(rows));
  for (size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = overhead + BlockSteps(static_cast<double>(i), rows, cols, causal, backward);
  }
  // The SMs' finishing times; each block goes to the earliest.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int i = 0; i < sm_count; ++i) free_at.push(0);
  double makespan = 0;
  for (double h = 0; h < heads; ++h) {
    for (double length : lengths) {
      const double end = free_at.top() + length;
      free_at.pop();
      free_at.push(end);
      makespan = std::max(makespan, end);
    }
  }
  return makespan;
}

}  // namespace

double GreedyMakespan(double heads, double rows, double cols, bool causal, bool backward,
                      double overhead, int sm_count) {
  using Key = std::tuple<double, double, double, bool, bool, double, int>;
  static std::mutex mu;
  static std::map<Key, double> memo;
  const Key key{heads, rows, cols, causal, backward, overhead, sm_count};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const double makespan =
      ComputeMakespan(heads, rows, cols, causal, backward, overhead, std::max(1, sm_count));
  std::lock_guard<std::mutex> lock(mu);
  memo.emplace(key, makespan);
  return makespan;
}

TiledAttentionEstimate EstimateTiledAttention(const DeviceSpec& device,
                                              const AttentionTiling& tiling, int sm_count,
                                              DType dtype, const AttentionShape& shape,
                                              double bytes) {
  TiledAttentionEstimate e;
  const double block = static_cast<double>(tiling.block);
  const double q_blocks = std::ceil(shape.queries / block);
  const double k_blocks = std::ceil(shape.keys / block);
  // The forward parallelises over query blocks, the backward over key blocks.
  const double rows = shape.backward ? k_blocks : q_blocks;
  const double cols = shape.backward ? q_blocks : k_blocks;
  e.blocks = shape.heads * rows;
  e.steps = shape.heads * HeadSteps(rows, cols, shape.causal, shape.backward);
  e.makespan = GreedyMakespan(shape.heads, rows, cols, shape.causal, shape.backward,
                              tiling.block_overhead, sm_count);
  // A forward step is two block x block x d products (S = Q Kᵀ, O = P V), a
  // backward step five (S again, dV, dP, dQ, dK): 2·2 and 5·2 FLOPs per MAC.
  const double step_flops = (shape.backward ? 10.0 : 4.0) * block * block * shape.head_dim;
  const double efficiency = shape.backward ? tiling.backward_max_efficiency : tiling.max_efficiency;
  const double sm_rate = device.MatrixFlops(dtype) * efficiency / std::max(1, sm_count);
  e.step_s = sm_rate > 0 ? step_flops / sm_rate : 0;
  e.compute_s = e.makespan * e.step_s;
  e.memory_s = device.dram_bandwidth > 0 ? bytes / device.dram_bandwidth : 0;
  e.time_s = std::max(e.compute_s, e.memory_s) + device.kernel_launch_overhead;
  return e;
}

double AttentionKernelTime(const DeviceSpec& device, DType dtype, const AttentionShape& shape,
                           double flops, double bytes) {
  if (!device.attention.has_value() || !device.gemm.has_value()) {
    return MatMulKernelTime(device, dtype, flops, bytes);
  }
  return EstimateTiledAttention(device, *device.attention, device.gemm->sm_count, dtype, shape,
                                bytes)
      .time_s;
}

}  // namespace distir::sim
