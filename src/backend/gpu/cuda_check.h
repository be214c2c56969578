// Status-returning checks for CUDA, cuBLAS and NCCL calls (STYLE.md §5.4), for
// the backend's .cu files only (this header includes the CUDA headers).
// Each failure becomes an Internal Status naming the call, the library's error
// string and the call site's file:line, as nccl-tests' CUDACHECK does, without
// printing or exiting.

#pragma once

#include <cublas_api.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "support/status.h"

namespace distir::gpu::internal {

inline Status CudaError(cudaError_t e, const char* call, const char* file, int line) {
  return Internal(SourceLoc{file, line, 0, ""})
         << call << " failed: " << cudaGetErrorName(e) << ": " << cudaGetErrorString(e);
}
inline Status CublasError(cublasStatus_t e, const char* call, const char* file, int line) {
  return Internal(SourceLoc{file, line, 0, ""})
         << call << " failed: cuBLAS status " << static_cast<int>(e);
}
inline Status NcclError(ncclResult_t e, const char* call, const char* file, int line) {
  return Internal(SourceLoc{file, line, 0, ""}) << call << " failed: " << ncclGetErrorString(e);
}

}  // namespace distir::gpu::internal

#define DISTIR_CUDA_RETURN_IF_ERROR(call)                                                   \
  do {                                                                                      \
    cudaError_t _distir_e = (call);                                                         \
    if (_distir_e != cudaSuccess)                                                           \
      return ::distir::gpu::internal::CudaError(_distir_e, #call, __FILE__, __LINE__);      \
  } while (0)

#define DISTIR_CUBLAS_RETURN_IF_ERROR(call)                                                 \
  do {                                                                                      \
    cublasStatus_t _distir_e = (call);                                                      \
    if (_distir_e != CUBLAS_STATUS_SUCCESS)                                                 \
      return ::distir::gpu::internal::CublasError(_distir_e, #call, __FILE__, __LINE__);    \
  } while (0)

#define DISTIR_NCCL_RETURN_IF_ERROR(call)                                                   \
  do {                                                                                      \
    ncclResult_t _distir_e = (call);                                                        \
    if (_distir_e != ncclSuccess)                                                           \
      return ::distir::gpu::internal::NcclError(_distir_e, #call, __FILE__, __LINE__);      \
  } while (0)
