// The Chrome trace JSON: metadata per device, one X event per op and device.

#include "sim/chrome_trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim_test_util.h"
#include "testing/test_util.h"

namespace distir::sim {
namespace {

TEST(ChromeTraceTest, OneTrackPerDeviceWithNamedEvents) {
  Module m = distir::testing::ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>, %y: tensor<1000000xf32, d1>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%y) : tensor<1000000xf32, d1>
  %s = Send(%a) {device = d1} : tensor<1000xf32, d1>
  return %s, %b
})");
  ASSERT_OK_AND_ASSIGN(SimulationResult r, Simulate(m, *m.entry(), testing::TestHardware()));
  nlohmann::json trace = nlohmann::json::parse(ChromeTraceJson(*m.entry(), r));
  ASSERT_TRUE(trace.contains("traceEvents"));
  int complete = 0;
  std::vector<std::string> threads;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    EXPECT_EQ(e["pid"], 0);
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

}  // namespace
}  // namespace distir::sim
