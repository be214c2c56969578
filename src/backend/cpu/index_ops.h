// Planning of elementwise ops on integer tensors on the CPU: the index
// arithmetic of a vocabulary-parallel lookup (sharding/partition.cc shifts
// and masks the token ids with Sub, Less and Where before its Gather) and
// any other Add, Sub, Mul, Equal, Less, Not or Where on i32/i64 ids.
// compute_ops.h plans the float arithmetic.

#pragma once

#include <optional>
#include <span>

#include "backend/cpu/compute_ops.h"

namespace distir::backend {

/// The kernel of `op` when it computes on integer (i32/i64) tensors: Add,
/// Sub, Mul (integer result), Equal and Less (integer operands, bool
/// result), Where (integer result, bool condition), with numpy
/// broadcasting; nullopt for any other op or dtype.
std::optional<StatusOr<CpuKernel>> PlanIndexOp(const Op& op, std::span<const TensorView> in,
                                               std::span<const TensorView> out);

}  // namespace distir::backend
