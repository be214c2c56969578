// The CUDA executor (see gpu_executor.h). Compiled by the host compiler
// against cudart; the kernels themselves are in the .cu files.

#include "backend/gpu/gpu_executor.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "backend/cpu/comm_ops.h"
#include "backend/gpu/cuda_check.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/memory_plan.h"
#include "ir/op_registry.h"

namespace distir::gpu {
namespace {

using backend::CommContext;
using backend::ExecutionPlan;
using backend::MemoryPlan;
using backend::OpTiming;
using backend::TensorView;

struct PlannedOp {
  const Op* op = nullptr;
  GpuKernel kernel;  // empty for alias ops (and comm ops until the NCCL set-up)
  std::string label;
  bool communication = false;
};

// Every rank learns whether any rank failed (collective over `comm`).
Status AgreeOnFailure(const Status& status, MPI_Comm comm, const char* stage) {
  int failed = status.ok() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (!status.ok()) return status;
  if (failed != 0) return FailedPrecondition() << "another rank failed " << stage;
  return Status::Ok();
}

class GpuExecutor final : public backend::Executor {
 public:
  ~GpuExecutor() override;

  backend::BackendKind backend() const override { return backend::BackendKind::kCuda; }
  DeviceId device() const override { return program_ ? program_->device : DeviceId(); }
  const RankProgram* program() const override { return program_; }

  Status SetInputs(std::span<const HostValue> args) override;
  Status SetRandomInputs(uint64_t seed) override;
  Status Run() override;
  Status RunProfiled(std::vector<OpTiming>& ops) override;
  StatusOr<std::vector<HostValue>> Outputs() const override;
  int64_t planned_peak_bytes() const override { return plan_ ? plan_->arena_bytes() : 0; }
  int64_t live_peak_bytes() const override { return plan_ ? plan_->live_peak_bytes() : 0; }

  // Selects the GPU, plans memory and every op (communication checked only).
  Status Plan(const ExecutionPlan& plan, int local_rank);
  // Collective: creates the NCCL communicators and plans the communication ops.
  Status Connect(const ExecutionPlan& plan);

  std::unique_ptr<CommContext> comms;

 private:
  Status SelectDevice(int local_rank);
  Status PlanOps(const ExecutionPlan& plan);
  Status Enqueue(const PlannedOp& op) const;
  Status Synchronize() const;

  const RankProgram* program_ = nullptr;
  int me_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;  // [iteration start, op 0 start, op 0 end, op 1 start, ...]
  std::unique_ptr<CublasGemm> gemm_;
  std::optional<MemoryPlan> plan_;
  DeviceBuffer arena_;
  std::vector<DeviceBuffer> scratch_;
  std::vector<TensorView> views_;  // by value id; data points into arena_
  std::vector<PlannedOp> ops_;
  MPI_Comm p2p_mpi_ = MPI_COMM_NULL;
  std::unique_ptr<NcclCommunicator> p2p_;
  std::map<std::vector<DeviceId>, std::unique_ptr<NcclCommunicator>> groups_;
  GpuComms gpu_comms_;
};

GpuExecutor::~GpuExecutor() {
  // Work in flight may still use the arena, the handles and the communicators.
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  ops_.clear();
  gemm_.reset();
  p2p_.reset();
  groups_.clear();
  if (p2p_mpi_ != MPI_COMM_NULL) MPI_Comm_free(&p2p_mpi_);
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status GpuExecutor::SelectDevice(int local_rank) {
  const int count = DeviceCount();
  if (count == 0) {
    return FailedPrecondition() << "rank " << me_ << " runs " << program_->device.ToString()
                                << " but no CUDA device is visible";
  }
  DISTIR_CUDA_RETURN_IF_ERROR(cudaSetDevice(local_rank % count));
  DISTIR_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  DISTIR_ASSIGN_OR_RETURN(gemm_, CublasGemm::Create(stream_));
  return Status::Ok();
}

Status GpuExecutor::Plan(const ExecutionPlan& plan, int local_rank) {
  MPI_Comm_rank(comms->world(), &me_);
  program_ = plan.ProgramOf(me_);
  if (program_ == nullptr) return Status::Ok();
  DISTIR_RETURN_IF_ERROR(SelectDevice(local_rank));
  const Function& fn = *program_->function;
  DISTIR_ASSIGN_OR_RETURN(MemoryPlan mp, MemoryPlan::Build(fn));
  plan_ = std::move(mp);
  const auto bytes =
      static_cast<size_t>(std::max<int64_t>(plan_->arena_bytes(), backend::kArenaAlignment));
  StatusOr<DeviceBuffer> arena = DeviceBuffer::Allocate(bytes);
  if (!arena.ok()) {
    return ResourceExhausted() << "cannot allocate the " << bytes << "-byte arena of @" << fn.name()
                               << " on the GPU: " << arena.status().message();
  }
  arena_ = std::move(*arena);
  // Zeroed as the CPU arena is, so a program reading a value before writing it agrees.
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(arena_.data(), 0, bytes, stream_));
  auto* base = static_cast<std::byte*>(arena_.data());
  views_.resize(static_cast<size_t>(fn.num_values()));
  auto place = [&](const Value& v) {
    views_[v.id()] = TensorView::OfType(v.type(), base + plan_->offset_of(v.id()));
  };
  for (const auto& p : fn.params()) place(*p);
  for (const auto& op : fn.ops()) {
    for (const auto& r : op->results()) place(*r);
  }
  return PlanOps(plan);
}

Status GpuExecutor::PlanOps(const ExecutionPlan& plan) {
  const backend::OpLabeler labels(*plan.global);
  const GpuOpContext ctx{stream_, gemm_.get(), &scratch_};
  for (const auto& op : program_->function->ops()) {
    std::vector<TensorView> in, out;
    for (const Value* v : op->inputs()) in.push_back(views_[v->id()]);
    for (const auto& r : op->results()) out.push_back(views_[r->id()]);
    PlannedOp planned;
    planned.op = op.get();
    planned.communication = backend::IsRankCommunication(op->kind());
    planned.label = labels.Label(*op, program_->origin);
    if (planned.communication) {
      DISTIR_ASSIGN_OR_RETURN(planned.kernel,
                              PlanGpuCommOp(*op, program_->device, in, out, nullptr, stream_));
    } else {
      DISTIR_ASSIGN_OR_RETURN(planned.kernel, PlanGpuComputeOp(*op, in, out, ctx));
    }
    ops_.push_back(std::move(planned));
  }
  events_.resize(2 * ops_.size() + 1, nullptr);
  for (cudaEvent_t& e : events_) DISTIR_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
  return Status::Ok();
}

bool HasPointToPoint(const ExecutionPlan& plan) {
  for (const RankProgram& p : plan.programs) {
    for (const auto& op : p.function->ops()) {
      if (op->kind() == OpKind::kSendTo || op->kind() == OpKind::kRecvFrom) return true;
    }
  }
  return false;
}

// The groups of all programs' Collectives, in the order CommContext splits them.
std::set<std::vector<DeviceId>> CollectiveGroups(const ExecutionPlan& plan) {
  std::set<std::vector<DeviceId>> groups;
  for (const RankProgram& p : plan.programs) {
    for (const auto& op : p.function->ops()) {
      if (op->kind() == OpKind::kCollective) groups.insert(op->FindAttr("group")->AsDevices());
    }
  }
  return groups;
}

Status GpuExecutor::Connect(const ExecutionPlan& plan) {
  // Every rank makes the same sequence of collective calls: the split for the
  // point-to-point communicator (idle ranks opt out), then one NCCL set-up
  // per group, in the same sorted order, by its members only.
  if (HasPointToPoint(plan)) {
    if (MPI_Comm_split(comms->world(), program_ ? 0 : MPI_UNDEFINED, me_, &p2p_mpi_) !=
        MPI_SUCCESS) {
      return Internal() << "MPI_Comm_split for the point-to-point communicator failed";
    }
    if (program_ != nullptr) {
      DISTIR_ASSIGN_OR_RETURN(p2p_, NcclCommunicator::Create(p2p_mpi_));
    }
  }
  for (const std::vector<DeviceId>& g : CollectiveGroups(plan)) {
    const MPI_Comm sub = comms->GroupComm(g);
    if (sub == MPI_COMM_NULL) continue;
    DISTIR_ASSIGN_OR_RETURN(groups_[g], NcclCommunicator::Create(sub));
  }
  if (program_ == nullptr) return Status::Ok();
  gpu_comms_.p2p = p2p_.get();
  gpu_comms_.ranks = plan.ranks;
  for (const auto& [g, c] : groups_) gpu_comms_.groups[g] = c.get();
  for (PlannedOp& planned : ops_) {
    if (!planned.communication) continue;
    std::vector<TensorView> in, out;
    for (const Value* v : planned.op->inputs()) in.push_back(views_[v->id()]);
    for (const auto& r : planned.op->results()) out.push_back(views_[r->id()]);
    DISTIR_ASSIGN_OR_RETURN(planned.kernel, PlanGpuCommOp(*planned.op, program_->device, in, out,
                                                          &gpu_comms_, stream_));
  }
  return Status::Ok();
}

Status GpuExecutor::Enqueue(const PlannedOp& op) const {
  if (!op.kernel) return Status::Ok();
  Status s = op.kernel();
  if (!s.ok()) s.Prefix(op.label + ": ");
  return s;
}

Status GpuExecutor::Synchronize() const {
  if (stream_ != nullptr) DISTIR_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return Status::Ok();
}

Status GpuExecutor::SetInputs(std::span<const HostValue> args) {
  const size_t want = program_ ? program_->function->params().size() : 0;
  if (args.size() != want)
    return InvalidArgument() << "expected " << want << " inputs, got " << args.size();
  DISTIR_RETURN_IF_ERROR(Synchronize());
  for (size_t i = 0; i < want; ++i) {
    const Value& p = *program_->function->param(static_cast<int>(i));
    const TensorView& view = views_[p.id()];
    if (!args[i].has_tensor() || args[i].tensor().shape != view.shape) {
      return InvalidArgument(p.loc())
             << "input for parameter " << p.Ref() << " has type " << args[i].type().ToString()
             << ", expected " << p.type().ToString();
    }
    // Converted to the parameter's dtype on the host, exactly as the CPU executor stores it.
    std::vector<std::byte> host(static_cast<size_t>(view.bytes()));
    TensorView staged = view;
    staged.data = host.data();
    backend::StoreHostValue(args[i], staged);
    // On the executor's (non-blocking) stream, then waited for: `host` dies here.
    DISTIR_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(view.data, host.data(), host.size(), cudaMemcpyHostToDevice, stream_));
    DISTIR_RETURN_IF_ERROR(Synchronize());
  }
  return Status::Ok();
}

Status GpuExecutor::SetRandomInputs(uint64_t seed) {
  if (program_ == nullptr) return Status::Ok();
  if (!backend::ParamsAreTensors(*program_)) return Executor::SetRandomInputs(seed);
  DISTIR_RETURN_IF_ERROR(Synchronize());
  for (int i = 0; i < program_->function->num_params(); ++i) {
    const TensorView& view = views_[program_->function->param(i)->id()];
    // Uninitialised: the drawing threads touch (and so page in) their own chunks.
    std::unique_ptr<std::byte[]> host(new std::byte[static_cast<size_t>(view.bytes())]);
    TensorView staged = view;
    staged.data = host.get();
    StoreRandomRankInput(*program_, i, seed, staged);
    DISTIR_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        view.data, host.get(), static_cast<size_t>(view.bytes()), cudaMemcpyHostToDevice, stream_));
    DISTIR_RETURN_IF_ERROR(Synchronize());
  }
  return Status::Ok();
}

Status GpuExecutor::Run() {
  for (const PlannedOp& op : ops_) DISTIR_RETURN_IF_ERROR(Enqueue(op));
  return Synchronize();
}

Status GpuExecutor::RunProfiled(std::vector<OpTiming>& timings) {
  if (program_ == nullptr) return Status::Ok();
  DISTIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[0], stream_));
  for (size_t i = 0; i < ops_.size(); ++i) {
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[2 * i + 1], stream_));
    DISTIR_RETURN_IF_ERROR(Enqueue(ops_[i]));
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[2 * i + 2], stream_));
  }
  DISTIR_RETURN_IF_ERROR(Synchronize());
  for (size_t i = 0; i < ops_.size(); ++i) {
    float start_ms = 0, end_ms = 0;
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&start_ms, events_[0], events_[2 * i + 1]));
    DISTIR_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&end_ms, events_[0], events_[2 * i + 2]));
    timings.push_back({ops_[i].label, ops_[i].communication ? "communication" : "compute",
                       start_ms * 1e-3, end_ms * 1e-3});
  }
  return Status::Ok();
}

StatusOr<std::vector<HostValue>> GpuExecutor::Outputs() const {
  std::vector<HostValue> out;
  if (program_ == nullptr) return out;
  DISTIR_RETURN_IF_ERROR(Synchronize());
  for (const Value* r : program_->function->returns()) {
    const TensorView& view = views_[r->id()];
    std::vector<std::byte> host(static_cast<size_t>(view.bytes()));
    DISTIR_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(host.data(), view.data, host.size(), cudaMemcpyDeviceToHost, stream_));
    DISTIR_RETURN_IF_ERROR(Synchronize());
    TensorView staged = view;
    staged.data = host.data();
    out.push_back(backend::LoadHostValue(staged, r->type()));
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<backend::Executor>> MakeGpuExecutor(const ExecutionPlan& plan,
                                                             MPI_Comm comm) {
  auto exec = std::make_unique<GpuExecutor>();
  DISTIR_ASSIGN_OR_RETURN(exec->comms, CommContext::Create(comm, plan));
  StatusOr<int> local = backend::NodeLocalRank(exec->comms->world());
  Status status = local.status();
  if (status.ok()) status = exec->Plan(plan, *local);
  // Agree before any NCCL set-up, so that no rank waits in ncclCommInitRank
  // for a peer that has already given up.
  DISTIR_RETURN_IF_ERROR(AgreeOnFailure(status, exec->comms->world(), "to plan its program"));
  status = exec->Connect(plan);
  DISTIR_RETURN_IF_ERROR(AgreeOnFailure(status, exec->comms->world(), "to set up NCCL"));
  return std::unique_ptr<backend::Executor>(std::move(exec));
}

}  // namespace distir::gpu
