// Megatron's sequence parallelism (models/transformer_sharding.h,
// SequenceParallelRules) on the tiny GPT and LLaMA training steps: every grid
// point's partition computes the sequential step on the reference executor,
// and the collectives are Megatron's (Korthikanti et al. 2022, §4.2.2): per
// block two all-gathers along the sequence before the column-parallel
// products and two reduce-scatters after the row-parallel ones forward, as
// many backward, and no all-reduce of activations and no gathered weight.

#include <gtest/gtest.h>

#include <map>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/model_zoo.h"
#include "models/transformer_metrics.h"
#include "models/transformer_sharding.h"
#include "segment_order_check.h"
#include "sharding/annotate.h"
#include "sharding/cleanup.h"
#include "sharding/equivalence.h"
#include "sharding/grid.h"
#include "sharding/materialize.h"
#include "sharding/partition.h"
#include "sharding/propagate.h"
#include "sharding/regather.h"
#include "sharding/stage_meshes.h"
#include "sharding/task_order.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

struct SpCase {
  const char* model;
  int64_t dp, tp, pp, microbatches;
};

// The model's sequence-parallel rules before its own, as `distir simulate
// --megatron-args "... --sequence-parallel"` takes them.
StatusOr<std::vector<ParamRule>> SequenceParallel(const ModelSpec& spec, std::string* layers) {
  const ModelSharding t = TransformerShardingOf(ResolveTransformerOptions(spec.transformer));
  std::vector<std::string> texts = t.sequence_parallel_rules;
  texts.insert(texts.end(), t.rules.begin(), t.rules.end());
  *layers = t.layer_pattern;
  return ParseParamRules(texts);
}

// The global-view program of the grid point, materialised and cleaned up on
// stage meshes, as `distir opt --parallelize ...,scatter_gather
// --check-partition` has it.
StatusOr<Module> GlobalView(const SpCase& c) {
  ModelSpec spec = WithBatch(*LookupModel(c.model), 8);
  DISTIR_ASSIGN_OR_RETURN(Module m, BuildModel(spec));
  DISTIR_RETURN_IF_ERROR(InferTypes(m));
  std::string layers;
  DISTIR_ASSIGN_OR_RETURN(std::vector<ParamRule> rules, SequenceParallel(spec, &layers));
  ParallelOptions po;
  po.dp = c.dp;
  po.tp = c.tp;
  po.pp = c.pp;
  po.microbatches = c.microbatches;
  const std::string fn = m.entry()->name();
  DISTIR_RETURN_IF_ERROR(AnnotateGrid(m, fn, GridOf(po, layers, true), rules));
  DISTIR_RETURN_IF_ERROR(PropagateShardings(m, fn));
  DISTIR_RETURN_IF_ERROR(MaterializeShardings(m, fn));
  RunCleanup(m, fn);
  // The column-parallel inputs gathered again for the weight gradients, as
  // Megatron keeps their pieces (ModelSharding::sequence_parallel_regather).
  RegatherLinearInputs(m, fn);
  // Stage transfers by Megatron's scatter-gather, as the transformer models
  // run them (ModelSharding::scatter_gather_transfers).
  DISTIR_RETURN_IF_ERROR(SplitStageMeshes(m, fn, "dp", 1, "tp"));
  return m;
}

class SequenceParallelTest : public ::testing::TestWithParam<SpCase> {};

TEST_P(SequenceParallelTest, PartitionComputesTheSequentialStep) {
  const SpCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(Module m, GlobalView(c));
  const std::string fn = m.entry()->name();
  ASSERT_OK_AND_ASSIGN(Module parts, ParseModule(PrintModule(m), "global"));
  ASSERT_OK(PartitionShardings(parts, fn));
  ASSERT_OK(OrderPipelineTasks(parts, fn, PipelineSchedule::k1F1B, 1));
  RandomInputOptions inputs;
  inputs.int_max = 63;  // token ids and labels over the whole vocabulary of 64
  ASSERT_OK_AND_ASSIGN(EquivalenceReport r,
                       CheckPartitionEquivalence(m, parts, fn, 5, 1e-5, 1e-6, inputs));
  EXPECT_EQ(r.devices, c.dp * c.tp * c.pp);
  // Activations move, weights do not: no gathered weight, no all-to-all.
  for (const auto& op : parts.entry()->ops()) {
    EXPECT_NE(op->kind(), OpKind::kAllToAll) << op->Name();
    if (op->kind() == OpKind::kAllGather) {
      EXPECT_EQ(op->input(0)->name().find(".weight"), std::string::npos) << op->input(0)->name();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, SequenceParallelTest,
                         ::testing::Values(SpCase{"gpt-tiny", 1, 2, 1, 1},
                                           SpCase{"gpt-tiny", 2, 2, 1, 2},
                                           SpCase{"gpt-tiny", 1, 2, 2, 2},
                                           SpCase{"llama-tiny", 1, 4, 1, 1},
                                           SpCase{"llama-tiny", 2, 2, 2, 2}));

struct ExpandCase {
  const char* model;
  int64_t dp, tp, pp, vpp, microbatches;
  RecomputeKind recompute;
  int zero;
};

// A transformer's memory kinds, as the search classifies them
// (search/step_metrics.h), so that the kinds at each peak are compared.
sim::MemoryKind TransformerKind(const Value& v) {
  switch (ClassifyTransformerValue(v)) {
    case TransformerValueRole::kWeight:
      return sim::MemoryKind::kWeights;
    case TransformerValueRole::kGradient:
      return sim::MemoryKind::kGradients;
    case TransformerValueRole::kOptimizerState:
      return sim::MemoryKind::kOptimizerState;
    case TransformerValueRole::kActivation:
      return sim::MemoryKind::kActivations;
    case TransformerValueRole::kInput:
      return sim::MemoryKind::kInputs;
    case TransformerValueRole::kOther:
      break;
  }
  return sim::MemoryKind::kOther;
}

class ExpandedTransformerTest : public ::testing::TestWithParam<ExpandCase> {};

// Megatron-style grid points of the training steps (sequence parallelism,
// scatter-gather transfers, interleaving, recomputation, ZeRO-1) simulated
// as copies of their one-microbatch template (DistributedExpansion,
// sim::SimulateExpanded) equal the simulation of the program built from it,
// bit for bit, memory by kind included.
TEST_P(ExpandedTransformerTest, ExpandedSimulatesAsBuilt) {
  const ExpandCase& c = GetParam();
  ModelSpec spec = WithBatch(*LookupModel(c.model), 16);
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(spec));
  ASSERT_OK(InferTypes(seq));
  std::string layers;
  ASSERT_OK_AND_ASSIGN(std::vector<ParamRule> rules, SequenceParallel(spec, &layers));
  ParallelOptions po;
  po.dp = c.dp;
  po.tp = c.tp;
  po.pp = c.pp;
  po.virtual_stages = c.vpp;
  po.microbatches = c.microbatches;
  po.recompute = c.recompute;
  po.zero_stage = c.zero;
  GridOptions grid = GridOf(po, layers, /*recompute_layers=*/true, /*scatter_gather=*/true);
  grid.regather_linear_inputs = true;
  ASSERT_OK_AND_ASSIGN(Module built, DistributedCopy(*seq.entry(), grid, rules));
  ASSERT_OK_AND_ASSIGN(ExpandedGrid x, DistributedExpansion(*seq.entry(), grid, rules));
  // Ordered over task segments (the search's way) as over ops, op for op.
  ASSERT_OK_AND_ASSIGN(GridTemplate t, DistributedTemplate(*seq.entry(), grid, rules));
  ExpectSegmentOrderAsOps(t, grid, static_cast<int>(c.tp * c.pp));
  ASSERT_OK_AND_ASSIGN(
      sim::HardwareProfile hw,
      sim::LoadHardwareProfile(testing::SourcePath("configs/hardware/dgx-a100.yaml")));
  sim::SimulateOptions options;
  options.memory_kind = TransformerKind;
  sim::CostModel costs(hw, nullptr);
  // Interleaved with K = 2 (case 2), the exchange order refuses: no segments.
  EXPECT_EQ(
      ExpectComposedAsExpanded(t, grid, costs, static_cast<int>(c.tp * c.pp), TransformerKind) > 0,
      c.vpp == 1 || c.microbatches > 2);
  // Replica 0's template built alone, as the search builds it (D > 1).
  if (c.dp > 1) {
    EXPECT_TRUE(ExpectPartAsWhole(*seq.entry(), t, grid, rules, costs,
                                  static_cast<int>(c.tp * c.pp), TransformerKind));
  }
  // Tensor-parallel ranks 0 and 1 for the T of each stage (T > 2).
  if (c.tp > 2) {
    EXPECT_TRUE(ExpectTensorRanksAsWhole(*seq.entry(), t, grid, rules, costs, c.dp * c.tp * c.pp,
                                         c.tp, TransformerKind));
  }
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult a,
                       sim::Simulate(built, *built.entry(), costs, options));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult b, sim::SimulateExpanded(x.module, *x.module.entry(),
                                                                      x.program, costs, options));
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.num_ops, b.num_ops);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    EXPECT_EQ(a.devices[d].compute_s, b.devices[d].compute_s) << d;
    EXPECT_EQ(a.devices[d].communication_s, b.devices[d].communication_s) << d;
    EXPECT_EQ(a.devices[d].peak_memory_bytes, b.devices[d].peak_memory_bytes) << d;
    EXPECT_EQ(a.devices[d].memory_at_peak, b.devices[d].memory_at_peak) << d;
    EXPECT_EQ(a.devices[d].peak_memory_by_kind, b.devices[d].peak_memory_by_kind) << d;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grid, ExpandedTransformerTest,
    ::testing::Values(ExpandCase{"gpt-tiny", 2, 2, 2, 1, 4, RecomputeKind::kNone, 0},
                      ExpandCase{"gpt-tiny", 1, 2, 2, 2, 4, RecomputeKind::kSelective, 0},
                      ExpandCase{"gpt-tiny", 2, 1, 2, 2, 2, RecomputeKind::kFull, 1},
                      ExpandCase{"llama-tiny", 2, 2, 2, 1, 2, RecomputeKind::kSelective, 1},
                      ExpandCase{"llama-tiny", 1, 2, 4, 1, 8, RecomputeKind::kFull, 0},
                      ExpandCase{"gpt-tiny", 2, 4, 1, 1, 2, RecomputeKind::kSelective, 1},
                      ExpandCase{"llama-tiny", 1, 4, 2, 2, 4, RecomputeKind::kFull, 0}));

// The collectives of the partitioned gpt-tiny step at T = 2 (8 blocks), by
// kind and by the value they reduce or gather (layer numbers dropped).
std::map<std::string, int> Collectives(const Module& parts) {
  std::map<std::string, int> count;
  for (const auto& op : parts.entry()->ops()) {
    if (!IsCommunication(op->kind()) || op->kind() == OpKind::kSend) continue;
    std::string name = op->input(0)->name();
    name = name.substr(0, name.rfind(".d"));
    const size_t layer = name.find("layers.");
    if (layer == 0) name = "layers.N" + name.substr(name.find('.', 7));
    ++count[op->Name() + " " + name];
  }
  return count;
}

TEST(SequenceParallelCollectivesTest, GptTinyAtT2HasMegatronsCollectives) {
  ASSERT_OK_AND_ASSIGN(Module m, GlobalView({"gpt-tiny", 1, 2, 1, 1}));
  ASSERT_OK(PartitionShardings(m, m.entry()->name()));
  const std::map<std::string, int> got = Collectives(m);
  const std::map<std::string, int> want = {
      // forward, per block: gather the norm's output, reduce-scatter the
      // product; the norm's output gathered again in the backward for the
      // weight gradient (regather.h): two gathers of each
      {"AllGather layers.N.input_norm", 16},
      {"ReduceScatter layers.N.attention.proj.mm", 8},
      {"AllGather layers.N.post_attention_norm", 16},
      {"ReduceScatter layers.N.mlp.fc2.mm", 8},
      // backward, per block: gather the output gradient, reduce-scatter the
      // input gradients of the column-parallel products
      {"AllGather layers.N.input.grad", 8},  // blocks 1-7 and the embedding's
      {"AllGather final_norm.input.grad", 1},
      {"ReduceScatter layers.N.mlp.fc1.input.grad", 8},
      {"AllGather layers.N.residual.grad", 8},
      {"ReduceScatter layers.N.attention.qkv.input.grad", 8},
      // the vocabulary-parallel embedding and head around the region
      {"ReduceScatter embedding.tokens", 1},
      {"AllGather final_norm", 2},
      {"ReduceScatter final_norm.grad", 1},
      {"AllGather logits.lse.1.piece", 1},
      // weight gradients summed over the sequence pieces: the norms', the
      // row-parallel biases' and the position embedding's
      {"AllReduce layers.N.input_norm.weight.grad", 8},
      {"AllReduce layers.N.input_norm.bias.grad", 8},
      {"AllReduce layers.N.post_attention_norm.weight.grad", 8},
      {"AllReduce layers.N.post_attention_norm.bias.grad", 8},
      {"AllReduce layers.N.attention.proj.bias.grad", 8},
      {"AllReduce layers.N.mlp.fc2.bias.grad", 8},
      {"AllReduce final_norm.weight.grad", 1},
      {"AllReduce final_norm.bias.grad", 1},
      {"AllReduce position_embedding.weight.grad", 1},
  };
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace distir::sharding
