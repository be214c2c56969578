// Planning of the compute ops of a rank program on the CPU: each op becomes a
// closure over its operands' arena views (tensor_view.h), built once before
// the first iteration, that calls the host kernels (host_kernels.h).
//
// Everything that can be decided from the static types (which kernel, the
// broadcasting factorisation, the flattened Gemm sizes) is decided here, so
// that running an op is one call. Communication ops are planned by
// comm_ops.h; alias-only ops (Reshape, Squeeze, Unsqueeze, Identity) plan to
// nothing, since the memory plan gives their results their input's buffer.
//
// Precision: f32 ops compute in float, f64 ops in double. f16 and bf16 values
// are stored as such and computed in f32: the planner gives the kernel f32
// scratch copies and converts them in before and out after the op.

#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "backend/cpu/tensor_view.h"
#include "ir/op.h"
#include "support/status_or.h"

namespace distir::backend {

/// One planned op: runs it on the views it was planned with.
using CpuKernel = std::function<Status()>;

/// Scratch buffers the planned ops own (the f32 copies of f16/bf16 operands).
/// Lives as long as the kernels planned with it.
struct ScratchPool {
  std::vector<std::unique_ptr<std::byte[]>> buffers;
  /// A new zeroed buffer of `bytes` bytes, owned by the pool.
  std::byte* Allocate(int64_t bytes);
};

/// Plans compute op `op` with inputs `in` and results `out` (views of the
/// op's operands, in order). Returns an empty CpuKernel for ops that need no
/// work (aliases). Errors: Unimplemented, located at the op, for an op kind or
/// a case (e.g. Softmax over a non-last axis) the CPU backend does not run;
/// InvalidArgument for operands that contradict the op's rule.
StatusOr<CpuKernel> PlanComputeOp(const Op& op, std::span<const TensorView> in,
                                  std::span<const TensorView> out, ScratchPool& scratch);

}  // namespace distir::backend
