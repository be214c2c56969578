// Planning of the data-movement and constant ops on the CPU (compute_ops.h
// plans the arithmetic): aliases, Transpose, Split, Concat, Slice, Constant,
// ConstantOfShape, Trilu, Cast, Shape. They work on bytes, so every dtype
// runs, f16 and bf16 included, without conversion.

#pragma once

#include <optional>
#include <span>

#include "backend/cpu/compute_ops.h"

namespace distir::backend {

/// The kernel of `op` when it is a layout or constant op (an empty kernel for
/// the alias ops Reshape, Squeeze, Unsqueeze and Identity); nullopt for any
/// other op. Errors as PlanComputeOp.
std::optional<StatusOr<CpuKernel>> PlanLayoutOp(const Op& op, std::span<const TensorView> in,
                                                std::span<const TensorView> out);

}  // namespace distir::backend
