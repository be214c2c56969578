// The DistIR simulator (paper §3.3): per-device timelines of a placed program.
//
// Every device has a clock. Ops run in program order (the program order is the
// schedule); an op occupies every device its inputs and results live on, starts
// when the latest of them is free and ends `cost` later on all of them, so a
// Send holds sender and receiver and ops on disjoint devices overlap. Costs come
// from the cost model (cost_model.h), memory from the buffer plan
// (memory_tracker.h). The program must be typed (InferTypes) and every value
// placed on a device. O(ops + values): side tables indexed by op and value id.
// A profile with `overlap.comm_stream` gives each device a second stream for
// communication instead (stream_scheduler.h, stream_memory.h; O((ops + values)
// log ops)). chrome_trace.h exports the trace; docs/cost_model.md states the
// semantics.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expanded_program.h"
#include "ir/function.h"
#include "ir/segmented_program.h"
#include "sim/cost_model.h"
#include "sim/hardware_profile.h"
#include "sim/memory_kind.h"
#include "sim/memory_tracker.h"
#include "support/status_or.h"

namespace distir::sim {

enum class TraceCategory { kCompute, kCommunication };

/// "compute" or "communication".
std::string_view TraceCategoryName(TraceCategory category);

/// One op's interval on one of its devices.
struct TraceEvent {
  DeviceId device;
  int32_t op = 0;  ///< index of the op in the simulated function's ops()
  TraceCategory category = TraceCategory::kCompute;
  double start_s = 0;
  double end_s = 0;
};

/// What one device did during the iteration.
struct DeviceResult {
  DeviceId device;
  double compute_s = 0;        ///< busy in compute ops (calls included)
  double communication_s = 0;  ///< busy in Send and collectives
  double idle_s = 0;           ///< iteration time minus the time it was busy at all
  /// Time it ran a compute op and a communication op at once (0 with one
  /// stream per device). communication_s - overlapped_s is the exposed part.
  double overlapped_s = 0;
  int64_t peak_memory_bytes = 0;
  /// With SimulateOptions::memory_kind: live bytes per kind at the moment of
  /// the peak (they sum to peak_memory_bytes), and each kind's own peak.
  std::optional<MemoryByKind> memory_at_peak;
  std::optional<MemoryByKind> peak_memory_by_kind;
  std::vector<MemoryPoint> memory_timeline;  ///< empty unless recorded

  /// Communication time not hidden behind compute: communication_s - overlapped_s.
  double ExposedCommunicationS() const { return communication_s - overlapped_s; }
};

struct SimulationResult {
  double iteration_time_s = 0;  ///< the latest device clock
  int64_t batch_size = 0;       ///< samples per iteration used for the throughput
  double throughput = 0;        ///< batch_size / iteration_time_s (samples/s); 0 for time 0
  int64_t num_ops = 0;          ///< ops of the simulated function (calls count one)
  std::vector<DeviceResult> devices;  ///< every device the program mentions, by id
  std::vector<TraceEvent> trace;      ///< in program order, one per (op, device); empty unless recorded
  int64_t memory_capacity_bytes = 0;  ///< per device, from the profile (0 = unknown)
  bool fits_in_memory = true;         ///< every peak <= capacity (true when capacity is 0)
  /// The profile's overlap.comm_stream: each device ran communication on a
  /// stream of its own (trace events of category kCommunication are on it).
  bool comm_stream = false;
  /// The iteration time with one stream per device (the paper's semantics, no
  /// slowdown), from the same op costs; equal to iteration_time_s when
  /// comm_stream is false. single_stream_time_s - iteration_time_s is what the
  /// communication stream saved.
  double single_stream_time_s = 0;

  /// The largest per-device peak; 0 without devices.
  int64_t PeakMemoryBytes() const;
};

struct SimulateOptions {
  /// Samples per iteration; default: the leading extent of the first
  /// parameter's first tensor (1 when it has rank 0).
  std::optional<int64_t> batch_size;
  bool record_trace = true;
  bool record_memory_timeline = true;
  /// When set, memory is also kept per kind (DeviceResult::memory_at_peak).
  MemoryClassifier memory_kind;
};

/// Simulates one iteration of `fn`, a function of `module`, on `hw`.
/// Errors: a value without an inferred static type or without a device
/// (`op MatMul has no device; the simulator needs every value placed`), a
/// device the profile lacks, an op the cost model cannot cost.
/// REQUIRES: VerifyModule(module) is ok; `fn` belongs to `module`.
StatusOr<SimulationResult> Simulate(const Module& module, const Function& fn,
                                    const HardwareProfile& hw,
                                    const SimulateOptions& options = {});

/// The same with a caller-owned cost model, whose memo then carries over from
/// one simulation to the next (a search over many configurations).
/// REQUIRES: `costs` was built for `module`.
StatusOr<SimulationResult> Simulate(const Module& module, const Function& fn, CostModel& costs,
                                    const SimulateOptions& options = {});

/// Simulates `program`, copies of the ops of `fn` (ir/expanded_program.h),
/// as Simulate simulates the function those copies describe: the same clocks,
/// busy times and memory (a sum costs an Add of its type; a copy allocates and
/// aliases as its template op). Trace events index the expanded program's ops.
/// Errors: those of Simulate for `fn`'s values and ops; Unimplemented with a
/// profile's `overlap.comm_stream` (one stream per device only); InvalidArgument
/// when `program` copies a call.
/// REQUIRES: `fn` belongs to `module` and is typed and placed; `program`'s
/// ops read values defined before them; `costs` was built for `module`.
StatusOr<SimulationResult> SimulateExpanded(const Module& module, const Function& fn,
                                            const ExpandedProgram& program, CostModel& costs,
                                            const SimulateOptions& options = {});

/// Simulates `program`, kinds of segments of copies of the ops of `fn`
/// (ir/segmented_program.h), as SimulateExpanded simulates the program the
/// segments stand for (segment_composition.h): the same iteration and busy
/// times, bit for bit, and the same peaks, without the copies' values or
/// buffer plan, memory by kind included. It reports no trace and no memory
/// timeline: options asking for them,
/// or a profile's `overlap.comm_stream`, give Unimplemented.
/// Errors: those of SimulateExpanded.
/// REQUIRES: as SimulateExpanded's, for the program the segments stand for.
StatusOr<SimulationResult> SimulateSegmented(const Module& module, const Function& fn,
                                             const SegmentedProgram& program, CostModel& costs,
                                             const SimulateOptions& options = {});

/// Process-wide allocator policy for programs that simulate big programs
/// repeatedly (the `distir` tool, the benchmark, a search): freed memory stays
/// in the heap for the next run. glibc serves blocks above its mmap threshold
/// (128 KiB to 32 MiB) with mmap and unmaps them on free, and trims the heap
/// top; the side tables of a 1M-op simulation (tens of MB) then fault every
/// page in again on each run (~23 us per fault on a small VM: most of the time
/// at 1M ops). This turns off mmap for allocations and heap trimming, so a
/// freed table is reused warm. Call once at start-up, before threads start.
/// No-op outside glibc.
void RetainFreedMemory();

/// "@dense %as_1", "Send %ar_1": the op's name and its first result.
/// REQUIRES: event.op indexes fn.ops().
std::string TraceLabel(const Function& fn, const TraceEvent& event);

}  // namespace distir::sim
