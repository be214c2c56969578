// The simulator's semantics on tiny typed programs (types written in the text,
// so no inference runs): per-device clocks, synchronous multi-device ops,
// overlap of disjoint devices, busy/idle split, memory and errors.
//
// Costs on TestHardware(): Relu of 1000 f32 = 8000 B / 1e11 + 1e-5 = 1.008e-5 s;
// Relu of 1e6 f32 = 8e6 / 1e11 + 1e-5 = 9e-5 s; Send of 1000 f32 inside a node =
// 4000 / 1e10 + 1e-6 = 1.4e-6 s.

#include "sim/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim_test_util.h"
#include "testing/test_util.h"

namespace distir::sim {
namespace {

using distir::testing::ParseOrDie;
using distir::testing::StatusIs;
using testing::TestHardware;

constexpr double kRelu1k = 1.008e-5;
constexpr double kRelu1M = 9e-5;
constexpr double kSend1k = 1.4e-6;

SimulationResult SimulateOrDie(const Module& m, const HardwareProfile& hw = TestHardware(),
                               SimulateOptions options = {}) {
  StatusOr<SimulationResult> r = Simulate(m, *m.entry(), hw, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : SimulationResult();
}

const DeviceResult& Dev(const SimulationResult& r, int id) {
  for (const DeviceResult& d : r.devices) {
    if (d.device == DeviceId(id)) return d;
  }
  ADD_FAILURE() << "no device d" << id;
  return r.devices.front();
}

TEST(SimulatorTest, OpsOnDisjointDevicesOverlap) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>, %y: tensor<1000xf32, d1>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%y) : tensor<1000xf32, d1>
  return %a, %b
})");
  SimulationResult r = SimulateOrDie(m);
  EXPECT_NEAR(r.iteration_time_s, kRelu1k, 1e-15);  // not 2 x
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].device, DeviceId(0));
  EXPECT_EQ(r.trace[1].device, DeviceId(1));
  EXPECT_EQ(r.trace[0].start_s, 0);
  EXPECT_EQ(r.trace[1].start_s, 0);
  EXPECT_EQ(r.num_ops, 2);
  EXPECT_EQ(r.devices.size(), 2u);
}

TEST(SimulatorTest, SendSynchronisesSenderAndReceiver) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>, %y: tensor<1000000xf32, d1>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%y) : tensor<1000000xf32, d1>
  %s = Send(%a) {device = d1} : tensor<1000xf32, d1>
  %c = Relu(%x) : tensor<1000xf32, d0>
  return %s, %b, %c
})");
  SimulationResult r = SimulateOrDie(m);
  // d0: a [0, 1.008e-5]; d1: b [0, 9e-5]; the Send waits for d1: [9e-5, 9.14e-5]
  // on both; c waits for the Send on d0: [9.14e-5, 1.0148e-4].
  ASSERT_EQ(r.trace.size(), 5u);
  const TraceEvent& send_d0 = r.trace[2];
  const TraceEvent& send_d1 = r.trace[3];
  EXPECT_EQ(send_d0.device, DeviceId(0));
  EXPECT_EQ(send_d1.device, DeviceId(1));
  EXPECT_EQ(send_d0.category, TraceCategory::kCommunication);
  EXPECT_NEAR(send_d0.start_s, kRelu1M, 1e-15);
  EXPECT_EQ(send_d0.start_s, send_d1.start_s);
  EXPECT_EQ(send_d0.end_s, send_d1.end_s);
  EXPECT_NEAR(r.trace[4].start_s, kRelu1M + kSend1k, 1e-15);
  EXPECT_NEAR(r.iteration_time_s, kRelu1M + kSend1k + kRelu1k, 1e-15);
  EXPECT_EQ(TraceLabel(*m.entry(), send_d0), "Send %s");
  // Busy split: d0 computes 2 x 1.008e-5, communicates 1.4e-6, idles the rest.
  EXPECT_NEAR(Dev(r, 0).compute_s, 2 * kRelu1k, 1e-15);
  EXPECT_NEAR(Dev(r, 0).communication_s, kSend1k, 1e-15);
  EXPECT_NEAR(Dev(r, 0).idle_s, r.iteration_time_s - 2 * kRelu1k - kSend1k, 1e-15);
  EXPECT_NEAR(Dev(r, 1).compute_s, kRelu1M, 1e-15);
  EXPECT_NEAR(Dev(r, 1).idle_s, kRelu1k, 1e-15);
}

TEST(SimulatorTest, ValuesWithoutDeviceAreAnErrorNamingTheOp) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<4x4xf32>) {
  %y = MatMul(%x, %x) : tensor<4x4xf32>
  return %y
})");
  EXPECT_THAT(Simulate(m, *m.entry(), TestHardware()),
              StatusIs(StatusCode::kInvalidArgument,
                       "op MatMul has no device; the simulator needs every value placed"));
}

TEST(SimulatorTest, DeviceOutsideTheProfileIsAnError) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<4xf32, d16>) {
  %y = Relu(%x) : tensor<4xf32, d16>
  return %y
})");
  EXPECT_THAT(Simulate(m, *m.entry(), TestHardware()),
              StatusIs(StatusCode::kInvalidArgument,
                       "the program uses device d16, but hardware profile 'test' has 16 devices"));
}

TEST(SimulatorTest, UninferredTypesAreAnError) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<4xf32, d0>) {
  %y = Relu(%x)
  return %y
})");
  EXPECT_THAT(Simulate(m, *m.entry(), TestHardware()),
              StatusIs(StatusCode::kInvalidArgument, "the type of %y (op Relu) is not inferred"));
}

TEST(SimulatorTest, TensorsLiveFromDefinitionToLastUse) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%a) : tensor<1000xf32, d0>
  %c = Relu(%b) : tensor<1000xf32, d0>
  return %c
})");
  SimulationResult r = SimulateOrDie(m);
  // x (4000 B) is resident; at most two of a, b, c are live at once.
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 12000);
  const std::vector<MemoryPoint>& t = Dev(r, 0).memory_timeline;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].time_s, 0);
  EXPECT_EQ(t[0].bytes, 8000);  // x + a
  EXPECT_NEAR(t[1].time_s, kRelu1k, 1e-15);
  EXPECT_EQ(t[1].bytes, 12000);  // x + a + b
  EXPECT_EQ(t[2].bytes, 12000);  // a freed, c allocated at the same instant
  EXPECT_NEAR(t[3].time_s, 3 * kRelu1k, 1e-15);
  EXPECT_EQ(t[3].bytes, 8000);  // x + c (returned, stays live)
}

TEST(SimulatorTest, DeadResultsAreFreedWhenTheirOpEnds) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %b = Relu(%x) : tensor<1000xf32, d0>
  return %b
})");
  SimulationResult r = SimulateOrDie(m);
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 8000);
  EXPECT_EQ(Dev(r, 0).memory_timeline.back().bytes, 8000);
}

TEST(SimulatorTest, OptimizersUpdateInPlace) {
  Module m = ParseOrDie(R"(
func @main(%w: tensor<1000xf32, d0>, %dw: tensor<1000xf32, d0>, %m: tensor<1000xf32, d0>, %v: tensor<1000xf32, d0>) {
  %w1 = SGD(%w, %dw) {lr = 0.1} : tensor<1000xf32, d0>
  %w2, %m2, %v2 = Adam(%w1, %dw, %m, %v) : tensor<1000xf32, d0>, tensor<1000xf32, d0>, tensor<1000xf32, d0>
  return %w2, %m2, %v2
})");
  SimulationResult r = SimulateOrDie(m);
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 16000);  // the four parameters, nothing more
}

TEST(SimulatorTest, TuplesAndUnpackingAllocateNothing) {
  Module m = ParseOrDie(R"(
func @main(%p: tensor<1000xf32, d0>, %q: tensor<1000xf32, d0>) {
  %t = Tuple(%p, %q) : tuple<tensor<1000xf32, d0>, tensor<1000xf32, d0>>
  %a, %b = UnpackTuple(%t) : tensor<1000xf32, d0>, tensor<1000xf32, d0>
  %c = Add(%a, %b) : tensor<1000xf32, d0>
  return %c
})");
  SimulationResult r = SimulateOrDie(m);
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 12000);
}

TEST(SimulatorTest, CallHoldsTheCalleesPeakForItsDuration) {
  Module m = ParseOrDie(R"(
func @g(%x: tensor<1000xf32>) {
  %a = Relu(%x) : tensor<1000xf32>
  %b = Relu(%a) : tensor<1000xf32>
  return %b
}

func @main(%y: tensor<1000xf32, d0>) {
  %z = @g(%y) : tensor<1000xf32, d0>
  return %z
})");
  SimulationResult r = SimulateOrDie(m);
  // Time: the callee's two Relus. Memory: y (4000) + the callee's peak (a + b =
  // 8000) during the call; y + z afterwards.
  EXPECT_NEAR(r.iteration_time_s, 2 * kRelu1k, 1e-15);
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 12000);
  EXPECT_EQ(Dev(r, 0).memory_timeline.back().bytes, 8000);
  ASSERT_EQ(r.trace.size(), 1u);
  EXPECT_EQ(TraceLabel(*m.entry(), r.trace[0]), "@g %z");
  EXPECT_EQ(r.trace[0].category, TraceCategory::kCompute);
}

TEST(SimulatorTest, CallReturningItsArgumentAllocatesNothing) {
  Module m = ParseOrDie(R"(
func @h(%x: tensor<1000xf32>) {
  %i = Identity(%x) : tensor<1000xf32>
  return %i
}

func @main(%y: tensor<1000xf32, d0>) {
  %z = @h(%y) : tensor<1000xf32, d0>
  %w = Relu(%z) : tensor<1000xf32, d0>
  return %w
})");
  SimulationResult r = SimulateOrDie(m);
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 8000);  // y and w
}

TEST(SimulatorTest, ThroughputUsesTheLeadingExtentOfTheFirstParameter) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<32x4xf32, d0>) {
  %a = Relu(%x) : tensor<32x4xf32, d0>
  return %a
})");
  SimulationResult r = SimulateOrDie(m);
  EXPECT_EQ(r.batch_size, 32);
  EXPECT_DOUBLE_EQ(r.throughput, 32 / r.iteration_time_s);
  SimulateOptions options;
  options.batch_size = 64;
  EXPECT_EQ(SimulateOrDie(m, TestHardware(), options).batch_size, 64);
}

TEST(SimulatorTest, PeakOverCapacityDoesNotFit) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  return %a
})");
  HardwareProfile hw = TestHardware();
  EXPECT_TRUE(SimulateOrDie(m, hw).fits_in_memory);
  hw.device.memory_capacity = 7999;
  SimulationResult r = SimulateOrDie(m, hw);
  EXPECT_FALSE(r.fits_in_memory);
  EXPECT_EQ(r.PeakMemoryBytes(), 8000);
}

TEST(SimulatorTest, TraceAndTimelineCanBeSkipped) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  return %a
})");
  SimulateOptions options;
  options.record_trace = false;
  options.record_memory_timeline = false;
  SimulationResult r = SimulateOrDie(m, TestHardware(), options);
  EXPECT_TRUE(r.trace.empty());
  EXPECT_TRUE(r.devices[0].memory_timeline.empty());
  EXPECT_EQ(r.devices[0].peak_memory_bytes, 8000);
}

}  // namespace
}  // namespace distir::sim

namespace distir::sim {
namespace {

MemoryKind KindByName(const Value& v) {
  if (v.name() == "w") return MemoryKind::kWeights;
  if (v.name() == "x") return MemoryKind::kInputs;
  if (v.name() == "g") return MemoryKind::kGradients;
  return MemoryKind::kActivations;
}

int64_t Kind(const MemoryByKind& bytes, MemoryKind kind) { return bytes[static_cast<int>(kind)]; }

TEST(SimulatorTest, MemoryKindsAtThePeakSumToThePeak) {
  // w, x: 8000 B resident; a (4000) lives until g (4000, returned) is made:
  // the peak, 16000 B, is at g; then c (4000) replaces a as the activation.
  Module m = ParseOrDie(R"(
func @main(%w: tensor<1000xf32, d0>, %x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  %g = Relu(%a) : tensor<1000xf32, d0>
  %r = Identity(%g) : tensor<1000xf32, d0>
  %c = Relu(%w) : tensor<1000xf32, d0>
  %d = Relu(%c) : tensor<1000xf32, d0>
  return %r, %d
})");
  SimulateOptions options;
  options.memory_kind = KindByName;
  SimulationResult r = SimulateOrDie(m, TestHardware(), options);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceResult& d = r.devices[0];
  ASSERT_TRUE(d.memory_at_peak.has_value());
  ASSERT_TRUE(d.peak_memory_by_kind.has_value());
  int64_t sum = 0;
  for (int64_t bytes : *d.memory_at_peak) sum += bytes;
  EXPECT_EQ(sum, d.peak_memory_bytes);
  EXPECT_EQ(d.peak_memory_bytes, 20000);  // w, x, g (r is a view of it), c, d
  EXPECT_EQ(Kind(*d.memory_at_peak, MemoryKind::kWeights), 4000);
  EXPECT_EQ(Kind(*d.memory_at_peak, MemoryKind::kInputs), 4000);
  EXPECT_EQ(Kind(*d.memory_at_peak, MemoryKind::kGradients), 4000);
  EXPECT_EQ(Kind(*d.memory_at_peak, MemoryKind::kActivations), 8000);
  EXPECT_EQ(Kind(*d.memory_at_peak, MemoryKind::kOther), 0);
  EXPECT_EQ(Kind(*d.peak_memory_by_kind, MemoryKind::kActivations), 8000);
  EXPECT_EQ(Kind(*d.peak_memory_by_kind, MemoryKind::kGradients), 4000);
}

TEST(SimulatorTest, NoMemoryKindsWithoutAClassifier) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000xf32, d0>) {
  %a = Relu(%x) : tensor<1000xf32, d0>
  return %a
})");
  SimulationResult r = SimulateOrDie(m);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_FALSE(r.devices[0].memory_at_peak.has_value());
}

}  // namespace
}  // namespace distir::sim
