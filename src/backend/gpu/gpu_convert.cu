// f32 -> f32/f16/bf16 stores for the GPU executor (see gpu_convert.h).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/gpu/cuda_check.h"
#include "backend/gpu/gpu_convert.h"

namespace distir::gpu {
namespace {

template <typename T>
__device__ T FromFloat(float x);
template <>
__device__ float FromFloat<float>(float x) {
  return x;
}
template <>
__device__ __half FromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename T>
__global__ void StoreKernel(int64_t n, const float* src, T* dst) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = FromFloat<T>(src[i]);
}

template <typename T>
Status Launch(int64_t n, const float* src, void* dst, void* stream) {
  if (n == 0) return Status::Ok();
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  StoreKernel<T><<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      n, src, static_cast<T*>(dst));
  DISTIR_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

}  // namespace

Status LaunchStoreF32(GpuDType t, int64_t n, const float* src, void* dst, void* stream) {
  switch (t) {
    case GpuDType::kF32:
      return Launch<float>(n, src, dst, stream);
    case GpuDType::kF16:
      return Launch<__half>(n, src, dst, stream);
    case GpuDType::kBF16:
      return Launch<__nv_bfloat16>(n, src, dst, stream);
  }
  return Internal() << "unknown GpuDType";
}

}  // namespace distir::gpu
