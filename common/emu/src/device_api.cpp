// The emulated device: its properties and attributes, versions, flags and limits.
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "cudalab/emu/inspect.h"
#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "device_limits.h"
#include "errors.h"
#include "launches.h"
#include "memory.h"
#include "symbolize.h"

using namespace cudalab::emu;

namespace {
constexpr int kClockKHz = 1000000;  // clock64() counts nanoseconds (clocks.cpp): a 1 GHz device
unsigned device_flags = 0;
cudaFuncCache cache_config = cudaFuncCachePreferNone;
size_t limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};  // CUDA's defaults, by cudaLimit

// One device with the limits of compute capability 9.0 (device_limits.h) and the H100's other
// properties. Its multiprocessors are the worker threads.
cudaDeviceProp properties() {
  using namespace device_limits;
  cudaDeviceProp p{};
  std::snprintf(p.name, sizeof p.name, "cudalab emu (CPU, %u worker threads)", worker_count());
  p.totalGlobalMem =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  p.sharedMemPerBlock = kSharedPerBlock;
  p.sharedMemPerBlockOptin = kSharedPerBlockOptIn;
  p.sharedMemPerMultiprocessor = kSharedPerMultiprocessor;
  p.reservedSharedMemPerBlock = kReservedSharedPerBlock;
  p.regsPerBlock = kRegisters;
  p.regsPerMultiprocessor = kRegisters;
  p.warpSize = kWarpSize;
  p.memPitch = 2147483647;
  p.maxThreadsPerBlock = kThreadsPerBlock;
  for (int d = 0; d < 3; ++d) {
    p.maxThreadsDim[d] = kBlockDim[d];
    p.maxGridSize[d] = kGridDim[d];
  }
  p.totalConstMem = kConstantBytes;
  p.major = 9;
  p.minor = 0;
  p.textureAlignment = 512;
  p.texturePitchAlignment = 32;
  p.multiProcessorCount = static_cast<int>(worker_count());
  p.canMapHostMemory = 1;
  p.concurrentKernels = 1;
  p.asyncEngineCount = 1;
  p.unifiedAddressing = 1;
  p.memoryBusWidth = 5120;
  p.l2CacheSize = 50 * 1024 * 1024;
  p.maxThreadsPerMultiProcessor = kThreadsPerMultiprocessor;
  p.maxBlocksPerMultiProcessor = kBlocksPerMultiprocessor;
  p.streamPrioritiesSupported = 1;
  p.globalL1CacheSupported = 1;
  p.localL1CacheSupported = 1;
  p.managedMemory = 1;
  p.concurrentManagedAccess = 1;
  p.pageableMemoryAccess = 0;
  p.hostNativeAtomicSupported = 1;
  p.cooperativeLaunch = 1;
  p.persistingL2CacheMaxSize = 32768000;  // accepted, as the H100's; a CPU's caches do as they do
  p.accessPolicyMaxWindowSize = 134217728;
  p.hostRegisterSupported = 1;
  p.directManagedMemAccessFromHost = 1;
  p.canUseHostPointerForRegisteredMem = 1;
  p.memoryPoolsSupported = 1;
  p.computePreemptionSupported = 1;
  p.deviceNumaId = -1;
  p.hostNumaId = -1;
  return p;
}

// cudaDeviceGetAttribute's answer, derived from the properties above; -1 where emu has none.
long attribute(cudaDeviceAttr a, const cudaDeviceProp& p) {
  switch (a) {
    case cudaDevAttrMaxThreadsPerBlock:
      return p.maxThreadsPerBlock;
    case cudaDevAttrMaxBlockDimX:
      return p.maxThreadsDim[0];
    case cudaDevAttrMaxBlockDimY:
      return p.maxThreadsDim[1];
    case cudaDevAttrMaxBlockDimZ:
      return p.maxThreadsDim[2];
    case cudaDevAttrMaxGridDimX:
      return p.maxGridSize[0];
    case cudaDevAttrMaxGridDimY:
      return p.maxGridSize[1];
    case cudaDevAttrMaxGridDimZ:
      return p.maxGridSize[2];
    case cudaDevAttrMaxSharedMemoryPerBlock:
      return static_cast<long>(p.sharedMemPerBlock);
    case cudaDevAttrTotalConstantMemory:
      return static_cast<long>(p.totalConstMem);
    case cudaDevAttrWarpSize:
      return p.warpSize;
    case cudaDevAttrMaxPitch:
      return static_cast<long>(p.memPitch);
    case cudaDevAttrMaxRegistersPerBlock:
      return p.regsPerBlock;
    case cudaDevAttrClockRate:
      return kClockKHz;
    case cudaDevAttrMemoryClockRate:
      return kClockKHz;
    case cudaDevAttrTextureAlignment:
      return static_cast<long>(p.textureAlignment);
    case cudaDevAttrGpuOverlap:
      return 1;
    case cudaDevAttrMultiProcessorCount:
      return p.multiProcessorCount;
    case cudaDevAttrKernelExecTimeout:
      return 0;
    case cudaDevAttrIntegrated:
      return p.integrated;
    case cudaDevAttrCanMapHostMemory:
      return p.canMapHostMemory;
    case cudaDevAttrComputeMode:
      return cudaComputeModeDefault;
    case cudaDevAttrConcurrentKernels:
      return p.concurrentKernels;
    case cudaDevAttrEccEnabled:
      return p.ECCEnabled;
    case cudaDevAttrPciBusId:
      return p.pciBusID;
    case cudaDevAttrPciDeviceId:
      return p.pciDeviceID;
    case cudaDevAttrPciDomainId:
      return p.pciDomainID;
    case cudaDevAttrTccDriver:
      return p.tccDriver;
    case cudaDevAttrGlobalMemoryBusWidth:
      return p.memoryBusWidth;
    case cudaDevAttrL2CacheSize:
      return p.l2CacheSize;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      return p.maxThreadsPerMultiProcessor;
    case cudaDevAttrAsyncEngineCount:
      return p.asyncEngineCount;
    case cudaDevAttrUnifiedAddressing:
      return p.unifiedAddressing;
    case cudaDevAttrComputeCapabilityMajor:
      return p.major;
    case cudaDevAttrComputeCapabilityMinor:
      return p.minor;
    case cudaDevAttrStreamPrioritiesSupported:
      return p.streamPrioritiesSupported;
    case cudaDevAttrGlobalL1CacheSupported:
      return p.globalL1CacheSupported;
    case cudaDevAttrLocalL1CacheSupported:
      return p.localL1CacheSupported;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      return static_cast<long>(p.sharedMemPerMultiprocessor);
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      return p.regsPerMultiprocessor;
    case cudaDevAttrManagedMemory:
      return p.managedMemory;
    case cudaDevAttrIsMultiGpuBoard:
      return p.isMultiGpuBoard;
    case cudaDevAttrMultiGpuBoardGroupID:
      return p.multiGpuBoardGroupID;
    case cudaDevAttrHostNativeAtomicSupported:
      return p.hostNativeAtomicSupported;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio:
      return 2;
    case cudaDevAttrPageableMemoryAccess:
      return p.pageableMemoryAccess;
    case cudaDevAttrConcurrentManagedAccess:
      return p.concurrentManagedAccess;
    case cudaDevAttrComputePreemptionSupported:
      return p.computePreemptionSupported;
    case cudaDevAttrCanUseHostPointerForRegisteredMem:
      return p.canUseHostPointerForRegisteredMem;
    case cudaDevAttrCooperativeLaunch:
      return p.cooperativeLaunch;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      return static_cast<long>(p.sharedMemPerBlockOptin);
    case cudaDevAttrCanFlushRemoteWrites:
      return 0;
    case cudaDevAttrHostRegisterSupported:
      return p.hostRegisterSupported;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
      return p.pageableMemoryAccessUsesHostPageTables;
    case cudaDevAttrDirectManagedMemAccessFromHost:
      return p.directManagedMemAccessFromHost;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      return p.maxBlocksPerMultiProcessor;
    case cudaDevAttrMaxPersistingL2CacheSize:
      return p.persistingL2CacheMaxSize;
    case cudaDevAttrMaxAccessPolicyWindowSize:
      return p.accessPolicyMaxWindowSize;
    case cudaDevAttrReservedSharedMemoryPerBlock:
      return static_cast<long>(p.reservedSharedMemPerBlock);
    case cudaDevAttrMemoryPoolsSupported:
      return p.memoryPoolsSupported;
    case cudaDevAttrClusterLaunch:
      return p.clusterLaunch;
    case cudaDevAttrNumaConfig:
      return p.deviceNumaConfig;
    case cudaDevAttrNumaId:
      return p.deviceNumaId;
    case cudaDevAttrMpsEnabled:
      return p.mpsEnabled;
    case cudaDevAttrHostNumaId:
      return p.hostNumaId;
  }
  return -1;
}
}  // namespace

// In a kernel (dynamic parallelism), CUDA 12 removed the wait for child grids: refused, since a
// child grid runs after its parent here (said once: every thread that calls it gets the error).
cudaError_t cudaDeviceSynchronize() {
  if (in_kernel()) {
    static std::atomic<bool> told{false};
    if (!told.exchange(true))
      diagnose(
          "cudaDeviceSynchronize() in a kernel: CUDA 12 removed waiting for child grids in device "
          "code (compute capability 9.0); use tail launches (cudaStreamTailLaunch) or a later "
          "kernel");
    return set_last_error(cudaErrorNotSupported);
  }
  return set_last_error(cudaSuccess);
}

cudaError_t cudaDeviceReset() {
  free_all_allocations();
  forget_deliveries();
  reset_errors();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return set_last_error(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return set_last_error(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? set_last_error(cudaSuccess) : set_last_error(cudaErrorInvalidDevice);
}

cudaError_t cudaInitDevice(int device, unsigned, unsigned) { return cudaSetDevice(device); }

cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
  if (device == nullptr || prop == nullptr) return set_last_error(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (p == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  *p = properties();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // (CUDA 12's fields: types.h)
  p->clockRate = static_cast<int>(attribute(cudaDevAttrClockRate, *p));
  p->memoryClockRate = static_cast<int>(attribute(cudaDevAttrMemoryClockRate, *p));
  p->kernelExecTimeoutEnabled = static_cast<int>(attribute(cudaDevAttrKernelExecTimeout, *p));
  p->computeMode = static_cast<int>(attribute(cudaDevAttrComputeMode, *p));
  p->deviceOverlap = static_cast<int>(attribute(cudaDevAttrGpuOverlap, *p));
  p->singleToDoublePrecisionPerfRatio =
      static_cast<int>(attribute(cudaDevAttrSingleToDoublePrecisionPerfRatio, *p));
#pragma GCC diagnostic pop
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  const long v = attribute(attr, properties());
  if (v == -1 && attr != cudaDevAttrNumaId && attr != cudaDevAttrHostNumaId)
    return set_last_error(cudaErrorInvalidValue);
  *value = static_cast<int>(v);
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return set_last_error(cudaErrorInvalidValue);
  *version = 13000;  // CUDART_VERSION: the runtime emu follows
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) { return cudaDriverGetVersion(version); }

cudaError_t cudaSetDeviceFlags(unsigned flags) {
  if (flags & ~0x1Fu) return set_last_error(cudaErrorInvalidValue);
  device_flags = flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned* flags) {
  if (flags == nullptr) return set_last_error(cudaErrorInvalidValue);
  *flags = device_flags | cudaDeviceMapHost;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize)
    return set_last_error(cudaErrorUnsupportedLimit);
  limits[limit] = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  if (value == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize)
    return set_last_error(cudaErrorUnsupportedLimit);
  *value = limits[limit];
  return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
  cache_config = config;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
  if (config == nullptr) return set_last_error(cudaErrorInvalidValue);
  *config = cache_config;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config) {
  if (config == nullptr) return set_last_error(cudaErrorInvalidValue);
  *config = cudaSharedMemBankSizeFourByte;  // (a GPU's banks since Maxwell: 4 bytes)
  return cudaSuccess;
}

// CUDA's range on an H100: 0 (least) to -5 (greatest).
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  if (can == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (device != 0 || peer != 0) return set_last_error(cudaErrorInvalidDevice);
  *can = 0;
  return cudaSuccess;
}

cudaError_t cudaProfilerStart() { return cudaSuccess; }
cudaError_t cudaProfilerStop() { return cudaSuccess; }
