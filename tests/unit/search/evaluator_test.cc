#include "search/evaluator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "interp/infer_types.h"
#include "models/model_zoo.h"
#include "pruning_check.h"
#include "search/experiment.h"
#include "search/grid.h"
#include "search/grid_search.h"
#include "search/memory_bound.h"
#include "testing/experiment_text.h"
#include "testing/same_result.h"
#include "testing/test_util.h"

namespace distir::search {
namespace {

using ::distir::testing::ExperimentOf;

// Under the sanitizers these grids cost 20-45 s a test (the simulator runs 5-20x
// slower there): they thin to one batch size, one model and the two ends of
// ZeRO (no sharding, everything sharded), whose code paths the others repeat;
// the Release stage runs them whole.
#ifdef DISTIR_SANITIZED_BUILD
constexpr const char* kSymmetryBatches = "[16]";
constexpr const char* kPruningModels[] = {"{name: gpt-tiny, bf16: true}"};
constexpr const char* kPruningZero = "[0, 3]";
#else
constexpr const char* kSymmetryBatches = "[16, 64]";
constexpr const char* kPruningModels[] = {"gpt-tiny", "{name: gpt-tiny, bf16: true}"};
constexpr const char* kPruningZero = "[0, 1, 2, 3]";
#endif

// Simulating one replica of an inference model changes nothing: every
// configuration of a tiny GPT-2 grid over 8 and 16 devices of a DGX-2 and 16
// devices of 8-GPU DGX A100 nodes gives bit-identical times, memory and op
// counts with and without replica symmetry.
void ExpectReplicaSymmetryExact(const std::string& hardware, int world) {
  const Experiment e = ExperimentOf("name: t\nmodel: gpt2-tiny\nhardware: ../hardware/" + hardware +
                                    "\nworld_size: " + std::to_string(world) +
                                    "\nspace:\n  batch: " + kSymmetryBatches +
                                    "\n  dp: all\n  tp: all\n  pp: all\n"
                                    "  microbatches: [2, 4]\n  schedule: [gpipe, 1f1b]\n");
  const std::vector<Config> configs = EnumerateConfigs(e);
  Evaluator fast(e), exact(e, EvaluatorOptions{.replica_symmetry = false});
  int collapsed = 0;
  for (const Config& c : configs) {
    const ConfigResult a = fast.Evaluate(c), b = exact.Evaluate(c);
    const std::string what = DescribeParallelOptions(c.options) + " batch " + std::to_string(c.batch);
    collapsed += SimulatesOneReplica(e, c) ? 1 : 0;
    ::distir::testing::ExpectSameResult(a, b, what);
  }
  EXPECT_GT(collapsed, 10) << hardware;
}

TEST(EvaluatorTest, OneReplicaStandsForAllOnADgx2) { ExpectReplicaSymmetryExact("dgx2-v100.yaml", 8); }

TEST(EvaluatorTest, OneReplicaStandsForAllAcrossDgxA100Nodes) {
  ExpectReplicaSymmetryExact("dgx-a100.yaml", 16);
}

TEST(EvaluatorTest, TrainingIsNeverSimulatedAsOneReplica) {
  const Experiment e = ExperimentOf(
      "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 8\n"
      "space:\n  batch: [32]\n  dp: all\n  tp: all\n  pp: all\n");
  for (const Config& c : EnumerateConfigs(e)) EXPECT_FALSE(SimulatesOneReplica(e, c));
}

// Issue 20: configurations past what the simulator represents are invalid, with
// the reason, and never ranked; nothing crashes.
const char* const kPipelined =
    "name: t\nmodel: mlp-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 8\n"
    "space:\n  batch: [32, 1099511627776]\n  dp: [1, 4]\n  tp: [1]\n  pp: [2]\n"
    "  microbatches: [2, 549755813888, 4611686018427387904]\nconstraints: {world: at_most}\n";

// The configuration of `e` with these knobs.
Config Find(const Experiment& e, int64_t batch, int64_t dp, int64_t k) {
  for (const Config& c : EnumerateConfigs(e)) {
    if (c.batch == batch && c.options.dp == dp && c.options.microbatches == k) return c;
  }
  ADD_FAILURE() << "no configuration batch " << batch << " D " << dp << " K " << k;
  return Config{};
}

TEST(EvaluatorTest, DTimesKPast64BitsIsInvalidNotACrash) {
  const Experiment e = ExperimentOf(kPipelined);
  Evaluator evaluator(e);
  // D*K = 2^64 wraps to 0, and a transform would divide by it (SIGFPE).
  const ConfigResult r = evaluator.Evaluate(Find(e, 32, 4, int64_t{1} << 62));
  EXPECT_EQ(r.status, ConfigStatus::kInvalid);
  EXPECT_EQ(
      r.reason,
      "D*K = 4 x 4611686018427387904 does not fit in 64 bits (D*K must be at most the batch)");
  // Where D*K fits, the sharding path's own reason.
  EXPECT_EQ(evaluator.Evaluate(Find(e, 32, 1, int64_t{1} << 62)).reason,
            "the batch of %x (32) does not divide into D x K = 1 x 4611686018427387904 "
            "micro-batches (batch = micro-batch x D x K)");
  EXPECT_GT(EstimatedCost(e, Find(e, 32, 4, int64_t{1} << 62)), 1e14);
}

TEST(EvaluatorTest, ProgramsPastTheOpLimitAreInvalid) {
  const Experiment e = ExperimentOf(kPipelined);
  Evaluator evaluator(e);
  const ConfigResult r = evaluator.Evaluate(Find(e, int64_t{1} << 40, 1, int64_t{1} << 39));
  EXPECT_EQ(r.status, ConfigStatus::kInvalid);
  EXPECT_EQ(r.reason,
            "the distributed program would have about 2.31e+13 ops (D*T*K times the 42 ops of the "
            "sequential model), more than the 134217728 the simulator accepts");
  const ConfigResult ok = evaluator.Evaluate(Find(e, int64_t{1} << 40, 4, 2));
  EXPECT_EQ(ok.status, ConfigStatus::kOk) << ok.reason;
}

TEST(EvaluatorTest, ABatchTooLargeForTheModelIsInvalid) {
  Experiment e = ExperimentOf(kPipelined);
  e.space.batch = {32, int64_t{1} << 62};
  Evaluator evaluator(e);
  const ConfigResult r = evaluator.Evaluate(Find(e, int64_t{1} << 62, 1, 2));
  EXPECT_EQ(r.status, ConfigStatus::kInvalid);
  EXPECT_EQ(r.reason,
            "mlp option batch 4611686018427387904 is too large: a batch x d_model activation of "
            "f32 would take more than 1 EiB (2^60 bytes), the most the simulator accepts");
}

// A profile the parser would reject, built in code: times that are not finite
// make the configuration invalid, and it is not ranked.
TEST(EvaluatorTest, NonFiniteTimesAreInvalidAndNeverRanked) {
  Experiment e = ExperimentOf(kPipelined);
  const Config c = Find(e, 32, 4, 2);
  e.hardware.device.dram_bandwidth = 1e-320;  // an op's bytes / bandwidth is infinite
  ConfigResult op = Evaluator(e).Evaluate(c);
  EXPECT_EQ(op.status, ConfigStatus::kInvalid);
  EXPECT_NE(op.reason.find(": its time is not finite (inf s)"), std::string::npos) << op.reason;
  EXPECT_EQ(op.iteration_time_s, 0);
  e.hardware.device.dram_bandwidth = 1e12;
  e.hardware.device.kernel_launch_overhead = 3e307;  // every op finite, their sum not
  ConfigResult sum = Evaluator(e).Evaluate(c);
  EXPECT_EQ(sum.status, ConfigStatus::kInvalid);
  EXPECT_EQ(sum.reason.rfind("the simulated iteration time is not finite (inf s", 0), 0u)
      << sum.reason;
  op.index = 0;
  sum.index = 1;
  EXPECT_TRUE(RankResults({op, sum}).empty());
}


// Bytes of `kind` at the peak of a transformer step's row.
int64_t AtPeak(const ConfigResult& r, sim::MemoryKind kind) {
  return r.step.memory_at_peak[static_cast<size_t>(kind)];
}

// A transformer step's row carries what Megatron users read off a run: tokens/s
// (global batch x sequence / time), model TFLOP/s per GPU and MFU (against the
// A100's bf16 peak), the memory kinds at the peak (summing to the peak) and
// the exposed communication; an MLP's row has the exposed communication only.
TEST(EvaluatorTest, TransformerRowsCarryStepFiguresAndMemoryKinds) {
  const Experiment e = ExperimentOf(
      "name: t\nmodel: gpt-tiny\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 4\n"
      "space:\n  batch: [16]\n  dp: all\n  tp: all\n  pp: [1]\nconstraints: {world: equal}\n"
      "sharding: model\n");
  Evaluator evaluator(e);
  int checked = 0;
  for (const Config& c : EnumerateConfigs(e)) {
    const ConfigResult r = evaluator.Evaluate(c);
    const std::string what = DescribeParallelOptions(c.options);
    ASSERT_EQ(r.status, ConfigStatus::kOk) << what << ": " << r.reason;
    const TransformerOptions o = WithBatch(e.model, c.batch).transformer;
    EXPECT_DOUBLE_EQ(r.step.tokens_per_s,
                     static_cast<double>(c.batch * o.seq_length) / r.iteration_time_s)
        << what;
    EXPECT_GT(r.step.tflops_per_gpu, 0) << what;
    EXPECT_NEAR(r.step.mfu, r.step.tflops_per_gpu / (e.hardware.device.MatrixFlops(o.params_dtype) / 1e12),
                1e-12)
        << what;
    int64_t sum = 0;
    for (int64_t bytes : r.step.memory_at_peak) sum += bytes;
    EXPECT_EQ(sum, r.peak_memory_bytes) << what;
    EXPECT_GT(AtPeak(r, sim::MemoryKind::kWeights), 0) << what;
    EXPECT_GT(AtPeak(r, sim::MemoryKind::kOptimizerState), 0) << what;
    // D > 1 all-reduces gradients, T > 1 activations: communication that one
    // stream per device cannot hide.
    if (c.options.dp * c.options.tp > 1) {
      EXPECT_GT(r.exposed_communication_s, 0) << what;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 3);  // (D, T) in {(1, 4), (2, 2), (4, 1)}
  const Experiment mlp = ExperimentOf(kPipelined);
  const ConfigResult r = Evaluator(mlp).Evaluate(EnumerateConfigs(mlp).front());
  EXPECT_EQ(r.step, io::StepFigures{});
}

// A traced configuration simulated as copies of its template is labelled as
// the built program's trace: the same events (device, times, category, label)
// and memory timelines, record for record, for a pipelined MLP (training,
// running sums of the gradients) and tiny GPT-2 and GPT steps (inference and
// transformer training, interleaved and not).
TEST(EvaluatorTest, TracesOfTheCopiesEqualTracesOfTheBuiltProgram) {
  const std::string gpt2 =
      "name: t\nmodel: gpt2-tiny\nhardware: ../hardware/dgx2-v100.yaml\nworld_size: 4\n"
      "space:\n  batch: [8]\n  dp: [1, 2]\n  tp: [1]\n  pp: [2]\n  microbatches: [2, 4]\n";
  const std::string gpt =
      "name: t\nmodel: gpt-tiny\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 4\n"
      "space:\n  batch: [8]\n  dp: [1]\n  tp: [2]\n  pp: [2]\n  microbatches: [2, 4]\n"
      "  virtual_stages: [1, 2]\nsharding: model\n";
  int expanded = 0;
  for (const std::string& text : {std::string(kPipelined), gpt2, gpt}) {
    const Experiment e = ExperimentOf(text);
    Evaluator copies(e), built(e, EvaluatorOptions{.expanded_microbatches = false});
    for (const Config& c : EnumerateConfigs(e)) {
      if (!copies.Validate(c).ok()) continue;
      const std::string what = DescribeParallelOptions(c.options);
      io::TraceRecord a, b;
      const Status sa = copies.Trace(c, a), sb = built.Trace(c, b);
      ASSERT_TRUE(sa.ok() && sb.ok()) << what << ": " << sa.ToString() << " / " << sb.ToString();
      EXPECT_FALSE(a.label.empty()) << what;
      EXPECT_TRUE(a == b) << what << ": " << a.label.size() << " vs " << b.label.size()
                          << " events";
      expanded += copies.TemplateKey(c).empty() ? 0 : 1;
    }
  }
  EXPECT_GT(expanded, 6);
}

// ZeRO-1 on a bf16 step, as Megatron's distributed optimizer: the f32 master
// weights are optimizer state in pieces like the moments, so over D = 4 the
// state at the peak is at most a quarter of ZeRO-0's (gpt-tiny's dims all
// divide by 4). Before, the masters stayed whole: 12 of 16 bytes per parameter.
TEST(EvaluatorTest, ZeroOneShardsMixedPrecisionMasters) {
  const Experiment e = ExperimentOf(
      "name: t\nmodel: {name: gpt-tiny, bf16: true}\nhardware: ../hardware/dgx-a100.yaml\n"
      "world_size: 4\nspace:\n  batch: [16]\n  dp: [4]\n  tp: [1]\n  pp: [1]\n  zero: [0, 1]\n"
      "sharding: model\n");
  ASSERT_EQ(e.model.transformer.params_dtype, DType::kBF16);
  Evaluator evaluator(e);
  std::vector<ConfigResult> r;
  for (const Config& c : EnumerateConfigs(e)) r.push_back(evaluator.Evaluate(c));
  ASSERT_EQ(r.size(), 2u);
  for (const ConfigResult& x : r) ASSERT_EQ(x.status, ConfigStatus::kOk) << x.reason;
  const auto state = [](const ConfigResult& x) {
    return AtPeak(x, sim::MemoryKind::kOptimizerState);
  };
  EXPECT_GT(state(r[1]), 0);
  EXPECT_LE(4 * state(r[1]), state(r[0])) << state(r[1]) << " vs " << state(r[0]);
  EXPECT_LT(r[1].peak_memory_bytes, r[0].peak_memory_bytes);
}

// The memory lower bound of pruning (memory_bound.h) is below the simulated
// peak of every configuration, in f32 and bf16 (with master weights), with
// ZeRO 0 to 3, over stages and microbatches (throughput_bound_test.cc checks
// it over interleaving, recomputation and sequence parallelism too); and
// pruning with a memory limit removes
// exactly configurations whose simulated peak is above it, leaving the
// others bit for bit as they were.
TEST(EvaluatorTest, MemoryPruningIsExact) {
  for (const char* model : kPruningModels) {
    SCOPED_TRACE(model);
    const std::string text = std::string("name: t\nmodel: ") + model +
                             "\nhardware: ../hardware/dgx-a100.yaml\nworld_size: 8\n"
                             "space:\n  batch: [16]\n  dp: all\n  tp: [1, 2, 4]\n  pp: [1, 2]\n"
                             "  microbatches: [1, 2, 4]\n  zero: " +
                             kPruningZero + "\nconstraints: {world: equal}\nsharding: model\n";
    const Experiment all = ExperimentOf(text);
    Evaluator full(all);
    std::vector<ConfigResult> unlimited;
    std::vector<int64_t> bounds;
    for (const Config& c : EnumerateConfigs(all)) {
      unlimited.push_back(full.Evaluate(c));
      const ConfigResult& r = unlimited.back();
      if (r.status != ConfigStatus::kOk) continue;
      ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(WithBatch(all.model, c.batch)));
      ASSERT_OK(InferTypes(seq));
      const int64_t bound = MemoryLowerBound(*seq.entry(), c.options);
      EXPECT_GT(bound, 0) << DescribeParallelOptions(c.options);
      EXPECT_LE(bound, r.peak_memory_bytes) << DescribeParallelOptions(c.options);
      bounds.push_back(bound);
    }
    ASSERT_GT(bounds.size(), 10u);
    std::sort(bounds.begin(), bounds.end());
    const int64_t limit = bounds[bounds.size() / 2];  // prunes some, not all
    EXPECT_FALSE(ExpectPrunedOnlyAboveLimit(text, limit, unlimited).empty());
  }
}

}  // namespace
}  // namespace distir::search
