#include "sim/chrome_trace.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "ir/op_registry.h"
#include "sim/cost_model.h"

namespace distir::sim {
namespace {

// Writes events one by one as JSON text, comma-separated: the whole trace of a
// large program (millions of events) never exists as a JSON document, whose
// per-value overhead is ten times the text's.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}
  void push_back(const nlohmann::json& event) {
    if (count_++ > 0) out_ << ',';
    // Names come from the input (a profile's name, op labels): invalid UTF-8
    // in them is replaced, not thrown as json::type_error.
    out_ << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

 private:
  std::ostream& out_;
  int64_t count_ = 0;
};

// Chrome traces count in microseconds.
constexpr double kMicrosPerSecond = 1e6;

nlohmann::json Metadata(const char* what, int pid, int64_t tid, nlohmann::json args) {
  nlohmann::json e = {{"name", what}, {"ph", "M"}, {"pid", pid}, {"args", std::move(args)}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

// The thread of a device's events: the device id with one stream per device;
// with a communication stream, 2·id for compute and 2·id + 1 for communication.
int64_t Tid(const SimulationResult& result, DeviceId d, TraceCategory category) {
  if (!result.comm_stream) return d.value();
  return 2 * int64_t{d.value()} + (category == TraceCategory::kCommunication ? 1 : 0);
}

void AddThread(int node, int64_t tid, const std::string& name, EventWriter& events) {
  events.push_back(Metadata("thread_name", node, tid, {{"name", name}}));
  events.push_back(Metadata("thread_sort_index", node, tid, {{"sort_index", tid}}));
}

// Named and sorted tracks, so that Perfetto lists node 0 first and d0 before d10
// (it would otherwise sort threads by name).
void AddTracks(const SimulationResult& result, const HardwareProfile& hw, EventWriter& events) {
  std::set<int> nodes;
  for (const DeviceResult& d : result.devices) nodes.insert(hw.NodeOf(d.device));
  for (int node : nodes) {
    events.push_back(
        Metadata("process_name", node, -1, {{"name", "node " + std::to_string(node)}}));
    events.push_back(Metadata("process_sort_index", node, -1, {{"sort_index", node}}));
  }
  for (const DeviceResult& d : result.devices) {
    const int node = hw.NodeOf(d.device);
    const std::string name = d.device.ToString();
    if (!result.comm_stream) {
      AddThread(node, Tid(result, d.device, TraceCategory::kCompute), name, events);
      continue;
    }
    AddThread(node, Tid(result, d.device, TraceCategory::kCompute), name + " compute", events);
    AddThread(node, Tid(result, d.device, TraceCategory::kCommunication), name + " comm", events);
  }
}

// Bytes of the parts of `type` that live on `d` (a tuple may span devices).
int64_t BytesOn(const Type& type, DeviceId d) {
  if (!type.is_tuple()) return type.device() == d ? type.SizeInBytes() : 0;
  int64_t total = 0;
  for (const Type& t : type.elements()) total += BytesOn(t, d);
  return total;
}

bool Mentions(const Type& type, DeviceId d) {
  const std::vector<DeviceId> devices = type.Devices();
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

const char* PhaseName(int64_t phase) {
  static constexpr const char* kNames[] = {"forward", "backward", "setup", "update"};
  return phase >= 0 && phase < 4 ? kNames[phase] : "unknown";
}

// `task = [stage, microbatch, phase]` (ir/op_registry.h), when well-formed.
void AddTaskArgs(const Op& op, nlohmann::json& args) {
  const Attribute* task = op.FindAttr("task");
  if (task == nullptr || task->type() != AttrType::kInts || task->AsInts().size() != 3) return;
  const std::vector<int64_t>& v = task->AsInts();
  args["stage"] = v[0];
  if (v[1] >= 0) args["microbatch"] = v[1];  // -1: once per step (setup, update)
  args["phase"] = PhaseName(v[2]);
}

// What the op is and moves on device `d`: a collective lists only its own
// operands on each participant, so args stay small for wide collectives.
nlohmann::json OpArgs(const Op& op, DeviceId d) {
  const std::string kind = op.is_call() ? "call" : std::string(OpKindName(op.kind()));
  nlohmann::json args = {{"op", kind}};
  if (std::optional<double> flops = MatrixOpFlops(op)) args["flops"] = *flops;
  int64_t bytes = 0;
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const Value* v : op.inputs()) {
    if (!Mentions(v->type(), d)) continue;
    bytes += BytesOn(v->type(), d);
    inputs.push_back(v->type().ToString());
  }
  for (const auto& r : op.results()) {
    if (!Mentions(r->type(), d)) continue;
    bytes += BytesOn(r->type(), d);
    outputs.push_back(r->type().ToString());
  }
  args["bytes"] = bytes;
  args["inputs"] = std::move(inputs);
  args["outputs"] = std::move(outputs);
  AddTaskArgs(op, args);
  return args;
}

// Zero-duration events are left out: they would be invisible slivers that
// clutter the event list, and a flow could not bind to them.
int64_t OmittedEvents(const SimulationResult& result) {
  int64_t omitted = 0;
  for (const TraceEvent& t : result.trace) omitted += t.end_s > t.start_s ? 0 : 1;
  return omitted;
}

void AddOpEvents(const Function& fn, const SimulationResult& result, const HardwareProfile& hw,
                 EventWriter& events) {
  for (const TraceEvent& t : result.trace) {
    if (!(t.end_s > t.start_s)) continue;
    events.push_back({{"name", TraceLabel(fn, t)},
                      {"cat", std::string(TraceCategoryName(t.category))},
                      {"ph", "X"},
                      {"pid", hw.NodeOf(t.device)},
                      {"tid", Tid(result, t.device, t.category)},
                      {"ts", t.start_s * kMicrosPerSecond},
                      {"dur", (t.end_s - t.start_s) * kMicrosPerSecond},
                      {"args", OpArgs(*fn.ops()[t.op], t.device)}});
  }
}

// One flow arrow from the slice of `from` to the slice of `to`, both starting
// at `start_s`: "s" binds to the slice enclosing its ts, "f" with bp "e" too.
// Flows join communication slices, so they sit on the communication threads.
void AddFlow(const std::string& name, int64_t id, DeviceId from, DeviceId to, double start_s,
             const SimulationResult& result, const HardwareProfile& hw, EventWriter& events) {
  const double ts = start_s * kMicrosPerSecond;
  constexpr TraceCategory kComm = TraceCategory::kCommunication;
  events.push_back({{"name", name},
                    {"cat", "flow"},
                    {"ph", "s"},
                    {"id", id},
                    {"pid", hw.NodeOf(from)},
                    {"tid", Tid(result, from, kComm)},
                    {"ts", ts}});
  events.push_back({{"name", name},
                    {"cat", "flow"},
                    {"ph", "f"},
                    {"bp", "e"},
                    {"id", id},
                    {"pid", hw.NodeOf(to)},
                    {"tid", Tid(result, to, kComm)},
                    {"ts", ts}});
}

// The trace holds one event per device of an op, consecutively; a Send joins
// sender to receiver, a collective chains its participants by device id.
void AddFlows(const Function& fn, const SimulationResult& result, const HardwareProfile& hw,
              EventWriter& events) {
  const std::vector<TraceEvent>& trace = result.trace;
  int64_t id = 0;
  for (size_t i = 0, j = 0; i < trace.size(); i = j) {
    for (j = i; j < trace.size() && trace[j].op == trace[i].op; ++j) {
    }
    const Op& op = *fn.ops()[trace[i].op];
    if (op.is_call() || !IsCommunication(op.kind()) || !(trace[i].end_s > trace[i].start_s))
      continue;
    const std::string name = TraceLabel(fn, trace[i]);
    if (op.kind() == OpKind::kSend) {
      const DeviceId from = op.input(0)->type().device(), to = op.result(0)->type().device();
      if (from.has_value() && to.has_value() && from != to)
        AddFlow(name, id++, from, to, trace[i].start_s, result, hw, events);
      continue;
    }
    std::vector<DeviceId> devices;
    for (size_t k = i; k < j; ++k) devices.push_back(trace[k].device);
    std::sort(devices.begin(), devices.end());
    for (size_t k = 1; k < devices.size(); ++k)
      AddFlow(name, id++, devices[k - 1], devices[k], trace[i].start_s, result, hw, events);
  }
}

void AddMemoryCounters(const SimulationResult& result, const HardwareProfile& hw,
                       EventWriter& events) {
  for (const DeviceResult& d : result.devices) {
    std::string name = "memory " + d.device.ToString();
    for (const MemoryPoint& p : d.memory_timeline) {
      events.push_back({{"name", name},
                        {"ph", "C"},
                        {"pid", hw.NodeOf(d.device)},
                        {"ts", p.time_s * kMicrosPerSecond},
                        {"args", {{"bytes", p.bytes}}}});
    }
  }
}

}  // namespace

void WriteChromeTrace(const Function& fn, const SimulationResult& result,
                      const HardwareProfile& hw, std::ostream& out) {
  // The keys in the order nlohmann::json sorts them, as ChromeTraceJson always wrote them.
  nlohmann::json other = {{"function", "@" + fn.name()},
                          {"devices_per_node", hw.devices_per_node},
                          {"omitted_zero_duration_events", OmittedEvents(result)}};
  if (result.comm_stream) other["comm_stream"] = true;
  out << R"({"displayTimeUnit":"ns","otherData":)"
      << other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      << R"(,"traceEvents":[)";
  EventWriter events(out);
  AddTracks(result, hw, events);
  AddOpEvents(fn, result, hw, events);
  AddFlows(fn, result, hw, events);
  AddMemoryCounters(result, hw, events);
  out << "]}\n";
}

std::string ChromeTraceJson(const Function& fn, const SimulationResult& result,
                            const HardwareProfile& hw) {
  std::ostringstream out;
  WriteChromeTrace(fn, result, hw, out);
  return std::move(out).str();
}

}  // namespace distir::sim
