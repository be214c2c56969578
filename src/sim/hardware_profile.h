// Hardware profiles: what the simulator knows about a cluster.
//
// A profile describes one kind of device (peak FLOP/s per dtype and unit, DRAM
// bandwidth and capacity, kernel launch overhead, optional calibrated MatMul
// regression), how devices are grouped into nodes, the link classes joining them
// (intra-node fabric such as NVSwitch or PCIe, inter-node network such as
// InfiniBand) and the collective algorithms to assume, and optionally how its
// GEMM kernels tile the output (the tiled GEMM model). It is loaded from YAML
// (configs/hardware/*.yaml, every key documented in docs/configs.md); errors in
// the file are reported with file:line:col. Device ids d0..d{N-1} of a program
// map onto the profile in order: device i lives in node i / devices_per_node.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/device.h"
#include "ir/dtype.h"
#include "support/host_info.h"
#include "support/status_or.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace distir::sim {

/// Linear cost model t = intercept + per_flop * flops + per_byte * bytes (seconds),
/// fitted by `distir calibrate` to the MatMuls of one element type; absent
/// until calibrated.
struct MatMulRegression {
  double intercept_s = 0;
  double per_flop_s = 0;
  double per_byte_s = 0;
};

/// Parameters of the tiled GEMM model (gemm_model.h, docs/cost_model.md §2.2.1),
/// the optional `device.gemm` section of a profile: MatMul, Gemm and MatMulGrad
/// are timed as thread-block tiles run in waves over the SMs instead of by the
/// flat roofline. Every field is validated by the profile reader.
struct GemmTiling {
  int sm_count = 0;            ///< streaming multiprocessors, >= 1
  int ctas_per_sm = 1;         ///< thread blocks resident per SM at once, >= 1
  int64_t tile_m = 128;        ///< rows of the output tile one thread block computes, >= 1
  int64_t tile_n = 128;        ///< columns of that tile, >= 1
  double max_efficiency = 1;   ///< fraction of the peak a full wave sustains, in (0, 1]
  double tile_overhead_s = 0;  ///< seconds each wave adds (pipeline fill and epilogue), >= 0
  /// Split-K (docs/cost_model.md §2.2.1): a kernel whose tiles fill less than
  /// one wave may split K into slices of at least this many elements, one
  /// thread block per tile and slice, and sum the slices' f32 partial products
  /// afterwards. 0: no split-K (every profile before the H200 measurements).
  int64_t split_k_min = 0;
};

/// Parameters of the tiled attention model (attention_model.h, docs/cost_model.md
/// §2.2.2), the optional `device.attention` section of a profile: FlashAttention and
/// FlashAttentionGrad. It runs on device.gemm's sm_count SMs, one thread block each.
struct AttentionTiling {
  int64_t block = 128;        ///< query (forward) or key (backward) rows per thread block, >= 1
  double block_overhead = 0;  ///< a thread block's fixed cost, in block-pair steps, >= 0
  double max_efficiency = 1;  ///< forward: fraction of the peak a busy SM sustains, in (0, 1]
  double backward_max_efficiency = 1;  ///< the same for the backward kernel, in (0, 1]
};

/// One kind of accelerator.
struct DeviceSpec {
  std::string name;                 ///< e.g. "V100-SXM3-32GB"
  double peak_flops_f16 = 0;        ///< FLOP/s for f16 matrix math (tensor cores)
  double peak_flops_bf16 = 0;       ///< FLOP/s for bf16 matrix math; 0 = unsupported (use f32)
  double peak_flops_f32 = 0;        ///< FLOP/s for f32 matrix math
  double peak_flops_f64 = 0;        ///< FLOP/s for f64
  double vector_flops = 0;          ///< FLOP/s for elementwise (non-matrix) work
  double dram_bandwidth = 0;        ///< bytes/s
  int64_t memory_capacity = 0;      ///< bytes
  double kernel_launch_overhead = 0;  ///< seconds per kernel
  /// A profile's single `matmul_regression` (no dtype named): times the
  /// MatMuls of every element type without a regression of its own.
  std::optional<MatMulRegression> matmul_regression;
  /// `matmul_regression` keyed by element type (what `distir calibrate` writes):
  /// a regression fitted to f32 timings says nothing of bf16 tensor-core products
  /// (12x faster on an H200), so each dtype has its own; a dtype without one
  /// falls back to matmul_regression, then to the roofline at its peak.
  std::vector<std::pair<DType, MatMulRegression>> matmul_regressions;
  /// Present: MatMul-like ops use the tiled model, which takes precedence over
  /// the regressions. Absent: the roofline (or a regression) as before.
  std::optional<GemmTiling> gemm;
  /// Present (only with `gemm`): attention kernels use the tiled attention model.
  /// Absent: they are matrix kernels of their FLOPs (MatMulKernelTime).
  std::optional<AttentionTiling> attention;

  /// Peak matrix FLOP/s for `dtype` (integers use vector_flops).
  double MatrixFlops(DType dtype) const;
  /// The regression that times MatMuls of `dtype`: its own, else the single
  /// one, else none (the roofline).
  const MatMulRegression* RegressionFor(DType dtype) const;
};

/// A class of link: bandwidth per direction and latency per message.
struct LinkSpec {
  std::string name;        ///< e.g. "NVSwitch", "InfiniBand-HDR"
  double bandwidth = 0;    ///< bytes/s, per device, per direction
  double latency = 0;      ///< seconds (the alpha of the alpha-beta model)
};

enum class AllReduceAlgorithm { kRing, kTree, kHierarchical };

struct CollectiveSpec {
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::kRing;
  /// Extra fixed cost of launching one collective (NCCL kernel launch), seconds.
  double launch_overhead = 0;
};

/// Whether communication runs on a stream of its own (docs/cost_model.md §3.1),
/// the optional `overlap` section of a profile. Off (the default): each device
/// runs all its ops on one stream, the paper's semantics.
struct OverlapSpec {
  /// On: every device has a compute stream and a communication stream, so a
  /// collective or Send overlaps compute ops that do not read its results.
  bool comm_stream = false;
  /// While a compute op and a communication op run at once on one of its
  /// devices, the compute op progresses at 1 / (1 + compute_slowdown) of its
  /// speed (>= 0; 0.19 = each overlapped second of work takes 1.19 s).
  double compute_slowdown = 0;
  /// The same for the communication op (>= 0).
  double comm_slowdown = 0;
};

struct HardwareProfile {
  std::string name;
  std::string source_path;   ///< file it was loaded from, "" when built in code
  DeviceSpec device;
  int devices_per_node = 1;
  int num_nodes = 1;         ///< 0 = any number of nodes (the profile scales out)
  LinkSpec intra_node;
  LinkSpec inter_node;       ///< unused when every participant is in one node
  CollectiveSpec collectives;
  OverlapSpec overlap;
  /// The machine `distir calibrate` measured to fit this profile (the optional
  /// `calibrated_on` section); absent for a profile written by hand.
  std::optional<HostInfo> calibrated_on;

  /// Total devices; nullopt when num_nodes is 0 (unbounded).
  std::optional<int64_t> NumDevices() const;
  /// Node of device `d`. REQUIRES: d.has_value().
  int NodeOf(DeviceId d) const;
  /// The link a transfer between two different devices uses.
  const LinkSpec& LinkBetween(DeviceId a, DeviceId b) const;
};

/// Loads and validates a profile from YAML text. `filename` is used in errors.
StatusOr<HardwareProfile> ParseHardwareProfile(const std::string& yaml_text,
                                               const std::string& filename);
/// Validates a profile that is one node of a larger YAML document (an
/// experiment's inline `hardware:` map): as ParseHardwareProfile, with errors
/// located at the node's own marks in `filename`, the document's file, so
/// that they point at the offending key or value there.
StatusOr<HardwareProfile> ReadHardwareProfileNode(const YAML::Node& node,
                                                  const std::string& filename);
/// Reads and parses the file at `path`.
StatusOr<HardwareProfile> LoadHardwareProfile(const std::string& path);

}  // namespace distir::sim
