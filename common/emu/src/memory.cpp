// Device memory of the emu backend: cudaMalloc/Free/Memcpy/Memset with the checks a GPU makes.
//
// Every array lives in one reserved address range (the arena), page-aligned, with a red zone
// behind it, and its addresses are never reused until cudaDeviceReset: so a kernel's access is
// known to be device memory by one comparison, and a use after cudaFree is recognised as such.
// Each array has a shadow (see shadow.h) that says who wrote each byte last.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/poison.h"
#include "state.h"

namespace cudalab::emu {
namespace {

constexpr size_t kRedZone = 4096;                   // bytes checked behind every array
constexpr unsigned char kRedByte = 0xFD;            // the red zone's pattern
constexpr size_t kShadowLimit = size_t{512} << 20;  // larger arrays get no shadow

std::mutex mutex;  // guards the records; kernels only read them (no cudaMalloc during a kernel)
struct InjectedFailure {
  unsigned successes = 0;
  cudaError_t error = cudaSuccess;
} injected;                 // guarded by mutex
char* next_free = nullptr;  // bump pointer in the arena

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }
size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// A quarter of the address-space limit (the grader sets one), at most 64 GiB. Reserved, not used:
// pages cost memory only once an array is placed on them.
Arena reserve_arena() {
  size_t bytes = size_t{64} << 30;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min<size_t>(bytes, limit.rlim_cur / 4);
  bytes = bytes / page() * page();
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return {0, 0};
  next_free = static_cast<char*>(p) + page();  // a gap first: a negative index lands in the arena
  return {reinterpret_cast<uintptr_t>(p), bytes};
}

// The array that contains `p`, or nullptr (freed arrays count only if `freed_too`).
Record* containing(const void* p, bool freed_too) {
  auto c = static_cast<const char*>(p);
  auto it = first_record_after(reinterpret_cast<uintptr_t>(p));
  if (it == records().begin()) return nullptr;
  --it;
  if (c >= it->base + std::max<size_t>(it->bytes, 1)) return nullptr;
  return (it->freed && !freed_too) ? nullptr : &*it;
}

// Checks that [p, p + count) lies inside one device array; explains why not otherwise.
cudaError_t check_range(const void* p, size_t count, const char* call, const char* role) {
  std::lock_guard<std::mutex> lock(mutex);
  const Record* r = containing(p, true);
  if (r == nullptr || r->freed) {
    diagnose(std::string(call) + ": the " + role + " is not device memory (" +
             (r ? "the array allocated at " + r->where + " was freed at " + r->freed_where
                : std::string("it did not come from cudaMalloc, or it was freed")) +
             ")");
    return cudaErrorInvalidValue;
  }
  size_t offset = static_cast<const char*>(p) - r->base;
  if (offset + count > r->bytes) {
    diagnose(std::string(call) + ": " + std::to_string(count) + " bytes at the " + role + " run " +
             std::to_string(offset + count - r->bytes) + " bytes past the end of the " +
             std::to_string(r->bytes) + "-byte array allocated at " + r->where);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

bool is_device(cudaMemcpyKind kind, bool destination) {
  if (destination) return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
}

size_t device_memory_bytes() { return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page(); }

void release(Record& r) {
  madvise(r.base, r.span, MADV_DONTNEED);
  mprotect(r.base, r.span, PROT_NONE);
  if (r.shadow) munmap(r.shadow, r.bytes * sizeof(uint32_t));
  r.shadow = nullptr;
}
}  // namespace

const Arena& arena() {
  static const Arena a = reserve_arena();
  return a;
}

std::vector<Record>& records() {
  static std::vector<Record> all;
  return all;
}

std::vector<Record>::iterator first_record_after(uintptr_t a) {
  auto& all = records();
  return std::upper_bound(all.begin(), all.end(), a, [](uintptr_t x, const Record& r) {
    return x < reinterpret_cast<uintptr_t>(r.base);
  });
}

void mark_written_by_host(const void* p, size_t count) {
  Record* r = containing(p, false);
  if (r == nullptr || r->shadow == nullptr) return;
  size_t offset = static_cast<const char*>(p) - r->base;
  std::fill_n(r->shadow + offset, std::min(count, r->bytes - offset), kHostStamp);
}

void forget_writers() {
  std::lock_guard<std::mutex> lock(mutex);
  for (Record& r : records())
    if (r.shadow)
      for (size_t i = 0; i < r.bytes; ++i)
        if (r.shadow[i] != 0) r.shadow[i] = kHostStamp;
}

std::string check_redzones(const LaunchConfig& config) {
  std::lock_guard<std::mutex> lock(mutex);
  for (Record& r : records()) {
    if (r.freed) continue;
    unsigned char* zone = reinterpret_cast<unsigned char*>(r.base) + r.bytes;
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
           " 4-byte words) behind the end of the " + std::to_string(r.bytes) +
           "-byte array allocated at " + r.where +
           " were overwritten. A thread whose index falls past the end of the data must not write: "
           "guard the store with a bounds check such as `if (i < n)`.";
  }
  return {};
}

void free_all_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  for (Record& r : records())
    if (!r.freed) release(r);
  records().clear();
  next_free = reinterpret_cast<char*>(arena().base) + page();
}

std::vector<AllocationInfo> live_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<AllocationInfo> out;
  for (const Record& r : records())
    if (!r.freed) out.push_back({r.bytes, r.where});
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
  std::lock_guard<std::mutex> lock(mutex);
  const Arena& a = arena();
  size_t span = round_up(size + kRedZone, page());
  if (next_free == nullptr || span > a.base + a.size - reinterpret_cast<uintptr_t>(next_free))
    return record(cudaErrorMemoryAllocation);
  char* p = next_free;
  if (mprotect(p, span, PROT_READ | PROT_WRITE) != 0) return record(cudaErrorMemoryAllocation);
  next_free += span;
  // New device memory holds the poison, so that results nobody wrote are recognised as such.
  for (size_t i = 0; i < size; i += 4)
    std::memcpy(p + i, &cudalab::kPoisonBits, std::min<size_t>(4, size - i));
  std::memset(p + size, kRedByte, kRedZone);
  uint32_t* shadow = nullptr;
  if (size <= kShadowLimit) {
    void* s = mmap(nullptr, size * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    shadow = s == MAP_FAILED ? nullptr : static_cast<uint32_t*>(s);
  }
  records().push_back({p, size, span, site(where.file_name(), where.line()), {}, false, shadow});
  *devPtr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* devPtr, cudalab_source_location where) {
  if (cudaError_t e = sticky_error()) return record(e);
  if (devPtr == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(mutex);
  Record* r = containing(devPtr, true);
  if (r == nullptr || r->freed || r->base != devPtr) {
    diagnose("cudaFree: the pointer is not the start of a live cudaMalloc array (" +
             (r == nullptr ? std::string("host memory, or never allocated")
              : r->freed
                  ? "the array allocated at " + r->where + " was already freed at " + r->freed_where
                  : "it points into the array allocated at " + r->where) +
             ")");
    return record(cudaErrorInvalidValue);
  }
  release(*r);
  r->freed = true;
  r->freed_where = site(where.file_name(), where.line());
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
  if (is_device(kind, true)) mark_written_by_host(dst, count);
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
  mark_written_by_host(devPtr, count);
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
