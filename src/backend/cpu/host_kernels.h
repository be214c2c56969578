// Host kernels: the arithmetic of the CPU executor as plain functions over
// contiguous row-major buffers of float or double.
//
// These are the kernels the CPU executor (cpu_executor.h) calls for every op
// of the MLP and GPT-2 programs, and the ones `distir calibrate --backend cpu`
// times, so that the costs the calibrator fits are the costs the executor pays.
// They know nothing of the IR: shapes arrive as extents, broadcasting as the
// (outer, inner) factorisations the executor computes once per op. MatMul and
// Gemm go through OpenBLAS (cblas_sgemm / cblas_dgemm); everything else is a
// plain loop. The semantics are those of the reference executor (docs/ir.md
// §7: MSELoss's denominator, the optimizer defaults, LayerNormalization over
// the last axis), computed in T instead of double.
//
// Threads: we run one MPI rank per core, so OpenBLAS must not start its own
// thread pool in every rank (2 ranks x 2 threads on 2 cores thrash).
// InitHostKernels() sets OpenBLAS to one thread; every entry point that runs
// kernels (executor, calibrator) calls it first.
//
// Instantiated for T = float and T = double. No function allocates except
// Transpose's index scratch; none fails: shape errors are the caller's
// business (the executor checks them when it plans the op).

#pragma once

#include <cstdint>
#include <span>

namespace distir::backend {

/// Sets OpenBLAS to one thread (openblas_set_num_threads(1)): one rank per
/// core. Idempotent and cheap; call before the first kernel.
void InitHostKernels();

/// Threads OpenBLAS uses now (openblas_get_num_threads()).
int HostBlasThreads();

// ---- matrix products

/// c[m x n] = alpha * op(a) * op(b) + beta * c, row-major, op = transpose when
/// the flag is set (a is stored k x m when trans_a, else m x k; b is n x k when
/// trans_b, else k x n). Calls cblas_?gemm. REQUIRES: m, n, k >= 0.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          const T* b, T beta, T* c);

/// `batch` independent products c_i = a_i * b_i (each as Gemm with alpha 1,
/// beta 0), a_i at a + i*a_stride, and so on; a stride of 0 broadcasts.
template <typename T>
void BatchedMatMul(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a, int64_t a_stride,
                   const T* b, int64_t b_stride, T* c, int64_t c_stride);

// ---- elementwise

enum class BinaryKind { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };
enum class UnaryKind {
  kRelu,
  kNeg,
  kSqrt,
  kExp,
  kTanh,
  kErf,
  kGeluErf,
  kGeluTanh,
  kIdentity,
  kSigmoid,
  kSin,
  kCos
};

/// out[i] = a[i] (op) b[i] for i < n.
template <typename T>
void Binary(BinaryKind kind, int64_t n, const T* a, const T* b, T* out);

/// Binary with `b` repeated: out[o*inner + i] = a[o*inner + i] (op) b[i] for
/// o < outer, i < inner (a bias over rows). With `b_first` the operands swap
/// roles: out = b[i] (op) a[...].
template <typename T>
void BinaryRepeat(BinaryKind kind, int64_t outer, int64_t inner, const T* a, const T* b, T* out,
                  bool b_first = false);

/// Binary with `b` a scalar: out[i] = a[i] (op) b (or b (op) a[i] with b_first).
template <typename T>
void BinaryScalar(BinaryKind kind, int64_t n, const T* a, T b, T* out, bool b_first = false);

/// General numpy broadcasting over rank-`rank` shapes: a and b have the output's
/// rank with extent 1 where they broadcast. `out_shape` has `rank` entries.
template <typename T>
void BinaryBroadcast(BinaryKind kind, std::span<const int64_t> out_shape,
                     std::span<const int64_t> a_shape, const T* a,
                     std::span<const int64_t> b_shape, const T* b, T* out);

/// out[i] = f(x[i]); Gelu as ONNX Gelu (erf) or approximate "tanh".
template <typename T>
void Unary(UnaryKind kind, int64_t n, const T* x, T* out);

/// dx = dy * [x > 0].
template <typename T>
void ReluGrad(int64_t n, const T* x, const T* dy, T* dx);

/// dx = dy * Gelu'(x), exact (erf) unless `tanh_approximation`.
template <typename T>
void GeluGrad(int64_t n, const T* x, const T* dy, T* dx, bool tanh_approximation);

/// dx = dy * y * (1 - y), y = Sigmoid(x) the forward's output.
template <typename T>
void SigmoidGrad(int64_t n, const T* y, const T* dy, T* dx);

/// out = cond ? a : b with numpy broadcasting of all three (cond holds 0/1 bytes).
template <typename T>
void Where(std::span<const int64_t> out_shape, std::span<const int64_t> cond_shape,
           const uint8_t* cond, std::span<const int64_t> a_shape, const T* a,
           std::span<const int64_t> b_shape, const T* b, T* out);

// ---- normalisation and softmax (over the last axis: `rows` rows of `cols`)

/// Numerically stable softmax of each row.
template <typename T>
void Softmax(int64_t rows, int64_t cols, const T* x, T* y);

/// dx = y * (dy - sum_row(dy * y)).
template <typename T>
void SoftmaxGrad(int64_t rows, int64_t cols, const T* y, const T* dy, T* dx);

/// y = (x - mean) / sqrt(var + epsilon) * scale + bias per row (biased
/// variance, as ONNX); `bias` may be null.
template <typename T>
void LayerNorm(int64_t rows, int64_t cols, const T* x, const T* scale, const T* bias, T epsilon,
               T* y);

/// Gradients of LayerNorm with respect to x, scale and bias (mean and
/// variance recomputed from x). dscale and dbias are overwritten.
template <typename T>
void LayerNormGrad(int64_t rows, int64_t cols, const T* x, const T* scale, const T* dy, T epsilon,
                   T* dx, T* dscale, T* dbias);

/// y = x / sqrt(mean(x^2) + epsilon) * scale per row (ONNX RMSNormalization).
template <typename T>
void RmsNorm(int64_t rows, int64_t cols, const T* x, const T* scale, T epsilon, T* y);

/// Gradients of RmsNorm with respect to x and scale (the root mean square
/// recomputed from x). dscale is overwritten.
template <typename T>
void RmsNormGrad(int64_t rows, int64_t cols, const T* x, const T* scale, const T* dy, T epsilon,
                 T* dx, T* dscale);

// ---- gather, layout

/// Gather along an axis: `table` viewed as [outer, axis_extent, inner],
/// `indices` (n of them, each in [-axis_extent, axis_extent)) pick slices;
/// out is [outer, n, inner]. Embedding lookup: outer 1, inner = width.
/// Returns false (writing nothing further) at the first index out of range.
template <typename T>
bool Gather(int64_t outer, int64_t axis_extent, int64_t inner, const T* table, int64_t n,
            const int64_t* indices, T* out);

/// out = x with its axes permuted: out axis i is x axis perm[i] (bytes are
/// moved as elements of `element_bytes`, so any dtype works).
void Transpose(std::span<const int64_t> shape, std::span<const int64_t> perm, int64_t element_bytes,
               const void* x, void* out);

/// Copies a [outer, src_axis, inner] block's axis range [begin, begin + len)
/// into out at [outer, dst_axis, inner] starting at dst_begin; the building
/// block of Concat, Split and Slice (any dtype: sizes in elements of
/// `element_bytes`).
void CopyAxisRange(int64_t outer, int64_t inner, int64_t element_bytes, const void* src,
                   int64_t src_axis, int64_t begin, int64_t len, void* dst, int64_t dst_axis,
                   int64_t dst_begin);

/// Strided slice along one axis: out[o, j, i] = x[o, begin + j*step, i] for
/// j < len (step may be negative).
void SliceAxis(int64_t outer, int64_t inner, int64_t element_bytes, const void* x,
               int64_t axis_extent, int64_t begin, int64_t step, int64_t len, void* out);

/// Lower (or upper) triangle of each [rows, cols] matrix kept, the rest zeroed,
/// diagonal offset k (ONNX Trilu). Works on bytes of `element_bytes`.
void Trilu(int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper, int64_t element_bytes,
           const void* x, void* out);

/// sum over the leading `outer` rows: out[i] = sum_o x[o*inner + i].
template <typename T>
void SumRows(int64_t outer, int64_t inner, const T* x, T* out);

// ---- losses and optimizers (docs/ir.md §7)

/// sum((p - y)^2) / denominator.
template <typename T>
T MseLoss(int64_t n, const T* p, const T* y, double denominator);

/// dp = 2 (p - y) / denominator.
template <typename T>
void MseLossGrad(int64_t n, const T* p, const T* y, double denominator, T* dp);

/// w_out = w - lr * dw (w_out may alias w).
template <typename T>
void Sgd(int64_t n, const T* w, const T* dw, T lr, T* w_out);

struct AdamParams {
  double lr = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  int64_t step = 1;
};

/// One Adam step (docs/ir.md §7); outputs may alias the inputs.
template <typename T>
void Adam(int64_t n, const T* w, const T* dw, const T* m, const T* v, const AdamParams& params,
          T* w_out, T* m_out, T* v_out);

// ---- storage conversions (f16/bf16 are stored as such, computed in f32)

/// IEEE half <-> float, round to nearest even.
void HalfToFloat(int64_t n, const uint16_t* x, float* out);
void FloatToHalf(int64_t n, const float* x, uint16_t* out);
/// bfloat16 <-> float, round to nearest even.
void BFloat16ToFloat(int64_t n, const uint16_t* x, float* out);
void FloatToBFloat16(int64_t n, const float* x, uint16_t* out);

}  // namespace distir::backend
