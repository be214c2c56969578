#include "backend/gpu/cuda_check.h"
#include "backend/gpu/device_buffer.h"

#include <utility>

namespace distir::gpu {

int DeviceCount() {
  int n = 0;
  // No driver or no device is a machine without GPUs, not an error.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error for later calls
    return 0;
  }
  return n;
}

Status SynchronizeDevice() {
  DISTIR_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return Status::Ok();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer b;
  // Explicit: nvcc (C++17) does not move an lvalue into a converting constructor.
  if (bytes == 0) return StatusOr<DeviceBuffer>(std::move(b));
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMalloc(&b.data_, bytes));
  b.size_ = bytes;
  return StatusOr<DeviceBuffer>(std::move(b));
}

Status DeviceBuffer::CopyFromHost(const void* host, size_t bytes) {
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice));
  return Status::Ok();
}

Status DeviceBuffer::CopyToHost(void* host, size_t bytes) const {
  DISTIR_CUDA_RETURN_IF_ERROR(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost));
  return Status::Ok();
}

}  // namespace distir::gpu
