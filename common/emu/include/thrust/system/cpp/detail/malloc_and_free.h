// Thrust on the emu backend: thrust::device_malloc and Thrust's temporary buffers on its C++
// system come from managed memory (see ../memory_resource.h), so that a device_ptr holds device
// memory that cudaMemcpy and kernels accept. Found before Thrust's own file of this name.
#pragma once

#include <thrust/detail/config.h>
#include <thrust/detail/raw_pointer_cast.h>
#include <thrust/system/cpp/detail/execution_policy.h>
#include <thrust/system/detail/sequential/malloc_and_free.h>

#include <cstddef>

#include "cudalab/emu/runtime.h"

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cpp {
namespace detail {
// Preferred to the sequential system's std::malloc for the C++ system's own policies (a closer
// base).
template <typename DerivedPolicy>
inline void* malloc(execution_policy<DerivedPolicy>&, std::size_t n) {
  void* p = nullptr;
  return cudaMallocManaged(&p, n) == cudaSuccess ? p : nullptr;
}
template <typename DerivedPolicy, typename Pointer>
inline void free(execution_policy<DerivedPolicy>&, Pointer ptr) {
  cudaFree(thrust::raw_pointer_cast(ptr));
}
}  // namespace detail
}  // namespace cpp
}  // namespace system
THRUST_NAMESPACE_END
