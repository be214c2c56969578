// The paper's example programs (data/examples/) on the DGX-2 profile: Figure 2
// against its swapped twin (Figure 3), Figure 8 (gradient checkpointing) and
// Figure 9 (ZeRO) against their plain twins.

#include <gtest/gtest.h>

#include <string>

#include "sim/simulator.h"
#include "support/str_util.h"
#include "testing/test_util.h"

namespace distir::sim {
namespace {

using distir::testing::ParseAndInferOrDie;
using distir::testing::SourcePath;

HardwareProfile Dgx2() {
  StatusOr<HardwareProfile> hw = LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml"));
  EXPECT_TRUE(hw.ok()) << hw.status().ToString();
  return hw.ok() ? std::move(hw).value() : HardwareProfile();
}

struct Simulated {
  Module module;
  SimulationResult result;
};

Simulated SimulateExample(const std::string& name) {
  std::string text;
  std::string path = SourcePath("data/examples/" + name + ".distir");
  EXPECT_TRUE(ReadFileToString(path, &text)) << "cannot read " << path;
  Simulated s{ParseAndInferOrDie(text), {}};
  StatusOr<SimulationResult> r = Simulate(s.module, *s.module.entry(), Dgx2());
  EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
  if (r.ok()) s.result = std::move(r).value();
  return s;
}

// The trace event of the op whose first result is `result` on device `device`.
const TraceEvent* Find(const Simulated& s, const std::string& result, int device) {
  for (const TraceEvent& e : s.result.trace) {
    const Op& op = *s.module.entry()->ops()[e.op];
    if (e.device == DeviceId(device) && op.num_results() > 0 && op.result(0)->name() == result) {
      return &e;
    }
  }
  ADD_FAILURE() << "no trace event for %" << result << " on d" << device;
  return nullptr;
}

int64_t Peak(const SimulationResult& r, DeviceId device) {
  for (const DeviceResult& d : r.devices) {
    if (d.device == device) return d.peak_memory_bytes;
  }
  ADD_FAILURE() << "no device " << device;
  return 0;
}

TEST(ExamplesSimTest, PipelineRunsOnBothDevices) {
  Simulated pp = SimulateExample("mlp_pp");
  ASSERT_EQ(pp.result.devices.size(), 2u);
  for (const DeviceResult& d : pp.result.devices) {
    EXPECT_GT(d.compute_s, 0) << d.device;
    EXPECT_GT(d.communication_s, 0) << d.device;
    EXPECT_GT(d.peak_memory_bytes, 0) << d.device;
  }
  EXPECT_GT(pp.result.iteration_time_s, 0);
}

TEST(ExamplesSimTest, SwappingLines10And11OfFigure2IsStrictlySlower) {
  Simulated pp = SimulateExample("mlp_pp");
  Simulated swapped = SimulateExample("mlp_pp_swapped");
  EXPECT_GT(swapped.result.iteration_time_s, pp.result.iteration_time_s);
}

TEST(ExamplesSimTest, TraceOrderMatchesFigure3) {
  Simulated pp = SimulateExample("mlp_pp");
  Simulated swapped = SimulateExample("mlp_pp_swapped");
  // Top: p_1 runs on d2 while d1 computes as_2, before the second Send.
  const TraceEvent* p1 = Find(pp, "p_1", 2);
  const TraceEvent* ar2 = Find(pp, "ar_2", 2);
  ASSERT_TRUE(p1 != nullptr && ar2 != nullptr);
  EXPECT_LE(p1->end_s, ar2->start_s);
  EXPECT_LT(p1->start_s, Find(pp, "as_2", 1)->end_s);
  // Bottom: p_1 on d2 starts only after the second Send.
  const TraceEvent* p1_swapped = Find(swapped, "p_1", 2);
  const TraceEvent* ar2_swapped = Find(swapped, "ar_2", 2);
  ASSERT_TRUE(p1_swapped != nullptr && ar2_swapped != nullptr);
  EXPECT_GE(p1_swapped->start_s, ar2_swapped->end_s);
  EXPECT_GT(p1_swapped->start_s, p1->start_s);
}

TEST(ExamplesSimTest, GradientCheckpointingLowersPeakMemory) {
  Simulated checkpoint = SimulateExample("mlp_checkpoint");
  Simulated sequential = SimulateExample("mlp_sequential");
  EXPECT_LT(checkpoint.result.PeakMemoryBytes(), sequential.result.PeakMemoryBytes());
  // Recomputation costs time.
  EXPECT_GT(checkpoint.result.iteration_time_s, sequential.result.iteration_time_s);
}

TEST(ExamplesSimTest, ZeroLowersPerDevicePeakMemory) {
  Simulated zero = SimulateExample("mlp_zero");
  Simulated dp = SimulateExample("mlp_dp");
  ASSERT_EQ(zero.result.devices.size(), dp.result.devices.size());
  for (const DeviceResult& d : dp.result.devices) {
    EXPECT_LT(Peak(zero.result, d.device), d.peak_memory_bytes) << d.device;
  }
}

}  // namespace
}  // namespace distir::sim
