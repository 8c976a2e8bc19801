// Device memory of the emu backend: cudaMalloc/Free/Memcpy/Memset with the checks a GPU makes,
// plus a red zone behind every array that catches kernels writing past its end.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/poison.h"
#include "state.h"

namespace cudalab::emu {
namespace {

constexpr size_t kAlignment = 256;        // cudaMalloc's alignment
constexpr size_t kRedZone = 4096;         // bytes checked behind every array
constexpr unsigned char kRedByte = 0xFD;  // the red zone's pattern

struct Allocation {
  size_t bytes;
  std::string where;
};

std::mutex mutex;
std::map<const char*, Allocation> live;  // by base address
struct InjectedFailure {
  unsigned successes = 0;
  cudaError_t error = cudaSuccess;
} injected;  // guarded by mutex

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// The allocation that contains `p`, or live.end(). Caller holds the mutex.
std::map<const char*, Allocation>::iterator containing(const void* p) {
  auto c = static_cast<const char*>(p);
  auto it = live.upper_bound(c);
  if (it == live.begin()) return live.end();
  --it;
  return c < it->first + std::max<size_t>(it->second.bytes, 1) ? it : live.end();
}

// Checks that [p, p + count) lies inside one device array; explains why not otherwise.
cudaError_t check_range(const void* p, size_t count, const char* call, const char* role) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = containing(p);
  if (it == live.end()) {
    diagnose(std::string(call) + ": the " + role +
             " is not device memory (it did not come from cudaMalloc, or it was freed)");
    return cudaErrorInvalidValue;
  }
  size_t offset = static_cast<const char*>(p) - it->first;
  if (offset + count > it->second.bytes) {
    diagnose(std::string(call) + ": " + std::to_string(count) + " bytes at the " + role + " run " +
             std::to_string(offset + count - it->second.bytes) + " bytes past the end of the " +
             std::to_string(it->second.bytes) + "-byte array allocated at " + it->second.where);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

bool is_device(cudaMemcpyKind kind, bool destination) {
  if (destination) return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
}

size_t device_memory_bytes() {
  return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}
}  // namespace

std::string check_redzones(const LaunchConfig& config) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& [base, a] : live) {
    unsigned char* zone = reinterpret_cast<unsigned char*>(const_cast<char*>(base)) + a.bytes;
    size_t first = kRedZone, last = 0;  // changed bytes
    for (size_t i = 0; i < kRedZone; ++i) {
      if (zone[i] != kRedByte) {
        first = std::min(first, i);
        last = i;
      }
    }
    if (first == kRedZone) continue;
    std::memset(zone, kRedByte, kRedZone);
    size_t reach = (last / 4 + 1) * 4;  // in whole 4-byte words
    return launch_site(config) + " wrote past the end of a device array: up to " +
           std::to_string(reach) + " bytes (" + std::to_string(reach / 4) +
           " 4-byte words) behind the end of the " + std::to_string(a.bytes) +
           "-byte array allocated at " + a.where +
           " were overwritten. A thread whose index falls past the end of the data must not write: "
           "guard the store with a bounds check such as `if (i < n)`.";
  }
  return {};
}

void free_all_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& [base, a] : live) std::free(const_cast<char*>(base));
  live.clear();
}

std::vector<AllocationInfo> live_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<AllocationInfo> out;
  for (auto& [base, a] : live) out.push_back({a.bytes, a.where});
  return out;
}

void fail_malloc_after(unsigned successes, cudaError_t error) {
  std::lock_guard<std::mutex> lock(mutex);
  injected = {successes, error};
}

namespace {
// The failure fail_malloc_after() planned for this call, or cudaSuccess.
cudaError_t injected_failure() {
  std::lock_guard<std::mutex> lock(mutex);
  if (injected.error == cudaSuccess) return cudaSuccess;
  if (injected.successes > 0) {
    --injected.successes;
    return cudaSuccess;
  }
  return std::exchange(injected.error, cudaSuccess);
}
}  // namespace

}  // namespace cudalab::emu

using namespace cudalab::emu;

cudaError_t cudaMalloc(void** devPtr, size_t size, cudalab_source_location where) {
  if (cudaError_t e = sticky_error()) return record(e);
  if (devPtr == nullptr) return record(cudaErrorInvalidValue);
  if (cudaError_t e = injected_failure()) return record(e);
  if (size == 0) {  // as on a GPU: success, and no memory
    *devPtr = nullptr;
    return cudaSuccess;
  }
  if (size > device_memory_bytes()) return record(cudaErrorMemoryAllocation);
  void* p = std::aligned_alloc(kAlignment, round_up(size + kRedZone, kAlignment));
  if (p == nullptr) return record(cudaErrorMemoryAllocation);
  // New device memory holds the poison, so that results nobody wrote are recognised as such.
  for (size_t i = 0; i < size; i += 4) {
    std::memcpy(static_cast<char*>(p) + i, &cudalab::kPoisonBits, std::min<size_t>(4, size - i));
  }
  std::memset(static_cast<char*>(p) + size, kRedByte, kRedZone);
  {
    std::lock_guard<std::mutex> lock(mutex);
    live[static_cast<const char*>(p)] = {size, site(where.file_name(), where.line())};
  }
  *devPtr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* devPtr) {
  if (cudaError_t e = sticky_error()) return record(e);
  if (devPtr == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = live.find(static_cast<const char*>(devPtr));
  if (it == live.end()) {
    diagnose(
        "cudaFree: the pointer is not the start of a live cudaMalloc array "
        "(freed twice, offset into an array, or host memory)");
    return record(cudaErrorInvalidValue);
  }
  std::free(devPtr);
  live.erase(it);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (cudaError_t e = sticky_error()) return record(e);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return record(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return record(cudaErrorInvalidValue);
  if (is_device(kind, true))
    if (cudaError_t e = check_range(dst, count, "cudaMemcpy", "destination")) return record(e);
  if (is_device(kind, false))
    if (cudaError_t e = check_range(src, count, "cudaMemcpy", "source")) return record(e);
  std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t) {
  return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  if (cudaError_t e = sticky_error()) return record(e);
  if (count == 0) return cudaSuccess;
  if (cudaError_t e = check_range(devPtr, count, "cudaMemset", "destination")) return record(e);
  std::memset(devPtr, value, count);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  if (ptr == nullptr) return record(cudaErrorInvalidValue);
  *ptr = std::malloc(size == 0 ? 1 : size);
  return *ptr ? cudaSuccess : record(cudaErrorMemoryAllocation);
}

cudaError_t cudaFreeHost(void* ptr) {
  std::free(ptr);
  return cudaSuccess;
}

namespace cudalab::emu {
cudaError_t copy_symbol(void* dst, const void* src, size_t count, size_t offset, size_t symbol_size,
                        bool to_symbol) {
  if (cudaError_t e = sticky_error()) return record(e);
  if (offset + count > symbol_size) {
    diagnose("cudaMemcpy" + std::string(to_symbol ? "To" : "From") +
             "Symbol: " + std::to_string(offset + count) + " bytes do not fit in a " +
             std::to_string(symbol_size) + "-byte symbol");
    return record(cudaErrorInvalidValue);
  }
  if (to_symbol)
    std::memcpy(static_cast<char*>(dst) + offset, src, count);
  else
    std::memcpy(dst, static_cast<const char*>(src) + offset, count);
  return cudaSuccess;
}
}  // namespace cudalab::emu
