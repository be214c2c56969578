// The pipeline grid point on meshes (sharding/grid.h): microbatches, stages
// on sub-meshes and the schedule's task order. Two checks compose into "the
// per-device program computes the sequential training step":
//   1. the microbatched program computes the sequential step (the sums of
//      its microbatch losses and gradients are the whole batch's);
//   2. every (D, T, P, K, schedule) partitioned and put in schedule order
//      computes what its global view computes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/gpt.h"
#include "models/mlp.h"
#include "models/model_zoo.h"
#include "models/transformer_sharding.h"
#include "sharding/annotate.h"
#include "sharding/cleanup.h"
#include "sharding/equivalence.h"
#include "sharding/grid.h"
#include "sharding/materialize.h"
#include "sharding/microbatch.h"
#include "sharding/partition.h"
#include "sharding/pipeline_task.h"
#include "sharding/propagate.h"
#include "sharding/stage_meshes.h"
#include "sharding/stages.h"
#include "sharding/task_order.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"
#include "transforms/interleaved_schedule.h"

namespace distir::sharding {
namespace {

using ::distir::testing::SourcePath;
using ::distir::testing::StatusIs;

std::vector<ParamRule> MlpRules() { return *ParseParamRules(MlpShardingRules()); }

MlpOptions Tiny(MlpOptimizer optimizer) {
  MlpOptions o;
  o.n_layer = 4;
  o.d_model = 8;
  o.batch = 16;
  o.optimizer = optimizer;
  o.device = DeviceId();  // device-generic: random inputs carry no device
  return o;
}

// Random inputs of `fn`, Adam's second moments made non-negative.
std::vector<HostValue> Inputs(const Function& fn, uint64_t seed) {
  RandomInputOptions options;
  for (const auto& p : fn.params()) {
    if (p->name()[0] != 'v') continue;
    DenseTensor t = RandomValue(p->type(), seed + 100).tensor();
    for (double& x : t.values) x = std::fabs(x);
    options.overrides[p->name()] = HostValue::Tensor(std::move(t));
  }
  StatusOr<std::vector<HostValue>> in = RandomInputs(fn, seed, options);
  EXPECT_TRUE(in.ok()) << in.status().ToString();
  return *in;
}

// Rows [begin, end) of a rank-2 tensor.
HostValue Rows(const HostValue& v, int64_t begin, int64_t end) {
  DenseTensor t = v.tensor();
  const int64_t cols = t.shape[1];
  DenseTensor out{t.dtype, {end - begin, cols}, {}};
  out.values.assign(t.values.begin() + begin * cols, t.values.begin() + end * cols);
  return HostValue::Tensor(std::move(out));
}

class MicrobatchTest : public ::testing::TestWithParam<std::tuple<int64_t, MlpOptimizer>> {};

TEST_P(MicrobatchTest, SumsOfMicrobatchesAreTheStep) {
  const auto [k, optimizer] = GetParam();
  ASSERT_OK_AND_ASSIGN(Module seq, BuildMlpTraining(Tiny(optimizer)));
  ASSERT_OK(InferTypes(seq));
  std::vector<HostValue> in = Inputs(*seq.entry(), 3);
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> want, Execute(seq, *seq.entry(), in));

  ASSERT_OK_AND_ASSIGN(Module mb, BuildMlpTraining(Tiny(optimizer)));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> names, SplitMicrobatches(mb, "mlp", k, {"x", "y"}));
  ASSERT_EQ(names.size(), static_cast<size_t>(2 * k));
  // x and y (parameters 0 and 1) become k parameters each, in that order.
  std::vector<HostValue> split;
  const int64_t rows = 16 / k;
  for (int p = 0; p < 2; ++p) {
    for (int64_t m = 0; m < k; ++m) split.push_back(Rows(in[p], m * rows, (m + 1) * rows));
  }
  split.insert(split.end(), in.begin() + 2, in.end());
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> got, Execute(mb, *mb.entry(), split));
  ASSERT_OK(AllClose(got, want, 1e-5, 1e-6));
  // Every op is tagged: forward, backward, or update (the optimizer).
  int forward = 0, backward = 0, update = 0;
  for (const auto& op : mb.entry()->ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    ASSERT_TRUE(t.has_value()) << op->Name();
    forward += t->phase == TaskPhase::kForward;
    backward += t->phase == TaskPhase::kBackward;
    update += t->phase == TaskPhase::kUpdate;
  }
  EXPECT_EQ(forward, k * (2 * 4 + 1) + (k - 1));  // MatMul, Relu per layer, MSELoss; loss sums
  EXPECT_EQ(update, 4);
  EXPECT_EQ(backward, k * (1 + 2 * 4) + (k - 1) * 4);  // MSELossGrad, 2 per layer; gradient sums
}

INSTANTIATE_TEST_SUITE_P(K, MicrobatchTest,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values(MlpOptimizer::kSgd,
                                                              MlpOptimizer::kAdam)));

TEST(MicrobatchTest, RefusesABatchThatDoesNotDivide) {
  ASSERT_OK_AND_ASSIGN(Module mb, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  StatusOr<std::vector<std::string>> r = SplitMicrobatches(mb, "mlp", 3, {"x", "y"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not divide into 3 microbatches"), std::string::npos);
}

TEST(StagesTest, LayersAreCutContiguouslyLongerStagesFirst) {
  EXPECT_EQ(StageOfLayer(0, 5, 2), 0);
  EXPECT_EQ(StageOfLayer(2, 5, 2), 0);
  EXPECT_EQ(StageOfLayer(3, 5, 2), 1);
  EXPECT_EQ(StageOfLayer(4, 5, 2), 1);
  EXPECT_EQ(StageOfLayer(3, 4, 4), 3);
}

TEST(StagesTest, BackwardOpsRunOnTheirLayersStage) {
  ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> mb, SplitMicrobatches(m, "mlp", 1, {"x", "y"}));
  ASSERT_OK(AssignStages(m, "mlp", 2, mb));
  const Function& fn = *m.entry();
  auto stage = [&](const std::string& value) {
    return GetTask(*fn.LookupValue(value)->def())->stage;
  };
  EXPECT_EQ(stage("h1"), 0);
  EXPECT_EQ(stage("h2"), 1);
  EXPECT_EQ(stage("loss"), 1);
  EXPECT_EQ(stage("da3"), 1);  // MSELossGrad, after the last layer
  EXPECT_EQ(stage("dh2"), 1);  // ReluGrad(h2, da2): where h2 is
  EXPECT_EQ(stage("dh1"), 0);
  EXPECT_EQ(stage("dw1"), 0);
  EXPECT_EQ(stage("w3_new"), 1);
}

// Interleaved (v = 2 chunks per stage, Megatron's virtual pipeline): the 4
// layers cut into P v = 4 chunks of one layer, the tasks name the chunk;
// chunk c runs on stage c mod 2 (stage_meshes.h). Chunks must be equal.
TEST(StagesTest, InterleavedChunksAreTheTasksStages) {
  ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> mb, SplitMicrobatches(m, "mlp", 1, {"x", "y"}));
  ASSERT_OK_AND_ASSIGN(Module odd, ParseModule(PrintModule(m), "copy"));
  ASSERT_OK(AssignStages(m, "mlp", 2, mb, "", 2));
  const Function& fn = *m.entry();
  auto stage = [&](const std::string& value) {
    return GetTask(*fn.LookupValue(value)->def())->stage;
  };
  EXPECT_EQ(stage("h1"), 1);  // layer i is chunk i
  EXPECT_EQ(stage("h2"), 2);
  EXPECT_EQ(stage("h3"), 3);
  EXPECT_EQ(stage("loss"), 3);  // after the last chunk's layer
  EXPECT_EQ(stage("dh3"), 3);
  EXPECT_EQ(stage("dh1"), 1);
  EXPECT_EQ(stage("dw1"), 1);
  EXPECT_EQ(stage("w3_new"), 3);
  EXPECT_THAT(AssignStages(odd, "mlp", 2, mb, "", 3),
              StatusIs(StatusCode::kInvalidArgument,
                       "L = 4 layers of @mlp do not divide into P x v = 2 x 3 model chunks"));
}

// GPT-2's blocks are its layers (kGptLayerPattern): gpt2-tiny's 8 blocks on 2
// stages cut between blocks 3 and 4, the embeddings on the first stage, ln_f and the LM
// head on the last, which holds its own piece of the tied embedding.
TEST(StagesTest, GptBlocksAreTheLayersAndTheTiedEmbeddingIsOnBothEnds) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("gpt2-tiny"));
  spec.gpt.grouped_qkv = true;
  spec.gpt.device = DeviceId();
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
  std::vector<ParamRule> rules = *ParseParamRules(GptShardingRules());
  GridOptions grid;
  grid.axes = {{"dp", 1}, {"tp", 2}};
  grid.pp = 2;
  grid.layer_pattern = kGptLayerPattern;
  ASSERT_OK(AnnotateGrid(m, "gpt2", grid, rules));
  const Function& fn = *m.entry();
  auto stage = [&](const std::string& value) {
    return GetTask(*fn.LookupValue(value)->def())->stage;
  };
  EXPECT_EQ(stage("embed"), 0);
  EXPECT_EQ(stage("h.3.out"), 0);
  EXPECT_EQ(stage("h.4.ln_1"), 1);
  EXPECT_EQ(stage("logits"), 1);
  EXPECT_EQ(stage("lm_head.logits"), 1);  // the head's GEMM reads the last stage's table
  ASSERT_OK(PropagateShardings(m, "gpt2"));
  ASSERT_OK(MaterializeShardings(m, "gpt2"));
  RunCleanup(m, "gpt2");
  ASSERT_OK(SplitStageMeshes(m, "gpt2"));
  // Each stage holds the tied embedding's vocabulary piece it reads: the
  // token lookup's (the original) on the first, the LM head's on the last.
  for (const char* name : {"wte.weight", "wte.weight.s1"}) {
    SCOPED_TRACE(name);
    const Value* copy = m.entry()->LookupValue(name);
    ASSERT_NE(copy, nullptr);
    ASSERT_NE(copy->sharding(), nullptr);
    EXPECT_EQ(copy->sharding()->mesh, std::string(name) == "wte.weight" ? "mesh.s0" : "mesh.s1");
    EXPECT_EQ(copy->sharding()->dims[0], std::vector<std::string>{"tp"});  // vocabulary-parallel
  }
  int transfers = 0;  // the activations between the stages only, never a weight
  for (const auto& op : m.entry()->ops()) {
    if (op->kind() != OpKind::kMeshTransfer) continue;
    ++transfers;
    EXPECT_FALSE(op->input(0)->is_param()) << op->input(0)->Ref() << " is moved every step";
  }
  EXPECT_EQ(transfers, 1);  // h.3.out
}

struct PipelinePoint {
  int64_t dp, tp, pp, k;
  PipelineSchedule schedule;
  MlpOptimizer optimizer;
  bool recompute = false;
  int zero = 0;
  int64_t vpp = 1;  ///< model chunks per stage (interleaved 1F1B)
};

class PipelineGridTest : public ::testing::TestWithParam<PipelinePoint> {};

TEST_P(PipelineGridTest, ScheduledPartitionComputesTheGlobalView) {
  const PipelinePoint& g = GetParam();
  ASSERT_OK_AND_ASSIGN(Module m, BuildMlpTraining(Tiny(g.optimizer)));
  GridOptions grid;
  grid.axes = {{"dp", g.dp}, {"tp", g.tp}};
  grid.pp = g.pp;
  grid.microbatches = g.k;
  grid.schedule = g.schedule;
  grid.recompute = g.recompute ? RecomputeKind::kFull : RecomputeKind::kNone;
  grid.zero_stage = g.zero;
  grid.virtual_stages = g.vpp;
  ASSERT_OK(AnnotateGrid(m, "mlp", grid, MlpRules()));
  ASSERT_OK(PropagateShardings(m, "mlp"));
  ASSERT_OK(MaterializeShardings(m, "mlp"));
  RunCleanup(m, "mlp");
  ASSERT_OK(SplitStageMeshes(m, "mlp", "dp", g.vpp));
  ASSERT_OK_AND_ASSIGN(Module parts, ParseModule(PrintModule(m), "global"));
  ASSERT_OK(PartitionShardings(parts, "mlp"));
  ASSERT_OK(OrderPipelineTasks(parts, "mlp", g.schedule, g.vpp));
  RandomInputOptions inputs;
  for (const auto& p : m.entry()->params()) {
    if (p->name()[0] != 'v') continue;
    DenseTensor t = RandomValue(p->type(), 11).tensor();
    for (double& x : t.values) x = std::fabs(x);
    inputs.overrides[p->name()] = HostValue::Tensor(std::move(t));
  }
  ASSERT_OK_AND_ASSIGN(EquivalenceReport r,
                       CheckPartitionEquivalence(m, parts, "mlp", 7, 1e-5, 1e-6, inputs));
  EXPECT_EQ(r.devices, g.dp * g.tp * g.pp);
  // The per-device program is a valid DistIR program: it simulates.
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx2-v100.yaml")));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult s, sim::Simulate(parts, *parts.entry(), hw));
  EXPECT_EQ(static_cast<int64_t>(s.devices.size()), g.dp * g.tp * g.pp);
}

INSTANTIATE_TEST_SUITE_P(
    Grid, PipelineGridTest,
    ::testing::Values(
        PipelinePoint{1, 1, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kSgd},
        PipelinePoint{1, 1, 4, 4, PipelineSchedule::kGpipe, MlpOptimizer::kSgd},
        PipelinePoint{2, 1, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kSgd},
        PipelinePoint{1, 2, 2, 4, PipelineSchedule::k1F1B, MlpOptimizer::kSgd},
        PipelinePoint{2, 2, 2, 2, PipelineSchedule::kGpipe, MlpOptimizer::kSgd},
        PipelinePoint{2, 2, 3, 2, PipelineSchedule::k1F1B, MlpOptimizer::kSgd},
        PipelinePoint{2, 1, 1, 4, PipelineSchedule::k1F1B, MlpOptimizer::kSgd},
        PipelinePoint{2, 2, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kAdam},
        PipelinePoint{1, 1, 4, 8, PipelineSchedule::k1F1B, MlpOptimizer::kAdam},
        PipelinePoint{1, 1, 1, 1, PipelineSchedule::k1F1B, MlpOptimizer::kSgd, true},
        PipelinePoint{2, 2, 2, 4, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, true},
        PipelinePoint{1, 2, 4, 2, PipelineSchedule::kGpipe, MlpOptimizer::kSgd, true},
        PipelinePoint{2, 1, 1, 1, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, false, 1},
        PipelinePoint{2, 2, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, false, 1},
        PipelinePoint{2, 2, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, false, 2},
        PipelinePoint{4, 1, 1, 2, PipelineSchedule::k1F1B, MlpOptimizer::kSgd, false, 2},
        PipelinePoint{2, 2, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, true, 3},
        PipelinePoint{2, 1, 2, 4, PipelineSchedule::kGpipe, MlpOptimizer::kSgd, false, 3},
        // Interleaved: 4 chunks of one layer on 2 stages.
        PipelinePoint{1, 1, 2, 4, PipelineSchedule::k1F1B, MlpOptimizer::kSgd, false, 0, 2},
        PipelinePoint{1, 1, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, false, 0, 2},
        PipelinePoint{2, 2, 2, 4, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, true, 0, 2},
        PipelinePoint{2, 1, 2, 2, PipelineSchedule::k1F1B, MlpOptimizer::kAdam, false, 1, 2}));

// The tiny MLP's grid point of P = 2 stages, v chunks each, K microbatches,
// no data or tensor parallelism.
GridOptions TinyPipeline(int64_t virtual_stages, int64_t microbatches) {
  GridOptions grid;
  grid.axes = {{"dp", 1}, {"tp", 1}};
  grid.pp = 2;
  grid.virtual_stages = virtual_stages;
  grid.microbatches = microbatches;
  return grid;
}

// The tasks of device `device` in its program order, each op's task once
// per run of ops: a Send, whose result is on the receiver, is the sender's.
std::vector<PipelineTask> DeviceTasks(const Function& fn, DeviceId device) {
  std::vector<PipelineTask> out;
  for (const auto& op : fn.ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    if (!t.has_value() || op->kind() == OpKind::kSend || op->num_results() == 0) continue;
    if (t->phase != TaskPhase::kForward && t->phase != TaskPhase::kBackward) continue;
    if (op->result(0)->type().device() != device) continue;
    PipelineTask task{t->stage, t->microbatch, t->phase == TaskPhase::kBackward};
    if (out.empty() || !(out.back() == task)) out.push_back(task);
  }
  return out;
}

// P = 2, v = 2, K = 4 on the tiny MLP (a layer per chunk): each device runs
// its chunks' tasks in Megatron's interleaved order (interleaved_schedule.h,
// whose test derives it by hand), built both ways (DistributeGrid and the
// microbatch template, DistributedCopy).
TEST(InterleavedGridTest, EachDeviceRunsMegatronsOrderOfItsChunks) {
  ASSERT_OK_AND_ASSIGN(Module seq, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  GridOptions grid = TinyPipeline(/*virtual_stages=*/2, /*microbatches=*/4);
  ASSERT_OK_AND_ASSIGN(Module copy, DistributedCopy(*seq.entry(), grid, MlpRules()));
  ASSERT_OK(DistributeGrid(seq, "mlp", grid, MlpRules()));
  for (const Module* m : {&seq, &copy}) {
    for (int32_t d = 0; d < 2; ++d) {
      EXPECT_EQ(DeviceTasks(*m->entry(), DeviceId(d)), InterleavedRankOrder(2, 2, 4, d, true))
          << "device " << d;
    }
  }
  grid.microbatches = 2;
  grid.pp = 1;
  ASSERT_OK_AND_ASSIGN(Module again, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  EXPECT_THAT(DistributeGrid(again, "mlp", grid, MlpRules()),
              StatusIs(StatusCode::kInvalidArgument, "needs P >= 2"));
  grid.pp = 2;
  grid.microbatches = 1;
  EXPECT_THAT(DistributeGrid(again, "mlp", grid, MlpRules()),
              StatusIs(StatusCode::kInvalidArgument, "multiple of the pipeline stages P = 2"));
}

// Device `device`'s program as the Sends it takes part in between its tasks:
// for each task ("f1.0", "b0.3"), the Sends just before it ("F.m": microbatch
// m's activation, "B.m": its gradient), then those after the last task.
std::vector<std::pair<std::string, std::set<std::string>>> DeviceExchanges(const Function& fn,
                                                                           DeviceId device) {
  std::vector<std::pair<std::string, std::set<std::string>>> out;
  std::set<std::string> sends;
  std::string last;
  for (const auto& op : fn.ops()) {
    std::optional<TaskTag> t = GetTask(*op);
    if (!t.has_value() || op->num_results() == 0) continue;
    if (t->phase != TaskPhase::kForward && t->phase != TaskPhase::kBackward) continue;
    const bool backward = t->phase == TaskPhase::kBackward;
    if (op->kind() == OpKind::kSend) {
      if (op->input(0)->type().device() == device || op->result(0)->type().device() == device)
        sends.insert((backward ? "B." : "F.") + std::to_string(t->microbatch));
      continue;
    }
    if (op->result(0)->type().device() != device) continue;
    const std::string task = TaskName(PipelineTask{t->stage, t->microbatch, backward});
    if (task == last) continue;
    out.emplace_back(task, sends);
    sends.clear();
    last = task;
  }
  out.emplace_back("end", sends);
  return out;
}

// P = 2, K = 4, 1F1B on the tiny MLP: Megatron's order on each stage (stage 0
// one warm-up forward), and the two stages meet only where Megatron's do:
// stage 0 sends an activation and receives a gradient in one exchange after
// each steady forward (send_forward_recv_backward), stage 1 sends the gradient
// and receives the next activation after each backward
// (send_backward_recv_forward); no Send waits for a task it does not need.
TEST(ExchangeOrderTest, StagesMeetAtMegatronsCommunicationPoints) {
  ASSERT_OK_AND_ASSIGN(Module seq, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  GridOptions grid = TinyPipeline(/*virtual_stages=*/1, /*microbatches=*/4);
  ASSERT_OK_AND_ASSIGN(Module copy, DistributedCopy(*seq.entry(), grid, MlpRules()));
  ASSERT_OK(DistributeGrid(seq, "mlp", grid, MlpRules()));
  using S = std::set<std::string>;
  const std::vector<std::pair<std::string, S>> stage0 = {
      {"f0.0", {}},           {"f0.1", {"F.0"}}, {"b0.0", {"F.1", "B.0"}}, {"f0.2", {}},
      {"b0.1", {"F.2", "B.1"}}, {"f0.3", {}},      {"b0.2", {"F.3", "B.2"}}, {"b0.3", {"B.3"}},
      {"end", {}}};
  const std::vector<std::pair<std::string, S>> stage1 = {
      {"f1.0", {"F.0"}}, {"b1.0", {}}, {"f1.1", {"B.0", "F.1"}}, {"b1.1", {}},
      {"f1.2", {"B.1", "F.2"}}, {"b1.2", {}}, {"f1.3", {"B.2", "F.3"}}, {"b1.3", {}},
      {"end", {"B.3"}}};
  for (const Module* m : {&seq, &copy}) {
    EXPECT_EQ(DeviceExchanges(*m->entry(), DeviceId(0)), stage0);
    EXPECT_EQ(DeviceExchanges(*m->entry(), DeviceId(1)), stage1);
    for (int32_t d = 0; d < 2; ++d) {
      EXPECT_EQ(DeviceTasks(*m->entry(), DeviceId(d)), InterleavedRankOrder(2, 1, 4, d, true));
    }
  }
}

// Interleaved (P = 2, v = 2, K = 4): a steady forward's output waits for the
// backward after it (send_forward_backward_recv_forward_backward), so no Send
// sits between a forward and the backward that follows it on a device, and
// every device still exchanges every activation and gradient it owns.
TEST(ExchangeOrderTest, InterleavedStagesExchangeAfterEachBackward) {
  ASSERT_OK_AND_ASSIGN(Module seq, BuildMlpTraining(Tiny(MlpOptimizer::kSgd)));
  GridOptions grid = TinyPipeline(/*virtual_stages=*/2, /*microbatches=*/4);
  ASSERT_OK(DistributeGrid(seq, "mlp", grid, MlpRules()));
  for (int32_t d = 0; d < 2; ++d) {
    const auto segments = DeviceExchanges(*seq.entry(), DeviceId(d));
    size_t sends = 0;
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
      sends += segments[i].second.size();
      const bool forward_then_backward =
          i > 0 && segments[i - 1].first[0] == 'f' && segments[i].first[0] == 'b';
      if (forward_then_backward) {
        EXPECT_TRUE(segments[i].second.empty()) << "device " << d << " " << segments[i].first;
      }
    }
    sends += segments.back().second.size();
    // 4 chunks, 3 boundaries between them, each crossed by K activations
    // and K gradients; every device takes part in all of them (P = 2).
    EXPECT_EQ(sends, 3u * 4u * 2u) << "device " << d;
  }
}

// Each text form of recomputation, and each kind of ParallelOptions, is one
// GridOptions; recompute_layers only qualifies full recomputation.
TEST(GridSpecTest, RecomputeFormsSayTheKind) {
  struct Form {
    const char* spec;
    RecomputeKind kind;
    bool layers;
  };
  for (const Form& f : {Form{"dp=2", RecomputeKind::kNone, false},
                        Form{"dp=2,recompute", RecomputeKind::kFull, false},
                        Form{"dp=2,recompute=1", RecomputeKind::kFull, false},
                        Form{"dp=2,recompute=0", RecomputeKind::kNone, false},
                        Form{"dp=2,recompute=layer", RecomputeKind::kFull, true},
                        Form{"dp=2,recompute=selective", RecomputeKind::kSelective, false}}) {
    ASSERT_OK_AND_ASSIGN(GridOptions grid, ParseGridSpec(f.spec));
    EXPECT_EQ(grid.recompute, f.kind) << f.spec;
    EXPECT_EQ(grid.recompute_layers, f.layers) << f.spec;
  }
  EXPECT_THAT(ParseGridSpec("dp=2,recompute=full"),
              StatusIs(StatusCode::kInvalidArgument, "must read recompute, recompute=0"));
  ParallelOptions o;
  for (RecomputeKind k : {RecomputeKind::kNone, RecomputeKind::kFull, RecomputeKind::kSelective}) {
    o.recompute = k;
    EXPECT_EQ(GridOf(o, "", true).recompute, k);
    EXPECT_EQ(GridOf(o, "", true).recompute_layers, k == RecomputeKind::kFull);
    EXPECT_FALSE(GridOf(o, "", false).recompute_layers);
  }
}

// Megatron's full recomputation keeps every block's input (recompute=layer):
// on one stage of gpt3-1.3b-shaped blocks the backward then holds one
// block's activations at a time instead of the whole stage's, so the
// peak drops while no op is recomputed that the per-stage
// checkpoints did not recompute (the kept block inputs are not recomputed).
TEST(RecomputeLayersTest, BlockInputsAreKeptAndTheActivationPeakDrops) {
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(SourcePath("configs/hardware/dgx-a100.yaml")));
  ModelSpec spec = WithBatch(*LookupModel("gpt-tiny"), 8);
  ASSERT_OK_AND_ASSIGN(Module seq, BuildModel(spec));
  ASSERT_OK(InferTypes(seq));
  const ModelSharding t = TransformerShardingOf(ResolveTransformerOptions(spec.transformer));
  ASSERT_OK_AND_ASSIGN(std::vector<ParamRule> rules, ParseParamRules(t.rules));
  ParallelOptions po;
  po.dp = 2;
  po.microbatches = 2;
  po.recompute = RecomputeKind::kFull;
  sim::SimulateOptions so;
  so.record_trace = false;
  so.record_memory_timeline = false;
  auto run = [&](bool per_layer) -> StatusOr<sim::SimulationResult> {
    DISTIR_ASSIGN_OR_RETURN(
        Module m, DistributedCopy(*seq.entry(), GridOf(po, t.layer_pattern, per_layer), rules));
    return sim::Simulate(m, *m.entry(), hw, so);
  };
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult stage, run(false));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult layer, run(true));
  EXPECT_LT(layer.PeakMemoryBytes(), stage.PeakMemoryBytes());
  EXPECT_LT(layer.num_ops, stage.num_ops);
}

}  // namespace
}  // namespace distir::sharding
