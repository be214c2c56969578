// The cost model: how long one op takes, from its input and output types alone.
//
// Each op kind has one cost rule in a table filled by explicit registration:
// compute rules (roofline, matmul; compute_cost_rules.cc) and communication
// rules, which map the paper's collectives onto CollectiveTime
// (collective_cost_rules.h) with the nccl-tests byte conventions (cost_model.cc).
// CostModel memoizes rule results per (op kind, input and output types), so the
// repeated layers of a big program are costed once; calls of device-generic
// functions cost the sum of the callee's ops. The derivations are in
// docs/cost_model.md. The simulator (simulator.h) is the main client.

#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/function.h"
#include "sim/hardware_profile.h"
#include "support/status_or.h"

namespace distir::sim {

/// Number of OpKind values, kCall included (the size of a rule table).
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::kCall) + 1;

/// Seconds `op` occupies each of its devices. Rules read only the op's input
/// and result types (and, for collectives, their devices) and `hw`.
/// REQUIRES (checked by CostModel before dispatch): every input and result type
/// is known and has a static shape.
using CostRule = StatusOr<double> (*)(const Op& op, const HardwareProfile& hw);

/// Per-kind cost rules.
class CostRuleTable {
 public:
  /// REQUIRES: no rule is registered for `kind` yet; kind != kCall.
  void Register(OpKind kind, CostRule rule);
  /// The rule of `kind`, or nullptr.
  CostRule Find(OpKind kind) const { return rules_[static_cast<int>(kind)]; }

 private:
  std::array<CostRule, kNumOpKinds> rules_{};
};

/// Registers the compute and shape ops' rules (compute_cost_rules.cc).
void RegisterComputeCostRules(CostRuleTable& table);
/// Registers Send and the collectives' rules (cost_model.cc).
void RegisterCommunicationCostRules(CostRuleTable& table);

/// One memory-bound or vector kernel on `device`:
/// max(bytes / dram_bandwidth, flops / vector_flops) + kernel_launch_overhead.
/// The max, not the sum: a GPU streams memory and computes at the same time.
double RooflineTime(const DeviceSpec& device, double bytes, double flops);

/// One matrix-multiplication kernel of `flops` FLOPs moving `bytes` bytes with
/// elements of `dtype`: the calibrated regression when the device has one
/// (intercept + per_flop * flops + per_byte * bytes), otherwise
/// max(flops / MatrixFlops(dtype), bytes / dram_bandwidth) + kernel_launch_overhead.
double MatMulKernelTime(const DeviceSpec& device, DType dtype, double flops, double bytes);

/// FLOPs of a matrix op as its cost rule counts them: MatMul 2·|result|·K,
/// Gemm 2·M·N·K (+ M·N with C), MatMulGrad two GEMMs of 2·|x|·N each,
/// FlashAttention 4·b·h·s·t·d (halved when causal), FlashAttentionGrad 2.5x that; nullopt
/// for every other op (their FLOPs are a per-element count inside their rule).
/// REQUIRES: the op's input and result types are known and static.
std::optional<double> MatrixOpFlops(const Op& op);

/// Bytes of `type` (Type::SizeInBytes) computed with checked arithmetic:
/// nullopt when they do not fit in int64. REQUIRES: a static shape.
std::optional<int64_t> CheckedSizeInBytes(const Type& type);

/// Costs ops of one module on one hardware profile, with memoization.
/// Not thread-safe (the memo tables are mutated by lookups).
class CostModel {
 public:
  /// Keeps a copy of `hw`. `module` must outlive the model; it resolves calls
  /// and may be null when the costed functions contain none.
  CostModel(const HardwareProfile& hw, const Module* module);

  /// Seconds `op` takes on each of its devices; always finite. Errors (located
  /// at the op): a type not inferred or not static, an op without a rule, a
  /// call of a function that is not device-generic, a device the profile
  /// lacks; ResourceExhausted when the op's inputs and results take more than
  /// 2^62 bytes together, or its time is not finite (the profile's rates too
  /// low or overheads too high for it): the op is beyond what the model
  /// represents, nothing is wrong with the program.
  StatusOr<double> OpCost(const Op& op);

  /// The memoized cost of `op`, when an op of its kind and types was costed
  /// before: sets `*cost` and returns true; otherwise returns false and changes
  /// nothing (then call OpCost, which also reports errors). A hit counts as in
  /// OpCost. Cheaper than OpCost on a hit: it builds no Status.
  bool LookUpCost(const Op& op, double* cost);

  /// Sum of the costs of `fn`'s ops: what a call of `fn` costs.
  StatusOr<double> FunctionCost(const Function& fn);

  const HardwareProfile& hardware() const { return hw_; }
  /// Distinct (op kind, types) entries evaluated so far, and memo hits.
  int64_t num_entries() const { return static_cast<int64_t>(memo_.size()); }
  int64_t num_hits() const { return hits_; }

 private:
  struct KeyHash {
    size_t operator()(const std::vector<int64_t>& key) const;
  };

  /// Fills key_ for `op`; false when a type is unknown or not static.
  bool BuildKey(const Op& op);
  Status TypeError(const Op& op) const;
  StatusOr<double> Evaluate(const Op& op);
  /// Evaluate(), then the check that the cost is finite.
  StatusOr<double> EvaluateFinite(const Op& op);
  StatusOr<double> CallCost(const Op& op);
  Status CostCallees(const Function& callee);

  const HardwareProfile hw_;
  const Module* module_;
  CostRuleTable rules_;
  std::vector<int64_t> key_;  // scratch: the key of the op being costed
  /// Per op kind, the key and cost of its last lookup: repeated layers hit it
  /// with one comparison, without hashing (the common case in big programs).
  struct LastLookup {
    std::vector<int64_t> key;
    double cost = 0;
  };
  std::array<LastLookup, kNumOpKinds> last_;
  std::unordered_map<std::vector<int64_t>, double, KeyHash> memo_;
  /// FunctionCost of each device-generic callee costed so far.
  std::unordered_map<const Function*, double> callee_cost_;
  int64_t hits_ = 0;
};

}  // namespace distir::sim
