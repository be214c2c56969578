// Simulator throughput (paper §5.4): simulated ops per second, including type
// inference and cost lookup, on synthetic programs of 10k, 100k and 1M ops.
//
// The program: 8 devices each run a chain of MatMul -> Relu -> Add layers (64 x
// 256 f32 activations, 256 x 256 weights) in lockstep; every 4 steps the 8
// activations are all-reduced, and every 8 steps each device sends its
// activation to the next one. Repeated layers hit the cost memo, as in real
// pipelined and data-parallel programs.
//
//   BM_InferAndSimulate  InferTypes + Simulate (cost lookups included): the target
//   BM_Simulate          Simulate alone, types already inferred
//   BM_SimulateNoRecord  the same without trace and memory timeline
//   BM_InferTypes        InferTypes alone

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "interp/infer_types.h"
#include "ir/builder.h"
#include "sim/simulator.h"

namespace distir::sim {
namespace {

constexpr int kDevices = 8;
constexpr int64_t kBatch = 64;
constexpr int64_t kWidth = 256;

Type F32(std::vector<int64_t> shape, int device) {
  return Type::Tensor(DType::kF32, std::move(shape), DeviceId(device));
}

// `prefix` followed by `n` (appended: GCC 12's -Wrestrict misfires on
// `"literal" + std::string` at -O2).
std::string Named(const char* prefix, int64_t n) {
  std::string out = prefix;
  out += std::to_string(n);
  return out;
}

// A fresh value name. Explicit names keep FunctionBuilder from probing "v.1",
// "v.2", ... for every value (linear in the number of values so far).
std::string Name(int64_t& counter) { return Named("v", counter++); }

// Appends one lockstep step (3 ops per device, plus the periodic collectives).
void AddStep(FunctionBuilder& b, int step, const std::vector<Value*>& weights,
             std::vector<Value*>& act, int64_t& ops) {
  for (int d = 0; d < kDevices; ++d) {
    Value* h = b.Add(OpKind::kMatMul, {act[d], weights[d]}, {}, Name(ops));
    Value* r = b.Add(OpKind::kRelu, {h}, {}, Name(ops));
    act[d] = b.Add(OpKind::kAdd, {r, act[d]}, {}, Name(ops));
  }
  if (step % 4 == 3) {
    std::vector<std::string> names;
    for (int d = 0; d < kDevices; ++d) names.push_back(Named("ar", ops * kDevices + d));
    act = b.AddMulti(OpKind::kAllReduce, act, {}, names);
    ops += 1;
  }
  if (step % 8 == 7) {
    std::vector<Value*> moved(kDevices);
    for (int d = 0; d < kDevices; ++d) {
      int to = (d + 1) % kDevices;
      moved[to] = b.Add(OpKind::kSend, {act[d]}, {{"device", DeviceId(to)}}, Name(ops));
    }
    act = moved;
  }
}

struct Program {
  Module module;
  int64_t num_ops = 0;
};

// A module whose entry has about `target_ops` ops (types not inferred).
std::unique_ptr<Program> BuildProgram(int64_t target_ops) {
  auto p = std::make_unique<Program>();
  FunctionBuilder b("main");
  std::vector<Value*> weights, act;
  for (int d = 0; d < kDevices; ++d) {
    act.push_back(b.Param(Named("x", d), F32({kBatch, kWidth}, d)));
    weights.push_back(b.Param(Named("w", d), F32({kWidth, kWidth}, d)));
  }
  for (int step = 0; p->num_ops < target_ops; ++step) AddStep(b, step, weights, act, p->num_ops);
  b.Return(act);
  StatusOr<std::unique_ptr<Function>> fn = std::move(b).Finish(&p->module);
  if (!fn.ok()) {
    std::cerr << fn.status().ToString() << "\n";
    std::abort();
  }
  p->module.AddFunction(std::move(fn).value());
  return p;
}

// Programs are built once per size: Google Benchmark calls each benchmark
// function several times while it settles the iteration count.
Program& GetProgram(int64_t target_ops) {
  static std::map<int64_t, std::unique_ptr<Program>> programs;
  std::unique_ptr<Program>& p = programs[target_ops];
  if (p == nullptr) p = BuildProgram(target_ops);
  return *p;
}

void ClearResultTypes(Module& m) {
  for (const auto& op : m.entry()->ops()) {
    for (const auto& r : op->results()) r->set_type(Type());
  }
}

HardwareProfile BenchHardware() {
  HardwareProfile hw;
  hw.name = "bench";
  hw.device = {"bench-gpu",       1.25e14, 1.25e14,      1.57e13, 7.8e12,       1.57e13,     9e11,
               int64_t{32} << 30, 5e-6,    std::nullopt, {},      std::nullopt, std::nullopt};
  hw.devices_per_node = kDevices;
  hw.intra_node = {"nvswitch", 1.5e11, 2e-6};
  hw.inter_node = {"ib", 2.5e10, 5e-6};
  return hw;
}

void Check(const Status& s) {
  if (s.ok()) return;
  std::cerr << s.ToString() << "\n";
  std::abort();
}

void Report(benchmark::State& state, const Program& p) {
  state.SetItemsProcessed(state.iterations() * p.num_ops);
  state.counters["ops"] = static_cast<double>(p.num_ops);
}

void BM_InferAndSimulate(benchmark::State& state) {
  Program* p = &GetProgram(state.range(0));
  HardwareProfile hw = BenchHardware();
  for (auto _ : state) {
    state.PauseTiming();
    ClearResultTypes(p->module);
    state.ResumeTiming();
    Check(InferTypes(p->module));
    StatusOr<SimulationResult> r = Simulate(p->module, *p->module.entry(), hw);
    Check(r.status());
    benchmark::DoNotOptimize(r->iteration_time_s);
  }
  Report(state, *p);
}

void SimulateOnly(benchmark::State& state, const SimulateOptions& options) {
  Program* p = &GetProgram(state.range(0));
  Check(InferTypes(p->module));
  HardwareProfile hw = BenchHardware();
  for (auto _ : state) {
    StatusOr<SimulationResult> r = Simulate(p->module, *p->module.entry(), hw, options);
    Check(r.status());
    benchmark::DoNotOptimize(r->iteration_time_s);
  }
  Report(state, *p);
}

void BM_Simulate(benchmark::State& state) { SimulateOnly(state, {}); }

void BM_SimulateNoRecord(benchmark::State& state) {
  SimulateOptions options;
  options.record_trace = false;
  options.record_memory_timeline = false;
  SimulateOnly(state, options);
}

void BM_InferTypes(benchmark::State& state) {
  Program* p = &GetProgram(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    ClearResultTypes(p->module);
    state.ResumeTiming();
    Check(InferTypes(p->module));
  }
  Report(state, *p);
}

#define DISTIR_SIM_SIZES ->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_InferAndSimulate) DISTIR_SIM_SIZES;
BENCHMARK(BM_Simulate) DISTIR_SIM_SIZES;
BENCHMARK(BM_SimulateNoRecord) DISTIR_SIM_SIZES;
BENCHMARK(BM_InferTypes) DISTIR_SIM_SIZES;

}  // namespace
}  // namespace distir::sim

// BENCHMARK_MAIN() with the allocator policy of the `distir` tool
// (RetainFreedMemory), so that runs measure the simulator, not page faults.
int main(int argc, char** argv) {
  distir::sim::RetainFreedMemory();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
