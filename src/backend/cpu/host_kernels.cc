// Host kernels (see host_kernels.h). Loops are written over flat indices so
// that GCC vectorises the common cases (same-shape elementwise, bias rows);
// the general broadcasting and transposition paths use an odometer over the
// output index, which is slower but only runs on small tensors in practice.

#include "backend/cpu/host_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

namespace distir::backend {
namespace {

template <typename T>
T Apply(BinaryKind kind, T a, T b) {
  switch (kind) {
    case BinaryKind::kAdd:
      return a + b;
    case BinaryKind::kSub:
      return a - b;
    case BinaryKind::kMul:
      return a * b;
    case BinaryKind::kDiv:
      return a / b;
    case BinaryKind::kPow:
      return std::pow(a, b);
    case BinaryKind::kMax:
      return std::max(a, b);
    case BinaryKind::kMin:
      return std::min(a, b);
  }
  return a;
}

// A separate loop per kind keeps each inner loop free of the switch, so it
// vectorises.
template <typename T, typename F>
void ForEachBinary(BinaryKind kind, F&& loop) {
  switch (kind) {
    case BinaryKind::kAdd:
      return loop([](T a, T b) { return a + b; });
    case BinaryKind::kSub:
      return loop([](T a, T b) { return a - b; });
    case BinaryKind::kMul:
      return loop([](T a, T b) { return a * b; });
    case BinaryKind::kDiv:
      return loop([](T a, T b) { return a / b; });
    default:
      return loop([kind](T a, T b) { return Apply(kind, a, b); });
  }
}

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluTanhA = 0.044715;

template <typename T>
T GeluTanh(T x) {
  const T u = static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kGeluTanhA) * x * x * x);
  return static_cast<T>(0.5) * x * (static_cast<T>(1) + std::tanh(u));
}

template <typename T>
T GeluErf(T x) {
  return static_cast<T>(0.5) * x * (static_cast<T>(1) + std::erf(x / static_cast<T>(std::numbers::sqrt2)));
}

template <typename T>
T ApplyUnary(UnaryKind kind, T x) {
  switch (kind) {
    case UnaryKind::kRelu:
      return x > 0 ? x : static_cast<T>(0);
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kSqrt:
      return std::sqrt(x);
    case UnaryKind::kExp:
      return std::exp(x);
    case UnaryKind::kTanh:
      return std::tanh(x);
    case UnaryKind::kErf:
      return std::erf(x);
    case UnaryKind::kGeluErf:
      return GeluErf(x);
    case UnaryKind::kGeluTanh:
      return GeluTanh(x);
    case UnaryKind::kIdentity:
      return x;
    case UnaryKind::kSigmoid:
      return static_cast<T>(1) / (static_cast<T>(1) + std::exp(-x));
    case UnaryKind::kSin:
      return std::sin(x);
    case UnaryKind::kCos:
      return std::cos(x);
  }
  return x;
}

// Row-major strides of `shape`, with 0 where the extent is 1 and the output's
// is not (numpy broadcasting); `shape` has the output's rank.
std::vector<int64_t> BroadcastStrides(std::span<const int64_t> shape,
                                      std::span<const int64_t> out_shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = (shape[i] == 1 && out_shape[i] != 1) ? 0 : s;
    s *= shape[i];
  }
  return strides;
}

// Calls f(offsets...) for every output index in row-major order, with the
// offset of that index in each operand (given by its strides).
template <size_t N, typename F>
void Odometer(std::span<const int64_t> out_shape, const std::vector<int64_t> (&strides)[N], F&& f) {
  const size_t rank = out_shape.size();
  int64_t total = 1;
  for (int64_t e : out_shape) total *= e;
  if (total == 0) return;
  std::vector<int64_t> index(rank, 0);
  int64_t off[N] = {};
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, off);
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (index[d] < out_shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * index[d];
      index[d] = 0;
    }
  }
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return BitsFloat(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
  // Subnormal half: mant * 2^-24, exact in float.
  const float v = static_cast<float>(mant) * 0x1.0p-24f;
  return (sign != 0u) ? -v : v;
}

uint16_t FloatToHalfBits(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (a < 0x1.0p-14f) {
    // Subnormal: multiples of 2^-24; nearbyint rounds to nearest even.
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 0x1.0p24f)));
  }
  const uint32_t ua = FloatBits(a);
  // Round the 23-bit mantissa to 10 bits, to nearest even, carrying into the exponent.
  const uint32_t rounded = ua + 0xfffu + ((ua >> 13) & 1u);
  return static_cast<uint16_t>(sign | (((rounded >> 13) - (112u << 10)) & 0x7fffu));
}

// BLAS rejects a leading dimension below 1 (xerbla, nothing computed), which
// an empty contraction (k = 0) would pass; C must still become beta * C.
int LeadingDim(int64_t columns) { return static_cast<int>(std::max<int64_t>(columns, 1)); }

}  // namespace

void InitHostKernels() { openblas_set_num_threads(1); }

int HostBlasThreads() { return openblas_get_num_threads(); }

template <>
void Gemm<float>(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              LeadingDim(trans_a ? m : k), b, LeadingDim(trans_b ? k : n), beta, c,
              LeadingDim(n));
}

template <>
void Gemm<double>(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                  const double* a, const double* b, double beta, double* c) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              LeadingDim(trans_a ? m : k), b, LeadingDim(trans_b ? k : n), beta, c,
              LeadingDim(n));
}

template <typename T>
void BatchedMatMul(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a, int64_t a_stride,
                   const T* b, int64_t b_stride, T* c, int64_t c_stride) {
  for (int64_t i = 0; i < batch; ++i) {
    Gemm<T>(false, false, m, n, k, 1, a + i * a_stride, b + i * b_stride, 0, c + i * c_stride);
  }
}

template <typename T>
void Binary(BinaryKind kind, int64_t n, const T* a, const T* b, T* out) {
  ForEachBinary<T>(kind, [&](auto op) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  });
}

template <typename T>
void BinaryRepeat(BinaryKind kind, int64_t outer, int64_t inner, const T* a, const T* b, T* out,
                  bool b_first) {
  ForEachBinary<T>(kind, [&](auto op) {
    for (int64_t o = 0; o < outer; ++o) {
      const T* ar = a + o * inner;
      T* orow = out + o * inner;
      if (b_first) {
        for (int64_t i = 0; i < inner; ++i) orow[i] = op(b[i], ar[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) orow[i] = op(ar[i], b[i]);
      }
    }
  });
}

template <typename T>
void BinaryScalar(BinaryKind kind, int64_t n, const T* a, T b, T* out, bool b_first) {
  ForEachBinary<T>(kind, [&](auto op) {
    if (b_first) {
      for (int64_t i = 0; i < n; ++i) out[i] = op(b, a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b);
    }
  });
}

template <typename T>
void BinaryBroadcast(BinaryKind kind, std::span<const int64_t> out_shape,
                     std::span<const int64_t> a_shape, const T* a,
                     std::span<const int64_t> b_shape, const T* b, T* out) {
  const std::vector<int64_t> strides[2] = {BroadcastStrides(a_shape, out_shape),
                                           BroadcastStrides(b_shape, out_shape)};
  Odometer(out_shape, strides,
           [&](int64_t flat, const int64_t* off) { out[flat] = Apply(kind, a[off[0]], b[off[1]]); });
}

template <typename T>
void Unary(UnaryKind kind, int64_t n, const T* x, T* out) {
  if (kind == UnaryKind::kRelu) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] > 0 ? x[i] : static_cast<T>(0);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = ApplyUnary(kind, x[i]);
}

template <typename T>
void ReluGrad(int64_t n, const T* x, const T* dy, T* dx) {
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0 ? dy[i] : static_cast<T>(0);
}

template <typename T>
void GeluGrad(int64_t n, const T* x, const T* dy, T* dx, bool tanh_approximation) {
  const T half = static_cast<T>(0.5);
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i];
    T d;
    if (tanh_approximation) {
      const T c = static_cast<T>(kSqrt2OverPi);
      const T a = static_cast<T>(kGeluTanhA);
      const T t = std::tanh(c * (v + a * v * v * v));
      d = half * (1 + t) + half * v * (1 - t * t) * c * (1 + 3 * a * v * v);
    } else {
      const T cdf = half * (1 + std::erf(v / static_cast<T>(std::numbers::sqrt2)));
      const T pdf = std::exp(-half * v * v) / static_cast<T>(std::sqrt(2 * std::numbers::pi));
      d = cdf + v * pdf;
    }
    dx[i] = dy[i] * d;
  }
}

template <typename T>
void SigmoidGrad(int64_t n, const T* y, const T* dy, T* dx) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i] * (static_cast<T>(1) - y[i]);
}

template <typename T>
void Where(std::span<const int64_t> out_shape, std::span<const int64_t> cond_shape,
           const uint8_t* cond, std::span<const int64_t> a_shape, const T* a,
           std::span<const int64_t> b_shape, const T* b, T* out) {
  const std::vector<int64_t> strides[3] = {BroadcastStrides(cond_shape, out_shape),
                                           BroadcastStrides(a_shape, out_shape),
                                           BroadcastStrides(b_shape, out_shape)};
  Odometer(out_shape, strides, [&](int64_t flat, const int64_t* off) {
    out[flat] = cond[off[0]] != 0 ? a[off[1]] : b[off[2]];
  });
}

template <typename T>
void Softmax(int64_t rows, int64_t cols, const T* x, T* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    const T mx = cols > 0 ? *std::max_element(xr, xr + cols) : T(0);
    T sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - mx);
      sum += yr[c];
    }
    const T inv = static_cast<T>(1) / sum;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}

template <typename T>
void SoftmaxGrad(int64_t rows, int64_t cols, const T* y, const T* dy, T* dx) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* yr = y + r * cols;
    const T* dyr = dy + r * cols;
    T dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += yr[c] * dyr[c];
    for (int64_t c = 0; c < cols; ++c) dx[r * cols + c] = yr[c] * (dyr[c] - dot);
  }
}

namespace {

// Mean and 1/sqrt(var + eps) of one row (biased variance, two passes).
template <typename T>
void RowMoments(int64_t cols, const T* xr, T epsilon, T& mean, T& inv_std) {
  T sum = 0;
  for (int64_t c = 0; c < cols; ++c) sum += xr[c];
  mean = sum / static_cast<T>(cols);
  T var = 0;
  for (int64_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
  var /= static_cast<T>(cols);
  inv_std = static_cast<T>(1) / std::sqrt(var + epsilon);
}

}  // namespace

template <typename T>
void LayerNorm(int64_t rows, int64_t cols, const T* x, const T* scale, const T* bias, T epsilon,
               T* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
    T mean, inv_std;
    RowMoments(cols, xr, epsilon, mean, inv_std);
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = (xr[c] - mean) * inv_std * scale[c] + (bias != nullptr ? bias[c] : T(0));
    }
  }
}

template <typename T>
void LayerNormGrad(int64_t rows, int64_t cols, const T* x, const T* scale, const T* dy, T epsilon,
                   T* dx, T* dscale, T* dbias) {
  std::fill(dscale, dscale + cols, T(0));
  std::fill(dbias, dbias + cols, T(0));
  const T n = static_cast<T>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    T mean, inv_std;
    RowMoments(cols, xr, epsilon, mean, inv_std);
    // g = dy * scale; dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)).
    T sum_g = 0, sum_gx = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = (xr[c] - mean) * inv_std;
      const T g = dyr[c] * scale[c];
      sum_g += g;
      sum_gx += g * xhat;
      dscale[c] += dyr[c] * xhat;
      dbias[c] += dyr[c];
    }
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = (xr[c] - mean) * inv_std;
      dx[r * cols + c] = inv_std * (dyr[c] * scale[c] - sum_g / n - xhat * sum_gx / n);
    }
  }
}

namespace {

// 1/sqrt(mean(x^2) + eps) of one row.
template <typename T>
T RowInvRms(int64_t cols, const T* xr, T epsilon) {
  T sum = 0;
  for (int64_t c = 0; c < cols; ++c) sum += xr[c] * xr[c];
  return static_cast<T>(1) / std::sqrt(sum / static_cast<T>(cols) + epsilon);
}

}  // namespace

template <typename T>
void RmsNorm(int64_t rows, int64_t cols, const T* x, const T* scale, T epsilon, T* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T inv_rms = RowInvRms(cols, xr, epsilon);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = xr[c] * inv_rms * scale[c];
  }
}

template <typename T>
void RmsNormGrad(int64_t rows, int64_t cols, const T* x, const T* scale, const T* dy, T epsilon,
                 T* dx, T* dscale) {
  std::fill(dscale, dscale + cols, T(0));
  const T n = static_cast<T>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * cols;
    const T* dyr = dy + r * cols;
    const T inv_rms = RowInvRms(cols, xr, epsilon);
    // g = dy * scale, xhat = x * inv_rms; dx = inv_rms * (g - xhat * mean(g * xhat)).
    T sum_gx = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = xr[c] * inv_rms;
      sum_gx += dyr[c] * scale[c] * xhat;
      dscale[c] += dyr[c] * xhat;
    }
    for (int64_t c = 0; c < cols; ++c) {
      dx[r * cols + c] = inv_rms * (dyr[c] * scale[c] - xr[c] * inv_rms * sum_gx / n);
    }
  }
}

template <typename T>
bool Gather(int64_t outer, int64_t axis_extent, int64_t inner, const T* table, int64_t n,
            const int64_t* indices, T* out) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = indices[j];
      if (idx < 0) idx += axis_extent;
      if (idx < 0 || idx >= axis_extent) return false;
      std::memcpy(out + (o * n + j) * inner, table + (o * axis_extent + idx) * inner,
                  sizeof(T) * static_cast<size_t>(inner));
    }
  }
  return true;
}

void Transpose(std::span<const int64_t> shape, std::span<const int64_t> perm, int64_t element_bytes,
               const void* x, void* out) {
  const size_t rank = shape.size();
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  std::vector<int64_t> out_shape(rank);
  std::vector<int64_t> strides[1] = {std::vector<int64_t>(rank)};
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = shape[perm[i]];
    strides[0][i] = in_strides[perm[i]];
  }
  const auto* src = static_cast<const char*>(x);
  auto* dst = static_cast<char*>(out);
  const auto eb = static_cast<size_t>(element_bytes);
  Odometer(std::span<const int64_t>(out_shape), strides, [&](int64_t flat, const int64_t* off) {
    std::memcpy(dst + static_cast<size_t>(flat) * eb, src + static_cast<size_t>(off[0]) * eb, eb);
  });
}

void CopyAxisRange(int64_t outer, int64_t inner, int64_t element_bytes, const void* src,
                   int64_t src_axis, int64_t begin, int64_t len, void* dst, int64_t dst_axis,
                   int64_t dst_begin) {
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  const int64_t row = inner * element_bytes;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(d + (o * dst_axis + dst_begin) * row, s + (o * src_axis + begin) * row,
                static_cast<size_t>(len * row));
  }
}

void SliceAxis(int64_t outer, int64_t inner, int64_t element_bytes, const void* x,
               int64_t axis_extent, int64_t begin, int64_t step, int64_t len, void* out) {
  const auto* s = static_cast<const char*>(x);
  auto* d = static_cast<char*>(out);
  const int64_t row = inner * element_bytes;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < len; ++j) {
      std::memcpy(d + (o * len + j) * row, s + (o * axis_extent + begin + j * step) * row,
                  static_cast<size_t>(row));
    }
  }
}

void Trilu(int64_t batch, int64_t rows, int64_t cols, int64_t k, bool upper, int64_t element_bytes,
           const void* x, void* out) {
  const auto* s = static_cast<const char*>(x);
  auto* d = static_cast<char*>(out);
  const auto eb = static_cast<size_t>(element_bytes);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const size_t off = static_cast<size_t>((b * rows + r) * cols + c) * eb;
        const bool keep = upper ? (c - r >= k) : (c - r <= k);
        if (keep) {
          std::memcpy(d + off, s + off, eb);
        } else {
          std::memset(d + off, 0, eb);
        }
      }
    }
  }
}

template <typename T>
void SumRows(int64_t outer, int64_t inner, const T* x, T* out) {
  std::fill(out, out + inner, T(0));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) out[i] += x[o * inner + i];
  }
}

template <typename T>
T MseLoss(int64_t n, const T* p, const T* y, double denominator) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (p[i] - y[i]) * (p[i] - y[i]);
  return static_cast<T>(sum / static_cast<T>(denominator));
}

template <typename T>
void MseLossGrad(int64_t n, const T* p, const T* y, double denominator, T* dp) {
  const T scale = static_cast<T>(2.0 / denominator);
  for (int64_t i = 0; i < n; ++i) dp[i] = scale * (p[i] - y[i]);
}

template <typename T>
void Sgd(int64_t n, const T* w, const T* dw, T lr, T* w_out) {
  for (int64_t i = 0; i < n; ++i) w_out[i] = w[i] - lr * dw[i];
}

template <typename T>
void Adam(int64_t n, const T* w, const T* dw, const T* m, const T* v, const AdamParams& params,
          T* w_out, T* m_out, T* v_out) {
  const T b1 = static_cast<T>(params.beta1);
  const T b2 = static_cast<T>(params.beta2);
  const T c1 = static_cast<T>(1 - std::pow(params.beta1, static_cast<double>(params.step)));
  const T c2 = static_cast<T>(1 - std::pow(params.beta2, static_cast<double>(params.step)));
  const T lr = static_cast<T>(params.lr);
  const T eps = static_cast<T>(params.epsilon);
  for (int64_t i = 0; i < n; ++i) {
    const T g = dw[i];
    const T mi = b1 * m[i] + (1 - b1) * g;
    const T vi = b2 * v[i] + (1 - b2) * g * g;
    m_out[i] = mi;
    v_out[i] = vi;
    w_out[i] = w[i] - lr * (mi / c1) / (std::sqrt(vi / c2) + eps);
  }
}

void HalfToFloat(int64_t n, const uint16_t* x, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(x[i]);
}

void FloatToHalf(int64_t n, const float* x, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalfBits(x[i]);
}

void BFloat16ToFloat(int64_t n, const uint16_t* x, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = BitsFloat(static_cast<uint32_t>(x[i]) << 16);
}

void FloatToBFloat16(int64_t n, const float* x, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = FloatBits(x[i]);
    if (std::isnan(x[i])) {
      out[i] = static_cast<uint16_t>((u >> 16) | 0x40u);
      continue;
    }
    out[i] = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
}

// Explicit instantiations: float and double.
#define DISTIR_HOST_KERNELS_INSTANTIATE(T)                                                         \
  template void BatchedMatMul<T>(int64_t, int64_t, int64_t, int64_t, const T*, int64_t, const T*,  \
                                 int64_t, T*, int64_t);                                            \
  template void Binary<T>(BinaryKind, int64_t, const T*, const T*, T*);                            \
  template void BinaryRepeat<T>(BinaryKind, int64_t, int64_t, const T*, const T*, T*, bool);       \
  template void BinaryScalar<T>(BinaryKind, int64_t, const T*, T, T*, bool);                       \
  template void BinaryBroadcast<T>(BinaryKind, std::span<const int64_t>, std::span<const int64_t>, \
                                   const T*, std::span<const int64_t>, const T*, T*);              \
  template void Unary<T>(UnaryKind, int64_t, const T*, T*);                                        \
  template void ReluGrad<T>(int64_t, const T*, const T*, T*);                                      \
  template void GeluGrad<T>(int64_t, const T*, const T*, T*, bool);                                \
  template void SigmoidGrad<T>(int64_t, const T*, const T*, T*);                                   \
  template void Where<T>(std::span<const int64_t>, std::span<const int64_t>, const uint8_t*,       \
                         std::span<const int64_t>, const T*, std::span<const int64_t>, const T*,   \
                         T*);                                                                      \
  template void Softmax<T>(int64_t, int64_t, const T*, T*);                                        \
  template void SoftmaxGrad<T>(int64_t, int64_t, const T*, const T*, T*);                          \
  template void LayerNorm<T>(int64_t, int64_t, const T*, const T*, const T*, T, T*);               \
  template void LayerNormGrad<T>(int64_t, int64_t, const T*, const T*, const T*, T, T*, T*, T*);   \
  template void RmsNorm<T>(int64_t, int64_t, const T*, const T*, T, T*);                           \
  template void RmsNormGrad<T>(int64_t, int64_t, const T*, const T*, const T*, T, T*, T*);         \
  template bool Gather<T>(int64_t, int64_t, int64_t, const T*, int64_t, const int64_t*, T*);       \
  template void SumRows<T>(int64_t, int64_t, const T*, T*);                                        \
  template T MseLoss<T>(int64_t, const T*, const T*, double);                                      \
  template void MseLossGrad<T>(int64_t, const T*, const T*, double, T*);                           \
  template void Sgd<T>(int64_t, const T*, const T*, T, T*);                                        \
  template void Adam<T>(int64_t, const T*, const T*, const T*, const T*, const AdamParams&, T*,    \
                        T*, T*);

DISTIR_HOST_KERNELS_INSTANTIATE(float)
DISTIR_HOST_KERNELS_INSTANTIATE(double)
#undef DISTIR_HOST_KERNELS_INSTANTIATE

}  // namespace distir::backend
