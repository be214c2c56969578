// Communication on the CPU (see comm_ops.h). Every MPI call's error code is
// turned into a Status naming the op; the executor's communicators return
// errors instead of aborting (MPI_ERRORS_RETURN).

#include "backend/cpu/comm_ops.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "backend/cpu/host_kernels.h"
#include "backend/shape_math.h"
#include "ir/op_alias.h"

namespace distir::backend {
namespace {

using Views = std::span<const TensorView>;

Status MpiStatus(int code, const char* call, const SourceLoc& loc) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return Internal(loc) << call << " failed: " << std::string(text, static_cast<size_t>(len));
}

#define DISTIR_MPI_RETURN_IF_ERROR(call, loc) \
  DISTIR_RETURN_IF_ERROR(MpiStatus((call), #call, (loc)))

std::optional<MPI_Datatype> ReduceType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    default:
      return std::nullopt;
  }
}

int Count(int64_t n) { return static_cast<int>(n); }

struct CollectiveSite {
  const Op* op;
  MPI_Comm comm;
  int position;  // self's position in the group
  int size;
};

StatusOr<CpuKernel> PlanAllReduce(const CollectiveSite& s, const TensorView& x,
                                  const TensorView& y) {
  auto type = ReduceType(x.dtype);
  if (!type) return Unimplemented(s.op->loc()) << "AllReduce of " << DTypeName(x.dtype) << " on the CPU";
  const SourceLoc loc = s.op->loc();
  const MPI_Comm comm = s.comm;
  const MPI_Datatype t = *type;
  return CpuKernel([=] {
    DISTIR_MPI_RETURN_IF_ERROR(MPI_Allreduce(x.data, y.data, Count(x.num_elements()), t, MPI_SUM, comm), loc);
    return Status::Ok();
  });
}

// AllGather along `axis`: MPI gathers along the outermost dimension, so for
// another axis the chunks land in scratch and are interleaved afterwards.
StatusOr<CpuKernel> PlanAllGather(const CollectiveSite& s, const TensorView& x,
                                  const TensorView& y, ScratchPool& scratch) {
  const int64_t axis = s.op->GetInt("axis", 0) < 0 ? s.op->GetInt("axis", 0) + x.rank()
                                                   : s.op->GetInt("axis", 0);
  const auto [outer, inner] = OuterInner(x.shape, axis);
  const int64_t eb = ByteWidth(x.dtype), bytes = x.bytes(), len = x.shape[axis];
  std::byte* staging = outer == 1 ? y.data : scratch.Allocate(bytes * s.size);
  const SourceLoc loc = s.op->loc();
  const MPI_Comm comm = s.comm;
  const int n = s.size;
  return CpuKernel([=] {
    DISTIR_MPI_RETURN_IF_ERROR(
        MPI_Allgather(x.data, Count(bytes), MPI_BYTE, staging, Count(bytes), MPI_BYTE, comm), loc);
    for (int r = 0; outer != 1 && r < n; ++r) {
      CopyAxisRange(outer, inner, eb, staging + r * bytes, len, 0, len, y.data, len * n, r * len);
    }
    return Status::Ok();
  });
}

// ReduceScatter along `axis`: chunk r of the sum goes to position r. For an
// inner axis the chunks are first packed contiguously in scratch.
StatusOr<CpuKernel> PlanReduceScatter(const CollectiveSite& s, const TensorView& x,
                                      const TensorView& y, ScratchPool& scratch) {
  auto type = ReduceType(x.dtype);
  if (!type) return Unimplemented(s.op->loc()) << "ReduceScatter of " << DTypeName(x.dtype) << " on the CPU";
  const int64_t axis = s.op->GetInt("axis", 0) < 0 ? s.op->GetInt("axis", 0) + x.rank()
                                                   : s.op->GetInt("axis", 0);
  const auto [outer, inner] = OuterInner(x.shape, axis);
  const int64_t eb = ByteWidth(x.dtype), chunk = y.bytes(), len = y.shape[axis];
  std::byte* packed = outer == 1 ? x.data : scratch.Allocate(x.bytes());
  const SourceLoc loc = s.op->loc();
  const MPI_Comm comm = s.comm;
  const MPI_Datatype t = *type;
  const int n = s.size;
  return CpuKernel([=] {
    for (int r = 0; outer != 1 && r < n; ++r) {
      CopyAxisRange(outer, inner, eb, x.data, len * n, r * len, len, packed + r * chunk, len, 0);
    }
    DISTIR_MPI_RETURN_IF_ERROR(
        MPI_Reduce_scatter_block(packed, y.data, Count(y.num_elements()), t, MPI_SUM, comm), loc);
    return Status::Ok();
  });
}

// Broadcast: the source is position 0 of the group (the input's device).
CpuKernel PlanBroadcast(const CollectiveSite& s, Views in, const TensorView& y, bool token) {
  const bool root = !in.empty();
  const TensorView x = root ? in[0] : y;
  const SourceLoc loc = s.op->loc();
  const MPI_Comm comm = s.comm;
  return [=] {
    DISTIR_MPI_RETURN_IF_ERROR(MPI_Bcast(x.data, Count(x.bytes()), MPI_BYTE, 0, comm), loc);
    if (root && !token) std::memcpy(y.data, x.data, static_cast<size_t>(x.bytes()));
    return Status::Ok();
  };
}

StatusOr<CpuKernel> PlanReduce(const CollectiveSite& s, Views in, const TensorView& y,
                               const std::vector<DeviceId>& group, bool token) {
  const DeviceId root_device = s.op->FindAttr("device")->AsDevice();
  const int root = static_cast<int>(std::find(group.begin(), group.end(), root_device) - group.begin());
  if (in.empty()) return Unimplemented(s.op->loc()) << "Reduce to a root that holds no input, on the CPU";
  auto type = ReduceType(in[0].dtype);
  if (!type) return Unimplemented(s.op->loc()) << "Reduce of " << DTypeName(in[0].dtype) << " on the CPU";
  const TensorView x = in[0];
  const SourceLoc loc = s.op->loc();
  const MPI_Comm comm = s.comm;
  const MPI_Datatype t = *type;
  return CpuKernel([=] {
    DISTIR_MPI_RETURN_IF_ERROR(MPI_Reduce(x.data, token ? nullptr : y.data,
                                          Count(x.num_elements()), t, MPI_SUM, root, comm),
                               loc);
    return Status::Ok();
  });
}

StatusOr<CpuKernel> PlanCollective(const Op& op, DeviceId self, Views in, Views out,
                                   const CommContext& comms, ScratchPool& scratch) {
  const std::vector<DeviceId>& group = op.FindAttr("group")->AsDevices();
  const auto it = std::find(group.begin(), group.end(), self);
  const MPI_Comm comm = comms.GroupComm(group);
  if (it == group.end() || comm == MPI_COMM_NULL) {
    return InvalidArgument(op.loc()) << "Collective's group does not contain " << self.ToString();
  }
  const CollectiveSite site{&op, comm, static_cast<int>(it - group.begin()),
                            static_cast<int>(group.size())};
  const std::string& kind = op.FindAttr("kind")->AsString();
  const bool token = IsTokenResult(op, self);
  if (kind == "Broadcast") return PlanBroadcast(site, in, out[0], token);
  if (kind == "Reduce") return PlanReduce(site, in, out[0], group, token);
  if (in.empty()) return Unimplemented(op.loc()) << kind << " without an input on the CPU";
  if (kind == "AllReduce") return PlanAllReduce(site, in[0], out[0]);
  if (kind == "AllGather") return PlanAllGather(site, in[0], out[0], scratch);
  if (kind == "ReduceScatter") return PlanReduceScatter(site, in[0], out[0], scratch);
  return Unimplemented(op.loc()) << "the CPU backend cannot run collective " << kind;
}

}  // namespace

StatusOr<std::unique_ptr<CommContext>> CommContext::Create(MPI_Comm parent,
                                                           const ExecutionPlan& plan) {
  std::unique_ptr<CommContext> c(new CommContext());
  c->ranks_ = plan.ranks;
  DISTIR_MPI_RETURN_IF_ERROR(MPI_Comm_dup(parent, &c->world_), SourceLoc());
  MPI_Comm_set_errhandler(c->world_, MPI_ERRORS_RETURN);
  std::set<std::vector<DeviceId>> groups;  // ordered: the same sequence of splits on every rank
  for (const RankProgram& p : plan.programs) {
    for (const auto& op : p.function->ops()) {
      if (op->kind() == OpKind::kCollective) groups.insert(op->FindAttr("group")->AsDevices());
    }
  }
  int me = 0;
  MPI_Comm_rank(c->world_, &me);
  const DeviceId self = plan.ranks.DeviceOf(me);
  for (const std::vector<DeviceId>& g : groups) {
    const auto it = std::find(g.begin(), g.end(), self);
    const bool member = self.has_value() && it != g.end();
    MPI_Comm comm = MPI_COMM_NULL;
    DISTIR_MPI_RETURN_IF_ERROR(
        MPI_Comm_split(c->world_, member ? 0 : MPI_UNDEFINED,
                       member ? static_cast<int>(it - g.begin()) : 0, &comm),
        SourceLoc());
    if (member) {
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      c->groups_[g] = comm;
    }
  }
  return c;
}

CommContext::~CommContext() {
  for (auto& [group, comm] : groups_) MPI_Comm_free(&comm);
  if (world_ != MPI_COMM_NULL) MPI_Comm_free(&world_);
}

MPI_Comm CommContext::GroupComm(const std::vector<DeviceId>& group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? MPI_COMM_NULL : it->second;
}

StatusOr<CpuKernel> PlanCommOp(const Op& op, DeviceId self, std::span<const TensorView> in,
                               std::span<const TensorView> out, const CommContext& comms,
                               ScratchPool& scratch) {
  if (op.kind() == OpKind::kCollective) return PlanCollective(op, self, in, out, comms, scratch);
  const DeviceId peer_device = op.FindAttr("device")->AsDevice();
  const std::optional<int> peer = comms.ranks().RankOf(peer_device);
  if (!peer) return InvalidArgument(op.loc()) << op.Name() << " peer " << peer_device.ToString() << " runs no program";
  const SourceLoc loc = op.loc();
  const MPI_Comm world = comms.world();
  const int p = *peer;
  // Pairs of ranks exchange messages in program order on tag 0; MPI keeps
  // messages between a pair in order, as the deadlock check assumes.
  if (op.kind() == OpKind::kSendTo) {
    const TensorView x = in[0];
    return CpuKernel([=] {
      DISTIR_MPI_RETURN_IF_ERROR(MPI_Send(x.data, Count(x.bytes()), MPI_BYTE, p, 0, world), loc);
      return Status::Ok();
    });
  }
  const TensorView y = out[0];
  return CpuKernel([=] {
    DISTIR_MPI_RETURN_IF_ERROR(
        MPI_Recv(y.data, Count(y.bytes()), MPI_BYTE, p, 0, world, MPI_STATUS_IGNORE), loc);
    return Status::Ok();
  });
}

}  // namespace distir::backend
