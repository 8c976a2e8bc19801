// DeviceArray<T>: device memory for a test, filled from the host, freed by its destructor (also
// when an assertion ends the test early). Optional slack elements behind the data, holding a fill
// value, let a test see writes past the end of an output.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cudalab/cuda_check.h"

// On the emu's runtime (emu, and every checker), the array is allocated "at" the test's line that
// makes it, so that a diagnostic names that line rather than this file's.
#if defined(CUDALAB_EMU) || defined(CUDALAB_CHECKER_OF_CUDA)
#define CUDALAB_ARRAY_MADE_AT , cudalab_source_location where = cudalab_source_location::current()
#define CUDALAB_ARRAY_WHERE , where
#else
#define CUDALAB_ARRAY_MADE_AT
#define CUDALAB_ARRAY_WHERE
#endif

namespace cudalab {

template <class T>
class DeviceArray {
 public:
  // A copy of `host`, followed by `slack` copies of `fill`.
  explicit DeviceArray(
      const std::vector<T>& host, size_t slack = 0, T fill = T {} CUDALAB_ARRAY_MADE_AT)
      : size_(host.size() + slack) {
    std::vector<T> all(host);
    all.resize(size_, fill);
    CUDA_CHECK(cudaMalloc(&data_, bytes() CUDALAB_ARRAY_WHERE));
    CUDA_CHECK(cudaMemcpy(data_, all.data(), bytes(), cudaMemcpyHostToDevice));
  }
  // n copies of `fill`.
  DeviceArray(size_t n, T fill CUDALAB_ARRAY_MADE_AT)
      : DeviceArray(
            std::vector<T>(n, fill), 0, T {} CUDALAB_ARRAY_WHERE) {}
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data_); }

  T* get() const { return data_; }
  size_t size() const { return size_; }
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  size_t bytes() const { return size_ * sizeof(T); }
  T* data_ = nullptr;
  size_t size_;
};

}  // namespace cudalab
