// Matrix products on the GPU through cuBLAS (cublasGemmEx), row-major as the
// rest of DistIR, in f32, f16 and bf16.
//
// cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so the wrapper swaps the operands instead of copying
// anything. Every dtype accumulates in f32 (CUBLAS_COMPUTE_32F: f16/bf16 inputs
// run on tensor cores with f32 accumulation, f32 stays true f32 rather than
// TF32), so results match the host kernels up to the inputs' storage rounding.

#pragma once

#include <cstdint>
#include <memory>

#include "backend/gpu/gpu_types.h"
#include "support/status_or.h"

namespace distir::gpu {

/// Owns one cuBLAS handle bound to one stream. Not thread-safe: one per rank.
class CublasGemm {
 public:
  /// A handle on the current device whose work goes to `stream` (a
  /// cudaStream_t; nullptr: the default stream).
  static StatusOr<std::unique_ptr<CublasGemm>> Create(void* stream = nullptr);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  /// c[m x n] = alpha * op(a) * op(b) + beta * c, all row-major on the device;
  /// a is stored k x m when trans_a (else m x k), b is n x k when trans_b (else
  /// k x n); a, b and c have dtype t. Asynchronous on the handle's stream.
  Status Gemm(GpuDType t, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
              const void* a, const void* b, float beta, void* c);
  /// As above with C in `c_type` (f32 from half operands: a weight gradient
  /// under Megatron's gradient accumulation fusion, ir/gemm_accumulation.h).
  Status Gemm(GpuDType t, GpuDType c_type, bool trans_a, bool trans_b, int64_t m, int64_t n,
              int64_t k, float alpha, const void* a, const void* b, float beta, void* c);

  /// `batch` independent Gemms in one call (cublasGemmStridedBatchedEx):
  /// product i reads a + i * stride_a and b + i * stride_b and writes
  /// c + i * stride_c, strides in elements; a stride of 0 reuses one operand
  /// for every product (a matrix broadcast against a batch).
  Status GemmStridedBatched(GpuDType t, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const void* a, int64_t stride_a, const void* b,
                            int64_t stride_b, float beta, void* c, int64_t stride_c, int64_t batch);

 private:
  struct Impl;
  explicit CublasGemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace distir::gpu
