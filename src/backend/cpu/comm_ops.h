// Planning of per-rank communication on the CPU: SendTo and RecvFrom as MPI
// point-to-point messages, each `Collective` as the matching MPI collective on
// a sub-communicator of its group.
//
// CommContext owns those communicators. They are created once, before the
// first iteration, by every MPI rank together (MPI_Comm_split is collective),
// for the union of the groups of all rank programs in a fixed order, so that
// every rank makes the same calls whether or not it belongs to a group. In a
// sub-communicator the ranks are ordered by position in the group, which is
// the order in which AllGather concatenates and ReduceScatter hands out chunks.
//
// Supported kinds: AllReduce, AllGather, ReduceScatter (any axis), Broadcast,
// Reduce (root holding an input). Reductions sum f32, f64, i32 and i64;
// f16/bf16 reductions are Unimplemented (moves of them are fine).

#pragma once

#include <mpi.h>

#include <map>
#include <memory>
#include <span>
#include <vector>

#include "backend/cpu/compute_ops.h"
#include "backend/executor.h"

namespace distir::backend {

class CommContext {
 public:
  /// Duplicates `parent` (so the executor's messages never match anyone
  /// else's) and splits one communicator per distinct group of `programs`.
  /// Collective over `parent`. Errors: a failing MPI call.
  static StatusOr<std::unique_ptr<CommContext>> Create(MPI_Comm parent, const ExecutionPlan& plan);
  ~CommContext();
  CommContext(const CommContext&) = delete;
  CommContext& operator=(const CommContext&) = delete;

  /// The duplicate of the parent communicator (point-to-point traffic).
  MPI_Comm world() const { return world_; }
  const RankMap& ranks() const { return ranks_; }
  /// The communicator of `group`; MPI_COMM_NULL when this rank is not in it
  /// or the group was not in the plan.
  MPI_Comm GroupComm(const std::vector<DeviceId>& group) const;

 private:
  CommContext() = default;
  MPI_Comm world_ = MPI_COMM_NULL;
  RankMap ranks_;
  std::map<std::vector<DeviceId>, MPI_Comm> groups_;
};

/// Plans communication op `op` (SendTo, RecvFrom or Collective) run by device
/// `self` on views `in` and `out` (a token result's view aliases its input).
/// Errors: Unimplemented for a kind or dtype listed as unsupported above;
/// InvalidArgument for a peer or group that does not contain `self`.
StatusOr<CpuKernel> PlanCommOp(const Op& op, DeviceId self, std::span<const TensorView> in,
                               std::span<const TensorView> out, const CommContext& comms,
                               ScratchPool& scratch);

}  // namespace distir::backend
