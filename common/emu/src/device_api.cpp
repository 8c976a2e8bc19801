// The emulated device, streams and events of the emu runtime.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"
#include "state.h"

using namespace cudalab::emu;

struct CUstream_st {};
struct CUevent_st {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

cudaError_t cudaDeviceSynchronize() { return record(cudaSuccess); }

cudaError_t cudaDeviceReset() {
  free_all_allocations();
  reset_errors();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return record(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return record(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? record(cudaSuccess) : record(cudaErrorInvalidDevice);
}

// One device with the limits of compute capability 9.0 (an H100), so that a launch that fails on
// the course's GPUs fails here too. Its multiprocessors are the worker threads.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (p == nullptr) return record(cudaErrorInvalidValue);
  if (device != 0) return record(cudaErrorInvalidDevice);
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof p->name, "cudalab emu (CPU, %u worker threads)", worker_count());
  p->totalGlobalMem =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  p->sharedMemPerBlock = 48 * 1024;
  p->sharedMemPerBlockOptin = 227 * 1024;
  p->sharedMemPerMultiprocessor = 228 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->totalConstMem = 64 * 1024;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = static_cast<int>(worker_count());
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxBlocksPerMultiProcessor = 32;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->memoryBusWidth = 5120;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (stream == nullptr) return record(cudaErrorInvalidValue);
  *stream = new CUstream_st;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return record(cudaErrorInvalidResourceHandle);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return record(cudaSuccess); }

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return record(cudaErrorInvalidValue);
  *event = new CUevent_st;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return record(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

// Kernels have finished when their launch returns, so an event is the CPU's wall clock.
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (event == nullptr) return record(cudaErrorInvalidResourceHandle);
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return record(cudaSuccess);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (event == nullptr) return record(cudaErrorInvalidResourceHandle);
  return record(cudaSuccess);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return record(cudaErrorInvalidValue);
  if (start == nullptr || end == nullptr) return record(cudaErrorInvalidResourceHandle);
  if (!start->recorded || !end->recorded) return record(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}
