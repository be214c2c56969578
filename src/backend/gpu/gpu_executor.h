// The CUDA executor: runs this MPI rank's program of an ExecutionPlan on one
// GPU (executor.h has the contract and the device-to-rank mapping; the CPU
// counterpart is backend/cpu/cpu_executor.h).
//
// Creation plans everything, as the CPU executor does: the GPU (local rank
// modulo the visible devices), one cudaMalloc'd arena from the memory plan
// (memory_plan.h), one stream, one cuBLAS handle, one closure per op
// (gpu_ops.h) and the NCCL communicators: one per Collective group, over the
// MPI sub-communicators CommContext splits (cpu/comm_ops.h), and one over the
// ranks with a program for SendTo/RecvFrom. Running enqueues every op on the
// stream and synchronises it once at the end. No CUDA type appears here.

#pragma once

#include <mpi.h>

#include <memory>

#include "backend/executor.h"

namespace distir::gpu {

/// Creates the CUDA executor of MPI rank `rank of comm` for `plan`, with the
/// contract of backend::CreateCpuExecutor(): collective over `comm` (every
/// rank calls it with the same plan); ranks beyond the plan's devices get an
/// idle executor that touches no GPU; `plan` must outlive the result.
/// Errors: an op, dtype or case with no GPU kernel (Unimplemented located at
/// the op, naming it), no visible CUDA device on a rank with a program
/// (FailedPrecondition), a failing CUDA/cuBLAS/NCCL/MPI call (Internal). A
/// rank whose planning fails still takes part in the collective set-up up to
/// the point where the ranks agree, so the others see an error instead of
/// hanging. (A failure inside NCCL's own set-up can still hang its peers.)
StatusOr<std::unique_ptr<backend::Executor>> MakeGpuExecutor(const backend::ExecutionPlan& plan,
                                                             MPI_Comm comm);

}  // namespace distir::gpu
