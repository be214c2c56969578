// Planning of one rank program's ops on the GPU, for the GPU executor
// (gpu_executor.h): each op becomes a closure over its operands' places in the
// device arena, built once before the first iteration, that enqueues the op
// on the executor's stream (compute on gpu_kernels.h and cuBLAS, communication
// on NCCL). The counterpart of backend/cpu/compute_ops.h and comm_ops.h.
//
// Everything that can be rejected is rejected here, at set-up: an op kind, a
// dtype or a case (broadcasting, a non-last softmax axis, a collective kind)
// without a GPU kernel is an Unimplemented error located at the op and naming
// it, never a failure while running. Views (backend/cpu/tensor_view.h) are
// reused with `data` pointing into device memory.

#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <vector>

#include "backend/cpu/tensor_view.h"
#include "backend/executor.h"
#include "backend/gpu/cublas_gemm.h"
#include "backend/gpu/device_buffer.h"
#include "backend/gpu/nccl_comm.h"
#include "ir/op.h"

namespace distir::gpu {

/// One planned op: enqueues it on the stream it was planned with. Returns
/// launch errors; faults surface at the next synchronisation.
using GpuKernel = std::function<Status()>;

/// What compute planners need. Pointees are owned by the executor and
/// outlive the kernels.
struct GpuOpContext {
  void* stream = nullptr;                      ///< a cudaStream_t
  CublasGemm* gemm = nullptr;                  ///< bound to `stream`
  /// Device memory the kernels own (constants, accumulators). Null when only
  /// planning (the support check, which needs no GPU): nothing is allocated
  /// and the returned kernels must not be run.
  std::vector<DeviceBuffer>* scratch = nullptr;
};

/// The NCCL communicators of a rank (non-owning; the executor owns them).
struct GpuComms {
  /// Over the ranks that run a program, NCCL rank = MPI rank; null when no
  /// program has SendTo/RecvFrom.
  NcclCommunicator* p2p = nullptr;
  /// One per group this rank belongs to; NCCL rank = position in the group.
  std::map<std::vector<DeviceId>, NcclCommunicator*> groups;
  backend::RankMap ranks;
};

/// Plans compute op `op` on arena views `in` and `out`. Returns an empty
/// kernel for alias-only ops (Reshape, Squeeze, Unsqueeze, Identity), whose
/// results the memory plan places on their input. Constant, ConstantOfShape
/// and Shape are evaluated once on the host at planning time (by the CPU
/// backend's planner, so both backends produce the same bytes), kept in
/// scratch device memory and copied into the arena each iteration.
/// Errors: Unimplemented, located at the op, naming it and the missing case.
StatusOr<GpuKernel> PlanGpuComputeOp(const Op& op, std::span<const backend::TensorView> in,
                                     std::span<const backend::TensorView> out,
                                     const GpuOpContext& ctx);

/// Plans communication op `op` (SendTo, RecvFrom, Collective) run by `self`.
/// With `comms` null it only checks that the op is supported and returns an
/// empty kernel (set-up runs this before the communicators exist, so that a
/// rank rejects its program before any collective NCCL call).
/// Errors: Unimplemented for a kind, axis or dtype NCCL is not used for yet;
/// InvalidArgument for a peer or group that does not fit `self`.
StatusOr<GpuKernel> PlanGpuCommOp(const Op& op, DeviceId self,
                                  std::span<const backend::TensorView> in,
                                  std::span<const backend::TensorView> out, const GpuComms* comms,
                                  void* stream);

namespace internal {

/// The planners' error: Unimplemented at `op`, "the CUDA backend cannot run
/// <op>: <what>". Its own builder, because copying a StatusBuilder out of a
/// helper function restarts its stream at position 0 and overwrites the prefix.
class UnsupportedOp {
 public:
  explicit UnsupportedOp(const Op& op) : loc_(op.loc()) {
    text_ << "the CUDA backend cannot run " << op.Name() << ": ";
  }
  template <typename T>
  UnsupportedOp& operator<<(const T& value) {
    text_ << value;
    return *this;
  }
  operator Status() const { return Unimplemented(loc_) << text_.str(); }  // NOLINT
  template <typename T>
  operator StatusOr<T>() const {  // NOLINT
    return StatusOr<T>(Status(*this));
  }

 private:
  SourceLoc loc_;
  std::ostringstream text_;
};

}  // namespace internal
}  // namespace distir::gpu
