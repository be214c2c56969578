// The CPU executor (see cpu_executor.h).

#include "backend/cpu/cpu_executor.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "backend/cpu/comm_ops.h"
#include "backend/cpu/compute_ops.h"
#include "backend/cpu/host_kernels.h"
#include "backend/memory_plan.h"
#include "ir/op_registry.h"

namespace distir::backend {
namespace {

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

struct PlannedOp {
  CpuKernel kernel;  // empty for alias ops
  std::string label;
  bool communication = false;
};

class CpuExecutor final : public Executor {
 public:
  BackendKind backend() const override { return BackendKind::kCpu; }
  DeviceId device() const override { return program_ ? program_->device : DeviceId(); }
  const RankProgram* program() const override { return program_; }

  Status SetInputs(std::span<const HostValue> args) override;
  Status SetRandomInputs(uint64_t seed) override;
  Status Run() override;
  Status RunProfiled(std::vector<OpTiming>& ops) override;
  StatusOr<std::vector<HostValue>> Outputs() const override;
  int64_t planned_peak_bytes() const override { return plan_ ? plan_->arena_bytes() : 0; }
  int64_t live_peak_bytes() const override { return plan_ ? plan_->live_peak_bytes() : 0; }

  // Plans this rank's program (no communication yet).
  Status Plan(const ExecutionPlan& plan);
  // Plans the ops, once the communicators exist.
  Status PlanOps(const ExecutionPlan& plan);

  std::unique_ptr<CommContext> comms;

 private:
  const RankProgram* program_ = nullptr;
  std::optional<MemoryPlan> plan_;
  std::unique_ptr<std::byte, FreeDeleter> arena_;
  std::vector<TensorView> views_;  // by value id
  std::vector<PlannedOp> ops_;
  ScratchPool scratch_;
};

Status CpuExecutor::Plan(const ExecutionPlan& plan) {
  int me = 0;
  MPI_Comm_rank(comms->world(), &me);
  program_ = plan.ProgramOf(me);
  if (program_ == nullptr) return Status::Ok();
  const Function& fn = *program_->function;
  DISTIR_ASSIGN_OR_RETURN(MemoryPlan mp, MemoryPlan::Build(fn));
  plan_ = std::move(mp);
  const auto bytes = static_cast<size_t>(std::max<int64_t>(plan_->arena_bytes(), kArenaAlignment));
  arena_.reset(static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, bytes)));
  if (!arena_)
    return ResourceExhausted() << "cannot allocate the " << bytes << "-byte arena of @"
                               << fn.name();
  std::memset(arena_.get(), 0, bytes);
  views_.resize(static_cast<size_t>(fn.num_values()));
  auto place = [&](const Value& v) {
    views_[v.id()] = TensorView::OfType(v.type(), arena_.get() + plan_->offset_of(v.id()));
  };
  for (const auto& p : fn.params()) place(*p);
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) place(*r);
  }
  return Status::Ok();
}

Status CpuExecutor::PlanOps(const ExecutionPlan& plan) {
  if (program_ == nullptr) return Status::Ok();
  const OpLabeler labels(*plan.global);
  for (const auto& op : program_->function->ops()) {
    std::vector<TensorView> in, out;
    for (const Value* v : op->inputs()) in.push_back(views_[v->id()]);
    for (const auto& r : op->results()) out.push_back(views_[r->id()]);
    PlannedOp planned;
    planned.communication = IsRankCommunication(op->kind());
    planned.label = labels.Label(*op, program_->origin);
    if (planned.communication) {
      DISTIR_ASSIGN_OR_RETURN(planned.kernel,
                              PlanCommOp(*op, program_->device, in, out, *comms, scratch_));
    } else {
      DISTIR_ASSIGN_OR_RETURN(planned.kernel, PlanComputeOp(*op, in, out, scratch_));
    }
    ops_.push_back(std::move(planned));
  }
  return Status::Ok();
}

Status CpuExecutor::SetInputs(std::span<const HostValue> args) {
  const size_t want = program_ ? program_->function->params().size() : 0;
  if (args.size() != want) {
    return InvalidArgument() << "expected " << want << " inputs, got " << args.size();
  }
  for (size_t i = 0; i < want; ++i) {
    const Value& p = *program_->function->param(static_cast<int>(i));
    const TensorView& view = views_[p.id()];
    if (!args[i].has_tensor() || args[i].tensor().shape != view.shape) {
      return InvalidArgument(p.loc())
             << "input for parameter " << p.Ref() << " has type " << args[i].type().ToString()
             << ", expected " << p.type().ToString();
    }
    StoreHostValue(args[i], view);
  }
  return Status::Ok();
}

Status CpuExecutor::SetRandomInputs(uint64_t seed) {
  if (program_ == nullptr) return Status::Ok();
  if (!ParamsAreTensors(*program_)) return Executor::SetRandomInputs(seed);
  for (int i = 0; i < program_->function->num_params(); ++i) {
    StoreRandomRankInput(*program_, i, seed, views_[program_->function->param(i)->id()]);
  }
  return Status::Ok();
}

Status CpuExecutor::Run() {
  for (const PlannedOp& op : ops_) {
    if (op.kernel) DISTIR_RETURN_IF_ERROR(op.kernel());
  }
  return Status::Ok();
}

Status CpuExecutor::RunProfiled(std::vector<OpTiming>& timings) {
  const double t0 = MPI_Wtime();
  for (const PlannedOp& op : ops_) {
    const double start = MPI_Wtime() - t0;
    if (op.kernel) DISTIR_RETURN_IF_ERROR(op.kernel());
    timings.push_back(
        {op.label, op.communication ? "communication" : "compute", start, MPI_Wtime() - t0});
  }
  return Status::Ok();
}

StatusOr<std::vector<HostValue>> CpuExecutor::Outputs() const {
  std::vector<HostValue> out;
  if (program_ == nullptr) return out;
  for (const Value* r : program_->function->returns()) {
    out.push_back(LoadHostValue(views_[r->id()], r->type()));
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<Executor>> CreateCpuExecutor(const ExecutionPlan& plan, MPI_Comm comm) {
  InitHostKernels();
  auto exec = std::make_unique<CpuExecutor>();
  DISTIR_ASSIGN_OR_RETURN(exec->comms, CommContext::Create(comm, plan));
  Status status = exec->Plan(plan);
  if (status.ok()) status = exec->PlanOps(plan);
  // Every rank learns whether any rank failed, so that none waits for a
  // failed peer in the first iteration.
  int failed = status.ok() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, exec->comms->world());
  if (!status.ok()) return status;
  if (failed != 0) return FailedPrecondition() << "another rank failed to plan its program";
  return std::unique_ptr<Executor>(std::move(exec));
}

}  // namespace distir::backend
