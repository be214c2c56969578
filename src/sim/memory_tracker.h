// Memory accounting for the simulator: which buffer each value occupies, when
// each buffer dies, and the live bytes per device over time.
//
// BufferPlan is the static part, computed once per function in program order: a
// value is a list of buffers (one per tensor leaf of its type); Tuple and
// UnpackTuple regroup their inputs' buffers, the views and in-place updates of
// ir/op_alias.h (Reshape, Squeeze, Unsqueeze, Identity, SGD, Adam, ...) reuse
// their inputs' buffers, as the executor's arena plan does; every other result
// leaf is a fresh buffer. A buffer lives from its
// defining op to its last use; parameters and returned values stay resident.
// MemoryTracker replays a plan along the simulated clock (simulator.h).
// CallMemoryCache summarises device-generic callees: their own peak, charged to
// the calling device for the call's duration. Rules in docs/cost_model.md.

#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "sim/memory_kind.h"
#include "support/status_or.h"

namespace distir::sim {

/// What a call of a device-generic function costs in memory on its device.
struct CallMemory {
  /// Peak bytes of the callee's own buffers (its parameters excluded, its
  /// results included), nested calls accounted the same way.
  int64_t peak_bytes = 0;
  /// For each tensor leaf of the callee's results (flattened in order): the
  /// flattened parameter leaf it aliases, or -1 for a fresh buffer.
  std::vector<int32_t> result_leaf_alias;
};

class CallMemoryCache;

/// Buffers of one function and their lifetimes.
class BufferPlan {
 public:
  struct Buffer {
    int32_t device;   ///< dense device index
    int64_t bytes;
    int32_t last_use;  ///< op index of the last use; kResident: never freed
  };
  static constexpr int32_t kResident = -1;

  /// Builds the plan of `fn` in one pass (BufferPlanBuilder). Buffers are
  /// indexed by device id, or all by 0 when `device_generic`.
  /// When `params_resident` is false, parameters count 0 bytes (a callee
  /// borrows its caller's arguments). `calls` summarises callees (may be null
  /// when `fn` has no calls).
  /// REQUIRES: every type is known and static; every leaf placed unless `device_generic`.
  static StatusOr<BufferPlan> Build(const Function& fn, const Module* module, bool device_generic,
                                    bool params_resident, CallMemoryCache* calls);

  int num_ops() const { return static_cast<int>(fresh_begin_.size()) - 1; }
  const std::vector<Buffer>& buffers() const { return buffers_; }
  /// Buffers first allocated by op `i` (contiguous ids).
  int32_t fresh_begin(int op) const { return fresh_begin_[op]; }
  int32_t fresh_end(int op) const { return fresh_begin_[op + 1]; }
  /// Buffers whose lifetime ends with op `i`.
  std::span<const int32_t> dying(int op) const {
    return {dies_.data() + dies_begin_[op], dies_.data() + dies_begin_[op + 1]};
  }
  /// Extra bytes a call holds on its device while it runs (0 for other ops).
  int64_t transient_bytes(int op) const { return transient_.empty() ? 0 : transient_[op]; }
  /// Buffers of value `id`.
  std::span<const int32_t> buffers_of(int value_id) const {
    return {leaves_.data() + span_begin_[value_id], leaves_.data() + span_end_[value_id]};
  }
  /// The device of a call (the device of its first result or input); 0 for other ops.
  int32_t op_device(int op) const { return op_device_.empty() ? 0 : op_device_[op]; }

 private:
  friend class BufferPlanBuilder;

  std::vector<Buffer> buffers_;
  std::vector<int32_t> leaves_;      // concatenated buffer lists of values
  std::vector<int32_t> span_begin_;  // per value id, into leaves_
  std::vector<int32_t> span_end_;
  std::vector<int32_t> fresh_begin_;  // per op, plus one
  std::vector<int32_t> dies_begin_;   // per op, plus one
  std::vector<int32_t> dies_;
  std::vector<int64_t> transient_;   // per op; empty when the function has no calls
  std::vector<int32_t> op_device_;   // per op; empty when the function has no calls
};

/// Builds a BufferPlan op by op, so that a client walking the ops anyway (the
/// simulator) needs no extra pass over the IR.
class BufferPlanBuilder {
 public:
  /// Starts the plan of `fn` with its parameters (arguments of BufferPlan::Build).
  /// REQUIRES: `fn`, `module` and `calls` outlive the builder.
  BufferPlanBuilder(const Function& fn, const Module* module, bool device_generic,
                    bool params_resident, CallMemoryCache* calls);
  /// Adds op `index`. REQUIRES: ops are added in program order; its types are
  /// known and static.
  Status AddOp(int index);
  /// AddOp for an op that is not a call, which cannot fail (no Status to build:
  /// the simulator adds one op per op of a big program).
  /// REQUIRES: as for AddOp, and the op is not a call.
  void AddNonCallOp(int index);
  /// Starts the plan of `x`, copies of the ops of `tmpl` (ir/expanded_program.h):
  /// the values are x's, each typed as the template value it copies;
  /// parameters are resident. A copy of a template op allocates and aliases as
  /// the template op does, over the copies of its operands; a sum allocates a
  /// fresh buffer. `values[t]` is template value t.
  /// REQUIRES: `tmpl`, `x` and `values` outlive the builder; every type known,
  /// static and placed; no template op that x copies is a call.
  BufferPlanBuilder(const Function& tmpl, const ExpandedProgram& x,
                    std::span<const Value* const> values);
  /// Adds op `index` of the expanded program. REQUIRES: ops are added in
  /// program order, with the expanded constructor.
  void AddExpandedOp(int index);
  /// The plan. REQUIRES: every op was added.
  BufferPlan Finish() &&;

 private:
  static constexpr int32_t kParamDef = -1;
  static constexpr int32_t kUnused = -2;

  int32_t DeviceOf(DeviceId d) const;
  void AddFreshLeaves(const Type& type, bool counted);
  void AppendLeaves(int32_t begin, int32_t end);
  void Alias(int32_t result, int32_t source);
  void Fresh(int32_t result, const Type& type);
  /// Fresh for a copy of template value `tv` (expanded mode): a tensor's
  /// device and bytes are computed once per template value, not per copy.
  void FreshCopy(int32_t result, const Value& tv);
  Status CallResults(const Op& op, int index);
  Status AddResults(const Op& op, int index);
  // The results of non-call `op` with operand i's id in_id(i) and result i's
  // id out_id(i): the op's own values, or a copy's (expanded programs).
  template <typename InId, typename OutId>
  void AddNonCallResults(const Op& op, InId in_id, OutId out_id);
  void MarkUse(int32_t value, int index);
  void BucketDeaths(int num_ops);

  const Function& fn_;
  const Module* module_;
  bool device_generic_;
  CallMemoryCache* calls_;
  const ExpandedProgram* expanded_ = nullptr;  // set by the expanded constructor
  std::span<const Value* const> values_;       // template values by id (expanded)
  // Per template value (expanded): its one leaf's device and bytes; bytes -1
  // until computed, -2 for a tuple (planned leaf by leaf).
  std::vector<std::pair<int32_t, int64_t>> leaf_of_template_;
  BufferPlan plan_;
  std::vector<int32_t> def_op_;  // per buffer: defining op, or kParamDef
};

/// Memory summaries of callees, memoized per function (a callee's types are
/// fixed by its definition). Not thread-safe.
class CallMemoryCache {
 public:
  /// REQUIRES: `module` outlives the cache.
  explicit CallMemoryCache(const Module* module) : module_(module) {}
  /// The summary of `callee`. REQUIRES: callee is device-generic, its types inferred.
  /// Callees below `callee` are summarised first, bottom-up (no recursion).
  StatusOr<const CallMemory*> Get(const Function& callee);

 private:
  StatusOr<std::unique_ptr<CallMemory>> Summarize(const Function& callee);

  const Module* module_;
  std::unordered_map<const Function*, std::unique_ptr<CallMemory>> cache_;
};

/// A point of a device's memory timeline: live bytes from `time_s` on.
struct MemoryPoint {
  double time_s;
  int64_t bytes;
};

/// Replays a BufferPlan: live bytes per device, their peak and a timeline.
class MemoryTracker {
 public:
  /// Allocates the resident parameters at time 0. REQUIRES: `plan` outlives
  /// the tracker and its device indices are < num_devices.
  MemoryTracker(const BufferPlan& plan, int num_devices, bool record_timeline);
  /// The same, keeping live bytes per kind: `buffer_kinds[b]` is the kind of
  /// buffer b of the plan; a call's scratch counts as MemoryKind::kOther.
  /// REQUIRES: buffer_kinds.size() == plan.buffers().size().
  MemoryTracker(const BufferPlan& plan, int num_devices, bool record_timeline,
                std::vector<MemoryKind> buffer_kinds);

  /// Allocates op `op`'s fresh results (a call: its callee's peak) at `time_s`.
  void OpStarts(int op, bool is_call, double time_s);
  /// A call: trades its callee's peak for its fresh results. Then frees the
  /// buffers whose last use is `op`.
  void OpEnds(int op, bool is_call, double time_s);

  /// The first half of OpEnds for a call: trades its callee's peak for its
  /// fresh results; frees nothing. For replays that free buffers themselves
  /// (stream_memory.h). REQUIRES: `op` is a call.
  void CallEnds(int op, double time_s);
  /// Frees buffer `buffer` of the plan at `time_s`. REQUIRES: it is live and
  /// not resident; each buffer is freed at most once.
  void Free(int32_t buffer, double time_s);

  int64_t peak(int device) const { return peak_[device]; }
  int64_t live(int device) const { return live_[device]; }
  /// Whether bytes are kept per kind (built with buffer kinds).
  bool has_kinds() const { return !kinds_.empty(); }
  /// Live bytes per kind at the first moment `device` reached its peak.
  /// REQUIRES: has_kinds().
  const MemoryByKind& at_peak_by_kind(int device) const { return at_peak_[device]; }
  /// The largest live bytes of each kind, each at its own moment.
  /// REQUIRES: has_kinds().
  const MemoryByKind& peak_by_kind(int device) const { return peak_kind_[device]; }
  /// Points in time order; a change at the time of the previous point replaces it.
  const std::vector<MemoryPoint>& timeline(int device) const { return timeline_[device]; }
  /// Makes room for `points` timeline points of `device` (saves regrowth).
  void ReserveTimeline(int device, size_t points) {
    if (record_timeline_) timeline_[device].reserve(points);
  }
  /// Moves the timeline of `device` out, leaving it empty.
  std::vector<MemoryPoint> TakeTimeline(int device) { return std::move(timeline_[device]); }

 private:
  void Change(int device, int64_t delta, double time_s, MemoryKind kind);
  void ChangeKind(int device, int64_t delta, MemoryKind kind, bool new_peak);
  MemoryKind KindOf(int32_t buffer) const {
    return kinds_.empty() ? MemoryKind::kOther : kinds_[buffer];
  }
  void AllocateFresh(int op, double time_s);

  const BufferPlan& plan_;
  bool record_timeline_;
  std::vector<int64_t> live_;
  std::vector<int64_t> peak_;
  std::vector<std::vector<MemoryPoint>> timeline_;
  std::vector<MemoryKind> kinds_;        // per buffer; empty: no breakdown
  std::vector<MemoryByKind> live_kind_;  // per device, when kinds_ is set
  std::vector<MemoryByKind> peak_kind_;
  std::vector<MemoryByKind> at_peak_;
};

}  // namespace distir::sim
