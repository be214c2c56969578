// What the CUDA/NCCL backend sees on this machine.
//
// Built only when nvcc is found (DISTIR_HAVE_CUDA). Reports the CUDA runtime and
// NCCL versions the binary was linked with and the GPUs the driver exposes, so
// `distir --version` can say whether the follow-up stage can run here. A machine
// without a driver or a GPU is not an error: it has zero devices.

#pragma once

#include <string>
#include <vector>

#include "support/status_or.h"

namespace distir::gpu {

struct GpuDevice {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int64_t memory_bytes = 0;
};

struct GpuInfo {
  int cuda_runtime_version = 0;  ///< e.g. 13000 for CUDA 13.0
  int nccl_version = 0;          ///< e.g. 22809 for NCCL 2.28.9
  std::string driver_note;       ///< why no device is usable, when none is
  std::vector<GpuDevice> devices;
};

/// Queries the runtime, NCCL and the visible devices. Never fails for a missing
/// driver or GPU (devices is then empty and driver_note says why); returns an
/// error only when NCCL itself cannot report its version.
StatusOr<GpuInfo> QueryGpus();

/// One line for `distir --version`, e.g.
/// "CUDA runtime 13.0, NCCL 2.28.9, 1 GPU: NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)".
std::string DescribeGpus(const GpuInfo& info);

}  // namespace distir::gpu
