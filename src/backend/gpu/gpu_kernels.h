// The CUDA kernels of the GPU executor: every non-GEMM op of the MLP and GPT-2
// programs (GEMMs go to cuBLAS, cublas_gemm.h; communication to NCCL, nccl_comm.h).
//
// Semantics are those of the CPU host kernels (backend/cpu/host_kernels.h) and of
// the reference executor (docs/ir.md §7): softmax and layer normalization over
// the last axis (biased variance), RMS normalization over the last axis, Gelu
// with erf, MSELoss = sum (p - y)^2 / denom, SGD and Adam with bias
// correction. f16 and bf16 are loaded into f32, computed
// in f32 and rounded to nearest on store, so they differ from the f32 result
// only by the storage rounding. The GPU test checks each kernel against the host
// kernels.
//
// All pointers are device pointers; `stream` is a cudaStream_t (nullptr: the
// default stream). Launches are asynchronous: a returned Status reports launch
// errors (cudaGetLastError), not faults during execution, which surface at the
// next synchronisation. REQUIRES for all: n, rows, cols >= 0; buffers hold the
// elements the shapes say; outputs do not alias inputs unless stated.

#pragma once

#include <cstdint>
#include <vector>

#include "backend/gpu/gpu_types.h"
#include "support/status.h"

namespace distir::gpu {

enum class GpuBinary { kAdd, kSub, kMul, kDiv };
/// kGelu uses erf; kGeluTanh is GPT-2's "gelu_new",
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); kSigmoid is 1 / (1 + exp(-x)).
enum class GpuUnary { kRelu, kGelu, kGeluTanh, kSigmoid, kSin, kCos };
/// dx = dy * f'(x); kSigmoidGrad takes the Sigmoid output y in place of x and
/// computes dx = dy * y * (1 - y) (DistIR's SigmoidGrad(y, dy)).
enum class GpuUnaryGrad { kReluGrad, kGeluGrad, kGeluTanhGrad, kSigmoidGrad };

/// The most axes a broadcast or permutation kernel indexes.
constexpr int kGpuMaxRank = 8;

/// Index arithmetic of a broadcasting op, passed to the kernel by value: the
/// output's extents and, for each of up to three operands, the operand's
/// element stride along each output axis (0 where the operand is broadcast).
/// Build it with MakeGpuBroadcast.
struct GpuBroadcast {
  int rank = 0;
  int64_t dims[kGpuMaxRank] = {};
  int64_t strides[3][kGpuMaxRank] = {};
};

/// The GpuBroadcast of `out_shape` for operands of `operand_shapes` (NumPy
/// rules: shapes right-aligned, extent 1 broadcasts), with extents of 1 dropped
/// and adjacent axes merged where every operand walks them as one (its rank may
/// be below the output's: fewer divisions per element). REQUIRES: at most 3
/// operands, rank(out) <= kGpuMaxRank, every operand broadcastable to out.
GpuBroadcast MakeGpuBroadcast(const std::vector<int64_t>& out_shape,
                              const std::vector<std::vector<int64_t>>& operand_shapes);

/// A permutation of the axes of a row-major tensor: out has extents
/// out_dims, and output axis d walks the input with stride in_strides[d]
/// (elements). Build it with MakeGpuPermute.
struct GpuPermute {
  int rank = 0;
  int64_t out_dims[kGpuMaxRank] = {};
  int64_t in_strides[kGpuMaxRank] = {};
};

/// The GpuPermute of ONNX Transpose(perm) on `in_shape`: out axis d is input
/// axis perm[d]; extents of 1 dropped and output axes that stay adjacent and in
/// order in the input merged. REQUIRES: perm a permutation of 0..rank-1, rank <= kGpuMaxRank.
GpuPermute MakeGpuPermute(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm);

struct GpuAdamParams {
  float lr = 0.001f, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  int64_t step = 1;  ///< 1-based, for the bias correction
};

/// out[i] = a[i] (op) b[i]. out may alias a or b.
Status LaunchBinary(GpuBinary op, GpuDType t, int64_t n, const void* a, const void* b, void* out,
                    void* stream = nullptr);

/// out = a (op) b with broadcasting (operands 0 and 1 of `shape`). out does
/// not alias a broadcast operand.
Status LaunchBroadcastBinary(GpuBinary op, GpuDType t, const GpuBroadcast& shape, const void* a,
                             const void* b, void* out, void* stream = nullptr);

/// out = cond ? x : y with broadcasting (operands 0, 1, 2 of `shape`); cond is
/// one byte per element (DistIR's bool), nonzero meaning true. x, y and out have
/// elements of `elem_bytes` (1, 2, 4 or 8) bytes: Where copies, so any dtype runs
/// (floats, and the integer ids of a vocabulary-parallel lookup).
Status LaunchWhere(int elem_bytes, const GpuBroadcast& shape, const void* cond, const void* x,
                   const void* y, void* out, void* stream = nullptr);

/// Arithmetic and comparisons on integer ids (the index arithmetic of a
/// vocabulary-parallel lookup, sharding/partition.cc, and of any imported graph).
enum class GpuIndexBinary { kAdd, kSub, kMul, kEqual, kLess };

/// out = a (op) b with broadcasting (operands 0 and 1 of `shape`) on i64 ids
/// (`wide`) or i32 ids. out has the operands' type for kAdd, kSub and kMul
/// (two's complement wrap-around on overflow) and is bool (one byte, 0 or 1)
/// for kEqual and kLess. Semantics of the CPU's backend/cpu/index_ops.h.
Status LaunchIndexBinary(GpuIndexBinary op, bool wide, const GpuBroadcast& shape, const void* a,
                         const void* b, void* out, void* stream = nullptr);

/// out[i] = !x[i] on `n` bools (one byte each, result 0 or 1). out may alias x.
Status LaunchNot(int64_t n, const void* x, void* out, void* stream = nullptr);

/// out = transpose(in) for elements of `elem_bytes` (1, 2, 4 or 8) bytes, so
/// any dtype runs. out does not alias in.
Status LaunchPermute(int elem_bytes, const GpuPermute& permute, const void* in, void* out,
                     void* stream = nullptr);

/// ONNX Trilu over the last two axes of `batch` matrices rows x cols of
/// `elem_bytes`-byte elements: keeps element (i, j) when j - i <= k (lower) or
/// j - i >= k (upper) and writes zero bytes elsewhere.
Status LaunchTrilu(int elem_bytes, int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper,
                   const void* in, void* out, void* stream = nullptr);

/// y[i] = f(x[i]). y may alias x.
Status LaunchUnary(GpuUnary op, GpuDType t, int64_t n, const void* x, void* y,
                   void* stream = nullptr);

/// dx[i] = dy[i] * f'(x[i]).
Status LaunchUnaryGrad(GpuUnaryGrad op, GpuDType t, int64_t n, const void* x, const void* dy,
                       void* dx, void* stream = nullptr);

/// Softmax of each of `rows` rows of `cols` (numerically stable).
Status LaunchSoftmax(GpuDType t, int64_t rows, int64_t cols, const void* x, void* y,
                     void* stream = nullptr);

/// y = (x - mean) / sqrt(var + epsilon) * scale + bias per row; bias may be null.
Status LaunchLayerNorm(GpuDType t, int64_t rows, int64_t cols, const void* x, const void* scale,
                       const void* bias, float epsilon, void* y, void* stream = nullptr);

/// y = x / sqrt(mean(x^2) + epsilon) * scale per row (ONNX RMSNormalization).
Status LaunchRmsNorm(GpuDType t, int64_t rows, int64_t cols, const void* x, const void* scale,
                     float epsilon, void* y, void* stream = nullptr);

/// Gradients of LaunchRmsNorm: dx per row, and dscale summed over the rows.
/// `inv_rms` is f32 device scratch of `rows` floats (the per-row 1/rms, written
/// by the first of the two kernels and read by the second).
Status LaunchRmsNormGrad(GpuDType t, int64_t rows, int64_t cols, const void* x, const void* scale,
                         const void* dy, float epsilon, void* dx, void* dscale, float* inv_rms,
                         void* stream = nullptr);

/// Embedding gather: out[i, :] = table[indices[i], :] for i < n, rows of `width`.
/// REQUIRES: every index in [0, table_rows) (the executor checks them on the host).
Status LaunchGather(GpuDType t, int64_t table_rows, int64_t width, const void* table, int64_t n,
                    const int64_t* indices, void* out, void* stream = nullptr);

/// *loss (one f32 on the device) = sum (p - y)^2 / denominator.
Status LaunchMseLoss(GpuDType t, int64_t n, const void* p, const void* y, double denominator,
                     float* loss, void* stream = nullptr);

/// dp = 2 (p - y) / denominator.
Status LaunchMseLossGrad(GpuDType t, int64_t n, const void* p, const void* y, double denominator,
                         void* dp, void* stream = nullptr);

/// w_out = w - lr * dw; w_out may alias w.
Status LaunchSgd(GpuDType t, int64_t n, const void* w, const void* dw, float lr, void* w_out,
                 void* stream = nullptr);

/// One Adam step; the outputs may alias w, m, v (the usual in-place update).
Status LaunchAdam(GpuDType t, int64_t n, const void* w, const void* dw, const void* m,
                  const void* v, const GpuAdamParams& params, void* w_out, void* m_out,
                  void* v_out, void* stream = nullptr);

}  // namespace distir::gpu
