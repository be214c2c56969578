// The CUDA executor (backend/gpu/gpu_executor.h) on one rank: mlp-tiny and
// gpt2-tiny on one device, built by the sharding path (sharding/grid.h, as
// `distir run` builds them), run for one iteration on the GPU with seeded
// random arguments, reproduce the reference executor
// (interp/reference_executor.h) on the same program, as the CPU executor's
// test does under MPI. The tests that run GPU work GTEST_SKIP without a CUDA
// device, so the binary builds and passes on machines without one; the
// planner test needs no GPU (planning only builds closures; nothing is
// enqueued).
//
// Tolerance: rtol 1e-4, atol 1e-5, the CPU executor test's. cuBLAS runs f32
// GEMMs in true f32 (no TF32, cublas_gemm.h) and the kernels accumulate in
// f32; only the summation order differs from the host.

#include "backend/gpu/gpu_executor.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>

#include "backend/gpu/device_buffer.h"
#include "backend/gpu/gpu_ops.h"
#include "interp/infer_types.h"
#include "interp/reference_executor.h"
#include "models/model_zoo.h"
#include "search/model_grid.h"
#include "testing/test_util.h"

namespace distir::gpu {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device"

constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

void InitMpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
}

// A one-device distributed program of `model` and the reference's values.
struct Fixture {
  Module dist;                     // its entry is the per-device program
  std::vector<HostValue> inputs;   // the program's seeded random arguments
  std::vector<HostValue> results;  // the program's results on the reference executor

  const Function& program() const { return *dist.entry(); }
};

Status BuildFixture(const std::string& model, Fixture& f) {
  DISTIR_ASSIGN_OR_RETURN(ModelSpec spec, LookupModel(model));
  DISTIR_ASSIGN_OR_RETURN(f.dist, search::DistributeModel(spec, ParallelOptions{}));
  RandomInputOptions random;
  random.int_max = 63;  // gpt2-tiny's vocabulary
  DISTIR_ASSIGN_OR_RETURN(f.inputs, RandomInputs(f.program(), 7, random));
  DISTIR_ASSIGN_OR_RETURN(f.results, Execute(f.dist, f.program(), f.inputs));
  return Status::Ok();
}

TEST(GpuExecutorTest, MlpTinyReproducesTheReferenceExecutor) {
  SKIP_WITHOUT_GPU();
  InitMpi();
  Fixture f;
  ASSERT_OK(BuildFixture("mlp-tiny", f));
  ASSERT_OK_AND_ASSIGN(backend::ExecutionPlan plan, backend::PrepareExecution(f.dist, f.program()));
  ASSERT_EQ(plan.ranks.num_devices(), 1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<backend::Executor> exec, MakeGpuExecutor(plan, MPI_COMM_SELF));
  EXPECT_EQ(exec->backend(), backend::BackendKind::kCuda);
  ASSERT_NE(exec->program(), nullptr);
  EXPECT_GE(exec->planned_peak_bytes(), exec->live_peak_bytes());
  ASSERT_OK(exec->SetInputs(backend::RankInputs(*exec->program(), f.inputs)));
  ASSERT_OK(exec->Run());
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> outputs, exec->Outputs());
  // One device: the rank's returns are the global function's, in order.
  EXPECT_OK(AllClose(outputs, f.results, kRtol, kAtol));
}

TEST(GpuExecutorTest, ProfiledRunLabelsEveryOp) {
  SKIP_WITHOUT_GPU();
  InitMpi();
  Fixture f;
  ASSERT_OK(BuildFixture("mlp-tiny", f));
  ASSERT_OK_AND_ASSIGN(backend::ExecutionPlan plan, backend::PrepareExecution(f.dist, f.program()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<backend::Executor> exec, MakeGpuExecutor(plan, MPI_COMM_SELF));
  ASSERT_OK(exec->SetInputs(backend::RandomRankInputs(*exec->program(), 3)));
  std::vector<backend::OpTiming> ops;
  ASSERT_OK(exec->RunProfiled(ops));
  ASSERT_EQ(ops.size(), exec->program()->function->ops().size());
  for (const backend::OpTiming& op : ops) {
    EXPECT_FALSE(op.label.empty());
    EXPECT_EQ(op.category, "compute");
    EXPECT_LE(op.start_s, op.end_s) << op.label;
  }
}

// SetRandomInputs (drawn straight into a staging buffer of the parameter's
// dtype) is SetInputs(RandomRankInputs(...)): the same outputs, bit for bit.
TEST(GpuExecutorTest, SetRandomInputsRunsAsSetInputsOfRandomRankInputs) {
  SKIP_WITHOUT_GPU();
  InitMpi();
  Fixture f;
  ASSERT_OK(BuildFixture("mlp-tiny", f));
  ASSERT_OK_AND_ASSIGN(backend::ExecutionPlan plan, backend::PrepareExecution(f.dist, f.program()));
  std::vector<std::vector<HostValue>> outputs;
  for (bool direct : {false, true}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<backend::Executor> exec, MakeGpuExecutor(plan, MPI_COMM_SELF));
    if (direct) {
      ASSERT_OK(exec->SetRandomInputs(4));
    } else {
      ASSERT_OK(exec->SetInputs(backend::RandomRankInputs(*exec->program(), 4)));
    }
    ASSERT_OK(exec->Run());
    ASSERT_OK_AND_ASSIGN(std::vector<HostValue> out, exec->Outputs());
    outputs.push_back(std::move(out));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

// GPT-2's attention on the GPU: constants, Split, Transpose, strided-batched
// MatMul, broadcast Div and Add, the causal Where, Softmax, tanh Gelu. The
// causal mask's -1e4 stays far from the tolerances: masked probabilities are 0.
TEST(GpuExecutorTest, Gpt2TinyReproducesTheReferenceExecutor) {
  SKIP_WITHOUT_GPU();
  InitMpi();
  Fixture f;
  ASSERT_OK(BuildFixture("gpt2-tiny", f));
  ASSERT_OK_AND_ASSIGN(backend::ExecutionPlan plan, backend::PrepareExecution(f.dist, f.program()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<backend::Executor> exec, MakeGpuExecutor(plan, MPI_COMM_SELF));
  ASSERT_OK(exec->SetInputs(backend::RankInputs(*exec->program(), f.inputs)));
  for (int iteration = 0; iteration < 2; ++iteration) {  // constants are re-copied each time
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    ASSERT_OK(exec->Run());
    ASSERT_OK_AND_ASSIGN(std::vector<HostValue> outputs, exec->Outputs());
    EXPECT_OK(AllClose(outputs, f.results, kRtol, kAtol));
  }
}

// Plans every op of every rank program of `plan` (communication checked
// only), on views with no storage: what set-up rejects, without a GPU.
Status PlanAllOps(const backend::ExecutionPlan& plan) {
  const GpuOpContext ctx;
  for (const RankProgram& p : plan.programs) {
    const Function& fn = *p.function;
    std::vector<backend::TensorView> views(static_cast<size_t>(fn.num_values()));
    for (const auto& v : fn.params()) views[v->id()] = backend::TensorView::OfType(v->type(), nullptr);
    for (const auto& op : fn.ops()) {
      for (const auto& r : op->results()) views[r->id()] = backend::TensorView::OfType(r->type(), nullptr);
    }
    for (const auto& op : fn.ops()) {
      std::vector<backend::TensorView> in, out;
      for (const Value* v : op->inputs()) in.push_back(views[v->id()]);
      for (const auto& r : op->results()) out.push_back(views[r->id()]);
      const bool comm = op->kind() == OpKind::kSendTo || op->kind() == OpKind::kRecvFrom ||
                        op->kind() == OpKind::kCollective;
      StatusOr<GpuKernel> k = comm ? PlanGpuCommOp(*op, p.device, in, out, nullptr, nullptr)
                                   : PlanGpuComputeOp(*op, in, out, ctx);
      DISTIR_RETURN_IF_ERROR(k.status());
    }
  }
  return Status::Ok();
}

// Every rank program of the built-in models under D, T, P and K passes the
// GPU planner's checks, so `distir run --backend cuda` accepts them; GPT-2
// with T > 1 included (the vocabulary-parallel lookup's index arithmetic on
// the tokens, Sub/Less/Where on i64, is planned by gpu_index_ops.h).
class GpuOpsSupportTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuOpsSupportTest, PlansEveryOpOfEveryRankWithoutAGpu) {
  struct Degrees {
    int64_t dp, tp, pp, k;
  };
  ASSERT_OK_AND_ASSIGN(ModelSpec spec, LookupModel(GetParam()));
  for (const Degrees d : {Degrees{1, 1, 1, 1}, Degrees{2, 1, 1, 1}, Degrees{1, 2, 1, 1},
                          Degrees{1, 1, 2, 2}, Degrees{2, 2, 2, 2}}) {
    ParallelOptions options;
    options.dp = d.dp;
    options.tp = d.tp;
    options.pp = d.pp;
    options.microbatches = d.k;
    SCOPED_TRACE(DescribeParallelOptions(options));
    ASSERT_OK_AND_ASSIGN(Module dist, search::DistributeModel(spec, options));
    ASSERT_OK_AND_ASSIGN(backend::ExecutionPlan plan,
                         backend::PrepareExecution(dist, *dist.entry()));
    EXPECT_OK(PlanAllOps(plan));
  }
}

std::string ModelTestName(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(BuiltInModels, GpuOpsSupportTest,
                         ::testing::Values("mlp-tiny", "gpt2-tiny"), ModelTestName);

TEST(GpuOpsTest, PlansTheLlamaOpsWithoutAGpu) {
  // Sigmoid, Sin, Cos, SigmoidGrad, RMSNormalization and its gradient, in bf16,
  // and a weight gradient written in f32 (MatMulGrad {dw_dtype = f32},
  // Megatron's gradient accumulation fusion) and accumulated by an Add;
  // planning only (no scratch: nothing is allocated, nothing runs).
  Module m = testing::ParseAndInferOrDie(R"(
    func @f(%x: tensor<4x8xbf16, d0>, %s: tensor<8xbf16, d0>, %dy: tensor<4x8xbf16, d0>,
            %w: tensor<8x8xbf16, d0>, %acc: tensor<8x8xf32, d0>) {
      %sig = Sigmoid(%x)
      %sin = Sin(%x)
      %cos = Cos(%x)
      %dsig = SigmoidGrad(%sig, %dy)
      %rms = RMSNormalization(%x, %s) {epsilon = 1e-06}
      %dx, %ds = RMSNormalizationGrad(%x, %s, %dy) {epsilon = 1e-06}
      %gx, %gw = MatMulGrad(%x, %w, %dy) {dw_dtype = f32}
      %sum = Add(%acc, %gw) {gemm_accumulate = 1}
      return %dsig, %sin, %cos, %rms, %dx, %ds, %gx, %sum
    })");
  for (const auto& op : m.entry()->ops()) {
    SCOPED_TRACE(op->Name());
    std::vector<backend::TensorView> in, out;
    for (const Value* v : op->inputs())
      in.push_back(backend::TensorView::OfType(v->type(), nullptr));
    for (const auto& r : op->results()) {
      out.push_back(backend::TensorView::OfType(r->type(), nullptr));
    }
    EXPECT_OK(PlanGpuComputeOp(*op, in, out, GpuOpContext{}).status());
  }
}

// Megatron's gradient accumulation fusion on the GPU: a bf16 MatMulGrad whose
// weight gradient is written in f32 (MatMulGrad {dw_dtype = f32}, cuBLAS's f32
// output of its f32 accumulators) and summed over two microbatches by a
// gemm_accumulate Add, as the reference executor computes them. The operands
// are bf16 values, so only the sums' order differs for dw; dx is rounded to
// bf16 (relative 2^-8).
TEST(GpuExecutorTest, FusedWeightGradientIsAnF32ProductOfBf16Operands) {
  SKIP_WITHOUT_GPU();
  InitMpi();
  Module m = testing::ParseAndInferOrDie(R"(
    func @f(%x0: tensor<16x32xbf16, d0>, %x1: tensor<16x32xbf16, d0>, %w: tensor<32x24xbf16, d0>,
            %dy0: tensor<16x24xbf16, d0>, %dy1: tensor<16x24xbf16, d0>) {
      %gx0, %gw0 = MatMulGrad(%x0, %w, %dy0) {dw_dtype = f32}
      %gx1, %gw1 = MatMulGrad(%x1, %w, %dy1) {dw_dtype = f32}
      %sum = Add(%gw0, %gw1) {gemm_accumulate = 1}
      return %gx0, %gx1, %sum
    })");
  const Function& fn = *m.entry();
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> inputs, RandomInputs(fn, 5, RandomInputOptions{}));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> want, Execute(m, fn, inputs));
  ASSERT_OK_AND_ASSIGN(backend::ExecutionPlan plan, backend::PrepareExecution(m, fn));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<backend::Executor> exec,
                       MakeGpuExecutor(plan, MPI_COMM_SELF));
  ASSERT_OK(exec->SetInputs(backend::RankInputs(*exec->program(), inputs)));
  ASSERT_OK(exec->Run());
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> got, exec->Outputs());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].tensor().dtype, DType::kF32);
  EXPECT_OK(AllClose(got[2], want[2], 1e-5, 1e-5));
  for (int i : {0, 1}) EXPECT_OK(AllClose(got[i], want[i], 8e-3, 1e-3));
}

TEST(GpuOpsTest, RejectsAnOpWithoutAGpuKernelByName) {
  // Trilu with a k operand: the CPU runs it, the GPU planner says which op and why.
  Module m = testing::ParseAndInferOrDie(R"(
    func @f(%x: tensor<4x4xf32, d0>, %k: tensor<i64, d0>) {
      %y = Trilu(%x, %k) : tensor<4x4xf32, d0>
      return %y
    })");
  const Function& fn = *m.entry();
  std::vector<backend::TensorView> in = {
      backend::TensorView::OfType(fn.params()[0]->type(), nullptr),
      backend::TensorView::OfType(fn.params()[1]->type(), nullptr)};
  std::vector<backend::TensorView> out = {
      backend::TensorView::OfType(fn.ops()[0]->results()[0]->type(), nullptr)};
  const StatusOr<GpuKernel> k = PlanGpuComputeOp(*fn.ops()[0], in, out, GpuOpContext{});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kUnimplemented) << k.status().ToString();
  EXPECT_NE(k.status().message().find("the CUDA backend cannot run"), std::string::npos)
      << k.status().ToString();
  EXPECT_NE(k.status().message().find("a k operand"), std::string::npos) << k.status().ToString();
}

}  // namespace
}  // namespace distir::gpu
