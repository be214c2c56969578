#include "sim/chrome_trace.h"

#include <nlohmann/json.hpp>

namespace distir::sim {
namespace {

// Chrome traces count in microseconds.
constexpr double kMicrosPerSecond = 1e6;

nlohmann::json Metadata(const char* what, int64_t tid, const std::string& name) {
  nlohmann::json e = {{"name", what}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", name}}}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

void AddDeviceTracks(const Function& fn, const SimulationResult& result, nlohmann::json& events) {
  events.push_back(Metadata("process_name", -1, "@" + fn.name()));
  for (const DeviceResult& d : result.devices) {
    int64_t tid = d.device.value();
    events.push_back(Metadata("thread_name", tid, d.device.ToString()));
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
  }
}

void AddOpEvents(const Function& fn, const SimulationResult& result, nlohmann::json& events) {
  for (const TraceEvent& t : result.trace) {
    events.push_back({{"name", TraceLabel(fn, t)},
                      {"cat", std::string(TraceCategoryName(t.category))},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", t.device.value()},
                      {"ts", t.start_s * kMicrosPerSecond},
                      {"dur", (t.end_s - t.start_s) * kMicrosPerSecond}});
  }
}

void AddMemoryCounters(const SimulationResult& result, nlohmann::json& events) {
  for (const DeviceResult& d : result.devices) {
    std::string name = "memory " + d.device.ToString();
    for (const MemoryPoint& p : d.memory_timeline) {
      events.push_back({{"name", name},
                        {"ph", "C"},
                        {"pid", 0},
                        {"ts", p.time_s * kMicrosPerSecond},
                        {"args", {{"bytes", p.bytes}}}});
    }
  }
}

}  // namespace

std::string ChromeTraceJson(const Function& fn, const SimulationResult& result) {
  nlohmann::json events = nlohmann::json::array();
  AddDeviceTracks(fn, result, events);
  AddOpEvents(fn, result, events);
  AddMemoryCounters(result, events);
  nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  return trace.dump() + "\n";
}

}  // namespace distir::sim
