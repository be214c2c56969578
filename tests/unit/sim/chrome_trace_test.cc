// The Chrome trace JSON: a process per node and a thread per device, one X
// event with args per op and device, flow arrows for Sends and collectives,
// and zero-duration events left out.

#include "sim/chrome_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "sim_test_util.h"
#include "testing/test_util.h"

namespace distir::sim {
namespace {

nlohmann::json TraceOf(const char* text) {
  Module m = distir::testing::ParseOrDie(text);
  StatusOr<SimulationResult> r = Simulate(m, *m.entry(), testing::TestHardware());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return nlohmann::json::parse(ChromeTraceJson(*m.entry(), *r, testing::TestHardware()));
}

// The complete event named `name` on thread `tid`; null when there is none.
nlohmann::json FindSlice(const nlohmann::json& trace, const std::string& name, int64_t tid) {
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == name && e["tid"] == tid) return e;
  }
  return nullptr;
}

TEST(ChromeTraceTest, OneTrackPerDeviceWithNamedEvents) {
  nlohmann::json trace = TraceOf(R"(
func @main(%x: tensor<1000xf32, d0>, %y: tensor<1000000xf32, d1>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%y) : tensor<1000000xf32, d1>
  %s = Send(%a) {device = d1} : tensor<1000xf32, d1>
  return %s, %b
})");
  ASSERT_TRUE(trace.contains("traceEvents"));
  int complete = 0;
  std::vector<std::string> threads;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    EXPECT_EQ(e["pid"], 0);  // d0 and d1 are both in node 0 (8 devices per node)
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      threads.push_back(e["args"]["name"]);
    }
    if (e["ph"] != "X") continue;
    ++complete;
    if (e["name"] == "Send %s") {
      // Starts when d1's Relu of 1e6 f32 ends: 9e-5 s = 90 us; lasts 1.4 us.
      EXPECT_EQ(e["cat"], "communication");
      EXPECT_NEAR(e["ts"].get<double>(), 90.0, 1e-9);
      EXPECT_NEAR(e["dur"].get<double>(), 1.4, 1e-9);
    }
    if (e["name"] == "Relu %a") {
      EXPECT_EQ(e["cat"], "compute");
      EXPECT_EQ(e["tid"], 0);
    }
  }
  EXPECT_EQ(complete, 4);  // a, b, and the Send on both devices
  EXPECT_EQ(threads, (std::vector<std::string>{"d0", "d1"}));
}

TEST(ChromeTraceTest, ProcessPerNodeAndThreadPerDeviceAreNamed) {
  // TestHardware has 8 devices per node: d3 is in node 0, d9 and d12 in node 1.
  nlohmann::json trace = TraceOf(R"(
func @main(%x: tensor<64xf32, d3>, %y: tensor<64xf32, d9>, %z: tensor<64xf32, d12>) {
  %a = Relu(%x) : tensor<64xf32, d3>
  %b = Relu(%y) : tensor<64xf32, d9>
  %c = Relu(%z) : tensor<64xf32, d12>
  return %a, %b, %c
})");
  std::map<int, std::string> processes;
  std::map<int64_t, std::pair<int, std::string>> threads;  // tid -> (pid, name)
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") processes[e["pid"].get<int>()] = e["args"]["name"];
    if (e["name"] == "thread_name")
      threads[e["tid"].get<int64_t>()] = {e["pid"].get<int>(), e["args"]["name"]};
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "node 0"}, {1, "node 1"}}));
  EXPECT_EQ(threads[3], (std::pair<int, std::string>{0, "d3"}));
  EXPECT_EQ(threads[9], (std::pair<int, std::string>{1, "d9"}));
  EXPECT_EQ(threads[12], (std::pair<int, std::string>{1, "d12"}));
  EXPECT_EQ(FindSlice(trace, "Relu %c", 12)["pid"], 1);
  EXPECT_EQ(trace["otherData"]["function"], "@main");
  EXPECT_EQ(trace["otherData"]["devices_per_node"], 8);
}

TEST(ChromeTraceTest, EventArgsDescribeTheOpAndItsTask) {
  nlohmann::json trace = TraceOf(R"(
func @main(%x: tensor<4x8xf32, d0>, %w: tensor<8x16xf32, d0>) {
  %h = MatMul(%x, %w) {task = [1, 2, 0]} : tensor<4x16xf32, d0>
  %g = Relu(%h) {task = [1, -1, 3]} : tensor<4x16xf32, d0>
  %r = Relu(%g) : tensor<4x16xf32, d0>
  return %r
})");
  nlohmann::json h = FindSlice(trace, "MatMul %h", 0);
  ASSERT_FALSE(h.is_null());
  const nlohmann::json& args = h["args"];
  EXPECT_EQ(args["op"], "MatMul");
  EXPECT_EQ(args["flops"].get<double>(), 2.0 * 4 * 16 * 8);  // 2 * |result| * K
  EXPECT_EQ(args["bytes"], 4 * (4 * 8 + 8 * 16 + 4 * 16));   // f32 inputs and result
  EXPECT_EQ(args["inputs"], (nlohmann::json{"tensor<4x8xf32, d0>", "tensor<8x16xf32, d0>"}));
  EXPECT_EQ(args["outputs"], (nlohmann::json{"tensor<4x16xf32, d0>"}));
  EXPECT_EQ(args["stage"], 1);
  EXPECT_EQ(args["microbatch"], 2);
  EXPECT_EQ(args["phase"], "forward");

  // An update op runs once per step: no microbatch; elementwise ops give no FLOPs.
  const nlohmann::json g = FindSlice(trace, "Relu %g", 0)["args"];
  EXPECT_EQ(g["phase"], "update");
  EXPECT_FALSE(g.contains("microbatch"));
  EXPECT_FALSE(g.contains("flops"));
  const nlohmann::json r = FindSlice(trace, "Relu %r", 0)["args"];
  EXPECT_FALSE(r.contains("stage"));
  EXPECT_FALSE(r.contains("phase"));
}

TEST(ChromeTraceTest, SendIsJoinedByAFlowFromSenderToReceiver) {
  // d2 (node 0) sends to d10 (node 1).
  nlohmann::json trace = TraceOf(R"(
func @main(%x: tensor<1000xf32, d2>) {
  %a = Relu(%x) : tensor<1000xf32, d2>
  %s = Send(%a) {device = d10} : tensor<1000xf32, d10>
  return %s
})");
  nlohmann::json start, finish;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "s") start = e;
    if (e["ph"] == "f") finish = e;
  }
  ASSERT_FALSE(start.is_null());
  ASSERT_FALSE(finish.is_null());
  EXPECT_EQ(start["id"], finish["id"]);
  EXPECT_EQ(start["name"], "Send %s");
  EXPECT_EQ(finish["name"], "Send %s");
  EXPECT_EQ(start["cat"], finish["cat"]);
  EXPECT_EQ(start["pid"], 0);
  EXPECT_EQ(start["tid"], 2);
  EXPECT_EQ(finish["pid"], 1);
  EXPECT_EQ(finish["tid"], 10);
  EXPECT_EQ(finish["bp"], "e");
  // Both bind to the Send's slices, which start together.
  const nlohmann::json sender = FindSlice(trace, "Send %s", 2);
  const nlohmann::json receiver = FindSlice(trace, "Send %s", 10);
  EXPECT_EQ(start["ts"], sender["ts"]);
  EXPECT_EQ(finish["ts"], receiver["ts"]);
  EXPECT_EQ(sender["args"]["bytes"], 4000);  // each side holds its own copy
  EXPECT_EQ(receiver["args"]["outputs"], (nlohmann::json{"tensor<1000xf32, d10>"}));
  EXPECT_TRUE(receiver["args"]["inputs"].empty());
}

TEST(ChromeTraceTest, CollectiveParticipantsAreChainedByDevice) {
  nlohmann::json trace = TraceOf(R"(
func @main(%a: tensor<256xf32, d0>, %b: tensor<256xf32, d1>, %c: tensor<256xf32, d2>) {
  %x, %y, %z = AllReduce(%a, %b, %c) : tensor<256xf32, d0>, tensor<256xf32, d1>, tensor<256xf32, d2>
  return %x, %y, %z
})");
  std::map<int64_t, std::pair<int64_t, int64_t>> flows;  // id -> (from tid, to tid)
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "s") flows[e["id"].get<int64_t>()].first = e["tid"].get<int64_t>();
    if (e["ph"] == "f") flows[e["id"].get<int64_t>()].second = e["tid"].get<int64_t>();
  }
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows.begin()->second, (std::pair<int64_t, int64_t>{0, 1}));
  EXPECT_EQ(flows.rbegin()->second, (std::pair<int64_t, int64_t>{1, 2}));
  EXPECT_EQ(FindSlice(trace, "AllReduce %x", 1)["args"]["inputs"],
            (nlohmann::json{"tensor<256xf32, d1>"}));
}

TEST(ChromeTraceTest, ZeroDurationEventsAreOmittedAndCounted) {
  nlohmann::json trace = TraceOf(R"(
func @main(%x: tensor<64xf32, d0>) {
  %i = Identity(%x) : tensor<64xf32, d0>
  %a = Relu(%i) : tensor<64xf32, d0>
  return %a
})");
  EXPECT_TRUE(FindSlice(trace, "Identity %i", 0).is_null());
  EXPECT_FALSE(FindSlice(trace, "Relu %a", 0).is_null());
  EXPECT_EQ(trace["otherData"]["omitted_zero_duration_events"], 1);
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_GT(e["dur"].get<double>(), 0);
    }
  }
}

}  // namespace
}  // namespace distir::sim
