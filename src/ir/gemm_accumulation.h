// Megatron's gradient accumulation fusion in the IR.
//
// With mixed precision, Megatron-LM's weight-gradient GEMM of a linear layer
// writes straight into the weight's f32 main grad and adds to it (cuBLAS with
// beta = 1, `fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32`; on by
// default, `--no-gradient-accumulation-fusion` turns it off): no cast of a
// half-precision gradient, no separate addition per microbatch.
//
// DistIR writes it explicitly and keeps the values pure: the builder gives
// MatMulGrad `dw_dtype = f32` (its dw is the f32 gradient of the microbatch),
// and the microbatch passes sum such gradients with Adds marked
// `gemm_accumulate = 1`. The cost model charges a marked Add nothing (its
// addition runs in the epilogue of the GEMM of its addend, which reads the
// running sum: compute_cost_rules.cc); executors run it as an Add.

#pragma once

#include "ir/op.h"
#include "ir/value.h"

namespace distir {

/// The attribute that marks an Add run inside its addend's GEMM.
inline constexpr const char* kGemmAccumulateAttr = "gemm_accumulate";

/// True when `v` is the weight gradient (result 1) of a MatMulGrad that
/// writes it in another dtype than its operands (`dw_dtype`): the gradient
/// that Megatron's fused GEMM accumulates into the main grad.
bool IsFusedWeightGradient(const Value& v);

/// True when `op` is an Add marked `gemm_accumulate = 1`.
bool IsGemmAccumulation(const Op& op);

}  // namespace distir
