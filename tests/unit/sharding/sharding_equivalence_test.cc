// The equivalence suite of the former per-model emitter (deleted with it in
// issue #15) through the sharding path: for the tiny MLP, every
// (D, T, P, K) with D*T*P <= 8, both schedules, with and without
// recomputation and ZeRO 1-3, the per-device program computes the
// sequential training step (the loss, every updated weight); for the tiny
// GPT-2 (grouped QKV), every D x T x P <= 8 with K = 1, 2, 4 and both
// schedules computes its logits.
//
// Two executions compose into that: the global view (annotated, split into
// microbatches, staged, recomputed, ZeRO'd, propagated, materialised and
// cleaned up, on stage meshes) run on the sequential inputs (the batch cut
// into its microbatches) equals the sequential function; and the partitioned,
// schedule-ordered program run on the pieces of the same inputs equals the
// global view (CheckPartitionEquivalence). Tolerances as that suite's.

#include <gtest/gtest.h>

#include "interp/infer_types.h"
#include "interp/reference_executor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/gpt.h"
#include "models/mlp.h"
#include "models/model_zoo.h"
#include "segment_order_check.h"
#include "sharding/cleanup.h"
#include "sharding/equivalence.h"
#include "sharding/grid.h"
#include "sharding/materialize.h"
#include "sharding/partition.h"
#include "sharding/propagate.h"
#include "sharding/stage_meshes.h"
#include "sharding/task_order.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

using ::distir::testing::SourcePath;

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-6;

struct Case {
  GridOptions grid;
  int64_t dp, tp;
  std::string model = "mlp-tiny";
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string name = (c.model == "mlp-tiny" ? "" : "gpt2_") + std::string("D") + std::to_string(c.dp) + "T" + std::to_string(c.tp) + "P" +
                     std::to_string(c.grid.pp) + "K" + std::to_string(c.grid.microbatches) + "_" +
                     std::string(ScheduleName(c.grid.schedule));
  if (c.grid.recompute != RecomputeKind::kNone) name += "_recompute";
  if (c.grid.zero_stage) name += "_zero" + std::to_string(c.grid.zero_stage);
  return name;
}

void PrintTo(const Case& c, std::ostream* os) { *os << CaseName({c, 0}); }

#ifdef DISTIR_SANITIZED_BUILD
constexpr bool kThinGrid = true;  // as the emitter's suite: at most 4 devices, K <= 2
#else
constexpr bool kThinGrid = false;
#endif

// GPT-2 (inference, grouped QKV) has no backward pass and no optimizer: no
// recomputation or ZeRO; its blocks are the pipeline's layers.
std::vector<Case> Cases(const std::string& model) {
  const bool training = model == "mlp-tiny";
  const int64_t batch = BatchOf(*LookupModel(model));
  std::vector<Case> cases;
  for (int64_t d : {1, 2, 4, 8}) {
    for (int64_t t : {1, 2, 4, 8}) {
      for (int64_t p : {1, 2, 4, 8}) {
        if (d * t * p > 8) continue;
        for (int64_t k : {1, 2, 4}) {
          if (d * k > batch) continue;
          if (kThinGrid && (d * t * p > 4 || k > 2)) continue;
          for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B}) {
            if ((p == 1 || k == 1) && schedule == PipelineSchedule::kGpipe) continue;
            for (bool recompute : {false, true}) {
              if (recompute && !training) continue;
              for (int zero = 0; zero <= (training && d > 1 ? 3 : 0); ++zero) {
                Case c{GridOptions{}, d, t, model};
                c.grid.axes = {{"dp", d}, {"tp", t}};
                c.grid.pp = p;
                c.grid.microbatches = k;
                c.grid.schedule = schedule;
                c.grid.recompute = recompute ? RecomputeKind::kFull : RecomputeKind::kNone;
                c.grid.zero_stage = zero;
                if (!training) c.grid.layer_pattern = kGptLayerPattern;
                cases.push_back(c);
              }
            }
          }
        }
      }
    }
  }
  return cases;
}

std::vector<ParamRule> Rules(const std::string& model) {
  return *ParseParamRules(model == "mlp-tiny" ? MlpShardingRules() : GptShardingRules());
}

// The sequential inputs by the global view's parameter names: "x.mb1" is
// microbatch 1 of x (rows [B/K, 2B/K)); devices dropped.
std::map<std::string, HostValue> GlobalInputs(const Function& seq,
                                              const std::vector<HostValue>& inputs,
                                              const Function& global) {
  std::map<std::string, HostValue> by_name;
  for (int i = 0; i < seq.num_params(); ++i) by_name[seq.param(i)->name()] = inputs[i];
  std::map<std::string, HostValue> out;
  for (const auto& p : global.params()) {
    const std::string& name = p->name();
    size_t dot = name.rfind(".mb");
    if (dot == std::string::npos) {
      // A weight's copy on another pipeline stage ("wte.weight.s3") is the weight.
      std::string base = by_name.count(name) ? name : name.substr(0, name.rfind(".s"));
      out[name] = by_name.at(base).WithDevice(DeviceId());
      continue;
    }
    const DenseTensor& whole = by_name.at(name.substr(0, dot)).tensor();
    const int64_t m = std::stoll(name.substr(dot + 3));
    const int64_t rows = p->type().shape()[0], cols = whole.shape[1];
    DenseTensor piece{whole.dtype, {rows, cols}, {}};  // rank 2: x, y, input_ids
    piece.values.assign(whole.values.begin() + m * rows * cols,
                        whole.values.begin() + (m + 1) * rows * cols);
    out[name] = HostValue::Tensor(std::move(piece));
  }
  return out;
}

// An inference output comes back once per microbatch (microbatch.h): put
// each output's K pieces back together along the batch.
std::vector<HostValue> JoinMicrobatches(const std::vector<HostValue>& actual, size_t outputs) {
  if (actual.size() == outputs) return actual;
  const size_t k = actual.size() / outputs;
  std::vector<HostValue> joined;
  for (size_t o = 0; o < outputs; ++o) {
    DenseTensor whole = actual[o * k].tensor();
    for (size_t m = 1; m < k; ++m) {
      const DenseTensor& piece = actual[o * k + m].tensor();
      whole.values.insert(whole.values.end(), piece.values.begin(), piece.values.end());
      whole.shape[0] += piece.shape[0];
    }
    joined.push_back(HostValue::Tensor(std::move(whole)));
  }
  return joined;
}

class ShardingEquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ShardingEquivalenceTest, PartitionedEqualsSequential) {
  const GridOptions& grid = GetParam().grid;
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(GetParam().model));
  spec.gpt.grouped_qkv = true;  // as the sharding path builds GPT-2 (no effect on the MLP)
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(spec));
  ASSERT_OK(InferTypes(seq));
  const Function& fn = *seq.entry();
  RandomInputOptions random;
  random.int_max = 63;  // gpt2-tiny's vocabulary
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> inputs, RandomInputs(fn, 7, random));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> expected, Execute(seq, fn, inputs));

  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
  const std::string name = m.entry()->name();
  ASSERT_OK(AnnotateGrid(m, name, grid, Rules(GetParam().model)));
  ASSERT_OK(PropagateShardings(m, name));
  ASSERT_OK(MaterializeShardings(m, name));
  RunCleanup(m, name);
  ASSERT_OK(SplitStageMeshes(m, name));
  const Function& global = *m.Lookup(name);
  std::map<std::string, HostValue> by_name = GlobalInputs(fn, inputs, global);
  std::vector<HostValue> global_inputs;
  for (const auto& p : global.params()) global_inputs.push_back(by_name.at(p->name()));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> actual, Execute(m, global, global_inputs));
  EXPECT_OK(AllClose(JoinMicrobatches(actual, expected.size()), expected, kRtol, kAtol));

  ASSERT_OK_AND_ASSIGN(Module parts, ParseModule(PrintModule(m), "global"));
  ASSERT_OK(PartitionShardings(parts, name));
  ASSERT_OK(OrderPipelineTasks(parts, name, grid.schedule));
  RandomInputOptions options = random;
  for (auto& [n, v] : by_name) options.overrides[n] = v;
  ASSERT_OK_AND_ASSIGN(EquivalenceReport r,
                       CheckPartitionEquivalence(m, parts, name, 7, kRtol, kAtol, options));
  EXPECT_EQ(r.devices, GetParam().dp * GetParam().tp * grid.pp);
}

// Each device's ops in order: kind, result types and task; names left out
// (the replicated program names its partial gradient sums differently).
std::map<std::string, std::vector<std::string>> DeviceSequences(const Function& fn) {
  std::map<std::string, std::vector<std::string>> by_device;
  for (const auto& op : fn.ops()) {
    std::string line = std::string(OpKindName(op->kind()));
    for (const auto& r : op->results()) line += " " + r->type().ToString();
    if (const Attribute* task = op->FindAttr("task")) line += " " + task->ToString();
    std::string device = op->num_results() > 0 ? op->result(0)->type().device().ToString() : "";
    by_device[device].push_back(line);
  }
  return by_device;
}

// Building the grid point from one microbatch and repeating it (replicate.h)
// gives the program of splitting first: the same ops on every device, in the
// same order, and the same simulation, bit for bit.
class ReplicateTest : public ::testing::TestWithParam<Case> {};

// The cases DistributeGridReplicated builds from one microbatch.
std::vector<Case> ReplicatedCases(const std::string& model) {
  std::vector<Case> cases = Cases(model);
  std::erase_if(cases, [](const Case& c) { return !ReplicatesMicrobatches(c.grid); });
  return cases;
}

TEST_P(ReplicateTest, ReplicatedEqualsSplitFirst) {
  const GridOptions& grid = GetParam().grid;
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(GetParam().model));
  spec.gpt.grouped_qkv = true;
  ASSERT_OK_AND_ASSIGN(Module split, BuildModel(spec));
  ASSERT_OK_AND_ASSIGN(Module replicated, BuildModel(spec));
  const std::string name = split.entry()->name();
  ASSERT_OK(DistributeGrid(split, name, grid, Rules(GetParam().model)));
  ASSERT_OK(DistributeGridReplicated(replicated, name, grid, Rules(GetParam().model)));
  const Function& a = *split.Lookup(name);
  const Function& b = *replicated.Lookup(name);
  EXPECT_EQ(a.num_params(), b.num_params());
  EXPECT_EQ(a.returns().size(), b.returns().size());
  EXPECT_EQ(DeviceSequences(a), DeviceSequences(b));
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult sa, sim::Simulate(split, a, hw));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult sb, sim::Simulate(replicated, b, hw));
  EXPECT_EQ(sa.iteration_time_s, sb.iteration_time_s);
  EXPECT_EQ(sa.num_ops, sb.num_ops);
  ASSERT_EQ(sa.devices.size(), sb.devices.size());
  for (size_t d = 0; d < sa.devices.size(); ++d) {
    EXPECT_EQ(sa.devices[d].peak_memory_bytes, sb.devices[d].peak_memory_bytes) << d;
    EXPECT_EQ(sa.devices[d].compute_s, sb.devices[d].compute_s) << d;
    EXPECT_EQ(sa.devices[d].communication_s, sb.devices[d].communication_s) << d;
  }
}

// Every figure of two simulations, to the bit.
void ExpectSameSimulation(const sim::SimulationResult& a, const sim::SimulationResult& b) {
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.throughput, b.throughput);
  EXPECT_EQ(a.num_ops, b.num_ops);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    const sim::DeviceResult& x = a.devices[d];
    const sim::DeviceResult& y = b.devices[d];
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.compute_s, y.compute_s) << d;
    EXPECT_EQ(x.communication_s, y.communication_s) << d;
    EXPECT_EQ(x.idle_s, y.idle_s) << d;
    EXPECT_EQ(x.peak_memory_bytes, y.peak_memory_bytes) << d;
    EXPECT_EQ(x.memory_at_peak, y.memory_at_peak) << d;
    EXPECT_EQ(x.peak_memory_by_kind, y.peak_memory_by_kind) << d;
  }
}

// A classifier that tells weights, gradients and the rest apart by name, so
// that the kinds at the peak are compared too.
sim::MemoryKind KindByName(const Value& v) {
  if (v.is_param()) return sim::MemoryKind::kWeights;
  if (v.name().find("grad") != std::string::npos) return sim::MemoryKind::kGradients;
  return sim::MemoryKind::kActivations;
}

// The search's simulation of the grid point as copies of its one-microbatch
// template (DistributedExpansion, sim::SimulateExpanded) equals the
// simulation of the program built from it (DistributedCopy), bit for bit:
// the same per-device op sequences, costs and buffers. K = 1 included.
class ExpandTest : public ::testing::TestWithParam<Case> {};

std::vector<Case> ExpandedCases(const std::string& model) {
  std::vector<Case> cases = Cases(model);
  std::erase_if(cases, [](const Case& c) { return !ExpandsFromTemplate(c.grid); });
  return cases;
}

TEST_P(ExpandTest, ExpandedSimulatesAsBuilt) {
  const GridOptions& grid = GetParam().grid;
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(GetParam().model));
  spec.gpt.grouped_qkv = true;
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(spec));
  ASSERT_OK(InferTypes(seq));
  const std::vector<ParamRule> rules = Rules(GetParam().model);
  ASSERT_OK_AND_ASSIGN(Module built, DistributedCopy(*seq.entry(), grid, rules));
  ASSERT_OK_AND_ASSIGN(ExpandedGrid x, DistributedExpansion(*seq.entry(), grid, rules));
  // Ordered over task segments (the search's way) as over ops, op for op.
  ASSERT_OK_AND_ASSIGN(GridTemplate t, DistributedTemplate(*seq.entry(), grid, rules));
  ExpectSegmentOrderAsOps(t, grid, static_cast<int>(GetParam().tp * grid.pp));
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  sim::SimulateOptions options;
  options.memory_kind = KindByName;
  sim::CostModel costs(hw, nullptr);
  EXPECT_GT(ExpectComposedAsExpanded(t, grid, costs, static_cast<int>(GetParam().tp * grid.pp),
                                     KindByName),
            0);
  // Replica 0's template built alone, as the search builds it (D > 1).
  if (GetParam().dp > 1) {
    EXPECT_TRUE(ExpectPartAsWhole(*seq.entry(), t, grid, rules, costs,
                                  static_cast<int>(GetParam().tp * grid.pp), KindByName));
  }
  // Tensor-parallel ranks 0 and 1 for the T of each stage (T > 2).
  if (GetParam().tp > 2) {
    EXPECT_TRUE(ExpectTensorRanksAsWhole(*seq.entry(), t, grid, rules, costs,
                                         GetParam().dp * GetParam().tp * grid.pp, GetParam().tp,
                                         KindByName));
  }
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult a,
                       sim::Simulate(built, *built.entry(), costs, options));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult b, sim::SimulateExpanded(x.module, *x.module.entry(),
                                                                      x.program, costs, options));
  ExpectSameSimulation(a, b);
}

// GPT-2's vocabulary of 50257 splits over 4, 8 or 16 tensor-parallel ranks
// in ceil-chunks with a smaller last piece, as does 63 over 4 here (16, 16,
// 16, 15): ranks 0 and 1 cannot stand for all, ranks 0, 1 and 3 can, bit for
// bit, with and without data-parallel replicas and stages.
TEST(TensorRanksTest, TheLastRankApartStandsForAnUnevenVocabulary) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("gpt2-tiny"));
  spec.gpt.grouped_qkv = true;
  spec.gpt.vocab = 63;
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(spec));
  ASSERT_OK(InferTypes(seq));
  const std::vector<ParamRule> rules = Rules("gpt2-tiny");
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  sim::CostModel costs(hw, nullptr);
  for (int64_t d : {1, 2}) {
    for (int64_t p : {1, 2}) {
      SCOPED_TRACE("D " + std::to_string(d) + " P " + std::to_string(p));
      GridOptions grid;
      grid.axes = {{"dp", d}, {"tp", 4}};
      grid.pp = p;
      grid.microbatches = 2;
      grid.layer_pattern = kGptLayerPattern;
      ASSERT_OK_AND_ASSIGN(GridTemplate t, DistributedTemplate(*seq.entry(), grid, rules));
      const int64_t world = d * 4 * p;
      EXPECT_FALSE(
          ExpectTensorRanksAsWhole(*seq.entry(), t, grid, rules, costs, world, 4, KindByName));
      EXPECT_TRUE(ExpectTensorRanksAsWhole(*seq.entry(), t, grid, rules, costs, world, 4,
                                           KindByName, /*last_apart=*/true));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Mlp, ShardingEquivalenceTest, ::testing::ValuesIn(Cases("mlp-tiny")),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Gpt2, ShardingEquivalenceTest, ::testing::ValuesIn(Cases("gpt2-tiny")),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Mlp, ReplicateTest, ::testing::ValuesIn(ReplicatedCases("mlp-tiny")),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Gpt2, ReplicateTest, ::testing::ValuesIn(ReplicatedCases("gpt2-tiny")),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Mlp, ExpandTest, ::testing::ValuesIn(ExpandedCases("mlp-tiny")), CaseName);
INSTANTIATE_TEST_SUITE_P(Gpt2, ExpandTest, ::testing::ValuesIn(ExpandedCases("gpt2-tiny")),
                         CaseName);

}  // namespace
}  // namespace distir::sharding
