// The CPU executor's op planners (compute_ops.h) against the reference
// executor, op by op: every value of a small program gets its own buffer,
// each op is planned on views of them and run in program order, and the
// returned values are compared with Execute()'s. Covers the LLaMA building
// blocks (Sigmoid, Sin, Cos, SigmoidGrad, RMSNormalization and its gradient)
// in f32 and in bf16 (computed in f32 scratch copies), the integer index ops
// of a vocabulary-parallel lookup, and the cases the planners reject.

#include "backend/cpu/compute_ops.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "interp/reference_executor.h"
#include "testing/test_util.h"

namespace distir::backend {
namespace {

using ::distir::testing::ParseAndInferOrDie;
using ::distir::testing::StatusIs;

// Runs `fn` on `args` through PlanComputeOp. REQUIRES: no alias-only ops
// (their results live on their input's buffer only under a memory plan).
class PlannedRun {
 public:
  StatusOr<std::vector<HostValue>> Run(const Function& fn, const std::vector<HostValue>& args) {
    for (int i = 0; i < fn.num_params(); ++i) StoreHostValue(args[i], ViewOf(fn.param(i)));
    for (const auto& op : fn.ops()) {
      std::vector<TensorView> in, out;
      for (const Value* v : op->inputs()) in.push_back(ViewOf(v));
      for (const auto& r : op->results()) out.push_back(ViewOf(r.get()));
      DISTIR_ASSIGN_OR_RETURN(CpuKernel kernel, PlanComputeOp(*op, in, out, scratch_));
      if (kernel) DISTIR_RETURN_IF_ERROR(kernel());
    }
    std::vector<HostValue> results;
    for (const Value* v : fn.returns()) results.push_back(LoadHostValue(ViewOf(v), v->type()));
    return results;
  }

 private:
  TensorView ViewOf(const Value* v) {
    auto it = views_.find(v);
    if (it != views_.end()) return it->second;
    storage_.push_back(std::make_unique<std::byte[]>(static_cast<size_t>(v->type().SizeInBytes())));
    return views_[v] = TensorView::OfType(v->type(), storage_.back().get());
  }

  std::map<const Value*, TensorView> views_;
  std::vector<std::unique_ptr<std::byte[]>> storage_;
  ScratchPool scratch_;
};

void ExpectPlannedMatchesReference(const std::string& text, double rtol, double atol,
                                   const RandomInputOptions& options = {}) {
  const Module m = ParseAndInferOrDie(text);
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> args, RandomInputs(*m.entry(), 3, options));
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> want, Execute(m, *m.entry(), args));
  PlannedRun run;
  ASSERT_OK_AND_ASSIGN(std::vector<HostValue> got, run.Run(*m.entry(), args));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("result " + std::to_string(i));
    EXPECT_OK(AllClose(got[i], want[i], rtol, atol));
  }
}

std::string LlamaOps(const std::string& dtype) {
  const std::string t = "tensor<4x8x" + dtype + ", d0>";
  return "func @f(%x: " + t + ", %s: tensor<8x" + dtype + ", d0>, %dy: " + t + R"() {
    %sig = Sigmoid(%x)
    %sin = Sin(%x)
    %cos = Cos(%x)
    %dsig = SigmoidGrad(%sig, %dy)
    %rms = RMSNormalization(%x, %s) {epsilon = 1e-06}
    %dx, %ds = RMSNormalizationGrad(%x, %s, %dy) {epsilon = 1e-06}
    return %sig, %sin, %cos, %dsig, %rms, %dx, %ds
  })";
}

TEST(ComputeOpsTest, LlamaOpsInF32MatchTheReference) {
  // The reference rounds once per op from double; float loops round per step.
  ExpectPlannedMatchesReference(LlamaOps("f32"), 1e-5, 1e-6);
}

TEST(ComputeOpsTest, LlamaOpsInBF16MatchTheReference) {
  // Both round each result to bf16 (8 significant bits): within about one ulp.
  ExpectPlannedMatchesReference(LlamaOps("bf16"), 1e-2, 1e-2);
}

// The masked ids of a vocabulary-parallel lookup (sharding/partition.cc):
// shift, compare, select, as index_ops.h plans them, with broadcasting.
std::string IndexOps(const std::string& dtype) {
  const std::string t = "tensor<4x8x" + dtype + ", d0>";
  return "func @f(%ids: " + t + ", %lo: tensor<1x" + dtype + ", d0>, %rows: tensor<8x" + dtype +
         R"(, d0>) {
    %s = Sub(%ids, %lo)
    %below = Less(%s, %lo)
    %t = Where(%below, %rows, %s)
    %in = Less(%t, %rows)
    %eq = Equal(%ids, %t)
    %out = Not(%in)
    %m = Mul(%t, %rows)
    %a = Add(%m, %ids)
    return %s, %t, %in, %eq, %out, %a
  })";
}

TEST(ComputeOpsTest, IndexOpsMatchTheReference) {
  RandomInputOptions ids;
  ids.int_min = -20;
  ids.int_max = 20;
  for (const char* dtype : {"i64", "i32"}) {
    SCOPED_TRACE(dtype);
    ExpectPlannedMatchesReference(IndexOps(dtype), 0, 0, ids);
  }
}

TEST(ComputeOpsTest, RMSNormalizationOutsideTheLastAxisOrWithABroadcastScaleIsUnimplemented) {
  const Module m = ParseAndInferOrDie(R"(
  func @f(%x: tensor<4x8xf32, d0>, %s: tensor<4x8xf32, d0>, %one: tensor<1xf32, d0>) {
    %a = RMSNormalization(%x, %s) {axis = 0}
    %b = RMSNormalization(%x, %one)
    return %a, %b
  })");
  // Planning only: no data is touched, so the views need no storage.
  auto plan = [](const Op& op) {
    const std::vector<TensorView> in = {TensorView::OfType(op.input(0)->type(), nullptr),
                                        TensorView::OfType(op.input(1)->type(), nullptr)};
    const std::vector<TensorView> out = {TensorView::OfType(op.result(0)->type(), nullptr)};
    ScratchPool scratch;
    return PlanComputeOp(op, in, out, scratch).status();
  };
  EXPECT_THAT(plan(*m.entry()->ops()[0]),
              StatusIs(StatusCode::kUnimplemented, "only the last axis is supported, got axis 0"));
  EXPECT_THAT(plan(*m.entry()->ops()[1]),
              StatusIs(StatusCode::kUnimplemented, "a scale broadcast along the row"));
}

}  // namespace
}  // namespace distir::backend
