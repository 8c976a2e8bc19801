// Stream-ordered allocation (cudaMallocAsync, cudaFreeAsync) and memory pools of the emu backend.
//
// Algorithm: a pool is bookkeeping over the ordinary arena. cudaMallocFromPoolAsync places the
// array as cudaMalloc does (so every check of device memory applies to it) and adds its size to
// the pool's "used" bytes; cudaFreeAsync frees it and subtracts. As on a GPU, freed memory stays
// reserved by the pool ("reserved" bytes, high-water marks kept) until cudaMemPoolTrimTo gives it
// back. Streams run in order at each call on the emu, so "stream-ordered" needs nothing more.
//
// In a graph (a memory allocation node, or cudaMallocAsync while a stream is captured) the address
// is fixed when the graph is built: the array is placed then and freed at once, and each execution
// of the node brings it back at the same address, poisoned and unwritten (revive in memory.cpp);
// a free node (or cudaFreeAsync while captured) frees it when it runs. The graph memory attributes
// follow the H100's accounting (GraphMemory below).
//
// Limitations:
// - one device, so one default pool; access descriptors are recorded for that device only;
// - a synchronization does not release reserved memory above the release threshold (a GPU may):
//   only cudaMemPoolTrimTo does;
// - pools cannot be exported to other processes (IPC), and there are no managed-memory pools.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "errors.h"
#include "launches.h"
#include "memory.h"
#include "symbolize.h"

struct CUmemPoolHandle_st {
  size_t release_threshold = 0;
  bool reuse[3] = {true, true, true};  // FollowEventDependencies, Opportunistic, Internal
  size_t used_high = 0, reserved = 0, reserved_high = 0;
  cudaMemAccessFlags access = cudaMemAccessFlagsProtReadWrite;
  std::map<void*, size_t> arrays;  // the pool's live allocations and their sizes
  size_t used() const {
    size_t bytes = 0;
    for (auto [p, n] : arrays) bytes += n;
    return bytes;
  }
};

namespace cudalab::emu {
namespace {
std::mutex mutex;  // guards the pools' bookkeeping
CUmemPoolHandle_st default_pool;
cudaMemPool_t current_pool = &default_pool;
std::map<cudaMemPool_t, std::unique_ptr<CUmemPoolHandle_st>> created_pools;

bool is_pool(cudaMemPool_t pool) { return pool == &default_pool || created_pools.contains(pool); }

// As an H100 does it (docs/runs/2026-11-23-h100-graph-memory-accounting.txt): graph allocations
// are mapped in granules of 32 MiB when their node runs, and what is mapped stays mapped after
// their free node, for later launches of any graph whose allocations then fit (a GPU reuses the
// memory of a graph whose execution has finished, in any stream; on the emu each has finished
// when the next call returns); cudaDeviceGraphMemTrim unmaps what no live allocation holds.
// "Used" and "reserved" are both what is mapped.
constexpr size_t kGraphGranule = size_t{32} << 20;
struct GraphMemory {
  std::map<void*, size_t> arrays;  // every graph allocation ever made, by address
  size_t mapped = 0, used_high = 0, reserved_high = 0;
  size_t live() const {  // the granules that live allocations hold
    size_t bytes = 0;
    for (auto [p, n] : arrays)
      if (is_live(p)) bytes += round_up(n, kGraphGranule);
    return bytes;
  }
  void map() {
    mapped = std::max(mapped, live());
    used_high = reserved_high = std::max(used_high, mapped);
  }
  void trim() { mapped = live(); }
} graph_memory;  // guarded by mutex

// The pool that holds the live allocation at `p`, or nullptr.
cudaMemPool_t owner(void* p) {
  if (default_pool.arrays.contains(p)) return &default_pool;
  for (auto& [pool, state] : created_pools)
    if (state->arrays.contains(p)) return pool;
  return nullptr;
}
}  // namespace
}  // namespace cudalab::emu

namespace cudalab::emu {
cudaError_t graph_allocate(void** ptr, size_t size, cudaStream_t stream,
                           const std::source_location& where) {
  if (cudaError_t e = allocate(ptr, size, MemoryKind::device, where)) return e;
  if (*ptr == nullptr) return cudaSuccess;
  deallocate(*ptr, MemoryKind::device, "a graph's allocation", where);  // until the node runs
  {
    std::lock_guard<std::mutex> lock(mutex);
    graph_memory.arrays[*ptr] = size;
  }
  enqueue(stream, [base = *ptr, where] {
    revive(base, where);
    std::lock_guard<std::mutex> lock(mutex);
    graph_memory.map();
  });
  return cudaSuccess;
}

cudaError_t graph_free(void* ptr, cudaStream_t stream, const std::source_location& where) {
  enqueue(stream, [ptr, where] { deallocate(ptr, MemoryKind::device, "a graph's free", where); });
  return cudaSuccess;
}
}  // namespace cudalab::emu

using namespace cudalab::emu;

cudaError_t cudaMallocFromPoolAsync(void** devPtr, size_t size, cudaMemPool_t pool, cudaStream_t,
                                    cudalab_source_location where) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!is_pool(pool)) return set_last_error(cudaErrorInvalidValue);
  if (cudaError_t e = allocate(devPtr, size, MemoryKind::device, where)) return e;
  if (*devPtr == nullptr) return cudaSuccess;
  pool->arrays[*devPtr] = size;
  pool->used_high = std::max(pool->used_high, pool->used());
  pool->reserved = std::max(pool->reserved, pool->used());
  pool->reserved_high = std::max(pool->reserved_high, pool->reserved);
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream,
                            cudalab_source_location where) {
  if (capturing(stream)) return graph_allocate(devPtr, size, stream, where);
  return cudaMallocFromPoolAsync(devPtr, size, current_pool, stream, where);
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream, cudalab_source_location where) {
  if (capturing(stream)) return graph_free(devPtr, stream, where);
  std::lock_guard<std::mutex> lock(mutex);
  if (cudaError_t e = deallocate(devPtr, MemoryKind::device, "cudaFreeAsync", where)) return e;
  if (cudaMemPool_t pool = owner(devPtr)) pool->arrays.erase(devPtr);  // or it was cudaMalloc's
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  *pool = &default_pool;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(mutex);
  *pool = current_pool;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(mutex);
  if (!is_pool(pool)) return set_last_error(cudaErrorInvalidValue);
  current_pool = pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  if (pool == nullptr || props == nullptr || props->allocType != cudaMemAllocationTypePinned ||
      props->location.type != cudaMemLocationTypeDevice)
    return set_last_error(cudaErrorInvalidValue);
  if (props->location.id != 0) return set_last_error(cudaErrorInvalidDevice);
  if (props->handleTypes != cudaMemHandleTypeNone)
    return set_last_error(cudaErrorNotSupported);  // IPC: see the limitations
  std::lock_guard<std::mutex> lock(mutex);
  auto state = std::make_unique<CUmemPoolHandle_st>();
  *pool = state.get();
  created_pools.emplace(*pool, std::move(state));
  return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = created_pools.find(pool);
  if (it == created_pools.end())
    return set_last_error(cudaErrorInvalidValue);  // the default one, too
  if (current_pool == pool) current_pool = &default_pool;
  created_pools.erase(it);  // its live arrays stay valid until freed, as on a GPU
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!is_pool(pool) || value == nullptr) return set_last_error(cudaErrorInvalidValue);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      pool->reuse[attr - 1] = *static_cast<int*>(value) != 0;
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
      pool->release_threshold = *static_cast<uint64_t*>(value);
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:  // only a reset to zero is allowed
    case cudaMemPoolAttrUsedMemHigh:
      if (*static_cast<uint64_t*>(value) != 0) return set_last_error(cudaErrorInvalidValue);
      (attr == cudaMemPoolAttrUsedMemHigh ? pool->used_high : pool->reserved_high) = 0;
      return cudaSuccess;
    default:
      return set_last_error(cudaErrorInvalidValue);
  }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!is_pool(pool) || value == nullptr) return set_last_error(cudaErrorInvalidValue);
  auto as_u64 = [&](size_t v) {
    *static_cast<uint64_t*>(value) = v;
    return cudaSuccess;
  };
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      *static_cast<int*>(value) = pool->reuse[attr - 1];
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
      return as_u64(pool->release_threshold);
    case cudaMemPoolAttrReservedMemCurrent:
      return as_u64(pool->reserved);
    case cudaMemPoolAttrReservedMemHigh:
      return as_u64(pool->reserved_high);
    case cudaMemPoolAttrUsedMemCurrent:
      return as_u64(pool->used());
    case cudaMemPoolAttrUsedMemHigh:
      return as_u64(pool->used_high);
  }
  return set_last_error(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t minBytesToKeep) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!is_pool(pool)) return set_last_error(cudaErrorInvalidValue);
  pool->reserved = std::max(pool->used(), std::min(pool->reserved, minBytesToKeep));
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descList,
                                 size_t count) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!is_pool(pool) || (descList == nullptr && count > 0))
    return set_last_error(cudaErrorInvalidValue);
  for (size_t i = 0; i < count; ++i) {
    if (descList[i].location.type != cudaMemLocationTypeDevice)
      return set_last_error(cudaErrorInvalidValue);
    if (descList[i].location.id != 0) return set_last_error(cudaErrorInvalidDevice);
    pool->access = descList[i].flags;
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool,
                                 cudaMemLocation* location) {
  std::lock_guard<std::mutex> lock(mutex);
  if (flags == nullptr || location == nullptr || !is_pool(pool))
    return set_last_error(cudaErrorInvalidValue);
  if (location->type != cudaMemLocationTypeDevice) return set_last_error(cudaErrorInvalidValue);
  if (location->id != 0) return set_last_error(cudaErrorInvalidDevice);
  *flags = pool->access;
  return cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device) {
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(mutex);
  graph_memory.trim();
  return cudaSuccess;
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr,
                                           void* value) {
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  if (value == nullptr) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(mutex);
  const size_t bytes[] = {graph_memory.mapped, graph_memory.used_high, graph_memory.mapped,
                          graph_memory.reserved_high};
  if (attr < cudaGraphMemAttrUsedMemCurrent || attr > cudaGraphMemAttrReservedMemHigh)
    return set_last_error(cudaErrorInvalidValue);
  *static_cast<uint64_t*>(value) = bytes[attr];
  return cudaSuccess;
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr,
                                           void* value) {
  if (device != 0) return set_last_error(cudaErrorInvalidDevice);
  if (value == nullptr || *static_cast<uint64_t*>(value) != 0)
    return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(mutex);
  if (attr == cudaGraphMemAttrUsedMemHigh)
    graph_memory.used_high = 0;  // only the highs reset
  else if (attr == cudaGraphMemAttrReservedMemHigh)
    graph_memory.reserved_high = 0;
  else
    return set_last_error(cudaErrorInvalidValue);
  return cudaSuccess;
}
