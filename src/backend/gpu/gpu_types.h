// Element types and small shared definitions of the CUDA backend's plain C++ API.
//
// The GPU headers (gpu_kernels.h, device_buffer.h, cublas_gemm.h, nccl_comm.h)
// expose no CUDA types, so the executor and the tests compile with the host
// compiler alone: streams travel as `void*` (a cudaStream_t; nullptr is the
// legacy default stream) and element types as GpuDType. Only the .cu files
// include the CUDA, cuBLAS and NCCL headers.

#pragma once

#include <cstddef>

namespace distir::gpu {

/// The floating-point types the GPU path runs: f16 and bf16 are stored as such
/// and computed in f32 inside every kernel (accumulations included).
enum class GpuDType { kF32, kF16, kBF16 };

/// Bytes per element: 4, 2, 2.
inline size_t ByteWidth(GpuDType t) { return t == GpuDType::kF32 ? 4 : 2; }

/// "f32", "f16", "bf16".
inline const char* GpuDTypeName(GpuDType t) {
  return t == GpuDType::kF32 ? "f32" : t == GpuDType::kF16 ? "f16" : "bf16";
}

}  // namespace distir::gpu
