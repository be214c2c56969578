// Planning of the data-movement and constant ops on the GPU (gpu_ops.h plans
// the arithmetic): aliases, Constant, ConstantOfShape, Shape, Transpose,
// Split, Concat and Trilu. They move bytes, so every dtype runs (the bool
// causal mask and i64 shape constants of GPT-2 included) without conversion.
// The GPU counterpart of backend/cpu/layout_ops.h.

#pragma once

#include <optional>
#include <span>

#include "backend/gpu/gpu_ops.h"

namespace distir::gpu {

/// The kernel of `op` when it is a layout or constant op (an empty kernel for
/// the alias ops Reshape, Squeeze, Unsqueeze and Identity); nullopt for any
/// other op. Errors as PlanGpuComputeOp.
std::optional<StatusOr<GpuKernel>> PlanGpuLayoutOp(const Op& op,
                                                   std::span<const backend::TensorView> in,
                                                   std::span<const backend::TensorView> out,
                                                   const GpuOpContext& ctx);

}  // namespace distir::gpu
