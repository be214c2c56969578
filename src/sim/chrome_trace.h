// Chrome trace export of a simulation (the JSON object format of
// chrome://tracing, which Perfetto opens too).
//
// One process (pid 0) named after the function, one thread per device (tid =
// device id, named "d1"), one complete ("X") event per op and device with the
// op's name and first result ("@dense %as_1"), category "compute" or
// "communication", and ts/dur in microseconds; plus one counter ("C") track of
// live memory per device when the simulation recorded a memory timeline.

#pragma once

#include <string>

#include "ir/function.h"
#include "sim/simulator.h"

namespace distir::sim {

/// The trace of `result` as JSON text: {"traceEvents": [...], "displayTimeUnit": "ns"}.
/// REQUIRES: `result` is a simulation of `fn`.
std::string ChromeTraceJson(const Function& fn, const SimulationResult& result);

}  // namespace distir::sim
