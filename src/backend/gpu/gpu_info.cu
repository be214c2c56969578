#include "backend/gpu/gpu_info.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>

namespace distir::gpu {

StatusOr<GpuInfo> QueryGpus() {
  GpuInfo info;
  cudaRuntimeGetVersion(&info.cuda_runtime_version);
  if (ncclGetVersion(&info.nccl_version) != ncclSuccess) {
    return Internal() << "ncclGetVersion failed";
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // No driver (as on build machines) is the normal CPU-only case, not an error.
    info.driver_note = cudaGetErrorString(err);
    cudaGetLastError();
    return info;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    info.devices.push_back({i, prop.name, prop.major, prop.minor,
                            static_cast<int64_t>(prop.totalGlobalMem)});
  }
  return info;
}

std::string DescribeGpus(const GpuInfo& info) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "CUDA runtime %d.%d, NCCL %d.%d.%d", info.cuda_runtime_version / 1000,
                (info.cuda_runtime_version % 1000) / 10, info.nccl_version / 10000,
                (info.nccl_version / 100) % 100, info.nccl_version % 100);
  std::string out = buf;
  if (info.devices.empty()) {
    return out + ", no usable GPU" + (info.driver_note.empty() ? "" : " (" + info.driver_note + ")");
  }
  out += ", " + std::to_string(info.devices.size()) + " GPU" + (info.devices.size() > 1 ? "s" : "") + ":";
  for (const GpuDevice& d : info.devices) {
    std::snprintf(buf, sizeof buf, " %s (sm_%d%d, %.1f GiB)", d.name.c_str(), d.compute_major,
                  d.compute_minor, static_cast<double>(d.memory_bytes) / (1 << 30));
    out += buf;
  }
  return out;
}

}  // namespace distir::gpu
