#include <cublas_v2.h>

#include "backend/gpu/cublas_gemm.h"
#include "backend/gpu/cublas_library.h"
#include "backend/gpu/cuda_check.h"

namespace distir::gpu {

// cuBLAS is called through the functions LoadCublas loaded (cublas_library.h).
struct CublasGemm::Impl {
  const CublasLibrary* cublas = nullptr;
  cublasHandle_t handle = nullptr;
  ~Impl() {
    if (handle != nullptr) cublas->destroy(handle);
  }
};

namespace {

cudaDataType_t CudaType(GpuDType t) {
  switch (t) {
    case GpuDType::kF32:
      return CUDA_R_32F;
    case GpuDType::kF16:
      return CUDA_R_16F;
    case GpuDType::kBF16:
      return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

}  // namespace

CublasGemm::CublasGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CublasGemm::~CublasGemm() = default;

StatusOr<std::unique_ptr<CublasGemm>> CublasGemm::Create(void* stream) {
  auto impl = std::make_unique<Impl>();
  DISTIR_ASSIGN_OR_RETURN(impl->cublas, LoadCublas());
  DISTIR_CUBLAS_RETURN_IF_ERROR(impl->cublas->create(&impl->handle));
  DISTIR_CUBLAS_RETURN_IF_ERROR(
      impl->cublas->set_stream(impl->handle, static_cast<cudaStream_t>(stream)));
  return std::unique_ptr<CublasGemm>(new CublasGemm(std::move(impl)));
}

Status CublasGemm::Gemm(GpuDType t, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                        float alpha, const void* a, const void* b, float beta, void* c) {
  return Gemm(t, t, trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

Status CublasGemm::Gemm(GpuDType t, GpuDType c_type, bool trans_a, bool trans_b, int64_t m,
                        int64_t n, int64_t k, float alpha, const void* a, const void* b, float beta,
                        void* c) {
  if (m == 0 || n == 0) return Status::Ok();
  // Leading dimensions of the row-major operands as stored.
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n;
  // Column-major C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  DISTIR_CUBLAS_RETURN_IF_ERROR(impl_->cublas->gemm_ex(
      impl_->handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b, CudaType(t),
      static_cast<int>(ldb), a, CudaType(t), static_cast<int>(lda), &beta, c, CudaType(c_type),
      static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return Status::Ok();
}

Status CublasGemm::GemmStridedBatched(GpuDType t, bool trans_a, bool trans_b, int64_t m, int64_t n,
                                      int64_t k, float alpha, const void* a, int64_t stride_a,
                                      const void* b, int64_t stride_b, float beta, void* c,
                                      int64_t stride_c, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return Status::Ok();
  const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n;
  // As Gemm: each column-major C_i^T = op(B_i)^T op(A_i)^T.
  DISTIR_CUBLAS_RETURN_IF_ERROR(impl_->cublas->gemm_strided_batched_ex(
      impl_->handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b, CudaType(t),
      static_cast<int>(ldb), stride_b, a, CudaType(t), static_cast<int>(lda), stride_a, &beta, c,
      CudaType(t), static_cast<int>(ldc), stride_c, static_cast<int>(batch), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
  return Status::Ok();
}

}  // namespace distir::gpu
