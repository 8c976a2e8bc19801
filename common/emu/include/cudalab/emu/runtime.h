// The host-side CUDA runtime API subset of the emu backend.
// Kernels run synchronously at launch; their errors surface as on a GPU: launch errors through
// cudaGetLastError, execution errors (sticky) through the next synchronizing call.
#pragma once

#include <cstring>
#include <source_location>

#include "cudalab/emu/types.h"

using cudalab_source_location = std::source_location;

cudaError_t cudaMalloc(void** devPtr, size_t size,
                       cudalab_source_location where = cudalab_source_location::current());
template <class T>
cudaError_t cudaMalloc(T** devPtr, size_t size,
                       cudalab_source_location where = cudalab_source_location::current()) {
  return cudaMalloc(reinterpret_cast<void**>(devPtr), size, where);
}
cudaError_t cudaFree(void* devPtr,
                     cudalab_source_location where = cudalab_source_location::current());
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* devPtr, int value, size_t count);
cudaError_t cudaMallocHost(void** ptr, size_t size);
template <class T>
cudaError_t cudaMallocHost(T** ptr, size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
cudaError_t cudaFreeHost(void* ptr);

cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

namespace cudalab::emu {
// Shared by the symbol copies below: checks the range and records the error.
cudaError_t copy_symbol(void* dst, const void* src, size_t count, size_t offset, size_t symbol_size,
                        bool to_symbol);
}  // namespace cudalab::emu

// __constant__ and __device__ variables are ordinary globals on the emu backend.
template <class T>
cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t count, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
  return cudalab::emu::copy_symbol(&symbol, src, count, offset, sizeof(T), true);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  return cudalab::emu::copy_symbol(dst, &symbol, count, offset, sizeof(T), false);
}
