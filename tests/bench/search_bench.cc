// How the cost of evaluating one grid point grows with its repetition (issue
// #18 item 2): distir search's Evaluator (a fresh one per iteration, so the
// template is built every time) on gpt-tiny training with L blocks over
// P = 2 stages, D data-parallel replicas and K microbatches of one sequence.
//
//   BM_EvaluatePoint/K/D/L/segments   one Evaluate of (D, T 1, P 2, K) at
//       batch D K; segments 1: the copies simulated from kinds of segments
//       (sim::SimulateSegmented, the search's default), 0: op by op
//       (`distir search --op-by-op`).
//
//   BM_EvaluateLayers/L/P/folded   one Evaluate of (D 1, T 1, P, K 8) with
//       L blocks: folded 1, the template written from templates of two and
//       three blocks per stage (P 2, sharding::LayerFold) or of 2 and 4 stages
//       (P 8, sharding::StageFold), the search's default; 0, built for all L
//       (`distir search --build-all-templates`). A fresh evaluator learns the
//       fold every iteration, as the first micro-batch of a family does.
//
// Counters: ops, the distributed program's op count (every device's), and
// ops_per_second. Today the template (one microbatch of one replica) is built
// once and expanded into its K copies (docs/cost_model.md §3.2), and replica
// 0 stands for the D replicas. From segments (docs/cost_model.md §3.3), K
// costs 4-5x less than op by op; the template (L) dominates, and what of it
// grows with L when folded is writing it, not building it (§3.6, §3.7).

#include <benchmark/benchmark.h>

#include <iostream>
#include <string>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "search/grid.h"

namespace distir::search {
namespace {

Experiment Point(int64_t k, int64_t d, int64_t layers, int64_t stages = 2) {
  const std::string yaml =
      "name: bench\nmodel: {name: gpt-tiny, num_layers: " + std::to_string(layers) +
      "}\nhardware: " + DISTIR_SOURCE_DIR +
      "/configs/hardware/dgx-a100.yaml\nworld_size: " + std::to_string(stages * d) +
      "\nspace: {batch: [" + std::to_string(d * k) + "], dp: [" + std::to_string(d) +
      "], tp: [1], pp: [" + std::to_string(stages) + "], microbatches: [" + std::to_string(k) +
      "]}\ntraces: 0\n";
  StatusOr<Experiment> e = ParseExperiment(yaml, "bench.yaml");
  if (!e.ok()) {
    std::cerr << e.status().ToString() << "\n";
    std::abort();
  }
  return std::move(*e);
}

// Evaluates the one configuration of `e` with `options` per iteration.
void Evaluate(benchmark::State& state, const Experiment& e, const EvaluatorOptions& options) {
  const std::vector<Config> configs = EnumerateConfigs(e);
  if (configs.size() != 1) std::abort();
  int64_t ops = 0;
  for (auto _ : state) {
    Evaluator evaluator(e, options);
    const ConfigResult r = evaluator.Evaluate(configs[0]);
    if (r.status != ConfigStatus::kOk) {
      state.SkipWithError(r.reason.c_str());
      return;
    }
    ops = r.num_ops;
    benchmark::DoNotOptimize(r.iteration_time_s);
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_second"] =
      benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_EvaluatePoint(benchmark::State& state) {
  EvaluatorOptions options;
  options.composed_segments = state.range(3) != 0;
  Evaluate(state, Point(state.range(0), state.range(1), state.range(2)), options);
}

void BM_EvaluateLayers(benchmark::State& state) {
  const bool folded = state.range(2) != 0;
  EvaluatorOptions options;
  options.folded_layers = folded ? 5 : 0;
  options.folded_stages = folded ? 8 : 0;
  Evaluate(state, Point(8, 1, state.range(0), state.range(1)), options);
}

// K in {2, 8, 32, 128}, D in {1, 4}, L in {4, 16}, each op by op and from segments.
BENCHMARK(BM_EvaluatePoint)
    ->ArgsProduct({{2, 8, 32, 128}, {1, 4}, {4, 16}, {0, 1}})
    ->ArgNames({"K", "D", "L", "segments"})
    ->Unit(benchmark::kMillisecond);

// L in {8, 16, 32, 64} over P 2 and 8, folded and built.
BENCHMARK(BM_EvaluateLayers)
    ->ArgsProduct({{8, 16, 32, 64}, {2, 8}, {0, 1}})
    ->ArgNames({"L", "P", "folded"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace distir::search

BENCHMARK_MAIN();
