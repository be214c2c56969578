// Device memory for the GPU backend: an owning buffer and the device count.
//
// A plain C++ interface over cudaMalloc/cudaMemcpy (no CUDA types), used by the
// GPU executor, the calibrator's GPU benchmarks and the GPU tests. Errors are
// Status values naming the CUDA call (cuda_check.h).

#pragma once

#include <cstddef>

#include "support/status_or.h"

namespace distir::gpu {

/// Visible CUDA devices; 0 when there is no driver or no GPU (never an error).
int DeviceCount();

/// Waits for all work on the current device (cudaDeviceSynchronize).
Status SynchronizeDevice();

/// An owning allocation of device memory on the current device. Move-only;
/// freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  /// `bytes` of uninitialised device memory (a null buffer for 0 bytes).
  static StatusOr<DeviceBuffer> Allocate(size_t bytes);

  void* data() const { return data_; }
  size_t size() const { return size_; }

  /// Synchronous copies of `bytes` from / to host memory. REQUIRES: bytes <= size().
  Status CopyFromHost(const void* host, size_t bytes);
  Status CopyToHost(void* host, size_t bytes) const;

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace distir::gpu
