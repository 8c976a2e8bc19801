// Thrust on the emu backend: Thrust's own C++ ("cpp") system runs the algorithms on the host, and
// this file, found before Thrust's own memory_resource.h, gives its vectors device memory.
//
// The prelude selects THRUST_DEVICE_SYSTEM_CPP, so thrust::device_vector<T> keeps its elements in
// the memory this resource hands out: managed memory from cudaMallocManaged, which Thrust's host
// algorithms may read and write and which kernels may use (thrust::raw_pointer_cast(v.data())
// passed to a kernel), with every check of device memory. Thrust's algorithms themselves run
// serially on the host: correct, but not as fast as on a GPU.
#pragma once

#include <thrust/detail/config.h>
#include <thrust/mr/fancy_pointer_resource.h>
#include <thrust/mr/memory_resource.h>
#include <thrust/system/cpp/pointer.h>

#include <cstddef>
#include <new>

#include "cudalab/emu/runtime.h"

namespace cudalab::emu {
// Managed memory as a Thrust memory resource; an allocation that fails throws std::bad_alloc,
// as Thrust's own resources do.
class ManagedMemoryResource final : public thrust::mr::memory_resource<> {
 public:
  void* do_allocate(std::size_t bytes, std::size_t) override {
    void* p = nullptr;
    if (cudaMallocManaged(&p, bytes) != cudaSuccess) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void* p, std::size_t, std::size_t) override { cudaFree(p); }
};
}  // namespace cudalab::emu

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cpp {
namespace detail {
typedef thrust::mr::fancy_pointer_resource<cudalab::emu::ManagedMemoryResource,
                                           thrust::cpp::pointer<void>>
    native_resource;
typedef thrust::mr::fancy_pointer_resource<cudalab::emu::ManagedMemoryResource,
                                           thrust::cpp::universal_pointer<void>>
    universal_native_resource;
}  // namespace detail
typedef detail::native_resource memory_resource;
typedef detail::universal_native_resource universal_memory_resource;
typedef detail::native_resource universal_host_pinned_memory_resource;
}  // namespace cpp
}  // namespace system
THRUST_NAMESPACE_END
