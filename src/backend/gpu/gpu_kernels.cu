#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/gpu/cuda_check.h"
#include "backend/gpu/gpu_kernels.h"

namespace distir::gpu {
namespace {

constexpr int kThreads = 256;

// Storage <-> compute conversions: every kernel computes in f32.
__device__ __forceinline__ float Load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float Load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float Load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ __forceinline__ void Store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void Store(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void Store(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

// Enough blocks to cover n with a grid-stride loop, capped (the loop does the rest).
unsigned Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

#define DISTIR_GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__device__ __forceinline__ float GeluF(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678f)); }
constexpr float kSqrt2OverPi = 0.7978845608f;
constexpr float kGeluTanhA = 0.044715f;
__device__ __forceinline__ float GeluTanhF(float x) {
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kGeluTanhA * x * x * x)));
}
// The derivative of GeluTanhF, as the host kernels compute it.
__device__ __forceinline__ float GeluTanhGradF(float x) {
  const float t = tanhf(kSqrt2OverPi * (x + kGeluTanhA * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluTanhA * x * x);
}
// d/dx [x Phi(x)] = Phi(x) + x phi(x).
__device__ __forceinline__ float GeluGradF(float x) {
  return 0.5f * (1.0f + erff(x * 0.70710678f)) + x * 0.39894228f * expf(-0.5f * x * x);
}

template <typename T>
__global__ void BinaryKernel(GpuBinary op, int64_t n, const T* a, const T* b, T* out) {
  DISTIR_GRID_STRIDE(i, n) {
    const float x = Load(a, i), y = Load(b, i);
    float r = op == GpuBinary::kAdd ? x + y : op == GpuBinary::kSub ? x - y
              : op == GpuBinary::kMul ? x * y : x / y;
    Store(out, i, r);
  }
}

__device__ __forceinline__ float ApplyUnary(GpuUnary op, float v) {
  switch (op) {
    case GpuUnary::kRelu:
      return fmaxf(v, 0.0f);
    case GpuUnary::kGelu:
      return GeluF(v);
    case GpuUnary::kGeluTanh:
      return GeluTanhF(v);
    case GpuUnary::kSigmoid:
      return 1.0f / (1.0f + expf(-v));
    case GpuUnary::kSin:
      return sinf(v);
    case GpuUnary::kCos:
      return cosf(v);
  }
  return v;
}

// f'(v), or for kSigmoidGrad y (1 - y) with v the Sigmoid output y.
__device__ __forceinline__ float UnaryDerivative(GpuUnaryGrad op, float v) {
  switch (op) {
    case GpuUnaryGrad::kReluGrad:
      return v > 0.0f ? 1.0f : 0.0f;
    case GpuUnaryGrad::kGeluGrad:
      return GeluGradF(v);
    case GpuUnaryGrad::kGeluTanhGrad:
      return GeluTanhGradF(v);
    case GpuUnaryGrad::kSigmoidGrad:
      return v * (1.0f - v);
  }
  return 0.0f;
}

template <typename T>
__global__ void UnaryKernel(GpuUnary op, int64_t n, const T* x, T* y) {
  DISTIR_GRID_STRIDE(i, n) { Store(y, i, ApplyUnary(op, Load(x, i))); }
}

template <typename T>
__global__ void UnaryGradKernel(GpuUnaryGrad op, int64_t n, const T* x, const T* dy, T* dx) {
  DISTIR_GRID_STRIDE(i, n) { Store(dx, i, Load(dy, i) * UnaryDerivative(op, Load(x, i))); }
}

// The element offsets of output element `flat` in the first N operands of `s`.
template <int N>
__device__ __forceinline__ void BroadcastOffsets(const GpuBroadcast& s, int64_t flat, int64_t* off) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t i = flat % s.dims[d];
    flat /= s.dims[d];
    for (int k = 0; k < N; ++k) off[k] += i * s.strides[k][d];
  }
}

template <typename T>
__global__ void BroadcastBinaryKernel(GpuBinary op, GpuBroadcast s, int64_t n, const T* a,
                                      const T* b, T* out) {
  DISTIR_GRID_STRIDE(i, n) {
    int64_t off[2];
    BroadcastOffsets<2>(s, i, off);
    const float x = Load(a, off[0]), y = Load(b, off[1]);
    float r = op == GpuBinary::kAdd ? x + y : op == GpuBinary::kSub ? x - y
              : op == GpuBinary::kMul ? x * y : x / y;
    Store(out, i, r);
  }
}

// Copies elements rather than converting them: Where selects, it does not round.
template <typename T>
__global__ void WhereKernel(GpuBroadcast s, int64_t n, const uint8_t* cond, const T* x, const T* y,
                            T* out) {
  DISTIR_GRID_STRIDE(i, n) {
    int64_t off[3];
    BroadcastOffsets<3>(s, i, off);
    out[i] = cond[off[0]] != 0 ? x[off[1]] : y[off[2]];
  }
}

// E is an unsigned integer of the element's width: permutations move bytes.
template <typename E>
__global__ void PermuteKernel(GpuPermute p, int64_t n, const E* in, E* out) {
  DISTIR_GRID_STRIDE(i, n) {
    int64_t flat = i, src = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      src += (flat % p.out_dims[d]) * p.in_strides[d];
      flat /= p.out_dims[d];
    }
    out[i] = in[src];
  }
}

template <typename E>
__global__ void TriluKernel(int64_t n, int64_t rows, int64_t cols, int64_t k, bool upper,
                            const E* in, E* out) {
  DISTIR_GRID_STRIDE(i, n) {
    const int64_t j = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? j - r >= k : j - r <= k;
    out[i] = keep ? in[i] : E(0);
  }
}

// Block-wide reduction (sum or max) of one float per thread; every thread gets the result.
template <bool kMax>
__device__ float BlockReduce(float v) {
  __shared__ float scratch[kThreads];
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      const float o = scratch[threadIdx.x + s];
      scratch[threadIdx.x] = kMax ? fmaxf(scratch[threadIdx.x], o) : scratch[threadIdx.x] + o;
    }
    __syncthreads();
  }
  const float r = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

// One block per row.
template <typename T>
__global__ void SoftmaxKernel(int64_t cols, const T* x, T* y) {
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, Load(row, j));
  m = BlockReduce<true>(m);
  float s = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(Load(row, j) - m);
  s = BlockReduce<false>(s);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) Store(out, j, expf(Load(row, j) - m) / s);
}

// One block per row; two passes (mean, then variance) for accuracy.
template <typename T>
__global__ void LayerNormKernel(int64_t cols, const T* x, const T* scale, const T* bias, float eps,
                                T* y) {
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float s = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += Load(row, j);
  const float mean = BlockReduce<false>(s) / static_cast<float>(cols);
  float q = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = Load(row, j) - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(BlockReduce<false>(q) / static_cast<float>(cols) + eps);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float v = (Load(row, j) - mean) * rstd * Load(scale, j);
    if (bias != nullptr) v += Load(bias, j);
    Store(out, j, v);
  }
}

// One block per row.
template <typename T>
__global__ void RmsNormKernel(int64_t cols, const T* x, const T* scale, float eps, T* y) {
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float q = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) q += Load(row, j) * Load(row, j);
  const float inv_rms = rsqrtf(BlockReduce<false>(q) / static_cast<float>(cols) + eps);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    Store(out, j, Load(row, j) * inv_rms * Load(scale, j));
  }
}

// One block per row: dx = r (g - xh mean(g xh)), g = dy scale, xh = x r; r to inv_rms[row].
template <typename T>
__global__ void RmsNormGradRowsKernel(int64_t cols, const T* x, const T* scale, const T* dy,
                                      float eps, T* dx, float* inv_rms) {
  const int64_t base = blockIdx.x * cols;
  float q = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = Load(x, base + j);
    q += v * v;
  }
  const float r = rsqrtf(BlockReduce<false>(q) / static_cast<float>(cols) + eps);
  float gx = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    gx += Load(dy, base + j) * Load(scale, j) * Load(x, base + j) * r;
  }
  const float mean_gxh = BlockReduce<false>(gx) / static_cast<float>(cols);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float g = Load(dy, base + j) * Load(scale, j);
    Store(dx, base + j, r * (g - Load(x, base + j) * r * mean_gxh));
  }
  if (threadIdx.x == 0) inv_rms[blockIdx.x] = r;
}

// One thread per column: dscale[c] = sum over rows of dy x r (coalesced along c;
// simple, not tuned: one pass over the rows per column thread).
template <typename T>
__global__ void RmsNormGradScaleKernel(int64_t rows, int64_t cols, const T* x, const T* dy,
                                       const float* inv_rms, T* dscale) {
  DISTIR_GRID_STRIDE(c, cols) {
    float acc = 0;
    for (int64_t r = 0; r < rows; ++r) {
      acc += Load(dy, r * cols + c) * Load(x, r * cols + c) * inv_rms[r];
    }
    Store(dscale, c, acc);
  }
}

template <typename T>
__global__ void GatherKernel(int64_t width, const T* table, int64_t n, const int64_t* idx, T* out) {
  DISTIR_GRID_STRIDE(i, n * width) {
    const int64_t r = i / width, c = i % width;
    out[i] = table[idx[r] * width + c];
  }
}

template <typename T>
__global__ void MseLossKernel(int64_t n, const T* p, const T* y, float scale, float* loss) {
  float s = 0;
  DISTIR_GRID_STRIDE(i, n) {
    const float d = Load(p, i) - Load(y, i);
    s += d * d;
  }
  s = BlockReduce<false>(s);
  if (threadIdx.x == 0) atomicAdd(loss, s * scale);
}

template <typename T>
__global__ void MseLossGradKernel(int64_t n, const T* p, const T* y, float scale, T* dp) {
  DISTIR_GRID_STRIDE(i, n) { Store(dp, i, scale * (Load(p, i) - Load(y, i))); }
}

template <typename T>
__global__ void SgdKernel(int64_t n, const T* w, const T* dw, float lr, T* w_out) {
  DISTIR_GRID_STRIDE(i, n) { Store(w_out, i, Load(w, i) - lr * Load(dw, i)); }
}

template <typename T>
__global__ void AdamKernel(int64_t n, const T* w, const T* dw, const T* m, const T* v,
                           GpuAdamParams a, float c1, float c2, T* w_out, T* m_out, T* v_out) {
  DISTIR_GRID_STRIDE(i, n) {
    const float g = Load(dw, i);
    const float mi = a.beta1 * Load(m, i) + (1 - a.beta1) * g;
    const float vi = a.beta2 * Load(v, i) + (1 - a.beta2) * g * g;
    const float wi = Load(w, i) - a.lr * (mi / c1) / (sqrtf(vi / c2) + a.epsilon);
    Store(m_out, i, mi);
    Store(v_out, i, vi);
    Store(w_out, i, wi);
  }
}

cudaStream_t S(void* stream) { return static_cast<cudaStream_t>(stream); }

Status LastLaunch() {
  DISTIR_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

// Calls f with a typed null pointer of the storage type of `t` (dispatch on dtype).
template <typename F>
Status Dispatch(GpuDType t, F&& f) {
  switch (t) {
    case GpuDType::kF32:
      f(static_cast<float*>(nullptr));
      break;
    case GpuDType::kF16:
      f(static_cast<__half*>(nullptr));
      break;
    case GpuDType::kBF16:
      f(static_cast<__nv_bfloat16*>(nullptr));
      break;
  }
  return LastLaunch();
}

template <typename T>
const T* C(const void* p, const T*) { return static_cast<const T*>(p); }
template <typename T>
T* M(void* p, T*) { return static_cast<T*>(p); }

// Calls f with a typed null pointer of an unsigned type of `bytes` bytes.
template <typename F>
Status DispatchBytes(int bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(static_cast<uint8_t*>(nullptr));
      break;
    case 2:
      f(static_cast<uint16_t*>(nullptr));
      break;
    case 4:
      f(static_cast<uint32_t*>(nullptr));
      break;
    case 8:
      f(static_cast<uint64_t*>(nullptr));
      break;
    default:
      return InvalidArgument() << "no GPU kernel for " << bytes << "-byte elements";
  }
  return LastLaunch();
}

int64_t NumElements(const int64_t* dims, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= dims[d];
  return n;
}

}  // namespace

GpuBroadcast MakeGpuBroadcast(const std::vector<int64_t>& out_shape,
                              const std::vector<std::vector<int64_t>>& operand_shapes) {
  GpuBroadcast s;
  s.rank = static_cast<int>(out_shape.size());
  for (int d = 0; d < s.rank; ++d) s.dims[d] = out_shape[d];
  for (size_t k = 0; k < operand_shapes.size() && k < 3; ++k) {
    const std::vector<int64_t>& shape = operand_shapes[k];
    const int pad = s.rank - static_cast<int>(shape.size());
    int64_t stride = 1;
    for (int d = s.rank - 1; d >= pad; --d) {
      const int64_t extent = shape[static_cast<size_t>(d - pad)];
      s.strides[k][d] = extent == 1 ? 0 : stride;
      stride *= extent;
    }
  }
  return s;
}

GpuPermute MakeGpuPermute(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm) {
  GpuPermute p;
  p.rank = static_cast<int>(in_shape.size());
  std::vector<int64_t> strides(in_shape.size(), 1);
  for (int d = p.rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * in_shape[d + 1];
  for (int d = 0; d < p.rank; ++d) {
    p.out_dims[d] = in_shape[static_cast<size_t>(perm[d])];
    p.in_strides[d] = strides[static_cast<size_t>(perm[d])];
  }
  return p;
}

Status LaunchBroadcastBinary(GpuBinary op, GpuDType t, const GpuBroadcast& shape, const void* a,
                             const void* b, void* out, void* stream) {
  const int64_t n = NumElements(shape.dims, shape.rank);
  if (n == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    BroadcastBinaryKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(op, shape, n, C(a, tag), C(b, tag),
                                                                 M(out, tag));
  });
}

Status LaunchWhere(GpuDType t, const GpuBroadcast& shape, const void* cond, const void* x,
                   const void* y, void* out, void* stream) {
  const int64_t n = NumElements(shape.dims, shape.rank);
  if (n == 0) return Status::Ok();
  const auto* c = static_cast<const uint8_t*>(cond);
  return Dispatch(t, [&](auto* tag) {
    WhereKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(shape, n, c, C(x, tag), C(y, tag), M(out, tag));
  });
}

Status LaunchPermute(int elem_bytes, const GpuPermute& permute, const void* in, void* out,
                     void* stream) {
  const int64_t n = NumElements(permute.out_dims, permute.rank);
  if (n == 0) return Status::Ok();
  return DispatchBytes(elem_bytes, [&](auto* tag) {
    PermuteKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(permute, n, C(in, tag), M(out, tag));
  });
}

Status LaunchTrilu(int elem_bytes, int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper,
                   const void* in, void* out, void* stream) {
  const int64_t n = batch * rows * cols;
  if (n == 0) return Status::Ok();
  return DispatchBytes(elem_bytes, [&](auto* tag) {
    TriluKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(n, rows, cols, k, upper, C(in, tag),
                                                       M(out, tag));
  });
}

Status LaunchBinary(GpuBinary op, GpuDType t, int64_t n, const void* a, const void* b, void* out,
                    void* stream) {
  if (n == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    BinaryKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(op, n, C(a, tag), C(b, tag), M(out, tag));
  });
}

Status LaunchUnary(GpuUnary op, GpuDType t, int64_t n, const void* x, void* y, void* stream) {
  if (n == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    UnaryKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(op, n, C(x, tag), M(y, tag));
  });
}

Status LaunchUnaryGrad(GpuUnaryGrad op, GpuDType t, int64_t n, const void* x, const void* dy,
                       void* dx, void* stream) {
  if (n == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    UnaryGradKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(op, n, C(x, tag), C(dy, tag), M(dx, tag));
  });
}

Status LaunchSoftmax(GpuDType t, int64_t rows, int64_t cols, const void* x, void* y, void* stream) {
  if (rows == 0 || cols == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    SoftmaxKernel<<<static_cast<unsigned>(rows), kThreads, 0, S(stream)>>>(cols, C(x, tag), M(y, tag));
  });
}

Status LaunchLayerNorm(GpuDType t, int64_t rows, int64_t cols, const void* x, const void* scale,
                       const void* bias, float epsilon, void* y, void* stream) {
  if (rows == 0 || cols == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    LayerNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, S(stream)>>>(
        cols, C(x, tag), C(scale, tag), C(bias, tag), epsilon, M(y, tag));
  });
}

Status LaunchRmsNorm(GpuDType t, int64_t rows, int64_t cols, const void* x, const void* scale,
                     float epsilon, void* y, void* stream) {
  if (rows == 0 || cols == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, S(stream)>>>(
        cols, C(x, tag), C(scale, tag), epsilon, M(y, tag));
  });
}

Status LaunchRmsNormGrad(GpuDType t, int64_t rows, int64_t cols, const void* x, const void* scale,
                         const void* dy, float epsilon, void* dx, void* dscale, float* inv_rms,
                         void* stream) {
  if (cols == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    if (rows > 0) {
      RmsNormGradRowsKernel<<<static_cast<unsigned>(rows), kThreads, 0, S(stream)>>>(
          cols, C(x, tag), C(scale, tag), C(dy, tag), epsilon, M(dx, tag), inv_rms);
    }
    // With no rows dscale is a sum of nothing: zeros.
    RmsNormGradScaleKernel<<<Blocks(cols), kThreads, 0, S(stream)>>>(
        rows, cols, C(x, tag), C(dy, tag), inv_rms, M(dscale, tag));
  });
}

Status LaunchGather(GpuDType t, int64_t table_rows, int64_t width, const void* table, int64_t n,
                    const int64_t* indices, void* out, void* stream) {
  (void)table_rows;  // the contract puts range checking on the host
  if (n == 0 || width == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    GatherKernel<<<Blocks(n * width), kThreads, 0, S(stream)>>>(width, C(table, tag), n, indices,
                                                                M(out, tag));
  });
}

Status LaunchMseLoss(GpuDType t, int64_t n, const void* p, const void* y, double denominator,
                     float* loss, void* stream) {
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(loss, 0, sizeof(float), S(stream)));
  if (n == 0) return Status::Ok();
  const float scale = static_cast<float>(1.0 / denominator);
  return Dispatch(t, [&](auto* tag) {
    MseLossKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(n, C(p, tag), C(y, tag), scale, loss);
  });
}

Status LaunchMseLossGrad(GpuDType t, int64_t n, const void* p, const void* y, double denominator,
                         void* dp, void* stream) {
  if (n == 0) return Status::Ok();
  const float scale = static_cast<float>(2.0 / denominator);
  return Dispatch(t, [&](auto* tag) {
    MseLossGradKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(n, C(p, tag), C(y, tag), scale,
                                                             M(dp, tag));
  });
}

Status LaunchSgd(GpuDType t, int64_t n, const void* w, const void* dw, float lr, void* w_out,
                 void* stream) {
  if (n == 0) return Status::Ok();
  return Dispatch(t, [&](auto* tag) {
    SgdKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(n, C(w, tag), C(dw, tag), lr, M(w_out, tag));
  });
}

Status LaunchAdam(GpuDType t, int64_t n, const void* w, const void* dw, const void* m,
                  const void* v, const GpuAdamParams& params, void* w_out, void* m_out,
                  void* v_out, void* stream) {
  if (n == 0) return Status::Ok();
  // Bias corrections in double on the host, as the host kernels compute them.
  const auto c1 = static_cast<float>(1 - std::pow(double{params.beta1}, static_cast<double>(params.step)));
  const auto c2 = static_cast<float>(1 - std::pow(double{params.beta2}, static_cast<double>(params.step)));
  return Dispatch(t, [&](auto* tag) {
    AdamKernel<<<Blocks(n), kThreads, 0, S(stream)>>>(n, C(w, tag), C(dw, tag), C(m, tag),
                                                      C(v, tag), params, c1, c2, M(w_out, tag),
                                                      M(m_out, tag), M(v_out, tag));
  });
}

}  // namespace distir::gpu
