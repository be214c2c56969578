// The CPU executor under MPI (run by CTest through `mpirun -np 2` and
// `mpirun -np 4 --oversubscribe`): distributed programs from the sharding
// path (sharding/grid.h, as `distir run` builds them), lowered and run one
// rank per device, reproduce the reference executor.
//
// Each case builds the tiny model and its per-device program on every rank
// (deterministic, so all ranks agree), runs the reference executor on that
// program with seeded random arguments, gives each rank its own device's
// arguments, runs one iteration, gathers every rank's returned values to
// rank 0 and compares them with the reference's (AllClose). Cases that need
// more devices than the job has ranks are skipped. That the per-device
// program computes the sequential model is checked elsewhere, on the same
// grid points and more (tests/unit/sharding/sharding_equivalence_test.cc):
// here the arguments are drawn per device, so replicas of a weight differ,
// which changes nothing for the executor's agreement with the reference.
//
// Tolerance: rtol 1e-4, atol 1e-5. The reference computes every op in double
// and rounds once per op; the executor computes in float (OpenBLAS sgemm,
// float sums), so f32 rounding accumulates within an op: a few hundred ulps at
// most on the tiny models' values of order 1.
//
// The memory test checks the plan against the simulator: each rank's live
// peak equals the simulator's peak for its device, and the arena is no more
// than alignment plus a small fragmentation margin above it.

#include "backend/cpu/cpu_executor.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include "backend/executor.h"
#include "interp/infer_types.h"
#include "interp/reference_executor.h"
#include "models/model_zoo.h"
#include "search/model_grid.h"
#include "sim/hardware_profile.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace distir::backend {
namespace {

constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

int WorldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int WorldSize() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

struct Case {
  std::string model;
  int64_t dp = 1, tp = 1, pp = 1, k = 1;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  bool recompute = false;
  int zero = 0;

  ParallelOptions Options() const {
    ParallelOptions o;
    o.dp = dp;
    o.tp = tp;
    o.pp = pp;
    o.microbatches = k;
    o.schedule = schedule;
    o.recompute = recompute ? RecomputeKind::kFull : RecomputeKind::kNone;
    o.zero_stage = zero;
    return o;
  }
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string name = c.model + "_D" + std::to_string(c.dp) + "T" + std::to_string(c.tp) + "P" +
                     std::to_string(c.pp) + "K" + std::to_string(c.k) + "_" +
                     std::string(ScheduleName(c.schedule));
  if (c.recompute) name += "_recompute";
  if (c.zero) name += "_zero" + std::to_string(c.zero);
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

// A distributed tiny model with the reference executor's values.
struct Fixture {
  Module dist;                     // its entry is the per-device program
  std::vector<HostValue> inputs;   // the program's seeded random arguments
  std::vector<HostValue> results;  // the program's results on the reference executor

  const Function& program() const { return *dist.entry(); }
};

Status BuildFixture(const Case& c, Fixture& f) {
  DISTIR_ASSIGN_OR_RETURN(ModelSpec spec, LookupModel(c.model));
  DISTIR_ASSIGN_OR_RETURN(f.dist, search::DistributeModel(spec, c.Options()));
  RandomInputOptions random;
  random.int_max = 63;  // gpt2-tiny's vocabulary
  DISTIR_ASSIGN_OR_RETURN(f.inputs, RandomInputs(f.program(), 7, random));
  DISTIR_ASSIGN_OR_RETURN(f.results, Execute(f.dist, f.program(), f.inputs));
  return Status::Ok();
}

// Rank 0 gets every rank's returned values, placed at their positions among
// the global function's returns (the values travel as doubles).
std::vector<HostValue> GatherResults(const ExecutionPlan& plan, const std::vector<HostValue>& mine) {
  std::vector<double> packed;
  for (const HostValue& v : mine) {
    packed.insert(packed.end(), v.tensor().values.begin(), v.tensor().values.end());
  }
  const int size = WorldSize();
  int n = static_cast<int>(packed.size());
  std::vector<int> counts(size), displs(size);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(static_cast<size_t>(total));
  MPI_Gatherv(packed.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
              0, MPI_COMM_WORLD);
  std::vector<HostValue> out(plan.global->returns().size());
  if (WorldRank() != 0) return out;
  const auto& global_returns = plan.global->returns();
  for (int r = 0; r < size && r < plan.ranks.num_devices(); ++r) {
    const RankProgram& p = *plan.ProgramOf(r);
    size_t at = static_cast<size_t>(displs[r]);
    for (const Value* ret : p.function->returns()) {
      DenseTensor t;
      t.dtype = ret->type().dtype();
      if (ret->type().is_tensor()) t.shape.assign(ret->type().shape().begin(), ret->type().shape().end());
      t.values.assign(all.begin() + static_cast<int64_t>(at),
                      all.begin() + static_cast<int64_t>(at) + t.NumElements());
      at += static_cast<size_t>(t.NumElements());
      const Value* global = p.origin[ret->id()];
      for (size_t i = 0; i < global_returns.size(); ++i) {
        if (global_returns[i] == global) out[i] = HostValue::OfType(global->type(), t);
      }
    }
  }
  return out;
}

class CpuExecutorTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuExecutorTest, RanksReproduceTheReferenceExecutor) {
  const Case& c = GetParam();
  if (c.dp * c.tp * c.pp > WorldSize()) GTEST_SKIP() << "needs " << c.dp * c.tp * c.pp << " ranks";
  Fixture f;
  ASSERT_OK(BuildFixture(c, f));
  ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(f.dist, f.program()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executor> exec, CreateCpuExecutor(plan, MPI_COMM_WORLD));
  const RankProgram* mine = exec->program();
  ASSERT_OK(exec->SetInputs(mine ? RankInputs(*mine, f.inputs) : std::vector<HostValue>{}));
  ASSERT_OK(exec->Run());
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> outputs, exec->Outputs());
  std::vector<HostValue> gathered = GatherResults(plan, outputs);
  if (WorldRank() != 0) return;
  EXPECT_OK(AllClose(gathered, f.results, kRtol, kAtol));
}

TEST_P(CpuExecutorTest, PlannedPeakMatchesTheSimulator) {
  const Case& c = GetParam();
  if (c.dp * c.tp * c.pp > WorldSize()) GTEST_SKIP() << "needs " << c.dp * c.tp * c.pp << " ranks";
  Fixture f;
  ASSERT_OK(BuildFixture(c, f));
  ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(f.dist, f.program()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executor> exec, CreateCpuExecutor(plan, MPI_COMM_WORLD));
  if (exec->program() == nullptr) return;
  ASSERT_OK_AND_ASSIGN(sim::HardwareProfile hw,
                       sim::LoadHardwareProfile(testing::SourcePath("configs/hardware/dgx2-v100.yaml")));
  ASSERT_OK_AND_ASSIGN(sim::SimulationResult sim, sim::Simulate(f.dist, f.program(), hw));
  int64_t sim_peak = -1;
  for (const sim::DeviceResult& d : sim.devices) {
    if (d.device == exec->device()) sim_peak = d.peak_memory_bytes;
  }
  EXPECT_EQ(exec->live_peak_bytes(), sim_peak) << "on " << exec->device().ToString();
  EXPECT_GE(exec->planned_peak_bytes(), exec->live_peak_bytes());
  // Alignment costs at most 64 bytes per buffer; the best-fit may leave gaps.
  EXPECT_LE(exec->planned_peak_bytes(), exec->live_peak_bytes() * 5 / 4 + 64 * 256);
}

TEST(CpuExecutorTimingTest, TimesIterationsAndLabelsOpsAsTheSimulator) {
  Case c{"mlp-tiny", std::min<int64_t>(2, WorldSize()), 1, 1, 1};
  Fixture f;
  ASSERT_OK(BuildFixture(c, f));
  ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(f.dist, f.program()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executor> exec, CreateCpuExecutor(plan, MPI_COMM_WORLD));
  const RankProgram* mine = exec->program();
  ASSERT_OK(exec->SetInputs(mine ? RandomRankInputs(*mine, 3) : std::vector<HostValue>{}));
  TimingOptions options;
  options.warmup = 1;
  options.iterations = 3;
  options.batch_size = 8;
  options.per_op = true;
  ASSERT_OK_AND_ASSIGN(TimingResult t, TimeExecutor(*exec, MPI_COMM_WORLD, options));
  ASSERT_EQ(t.iteration_s.size(), 3u);
  EXPECT_GT(t.median_s, 0);
  EXPECT_DOUBLE_EQ(t.throughput, 8 / t.median_s);
  EXPECT_GT(t.planned_peak_bytes, 0);
  if (WorldRank() != 0) return;
  ASSERT_EQ(static_cast<int>(t.ops.size()), WorldSize());
  // Every op of rank 0's program, labelled as the simulator labels the global op.
  const Function& program = *plan.ProgramOf(0)->function;
  ASSERT_EQ(t.ops[0].size(), program.ops().size());
  std::set<std::string> sim_labels;
  for (const auto& op : f.program().ops()) {
    sim_labels.insert(op->Name() + (op->num_results() ? " " + op->result(0)->Ref() : ""));
  }
  for (const OpTiming& op : t.ops[0]) {
    EXPECT_TRUE(sim_labels.count(op.label)) << op.label;
    EXPECT_LE(op.start_s, op.end_s);
  }
  const std::string json = OpTimingChromeTraceJson("mlp", plan.ranks, t.ops);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("AllReduce"), std::string::npos);
}

TEST(CpuExecutorInputsTest, RandomRankInputsEqualTheReferenceInputs) {
  Case c{"mlp-tiny", 2, 1, 1, 1};
  Fixture f;
  ASSERT_OK(BuildFixture(c, f));
  ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(f.dist, f.program()));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> global, RandomInputs(f.program(), 11));
  for (const RankProgram& p : plan.programs) {
    EXPECT_EQ(RandomRankInputs(p, 11), RankInputs(p, global));
  }
}

// The executors' own random fill (StoreRandomRankInput, no doubles kept)
// writes the bytes that storing RandomRankInputs writes: integer tokens, f32
// and bf16 parameters (gpt-tiny in mixed precision), on every rank's program.
TEST(CpuExecutorInputsTest, StoreRandomRankInputWritesTheBytesOfRandomRankInputs) {
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel("gpt-tiny"));
  spec.transformer.batch = 2;
  spec.transformer.params_dtype = DType::kBF16;  // bf16 weights beside f32 masters
  ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
  ASSERT_OK(InferTypes(m));
  ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(m, *m.entry()));
  for (const RankProgram& p : plan.programs) {
    const std::vector<HostValue> inputs = RandomRankInputs(p, 5);
    for (int i = 0; i < p.function->num_params(); ++i) {
      const Type& type = p.function->param(i)->type();
      const int64_t bytes = ShapeNumElements(type.shape()) * ByteWidth(type.dtype());
      std::vector<std::byte> direct(static_cast<size_t>(bytes)), stored(direct.size());
      StoreRandomRankInput(p, i, 5, TensorView::OfType(type, direct.data()));
      StoreHostValue(inputs[static_cast<size_t>(i)], TensorView::OfType(type, stored.data()));
      EXPECT_EQ(direct, stored) << p.function->param(i)->Ref();
    }
  }
}

// SetRandomInputs is SetInputs(RandomRankInputs(...)): the same outputs, bit for bit.
TEST(CpuExecutorInputsTest, SetRandomInputsRunsAsSetInputsOfRandomRankInputs) {
  Case c{"mlp-tiny", std::min<int64_t>(2, WorldSize()), 1, 1, 1};
  Fixture f;
  ASSERT_OK(BuildFixture(c, f));
  ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(f.dist, f.program()));
  std::vector<std::vector<HostValue>> outputs;
  for (bool direct : {false, true}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executor> exec, CreateCpuExecutor(plan, MPI_COMM_WORLD));
    const RankProgram* mine = exec->program();
    if (direct) {
      ASSERT_OK(exec->SetRandomInputs(4));
    } else {
      ASSERT_OK(exec->SetInputs(mine ? RandomRankInputs(*mine, 4) : std::vector<HostValue>{}));
    }
    ASSERT_OK(exec->Run());
    ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, exec->Outputs());
    outputs.push_back(std::move(out));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

// A transformer-training step (gpt-tiny, llama-tiny: FlashAttention, Rope,
// CrossEntropy, EmbeddingGrad, ReduceSum, AdamW) lowered to one device and run
// by rank 0 (the other ranks idle) against the reference executor: the loss,
// every weight gradient (returned for the test) and every updated weight.
// Adam's first step moves a weight by about lr·sign(grad), so a gradient of
// order epsilon may round to a different update: the weights get atol 2 lr.
TEST(CpuExecutorTransformerTest, TinyTrainingStepsReproduceTheReferenceExecutor) {
  for (const char* name : {"gpt-tiny", "llama-tiny"}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(name));
    spec.transformer.batch = 2;
    ASSERT_OK_AND_ASSIGN(Module m, BuildModel(spec));
    Function& fn = *m.entry();
    std::vector<Value*> returns = fn.returns();
    const size_t weights_end = returns.size();
    for (int i = 0; i < fn.num_params(); ++i) {
      if (Value* g = fn.LookupValue(fn.param(i)->name() + ".grad")) returns.push_back(g);
    }
    fn.SetReturns(returns);
    ASSERT_OK(InferTypes(m));
    RandomInputOptions random;
    random.int_max = spec.transformer.vocab_size - 1;
    for (int i = 0; i < fn.num_params(); ++i) {
      const Value* p = fn.param(i);
      const std::string& n = p->name();
      if (n.ends_with(".exp_avg") || n.ends_with(".exp_avg_sq")) {  // Adam starts at zero
        DenseTensor zeros{p->type().dtype(), p->type().shape(), {}};
        zeros.values.assign(static_cast<size_t>(p->type().NumElements()), 0.0);
        random.overrides[n] = HostValue::Tensor(zeros, DeviceId(0));
      }
    }
    ASSERT_OK_AND_ASSIGN(std::vector<HostValue> inputs, RandomInputs(fn, 5, random));
    ASSERT_OK_AND_ASSIGN(std::vector<HostValue> expected, Execute(m, fn, inputs));
    ASSERT_OK_AND_ASSIGN(ExecutionPlan plan, PrepareExecution(m, fn));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executor> exec, CreateCpuExecutor(plan, MPI_COMM_WORLD));
    const RankProgram* mine = exec->program();
    ASSERT_OK(exec->SetInputs(mine ? RankInputs(*mine, inputs) : std::vector<HostValue>{}));
    ASSERT_OK(exec->Run());
    if (mine == nullptr) continue;
    ASSERT_OK_AND_ASSIGN(std::vector<HostValue> got, exec->Outputs());
    ASSERT_EQ(got.size(), expected.size());
    const double lr = spec.transformer.lr;
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(fn.returns()[i]->name());
      const bool weight = i > 0 && i < weights_end;
      EXPECT_OK(AllClose(got[i], expected[i], kRtol, weight ? 2 * lr : kAtol));
    }
  }
}

// The cases of the former per-model emitter's test, all distributed by the sharding
// path: data, tensor and pipeline parallelism alone and combined, both
// schedules, recomputation and ZeRO 1-3 on the MLP; GPT-2 (inference: no
// recomputation or ZeRO) with its blocks over the stages.
std::vector<Case> Cases() {
  using S = PipelineSchedule;
  std::vector<Case> cases = {
      {"mlp-tiny", 2, 1, 1, 1},
      {"mlp-tiny", 1, 2, 1, 1},
      {"mlp-tiny", 1, 1, 2, 2, S::kGpipe},
      {"mlp-tiny", 1, 1, 2, 4, S::k1F1B},
      {"mlp-tiny", 1, 1, 2, 2, S::k1F1B, true},
      {"mlp-tiny", 2, 1, 1, 2, S::k1F1B, false, 1},
      {"mlp-tiny", 2, 1, 1, 1, S::k1F1B, false, 2},
      {"mlp-tiny", 2, 1, 1, 1, S::k1F1B, true, 3},
      {"mlp-tiny", 2, 2, 1, 1},
      {"mlp-tiny", 2, 1, 2, 2, S::k1F1B, false, 3},
      {"mlp-tiny", 1, 2, 2, 2, S::kGpipe, true},
      {"mlp-tiny", 4, 1, 1, 1, S::k1F1B, false, 3},
      {"gpt2-tiny", 2, 1, 1, 1},
      {"gpt2-tiny", 1, 2, 1, 1},
      {"gpt2-tiny", 1, 1, 2, 2, S::kGpipe},
      {"gpt2-tiny", 1, 1, 2, 2, S::k1F1B},
      {"gpt2-tiny", 1, 2, 2, 2, S::k1F1B},
      {"gpt2-tiny", 2, 2, 1, 2},
  };
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Parallel, CpuExecutorTest, ::testing::ValuesIn(Cases()), CaseName);

}  // namespace
}  // namespace distir::backend

// GoogleTest under MPI: every rank runs every test (the tests are collective);
// only rank 0 prints, and the exit code is nonzero when any rank failed.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
