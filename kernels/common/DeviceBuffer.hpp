#pragma once
/**
 * @file Owning device allocations (plain cudaMalloc, never managed memory).
 */
#include <cstddef>
#include <utility>

#include "GpuCheck.hpp"

namespace moesim::kernels {

/** @brief cudaMalloc'd bytes on one device, freed on destruction; movable, not copyable. */
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
    CUDA_CHECK(cudaSetDevice(device));
    if (bytes > 0) CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer moved(std::move(other));
    swap(moved);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }

  /** @brief Frees now (errors are ignored: this also runs from destructors while unwinding). */
  void reset() noexcept {
    if (data_ != nullptr) {
      int current = 0;
      (void)cudaGetDevice(&current);
      (void)cudaSetDevice(device_);
      (void)cudaFree(data_);
      (void)cudaSetDevice(current);
    }
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(bytes_, other.bytes_);
    std::swap(data_, other.data_);
  }

  int device_ = 0;
  std::size_t bytes_ = 0;
  void* data_ = nullptr;
};

}  // namespace moesim::kernels
