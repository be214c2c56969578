// The clocks and memory of a SegmentedProgram (ir/segmented_program.h)
// from its kinds, without the copies' values and buffer plan
// (sim::SimulateSegmented, docs/cost_model.md §3.3).
//
// Times. The simulator's clock rule (an op starts when the latest of its
// devices is free and ends `cost` later on all of them) is replayed op by op
// from the kinds' costed ops, in the program's order: the same additions in
// the same order as the simulation of the copies, so the same bits. (Each
// kind's effect is max-plus linear and could be applied as a matrix per
// segment, but its sums would round otherwise, and schedules that tie would
// no longer tie; the replay is a few nanoseconds an op and device.)
//
// Memory. Live bytes on a device at an op, after its allocations, are the
// bytes of the buffers allocated at or before it and dying at or after it.
// A kind's local buffers give each of its segments the same profile; the
// other buffers change live bytes only at the ops that allocate them and
// after their last readers. ComposePeaks cuts each kind at the offsets where
// such changes fall, keeps each piece's largest local profile, and sweeps
// the segments piece by piece: exact, as integers are.

#pragma once

#include <cstdint>
#include <vector>

#include "ir/segmented_program.h"
#include "sim/memory_kind.h"

namespace distir::sim {

/// The costed ops of a SegmentedProgram's kinds, in SegmentedProgram::op order.
struct KindOps {
  std::vector<double> cost;
  std::vector<uint8_t> communication;     ///< 1: busy in communication, else compute
  std::vector<int32_t> devices_begin{0};  ///< CSR: the devices each op occupies, distinct
  std::vector<int32_t> devices;
};

struct ComposedTimes {
  double iteration_time_s = 0;                 ///< the latest clock
  std::vector<double> compute, communication;  ///< busy seconds by device id
};

/// The clocks after every segment of `p`, devices numbered below `num_devices`.
/// REQUIRES: ops describes p's kinds; device ids < num_devices.
ComposedTimes ReplayTimes(const SegmentedProgram& p, const KindOps& ops, int num_devices);

/// Where a buffer of each template value lies: device, bytes and (optional)
/// kind, by template value id.
struct MemoryTables {
  std::vector<int32_t> device;
  std::vector<int64_t> bytes;
  std::vector<int8_t> kind;  ///< a MemoryKind per value; empty: no breakdown
};

/// Peaks by device id, as memory_tracker.h's MemoryTracker reports them.
struct ComposedMemory {
  std::vector<int64_t> peak;
  /// With kinds: live bytes by kind at the first moment of each device's
  /// peak, and each kind's own peak; else empty.
  std::vector<MemoryByKind> at_peak, peak_by_kind;
};

/// Each device's peak live bytes over the program (and by kind, where
/// `values` has kinds).
/// REQUIRES: every buffer's value has a device < num_devices; p's positions
/// are consistent (deaths after allocations, within the program).
ComposedMemory ComposePeaks(const SegmentedProgram& p, const MemoryTables& values, int num_devices);

}  // namespace distir::sim
