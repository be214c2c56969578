// Two streams per device: the simulator's schedule when a profile turns
// `overlap.comm_stream` on (docs/cost_model.md §3.1).
//
// Every device has a compute stream and a communication stream. Each op runs on
// one stream of each of its devices (communication ops on the communication
// streams, the rest on the compute streams), in program order per stream; it
// starts once every op it depends on has ended and each of its streams is free,
// which is the moment the last of those ends. While a compute op and a
// communication op run at once on a device, each progresses more slowly by the
// profile's factor. The simulator (simulator.h) builds the tables below from the
// IR; this file knows nothing of ops, only of costs, devices and dependences.

#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/hardware_profile.h"

namespace distir::sim {

/// One function's ops as the scheduler sees them, in program order. Every span
/// is indexed by op, or is CSR: op i's entries are [begin[i], begin[i + 1]).
/// The referenced storage belongs to the caller and must outlive the call.
struct StreamOps {
  std::span<const double> cost;            ///< seconds at full speed, >= 0
  std::span<const uint8_t> comm;           ///< nonzero: runs on the communication streams
  std::span<const int32_t> devices_begin;  ///< size ops + 1
  std::span<const int32_t> devices;        ///< device ids, distinct per op, < num_devices
  std::span<const int32_t> deps_begin;     ///< size ops + 1
  std::span<const int32_t> deps;           ///< earlier ops that must end first
  int num_devices = 0;
};

/// When each op ran, and how long each device had both streams busy.
struct StreamSchedule {
  std::vector<double> start;         ///< per op
  std::vector<double> end;           ///< per op
  std::vector<double> overlapped_s;  ///< per device id: time with both streams busy
};

/// Schedules `ops` on two streams per device with `overlap`'s slowdowns.
/// Rates: a compute op runs at 1 / (1 + compute_slowdown) while some device of
/// it also runs a communication op, else at 1; a communication op likewise with
/// comm_slowdown (a collective is as slow as its slowest participant). With
/// both slowdowns 0 every op ends exactly start + cost later.
/// REQUIRES: every dependence of op i is an op < i; devices_begin and
/// deps_begin are non-decreasing and end at the sizes of devices and deps;
/// every op has at least one device. Runs in O((ops + edges) log ops).
StreamSchedule ScheduleTwoStreams(const StreamOps& ops, const OverlapSpec& overlap);

}  // namespace distir::sim
