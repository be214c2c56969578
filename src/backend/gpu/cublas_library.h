// cuBLAS, loaded when the first GEMM handle is made instead of linked into
// distir: linking libcublas (and the libcublasLt it needs) cost every distir
// process about 0.35 s at start, 25,000 page faults touching the libraries'
// relocations and kernels (CUDA 13, measured 2026-11-30 with an empty `main`
// linked against each CUDA library: cudart 3 ms, NCCL 5 ms, cuBLAS 336 ms),
// in `distir search`, `opt` and `report` too, which never multiply on a GPU.
// The executor's GEMMs (cublas_gemm.h) call these five functions.

#pragma once

#include <cublas_v2.h>

#include "support/status_or.h"

namespace distir::gpu {

/// The cuBLAS functions the GEMM wrapper calls, by their C signatures
/// (cublas_api.h; C++ overloads of the same names make `decltype` ambiguous).
struct CublasLibrary {
  cublasStatus_t (*create)(cublasHandle_t* handle) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t handle) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t handle, cudaStream_t stream) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* a, cudaDataType a_type, int lda, const void* b,
                            cudaDataType b_type, int ldb, const void* beta, void* c,
                            cudaDataType c_type, int ldc, cublasComputeType_t compute_type,
                            cublasGemmAlgo_t algo) = nullptr;
  cublasStatus_t (*gemm_strided_batched_ex)(
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
      int k, const void* alpha, const void* a, cudaDataType a_type, int lda, long long int stride_a,
      const void* b, cudaDataType b_type, int ldb, long long int stride_b, const void* beta,
      void* c, cudaDataType c_type, int ldc, long long int stride_c, int batch_count,
      cublasComputeType_t compute_type, cublasGemmAlgo_t algo) = nullptr;
};

/// libcublas.so.<major> (the major version of the headers built against),
/// found as the dynamic loader finds libraries (distir's run path includes
/// the CUDA libraries' directory) or at the path CMake found it; loaded on the
/// first call, once. FailedPrecondition naming the library and the loader's
/// message, or the missing function, where it cannot be loaded.
StatusOr<const CublasLibrary*> LoadCublas();

}  // namespace distir::gpu
