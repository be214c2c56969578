// Build + distribute + simulate speed of the paper's MLP grid (issue #4 item
// 7) on the sharding path (sharding/grid.h), the one every distribution now
// takes: the MLP's own parameter rules (MlpShardingRules), each grid point
// distributed by DistributedCopy, as the search distributes it when it
// simulates a built program.
//
//   BM_MlpLargestConfig  mlp-1b at batch 8192 on 16 devices, (D, T, P, K) =
//                        (1, 1, 16, 128): build the sequential model, infer its
//                        types, distribute it (which infers the program's
//                        types), simulate (no trace, no memory timeline).
//   BM_MlpGrid           the whole 75-configuration grid for mlp-1b at batch
//                        8192 on 16 devices (every power-of-two D*T*P = 16;
//                        K = 1 when P = 1, else 2..128; batch / (D K) >= 1),
//                        in one process: the sequential model and the rules
//                        are built once, one cost model serves every
//                        configuration.
//   BM_MlpGridTransformOnly  the same without simulation.
// The original Python DistIR takes about 3 minutes for that grid on this
// machine.

#include <benchmark/benchmark.h>

#include <iostream>

#include "interp/infer_types.h"
#include "models/mlp.h"
#include "models/model_zoo.h"
#include "sharding/grid.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "transforms/parallel_options.h"

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

std::vector<sharding::ParamRule> Rules() {
  StatusOr<std::vector<sharding::ParamRule>> rules = sharding::ParseParamRules(MlpShardingRules());
  if (!rules.ok()) std::abort();
  return *rules;
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

// One configuration's per-device program (the entry of the module);
// aborts, saying which configuration, if the sharding path refuses it.
Module Distribute(const Function& seq, const ParallelOptions& o,
                  const std::vector<sharding::ParamRule>& rules) {
  StatusOr<Module> dist = sharding::DistributedCopy(seq, sharding::GridOf(o), rules);
  if (!dist.ok()) {
    std::cerr << DescribeParallelOptions(o) << ": " << dist.status().ToString() << "\n";
    std::abort();
  }
  return std::move(*dist);
}

// Distributes and simulates one configuration; returns the program's op count.
int64_t Run(const Function& seq, const ParallelOptions& o,
            const std::vector<sharding::ParamRule>& rules, sim::CostModel& costs) {
  const Module dist = Distribute(seq, o, rules);
  sim::SimulateOptions so;
  so.batch_size = kBatch;
  so.record_trace = false;
  so.record_memory_timeline = false;
  auto result = sim::Simulate(dist, *dist.entry(), costs, so);
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
    ops = Run(*seq.entry(), o, Rules(), costs);
  }
  state.counters["ops"] = static_cast<double>(ops);
}

void BM_MlpGrid(benchmark::State& state) {
  const sim::HardwareProfile hw = Profile();
  const std::vector<ParallelOptions> grid = Grid();
  int64_t ops = 0;
  for (auto _ : state) {
    Module seq = Sequential();
    const std::vector<sharding::ParamRule> rules = Rules();
    sim::CostModel costs(hw, nullptr);
    ops = 0;
    for (const ParallelOptions& o : grid) ops += Run(*seq.entry(), o, rules, costs);
  }
  state.counters["configs"] = static_cast<double>(grid.size());
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(grid.size()), benchmark::Counter::kIsIterationInvariantRate);
}

// The grid's distribution alone (type inference of the programs included;
// no simulation): how the total splits.
void BM_MlpGridTransformOnly(benchmark::State& state) {
  const std::vector<ParallelOptions> grid = Grid();
  for (auto _ : state) {
    Module seq = Sequential();
    const std::vector<sharding::ParamRule> rules = Rules();
    for (const ParallelOptions& o : grid) {
      const Module dist = Distribute(*seq.entry(), o, rules);
      benchmark::DoNotOptimize(dist.entry()->ops().size());
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
