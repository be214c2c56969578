// Small device-side helpers of the GPU executor that gpu_kernels.h lacks:
// storing an f32 scalar result (MSELoss's accumulator) into an f16 or bf16
// tensor. Plain C++ interface (no CUDA types); the kernel lives in
// gpu_convert.cu. Launches are asynchronous, as in gpu_kernels.h.

#pragma once

#include <cstdint>

#include "backend/gpu/gpu_types.h"
#include "support/status.h"

namespace distir::gpu {

/// dst[i] = src[i] rounded to `t` (to nearest even) for i < n; src is f32 on
/// the device, dst holds n elements of `t`. src and dst must not overlap.
Status LaunchStoreF32(GpuDType t, int64_t n, const float* src, void* dst, void* stream = nullptr);

}  // namespace distir::gpu
