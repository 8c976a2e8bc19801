// cub::detail::device_synchronize for the emu backend: host and device code are one compilation
// here (with __CUDA_ARCH__ defined), and CUB calls it from the host (with debug_synchronous), so it
// is cudaDeviceSynchronize; CUB's own file would take the device-side path of CUDA 11.6's
// dynamic parallelism.
#pragma once

#include <cuda_runtime_api.h>

#include <cub/util_arch.cuh>
#include <cub/util_namespace.cuh>

CUB_NAMESPACE_BEGIN
namespace detail {

CUB_RUNTIME_FUNCTION inline cudaError_t device_synchronize() { return cudaDeviceSynchronize(); }

}  // namespace detail
CUB_NAMESPACE_END
