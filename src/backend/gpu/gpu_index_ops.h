// Planning of the ops on integer ids and bools on the GPU (gpu_ops.h plans the
// float arithmetic): the index arithmetic of a vocabulary-parallel lookup
// (sharding/partition.cc shifts and masks the token ids with Sub, Less and
// Where before its Gather) and any other Add, Sub, Mul, Equal, Less, Not or
// Where on i32/i64 ids of an imported graph. The GPU counterpart of
// backend/cpu/index_ops.h, with the same semantics.

#pragma once

#include <optional>
#include <span>

#include "backend/gpu/gpu_ops.h"

namespace distir::gpu {

/// The kernel of `op` when it computes on integer ids: Add, Sub, Mul (i32/i64
/// operands and result), Equal and Less (i32/i64 operands, bool result), Where
/// (bool condition, i32/i64/bool result) and Not (bool), all with NumPy
/// broadcasting; nullopt for any other op or dtype (the float planners take
/// it). Errors as PlanGpuComputeOp (more than kGpuMaxRank axes).
std::optional<StatusOr<GpuKernel>> PlanGpuIndexOp(const Op& op,
                                                  std::span<const backend::TensorView> in,
                                                  std::span<const backend::TensorView> out,
                                                  void* stream);

}  // namespace distir::gpu
