// CPU-executor planners of the fused transformer ops (docs/ir.md "Transformer
// ops"): FlashAttention and FlashAttentionGrad (grouped-query, optionally
// causal; one row of scores at a time, never an s x s buffer), Rope,
// LogSumExp, CrossEntropy, CrossEntropyGrad and EmbeddingGrad. Same semantics as the
// reference kernels (interp/cpu_transformer_kernels.cc), in the compute type
// T (float or double); compute_ops.cc dispatches here and handles f16/bf16
// through f32 copies, as for every other op.

#pragma once

#include <span>

#include "backend/cpu/compute_ops.h"

namespace distir::backend {

/// True for the op kinds PlanTransformerOp plans.
bool IsTransformerOp(OpKind kind);

/// Plans `op` in compute type T (float or double). Softmax statistics and
/// losses are accumulated in double. Errors: Unimplemented for labels or ids
/// that are not i64; at run time, InvalidArgument for a label or id out of
/// range. REQUIRES: IsTransformerOp(op.kind()), and `in`/`out` the op's
/// operands with the types its shape rule gives.
template <typename T>
StatusOr<CpuKernel> PlanTransformerOp(const Op& op, std::span<const TensorView> in,
                                      std::span<const TensorView> out);

}  // namespace distir::backend
