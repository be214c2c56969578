// Build + transform + simulate speed of the paper's MLP grid (issue #4 item 7).
//
//   BM_MlpLargestConfig  mlp-1b at batch 8192 on 16 devices, (D, T, P, K) =
//                        (1, 1, 16, 128): build the sequential model, infer its
//                        types, parallelize (which infers the program's types),
//                        simulate (no trace, no memory timeline).
//   BM_MlpGrid           the whole 75-configuration grid for mlp-1b at batch
//                        8192 on 16 devices (every power-of-two D*T*P = 16;
//                        K = 1 when P = 1, else 2..128; batch / (D K) >= 1),
//                        in one process: the sequential model is built once,
//                        one cost model serves every configuration.
//   BM_MlpGridTransformOnly  the same without simulation.
// The original Python DistIR takes about 3 minutes for that grid on this
// machine; the target is under 1 second.

#include <benchmark/benchmark.h>

#include <iostream>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "transforms/parallelize.h"

namespace distir {
namespace {

constexpr int64_t kBatch = 8192;
constexpr int64_t kWorld = 16;

sim::HardwareProfile Profile() {
  auto hw = sim::LoadHardwareProfile(std::string(DISTIR_SOURCE_DIR) + "/configs/hardware/dgx2-v100.yaml");
  if (!hw.ok()) {
    std::cerr << hw.status().ToString() << "\n";
    std::abort();
  }
  return *hw;
}

Module Sequential() {
  StatusOr<Module> m = BuildModel(WithBatch(*LookupModel("mlp-1b"), kBatch));
  if (!m.ok() || !InferTypes(*m).ok()) std::abort();
  return std::move(*m);
}

std::vector<ParallelOptions> Grid() {
  std::vector<ParallelOptions> grid;
  for (int64_t d = 1; d <= kWorld; d *= 2) {
    for (int64_t t = 1; d * t <= kWorld; t *= 2) {
      const int64_t p = kWorld / (d * t);
      for (int64_t k = (p == 1 ? 1 : 2); k <= (p == 1 ? 1 : 128); k *= 2) {
        if (kBatch / (d * k) < 1) continue;
        ParallelOptions o;
        o.dp = d;
        o.tp = t;
        o.pp = p;
        o.microbatches = k;
        grid.push_back(o);
      }
    }
  }
  return grid;
}

// Parallelizes and simulates one configuration; returns the program's op count.
int64_t Run(const Function& seq, const ParallelOptions& o, sim::CostModel& costs) {
  StatusOr<DistributedProgram> dist = Parallelize(seq, o);
  if (!dist.ok()) {
    std::cerr << DescribeParallelOptions(o) << ": " << dist.status().ToString() << "\n";
    std::abort();
  }
  sim::SimulateOptions so;
  so.batch_size = kBatch;
  so.record_trace = false;
  so.record_memory_timeline = false;
  auto result = sim::Simulate(dist->module, dist->program(), costs, so);
  if (!result.ok()) std::abort();
  benchmark::DoNotOptimize(result->iteration_time_s);
  return result->num_ops;
}

void BM_MlpLargestConfig(benchmark::State& state) {
  const sim::HardwareProfile hw = Profile();
  ParallelOptions o;
  o.pp = 16;
  o.microbatches = 128;
  int64_t ops = 0;
  for (auto _ : state) {
    Module seq = Sequential();
    sim::CostModel costs(hw, nullptr);
    ops = Run(*seq.entry(), o, costs);
  }
  state.counters["ops"] = static_cast<double>(ops);
}

void BM_MlpGrid(benchmark::State& state) {
  const sim::HardwareProfile hw = Profile();
  const std::vector<ParallelOptions> grid = Grid();
  int64_t ops = 0;
  for (auto _ : state) {
    Module seq = Sequential();
    sim::CostModel costs(hw, nullptr);
    ops = 0;
    for (const ParallelOptions& o : grid) ops += Run(*seq.entry(), o, costs);
  }
  state.counters["configs"] = static_cast<double>(grid.size());
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(grid.size()), benchmark::Counter::kIsIterationInvariantRate);
}

// The grid's transforms alone (Parallelize, type inference of the programs
// included; no simulation): how the total splits.
void BM_MlpGridTransformOnly(benchmark::State& state) {
  const std::vector<ParallelOptions> grid = Grid();
  for (auto _ : state) {
    Module seq = Sequential();
    for (const ParallelOptions& o : grid) {
      StatusOr<DistributedProgram> dist = Parallelize(*seq.entry(), o);
      if (!dist.ok()) std::abort();
      benchmark::DoNotOptimize(dist->program().ops().size());
    }
  }
}

BENCHMARK(BM_MlpLargestConfig)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MlpGrid)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MlpGridTransformOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace distir

int main(int argc, char** argv) {
  distir::sim::RetainFreedMemory();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
