// The CPU executor: runs this MPI rank's program of an ExecutionPlan on the
// host (executor.h has the contract and the device-to-rank mapping).
//
// Creation plans everything: the arena from the memory plan (memory_plan.h),
// one view per value into it, one kernel per op (compute_ops.h,
// layout_ops.h, comm_ops.h) and the communicators (collective over the
// communicator given). Running is then a loop over the kernels.

#pragma once

#include <mpi.h>

#include <memory>

#include "backend/executor.h"

namespace distir::backend {

/// Creates the CPU executor of MPI rank `rank of comm` for `plan`.
/// Collective over `comm`: every rank calls it, with the same plan. Ranks
/// beyond the plan's devices get an idle executor. `plan` must outlive it.
/// Errors: a program the memory plan or a kernel planner rejects
/// (Unimplemented/InvalidArgument located at the op), a failing MPI call.
/// A rank whose planning fails still takes part in the collective set-up, so
/// that the others do not hang; all ranks then see the error.
StatusOr<std::unique_ptr<Executor>> CreateCpuExecutor(const ExecutionPlan& plan, MPI_Comm comm);

}  // namespace distir::backend
