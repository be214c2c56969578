// A floor under the time the cost model gives the compute work of a program,
// however it is distributed: its matrix ops (below) and its split-invariant
// streaming kernels (IsSplitInvariantStreaming). The work of `distir
// search`'s throughput bound (search/throughput_bound.h, docs/cost_model.md
// §3.4).
//
// The cost model times a MatMul, Gemm, MatMulGrad, FlashAttention or
// FlashAttentionGrad (compute_cost_rules.cc) at no more than a fixed rate of
// FLOPs per second, whatever its shape:
//  - the tiled GEMM model (gemm_model.h): whole waves of tiles at most
//    MatrixFlops(dtype) x gemm.max_efficiency, each tile at least the product
//    it covers, plus overheads >= 0;
//  - the tiled attention model (attention_model.h): steps of at least the
//    FLOPs they cover at one SM's share of MatrixFlops x max_efficiency (the
//    backward's own efficiency for FlashAttentionGrad);
//  - the roofline (cost_model.h MatMulKernelTime): max(flops / MatrixFlops,
//    memory) + launch;
//  - a calibrated regression intercept + per_flop flops + per_byte bytes: at
//    most 1 / per_flop when none of the three is negative; a fitted negative
//    term leaves no rate (the regression may time a kernel below any).
// Distributing an op splits its FLOPs among pieces (batch, microbatches,
// tensor-parallel slices, partial sums) without lowering their sum, and
// replicated or recomputed pieces only add; each piece runs at most at the
// rate. So the sum over a program's matrix ops of FLOPs / rate is a lower
// bound of the sum of their simulated times over every device.

#pragma once

#include <optional>

#include "ir/function.h"
#include "sim/hardware_profile.h"

namespace distir::sim {

/// The highest FLOP rate the cost model gives `op` on `device`, if `op` is a
/// matrix op (MatrixOpFlops): +infinity where its time has no FLOP term
/// (a peak of 0, a regression with per_flop 0); nullopt for any other op,
/// and for a regression with a negative term.
std::optional<double> MatrixRateCeiling(const Op& op, const DeviceSpec& device);

/// The FLOPs of `op` that the rate above bounds: MatrixOpFlops, without
/// Gemm's epilogue (the tiled model does not time it); 0 for other ops.
double BoundedMatrixFlops(const Op& op);

/// True for the streaming kernels (elementwise arithmetic, activations and
/// their gradients, Softmax, the normalisations, Rope, Adam, SGD) whose
/// pieces, however the sharding passes split, replicate or recompute them,
/// stay ops of the same kind that together read and write at least the
/// whole's bytes and do at least its FLOPs: each result element is written by
/// some piece (a partial value by every one), and each input element, needed
/// by some result element, is read by some piece. Their roofline time
/// max(bytes / bandwidth, FLOPs / vector rate) + launch is then below the sum
/// of their pieces'. Data movement (which the passes fold away or replace),
/// casts, comparisons, reductions and losses (which they may restructure)
/// are not.
bool IsSplitInvariantStreaming(OpKind kind);

/// MatrixWorkFloorS plus the cost model's time of every op of `fn` for which
/// IsSplitInvariantStreaming holds: the floor of the compute time over every
/// device of any distribution of `fn`, in seconds; nullopt where
/// MatrixWorkFloorS has none.
std::optional<double> WorkFloorS(const Function& fn, const HardwareProfile& hw);

/// Sum over the ops of `fn` (typed) of BoundedMatrixFlops / MatrixRateCeiling,
/// in seconds; nullopt when some matrix op of `fn` has no ceiling (then no
/// floor is known). Calls are not followed: their work is left out, which only
/// lowers the floor.
std::optional<double> MatrixWorkFloorS(const Function& fn, const DeviceSpec& device);

}  // namespace distir::sim
