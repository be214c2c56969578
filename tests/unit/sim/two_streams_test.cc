// The communication stream (profile key overlap.comm_stream; docs/cost_model.md
// §3.1): a communication op overlaps compute that does not read its result, a
// compute op that reads it waits, overlapped work is slowed by the profile's
// factors, buffers read by a communication op live until it ends, and a
// profile without the stream keeps the one-stream timing.
//
// Costs on TestHardware() (no collective launch overhead): Relu of 1e6 f32 =
// 8e6 B / 1e11 + 1e-5 = 9e-5 s; Relu of 1000 f32 = 8000 / 1e11 + 1e-5 =
// 1.008e-5 s; Send of 1e6 f32 inside a node = 4e6 / 1e10 + 1e-6 = 4.01e-4 s;
// SGD of 1e6 f32 = 3 x 4e6 / 1e11 + 1e-5 = 1.3e-4 s.

#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim_test_util.h"
#include "testing/test_util.h"

namespace distir::sim {
namespace {

using distir::testing::ParseOrDie;
using testing::TestHardware;

constexpr double kRelu1M = 9e-5;
constexpr double kRelu1k = 1.008e-5;
constexpr double kSend1M = 4.01e-4;
constexpr double kSgd1M = 1.3e-4;

HardwareProfile Streams(double compute_slowdown = 0, double comm_slowdown = 0) {
  HardwareProfile hw = TestHardware();
  hw.overlap = {true, compute_slowdown, comm_slowdown};
  return hw;
}

SimulationResult SimulateOrDie(const Module& m, const HardwareProfile& hw) {
  StatusOr<SimulationResult> r = Simulate(m, *m.entry(), hw);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : SimulationResult();
}

// The trace event of op `op` on device `device`.
const TraceEvent& Event(const SimulationResult& r, int op, int device) {
  for (const TraceEvent& e : r.trace) {
    if (e.op == op && e.device == DeviceId(device)) return e;
  }
  ADD_FAILURE() << "no event of op " << op << " on d" << device;
  return r.trace.front();
}

const DeviceResult& Dev(const SimulationResult& r, int id) {
  for (const DeviceResult& d : r.devices) {
    if (d.device == DeviceId(id)) return d;
  }
  ADD_FAILURE() << "no device d" << id;
  return r.devices.front();
}

// Op 0 makes %a on d0; op 1 sends it to d1; op 2 computes on d0 without it;
// op 3 reads the Send's result on d1.
constexpr char kSendBeside[] = R"(
func @main(%big: tensor<1000000xf32, d0>, %x: tensor<1000xf32, d0>) {
  %a = Relu(%big) : tensor<1000000xf32, d0>
  %s = Send(%a) {device = d1} : tensor<1000000xf32, d1>
  %c = Relu(%x) : tensor<1000xf32, d0>
  %d = Relu(%s) : tensor<1000000xf32, d1>
  return %c, %d
})";

TEST(TwoStreamsTest, CommunicationOverlapsIndependentCompute) {
  Module m = ParseOrDie(kSendBeside);
  SimulationResult r = SimulateOrDie(m, Streams());
  EXPECT_TRUE(r.comm_stream);
  // The Send waits for %a: [9e-5, 4.91e-4]; %c does not wait for the Send.
  EXPECT_NEAR(Event(r, 1, 0).start_s, kRelu1M, 1e-15);
  EXPECT_NEAR(Event(r, 1, 0).end_s, kRelu1M + kSend1M, 1e-15);
  EXPECT_NEAR(Event(r, 2, 0).start_s, kRelu1M, 1e-15);
  EXPECT_NEAR(Event(r, 2, 0).end_s, kRelu1M + kRelu1k, 1e-15);
  // d0 ran both streams during %c's whole run; d1 never computed beside the Send.
  EXPECT_NEAR(Dev(r, 0).overlapped_s, kRelu1k, 1e-15);
  EXPECT_NEAR(Dev(r, 0).ExposedCommunicationS(), kSend1M - kRelu1k, 1e-15);
  EXPECT_EQ(Dev(r, 1).overlapped_s, 0);
}

TEST(TwoStreamsTest, ComputeReadingTheResultWaitsForIt) {
  Module m = ParseOrDie(kSendBeside);
  SimulationResult r = SimulateOrDie(m, Streams());
  // %d reads %s: it starts when the Send ends, 4.91e-4, and sets the time.
  EXPECT_NEAR(Event(r, 3, 1).start_s, kRelu1M + kSend1M, 1e-15);
  EXPECT_NEAR(r.iteration_time_s, kRelu1M + kSend1M + kRelu1M, 1e-15);
  // One stream: %c waits for the Send on d0 too, but it is not on the critical
  // path, so the iteration time is the same and nothing was saved.
  EXPECT_NEAR(r.single_stream_time_s, r.iteration_time_s, 1e-15);
}

TEST(TwoStreamsTest, OverlappedWorkIsSlowedByTheProfilesFactors) {
  Module m = ParseOrDie(kSendBeside);
  SimulationResult r = SimulateOrDie(m, Streams(/*compute=*/1.0, /*comm=*/0.5));
  // %c runs entirely beside the Send at half speed: 2 x 1.008e-5.
  const double c = 2 * kRelu1k;
  EXPECT_NEAR(Event(r, 2, 0).end_s - Event(r, 2, 0).start_s, c, 1e-15);
  // Meanwhile the Send progresses at 1/1.5: it does c / 1.5 of work in c
  // seconds and ends c - c / 1.5 = 6.72e-6 s later than alone.
  EXPECT_NEAR(Event(r, 1, 0).end_s, kRelu1M + kSend1M + (c - c / 1.5), 1e-15);
  // Both ends of the Send see the same interval (a collective is as slow as
  // its slowest participant).
  EXPECT_EQ(Event(r, 1, 1).end_s, Event(r, 1, 0).end_s);
  EXPECT_NEAR(Dev(r, 0).overlapped_s, c, 1e-15);
}

TEST(TwoStreamsTest, IndependentCommunicationShortensTheCriticalPath) {
  // Two compute chains on d0, a Send in between whose result nobody reads
  // until the end: one stream serialises Send and Relu, two overlap them.
  Module m = ParseOrDie(R"(
func @main(%big: tensor<1000000xf32, d0>, %x: tensor<1000000xf32, d0>) {
  %s = Send(%big) {device = d1} : tensor<1000000xf32, d1>
  %c = Relu(%x) : tensor<1000000xf32, d0>
  %e = Relu(%c) : tensor<1000000xf32, d0>
  return %s, %e
})");
  SimulationResult r = SimulateOrDie(m, Streams());
  EXPECT_NEAR(r.iteration_time_s, kSend1M, 1e-15);                    // max(Send, 2 Relu)
  EXPECT_NEAR(r.single_stream_time_s, kSend1M + 2 * kRelu1M, 1e-15);  // Send, then Relus
  EXPECT_NEAR(Dev(r, 0).overlapped_s, 2 * kRelu1M, 1e-15);
  EXPECT_NEAR(Dev(r, 0).idle_s, 0, 1e-15);  // busy throughout: the Send spans it
}

TEST(TwoStreamsTest, InPlaceUpdateWaitsForCommunicationReadingTheWeight) {
  // SGD overwrites %w's buffer, which the Send is still reading: write after read.
  Module m = ParseOrDie(R"(
func @main(%w: tensor<1000000xf32, d0>, %g: tensor<1000000xf32, d0>) {
  %s = Send(%w) {device = d1} : tensor<1000000xf32, d1>
  %n = SGD(%w, %g) {lr = 0.1} : tensor<1000000xf32, d0>
  return %s, %n
})");
  SimulationResult r = SimulateOrDie(m, Streams());
  EXPECT_NEAR(Event(r, 1, 0).start_s, kSend1M, 1e-15);
  EXPECT_NEAR(r.iteration_time_s, kSend1M + kSgd1M, 1e-15);
}

TEST(TwoStreamsTest, BufferReadByCommunicationLivesUntilItEnds) {
  // %a's last reader in program order is %c, which ends at 1.8e-4; the Send
  // reading it ends at 4.91e-4, and only then may %a be freed.
  Module m = ParseOrDie(R"(
func @main(%big: tensor<1000000xf32, d0>) {
  %a = Relu(%big) : tensor<1000000xf32, d0>
  %s = Send(%a) {device = d1} : tensor<1000000xf32, d1>
  %c = Relu(%a) : tensor<1000000xf32, d0>
  return %s, %c
})");
  SimulationResult r = SimulateOrDie(m, Streams());
  const std::vector<MemoryPoint>& t = Dev(r, 0).memory_timeline;
  // %big (4e6 B, resident) and %a from 0; %c (returned) from 9e-5.
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].time_s, 0);
  EXPECT_EQ(t[0].bytes, 8000000);
  EXPECT_NEAR(t[1].time_s, kRelu1M, 1e-15);
  EXPECT_EQ(t[1].bytes, 12000000);
  EXPECT_NEAR(t[2].time_s, kRelu1M + kSend1M, 1e-15);  // the Send ends: %a freed
  EXPECT_EQ(t[2].bytes, 8000000);
  EXPECT_EQ(Dev(r, 0).peak_memory_bytes, 12000000);
}

TEST(TwoStreamsTest, MemoryKindsFollowTheTwoStreamReplay) {
  // As above, with %big an input and the rest activations: at d0's peak %a
  // (kept alive by the Send) and %c are both live.
  Module m = ParseOrDie(R"(
func @main(%big: tensor<1000000xf32, d0>) {
  %a = Relu(%big) : tensor<1000000xf32, d0>
  %s = Send(%a) {device = d1} : tensor<1000000xf32, d1>
  %c = Relu(%a) : tensor<1000000xf32, d0>
  return %s, %c
})");
  SimulateOptions options;
  options.memory_kind = [](const Value& v) {
    return v.is_param() ? MemoryKind::kInputs : MemoryKind::kActivations;
  };
  StatusOr<SimulationResult> r = Simulate(m, *m.entry(), Streams(), options);
  ASSERT_OK(r.status());
  ASSERT_TRUE(r->comm_stream);
  const DeviceResult& d0 = Dev(*r, 0);
  ASSERT_TRUE(d0.memory_at_peak.has_value());
  EXPECT_EQ((*d0.memory_at_peak)[static_cast<int>(MemoryKind::kInputs)], 4000000);
  EXPECT_EQ((*d0.memory_at_peak)[static_cast<int>(MemoryKind::kActivations)], 8000000);
  EXPECT_EQ((*d0.peak_memory_by_kind)[static_cast<int>(MemoryKind::kActivations)], 8000000);
  const DeviceResult& d1 = Dev(*r, 1);
  ASSERT_TRUE(d1.memory_at_peak.has_value());
  EXPECT_EQ((*d1.memory_at_peak)[static_cast<int>(MemoryKind::kActivations)], 4000000);
  EXPECT_EQ(d1.peak_memory_bytes, 4000000);
}

TEST(TwoStreamsTest, WithoutCommunicationTwoStreamsMatchOne) {
  Module m = ParseOrDie(R"(
func @main(%x: tensor<1000000xf32, d0>, %y: tensor<1000xf32, d1>) {
  %a = Relu(%x) : tensor<1000000xf32, d0>
  %b = Relu(%y) : tensor<1000xf32, d1>
  %c = Relu(%a) : tensor<1000000xf32, d0>
  %t = Tuple(%c, %b) : tuple<tensor<1000000xf32, d0>, tensor<1000xf32, d1>>
  return %t
})");
  SimulationResult one = SimulateOrDie(m, TestHardware());
  SimulationResult two = SimulateOrDie(m, Streams(0.5, 0.5));
  EXPECT_EQ(two.iteration_time_s, one.iteration_time_s);
  ASSERT_EQ(two.trace.size(), one.trace.size());
  for (size_t i = 0; i < one.trace.size(); ++i) {
    EXPECT_EQ(two.trace[i].start_s, one.trace[i].start_s) << i;
    EXPECT_EQ(two.trace[i].end_s, one.trace[i].end_s) << i;
  }
  for (size_t d = 0; d < one.devices.size(); ++d) {
    EXPECT_EQ(two.devices[d].peak_memory_bytes, one.devices[d].peak_memory_bytes);
    EXPECT_EQ(two.devices[d].idle_s, one.devices[d].idle_s);
  }
}

TEST(TwoStreamsTest, StreamOffKeepsTheOneStreamTiming) {
  // overlap.comm_stream false: the slowdowns are ignored, the result is the
  // paper's semantics bit for bit (the Relu waits for the Send on d0).
  Module m = ParseOrDie(kSendBeside);
  HardwareProfile off = TestHardware();
  off.overlap = {false, 1.0, 1.0};
  SimulationResult r = SimulateOrDie(m, off);
  SimulationResult plain = SimulateOrDie(m, TestHardware());
  EXPECT_FALSE(r.comm_stream);
  EXPECT_EQ(r.iteration_time_s, plain.iteration_time_s);
  EXPECT_EQ(r.single_stream_time_s, r.iteration_time_s);
  EXPECT_NEAR(Event(r, 2, 0).start_s, kRelu1M + kSend1M, 1e-15);
  for (const DeviceResult& d : r.devices) EXPECT_EQ(d.overlapped_s, 0);
}

}  // namespace
}  // namespace distir::sim
