// Chrome trace export of a simulation (the JSON object format of
// chrome://tracing, which Perfetto opens too; docs/cost_model.md, "Trace").
//
// One process per node (pid = node of the hardware profile, named "node 0"),
// one thread per device (tid = device id, named "d3": a device runs one
// stream in the simulator), or, when the simulation gave each device a
// communication stream (SimulationResult::comm_stream), two: "d3 compute"
// (tid 6) and "d3 comm" (tid 7), tid = 2 * device + stream, and otherData says
// "comm_stream": true. One complete ("X") event per op and device with
// a positive duration, named after the op and its first result
// ("@dense %as_1"), category "compute" or "communication", ts/dur in
// microseconds, and args describing the op (kind, FLOPs, bytes, types, and
// the pipeline task when the op carries one). Zero-duration events (free ops
// such as Tuple or Identity) are left out and counted in "otherData". Flow
// events join each Send's slice on the sender to its slice on the receiver,
// and the participants of a collective in device order (on the communication
// threads when there are two). A counter ("C")
// track of live memory per device follows when the simulation recorded a
// memory timeline.

#pragma once

#include <ostream>
#include <string>

#include "ir/function.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"

namespace distir::sim {

/// The trace of `result` as JSON text:
/// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}.
/// `hw` places devices on nodes (HardwareProfile::NodeOf); nothing else of it is read.
/// REQUIRES: `result` is a simulation of `fn` on `hw`.
std::string ChromeTraceJson(const Function& fn, const SimulationResult& result,
                            const HardwareProfile& hw);

/// The same text written to `out` event by event, without building the JSON
/// document (millions of events: the document would take ten times the text).
void WriteChromeTrace(const Function& fn, const SimulationResult& result,
                      const HardwareProfile& hw, std::ostream& out);

}  // namespace distir::sim
