// Device memory of the emu backend: cudaMalloc/Free/Memcpy/Memset with the checks a GPU makes.
//
// Every array lives in one reserved address range (the arena), page-aligned, with a red zone
// behind it, and its addresses are never reused until cudaDeviceReset: so a kernel's access is
// known to be device memory by one comparison, and a use after cudaFree is recognised as such.
// Each array has a shadow (shadow.h) that says who wrote each byte last.
#include "memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "cudalab/emu/inspect.h"
#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/poison.h"
#include "errors.h"
#include "launches.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

constexpr size_t kRedZone = 4096;                   // bytes checked behind every array
constexpr unsigned char kRedByte = 0xFD;            // the red zone's pattern
constexpr size_t kShadowLimit = size_t{512} << 20;  // larger arrays get no shadow

// Whether an array gets a shadow: only the checks read it, so a program with no checked code
// (`cudalab run --unchecked`) keeps none, and neither does a very large array.
bool shadowed_size(size_t bytes) { return bytes <= kShadowLimit && checked_code_linked(); }

std::mutex mutex;  // guards the allocations; kernels' checks read them without it
// Records a launch keeps room for, so that a kernel's own cudaMalloc never moves the records that
// other workers' checks are reading (as a GPU's device heap, it has a limit).
constexpr size_t kKernelAllocations = 4096;
size_t launch_first_record = 0;  // the records before the running launch's (guarded by mutex)
struct InjectedFailure {
  unsigned successes = 0;
  cudaError_t error = cudaSuccess;
} injected;                 // guarded by mutex
char* next_free = nullptr;  // bump pointer in the arena

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// A quarter of the address-space limit (the grader sets one), at most 64 GiB. Reserved, not used:
// pages cost memory only once an array is placed on them.
Arena reserve_arena() {
  size_t bytes = size_t{64} << 30;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min<size_t>(bytes, limit.rlim_cur / 4);
  bytes = bytes / page() * page();
  // At a fixed address where possible, far from where Linux puts a process's heap and mappings:
  // the remote runner's checker (common/remote) reserves the same addresses in its own process.
  constexpr uintptr_t kPreferred = uintptr_t{0x2000} << 32;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void* p = mmap(reinterpret_cast<void*>(kPreferred), bytes, PROT_NONE, flags | MAP_FIXED_NOREPLACE,
                 -1, 0);
  if (p == MAP_FAILED) p = mmap(nullptr, bytes, PROT_NONE, flags, -1, 0);
  if (p == MAP_FAILED) return {0, 0};
  // A gap first, so that a negative index into the first array lands in the arena (checked) and not
  // below it (a crash): a row above an image of 2048 floats a row is 8 KiB before it.
  const size_t gap =
      std::max(page(), std::min<size_t>(size_t{64} << 20, bytes / 16) / page() * page());
  next_free = static_cast<char*>(p) + gap;
  return {reinterpret_cast<uintptr_t>(p), bytes};
}

}  // namespace

// Checks that [p, p + count) lies inside one device array; explains why not otherwise.
cudaError_t check_range(const void* p, size_t count, const std::string& call, const char* role,
                        const std::string& meant, const records::SourceLine& at) {
  std::lock_guard<std::mutex> lock(mutex);
  const Allocation* r = containing(p, true);
  const std::string named = call + (at.known() ? " at " + at.text() : "");
  if (r == nullptr || r->freed) {
    diagnose(refused_call(
        "not_device_memory", at,
        named + ": the " + role + " is not device memory (" +
            (r ? "the array allocated at " + r->where + " was freed at " + r->freed_where
               : std::string("it did not come from cudaMalloc, or it was freed")) +
            ")" + meant));
    return cudaErrorInvalidValue;
  }
  size_t offset = static_cast<const char*>(p) - r->base;
  if (offset + count > r->bytes) {
    diagnose(refused_call("past_the_end", at,
                          named + ": " + std::to_string(count) + " bytes at the " + role + " run " +
                              std::to_string(offset + count - r->bytes) +
                              " bytes past the end of the " + std::to_string(r->bytes) +
                              "-byte array allocated at " + r->where));
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

namespace {
// The symbols whose addresses the program asked for (note_symbol_address).
struct SymbolRange {
  uintptr_t base;
  size_t bytes;
};
std::mutex symbols_mutex;
std::vector<SymbolRange> symbol_ranges;

// Whether [p, p + count) lies in a symbol whose address the program asked for.
bool in_symbol_given(const void* p, size_t count) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(symbols_mutex);
  for (const SymbolRange& s : symbol_ranges)
    if (a - s.base < s.bytes && count <= s.bytes - (a - s.base)) return true;
  return false;
}
}  // namespace

void note_symbol_address(const void* symbol, size_t bytes) {
  std::lock_guard<std::mutex> lock(symbols_mutex);
  const auto base = reinterpret_cast<uintptr_t>(symbol);
  for (const SymbolRange& s : symbol_ranges)
    if (s.base == base) return;
  symbol_ranges.push_back({base, bytes});
}

namespace {
// Is this end of a copy device memory? The kind says; cudaMemcpyDefault asks the address.
bool is_device(cudaMemcpyKind kind, bool destination, const void* p) {
  if (kind == cudaMemcpyDefault) return arena().contains(p);
  if (destination) return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
}

// Whether a copy brings device memory to the host.
bool to_host(cudaMemcpyKind kind, const void* dst, const void* src) {
  return is_device(kind, false, src) && !is_device(kind, true, dst);
}

const char* kind_name(cudaMemcpyKind kind) {
  static const char* const names[] = {"cudaMemcpyHostToHost", "cudaMemcpyHostToDevice",
                                      "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
                                      "cudaMemcpyDefault"};
  return names[kind];
}

// What a program most likely meant when the kind calls an end of its copy device memory and it is
// not: a __constant__ or __device__ variable (a symbol's copy), or the other direction.
std::string meant(const void* p, const void* other, bool destination) {
  if (program_global(p))
    return destination ? "; it is a global variable of the program: a __constant__ or __device__ "
                         "variable is written with cudaMemcpyToSymbol(symbol, src, bytes)"
                       : "; it is a global variable of the program: a __constant__ or __device__ "
                         "variable is read with cudaMemcpyFromSymbol(dst, symbol, bytes)";
  if (!arena().contains(p) && arena().contains(other))
    return destination ? "; it is host memory, and the source is device memory: the kind is "
                         "cudaMemcpyDeviceToHost"
                       : "; it is host memory, and the destination is device memory: the kind is "
                         "cudaMemcpyHostToDevice";
  return "";
}

// A copy to host memory of device bytes none of which anything wrote since their array was
// allocated: a warning, told once per array. A GPU's copy brings whatever its memory held (often
// what an array freed there before held), so a program that goes on with it works by chance there,
// and on the emu with the poison, until a kernel reads it back as a size or an index.
void warn_if_none_written(const void* src, size_t count, const std::string& call,
                          const records::SourceLine& at) {
  std::lock_guard<std::mutex> lock(mutex);
  Allocation* r = containing(src, false);
  if (r == nullptr || !r->shadow || r->told_copied_unwritten) return;
  const size_t first = static_cast<const char*>(src) - r->base;
  for (size_t offset = first; offset < first + count; ++offset)
    if (r->shadow.writer(offset) != 0) return;
  r->told_copied_unwritten = true;
  const Diagnostic found(
      "unwritten_copy",
      call + (at.known() ? " at " + at.text() : "") + " copies to the host " +
          std::to_string(count) + " bytes of the array allocated at " + r->where +
          ", none of which anything wrote since it was allocated: the emu's unwritten memory "
          "holds a poison (the int 2143346349, NaN as a float), a GPU's whatever was there");
  records::write(found.record(cudaSuccess).text("severity", "warning"));
  std::fprintf(stderr, "cudalab emu: warning: %s (told once)\n", found.problem.c_str());
}

size_t device_memory_bytes() { return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page(); }

void release(Allocation& r) {
  madvise(r.base, r.span, MADV_DONTNEED);
  mprotect(r.base, r.span, PROT_NONE);
  r.shadow.release();
}
}  // namespace

Allocation* containing(const void* p, bool freed_too) {
  auto c = static_cast<const char*>(p);
  auto it = first_allocation_after(reinterpret_cast<uintptr_t>(p));
  if (it == allocations().begin()) return nullptr;
  --it;
  if (c >= it->base + std::max<size_t>(it->bytes, 1)) return nullptr;
  return (it->freed && !freed_too) ? nullptr : &*it;
}

const Arena& arena() {
  static const Arena& reserved = reserved_arena = reserve_arena();
  return reserved;
}

std::vector<Allocation>& allocations() {
  // Never destroyed: a program's static objects may free device memory in their destructors,
  // which run at exit after the statics that the runtime made at its first call.
  static std::vector<Allocation>& all = *new std::vector<Allocation>;
  return all;
}

std::vector<Allocation>::iterator first_allocation_after(uintptr_t a) {
  auto& all = allocations();
  return std::upper_bound(all.begin(), all.end(), a, [](uintptr_t x, const Allocation& r) {
    return x < reinterpret_cast<uintptr_t>(r.base);
  });
}

void mark_written(const void* p, size_t count, uint32_t writer) {
  Allocation* r = containing(p, false);
  if (r == nullptr || !r->shadow) return;
  size_t offset = static_cast<const char*>(p) - r->base;
  count = std::min(count, r->bytes - offset);
  r->shadow.set(offset, count, writer);
  if (writer != 0) note_written(*r, (offset + 3) / 4, (offset + count) / 4);
}

void forget_writers() {
  std::lock_guard<std::mutex> lock(mutex);
  for (Allocation& r : allocations())
    if (r.shadow) r.shadow.forget_kernels();
}

std::string check_redzones(const LaunchConfig& config) {
  std::lock_guard<std::mutex> lock(mutex);
  for (Allocation& r : allocations()) {
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

std::recursive_mutex& device_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::unique_lock<std::recursive_mutex> lock_device_from_host() {
  std::unique_lock<std::recursive_mutex> device(device_mutex(), std::defer_lock);
  if (!in_kernel()) device.lock();
  return device;
}

void make_room_for_kernel_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  auto& all = allocations();
  launch_first_record = all.size();
  if (all.capacity() - all.size() >= kKernelAllocations) return;
  all.reserve(all.size() + 2 * kKernelAllocations);
  ++allocations_changed;  // the records moved: what workers remember of them is stale
}

void free_all_allocations() {
  std::lock_guard<std::recursive_mutex> device(device_mutex());
  std::lock_guard<std::mutex> lock(mutex);
  for (Allocation& r : allocations())
    if (!r.freed) release(r);
  allocations().clear();
  ++allocations_changed;
  next_free = reinterpret_cast<char*>(arena().base) + page();
}

std::vector<AllocationInfo> live_allocations() {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<AllocationInfo> out;
  for (const Allocation& r : allocations())
    if (!r.freed && r.kind != MemoryKind::host) out.push_back({r.bytes, r.where});
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

namespace cudalab::emu {
// Places `size` bytes in the arena: poisoned, with a red zone behind and a shadow of who wrote
// each byte. Memory the host may write directly (managed, page-locked) counts as written, since the
// host's writes are not all seen (a library's memcpy, fread): it starts as zeros, as the fresh
// pages a GPU's driver maps for it do, so that a program that counts on them reads what it would
// read there instead of the poison.
cudaError_t allocate(void** ptr, size_t size, MemoryKind kind, const std::source_location& where) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (ptr == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (cudaError_t e = injected_failure()) return set_last_error(e);
  if (size == 0) {  // as on a GPU: success, and no memory
    *ptr = nullptr;
    return cudaSuccess;
  }
  if (size > device_memory_bytes()) return set_last_error(cudaErrorMemoryAllocation);
  auto device = lock_device_from_host();
  std::lock_guard<std::mutex> lock(mutex);
  if (in_kernel() && allocations().size() - launch_first_record >= kKernelAllocations) {
    static std::once_flag told;
    std::call_once(told, [] {  // a warning, as the other calls told once (removed_api.cpp)
      const Diagnostic found("device_heap",
                             "a launch's kernels allocated more than " +
                                 std::to_string(kKernelAllocations) +
                                 " arrays with cudaMalloc: the next ones fail with "
                                 "cudaErrorMemoryAllocation, as when a GPU's device heap is full");
      records::write(found.record(cudaSuccess).text("severity", "warning"));
      std::fprintf(stderr, "cudalab emu: warning: %s (told once)\n", found.problem.c_str());
    });
    return set_last_error(cudaErrorMemoryAllocation);
  }
  const Arena& a = arena();
  size_t span = round_up(size + kRedZone, page());
  if (next_free == nullptr || span > a.base + a.size - reinterpret_cast<uintptr_t>(next_free))
    return set_last_error(cudaErrorMemoryAllocation);
  char* p = next_free;
  if (mprotect(p, span, PROT_READ | PROT_WRITE) != 0)
    return set_last_error(cudaErrorMemoryAllocation);
  next_free += span;
  // New device memory holds the poison, so that results nobody wrote are recognised as such.
  const bool host_writes = kind != MemoryKind::device;
  if (host_writes)
    std::memset(p, 0, size);
  else
    cudalab::fill_with_poison(p, size);
  std::memset(p + size, kRedByte, kRedZone);
  Shadow shadow;
  if (shadowed_size(size)) shadow = Shadow::make(size, host_writes ? kHostStamp : 0);
  allocations().push_back(
      {p, size, span, allocation_site(where.file_name(), where.line()), {}, false, shadow, kind});
  ++allocations_changed;
  *ptr = p;
  return cudaSuccess;
}

// Frees the array that starts at `ptr`, if it is of `kind`.
cudaError_t deallocate(void* ptr, MemoryKind kind, const char* call,
                       const std::source_location& where) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (ptr == nullptr) return cudaSuccess;
  auto device = lock_device_from_host();
  std::lock_guard<std::mutex> lock(mutex);
  Allocation* r = containing(ptr, true);
  const bool host_call = kind == MemoryKind::host;
  if (r == nullptr || r->freed || r->base != ptr || (r->kind == MemoryKind::host) != host_call) {
    const records::SourceLine at = place(where.file_name(), where.line());
    diagnose(refused_call(
        "free_not_allocated", at,
        std::string(call) + " at " + at.text() + ": the pointer is not the start of a live " +
            (host_call ? "cudaMallocHost/cudaHostAlloc" : "cudaMalloc/cudaMallocManaged") +
            " array (" +
            (r == nullptr ? std::string("host memory, or never allocated")
             : r->freed
                 ? "the array allocated at " + r->where + " was already freed at " + r->freed_where
             : r->base != ptr
                 ? "it points into the array allocated at " + r->where
                 : std::string("it is ") + describe(r->kind) + " allocated at " + r->where) +
            ")"));
    return set_last_error(cudaErrorInvalidValue);
  }
  release(*r);
  r->freed = true;
  ++allocations_changed;
  r->freed_where = site(where.file_name(), where.line());
  return cudaSuccess;
}

cudaError_t revive(void* base, const std::source_location& where) {
  std::lock_guard<std::recursive_mutex> device(device_mutex());
  std::lock_guard<std::mutex> lock(mutex);
  Allocation* r = containing(base, true);
  if (r == nullptr || r->base != base) return set_last_error(cudaErrorInvalidValue);
  if (!r->freed) {
    diagnose("a graph allocates again, at " + site(where.file_name(), where.line()) +
             ", the array it allocated before (at " + r->where +
             ") that nobody freed: free it in the graph or with cudaFree first");
    return set_last_error(cudaErrorInvalidValue);
  }
  if (mprotect(r->base, r->span, PROT_READ | PROT_WRITE) != 0)
    return set_last_error(cudaErrorMemoryAllocation);
  cudalab::fill_with_poison(r->base, r->bytes);  // poisoned again: nothing from before counts
  std::memset(r->base + r->bytes, kRedByte, kRedZone);
  if (shadowed_size(r->bytes)) r->shadow = Shadow::make(r->bytes, 0);
  r->seen_written = 0;
  r->told_copied_unwritten = false;
  r->freed = false;
  ++allocations_changed;
  r->where = site(where.file_name(), where.line());
  return cudaSuccess;
}

namespace {

// r's words seen written, [first, end).
struct WordSpan {
  size_t first, end;
};
WordSpan seen_words(const Allocation& r) {
  const uint64_t seen = __atomic_load_n(&r.seen_written, __ATOMIC_RELAXED);
  return {static_cast<size_t>(seen >> 32), static_cast<size_t>(seen & 0xFFFFFFFFu)};
}

}  // namespace

bool seen_written(const Allocation& r, size_t first_word, size_t end_word) {
  const WordSpan seen = seen_words(r);
  return seen.first <= first_word && end_word <= seen.end;
}

bool look_written(const Allocation& r, size_t first_word, size_t end_word) {
  if (seen_written(r, first_word, end_word)) return true;
  if (!r.shadow || !r.shadow.written(first_word, end_word)) return false;
  note_written(r, first_word, end_word);
  return true;
}

void note_written(const Allocation& r, size_t first_word, size_t end_word) {
  if (end_word <= first_word || end_word > UINT32_MAX) return;
  WordSpan seen = seen_words(r);
  if (seen.first < seen.end && first_word <= seen.end && seen.first <= end_word)
    seen = {std::min(seen.first, first_word), std::max(seen.end, end_word)};  // (they meet)
  else if (end_word - first_word > seen.end - seen.first)
    seen = {first_word, end_word};  // (apart: the longer)
  __atomic_store_n(&r.seen_written, uint64_t{seen.first} << 32 | seen.end, __ATOMIC_RELAXED);
}

bool is_live(const void* base) {
  std::lock_guard<std::mutex> lock(mutex);
  const Allocation* r = containing(base, false);
  return r != nullptr && r->base == base;
}

const char* describe(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::device:
      return "device memory (cudaMalloc)";
    case MemoryKind::managed:
      return "managed memory (cudaMallocManaged)";
    case MemoryKind::host:
      return "page-locked host memory (cudaMallocHost)";
  }
  return "";
}
}  // namespace cudalab::emu

cudaError_t cudaMalloc(void** devPtr, size_t size, cudalab_source_location where) {
  return allocate(devPtr, size, MemoryKind::device, where);
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned flags,
                              cudalab_source_location where) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
    return set_last_error(cudaErrorInvalidValue);
  return allocate(devPtr, size, MemoryKind::managed, where);
}

cudaError_t cudaMallocHost(void** ptr, size_t size, cudalab_source_location where) {
  return allocate(ptr, size, MemoryKind::host, where);
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned flags, cudalab_source_location where) {
  if (flags > (cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
    return set_last_error(cudaErrorInvalidValue);
  return allocate(ptr, size, MemoryKind::host, where);
}

cudaError_t cudaFreeHost(void* ptr, cudalab_source_location where) {
  return deallocate(ptr, MemoryKind::host, "cudaFreeHost", where);
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height,
                            cudalab_source_location where) {
  if (pitch == nullptr) return set_last_error(cudaErrorInvalidValue);
  *pitch = round_up(std::max<size_t>(width, 1), 512);  // the H100's texturePitchAlignment is 32;
  return allocate(devPtr, *pitch * height, MemoryKind::device, where);  // CUDA pads rows to 512
}

cudaError_t cudaFree(void* devPtr, cudalab_source_location where) {
  return deallocate(devPtr, MemoryKind::device, "cudaFree", where);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                       cudalab_source_location where) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return set_last_error(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return set_last_error(cudaErrorInvalidValue);
  const std::string call = std::string("cudaMemcpy(..., ") + kind_name(kind) + ")";
  const cudalab::records::SourceLine at = place(where.file_name(), static_cast<int>(where.line()));
  if (is_device(kind, true, dst) && !in_symbol_given(dst, count))
    if (cudaError_t e = check_range(dst, count, call, "destination", meant(dst, src, true), at))
      return set_last_error(e);
  if (is_device(kind, false, src) && !in_symbol_given(src, count))
    if (cudaError_t e = check_range(src, count, call, "source", meant(src, dst, false), at))
      return set_last_error(e);
  if (to_host(kind, dst, src)) warn_if_none_written(src, count, call, at);
  std::memmove(dst, src, count);
  note_copy_writers(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream, cudalab_source_location where) {
  if (!capturing(stream)) return cudaMemcpy(dst, src, count, kind, where);
  enqueue(stream, [=] { cudaMemcpy(dst, src, count, kind, where); });
  return cudaSuccess;
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count, cudalab_source_location where) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (count == 0) return cudaSuccess;
  const cudalab::records::SourceLine at = place(where.file_name(), static_cast<int>(where.line()));
  if (!in_symbol_given(devPtr, count))
    if (cudaError_t e = check_range(devPtr, count, "cudaMemset", "destination",
                                    meant(devPtr, nullptr, true), at))
      return set_last_error(e);
  std::memset(devPtr, value, count);
  mark_written(devPtr, count, kHostStamp);
  return cudaSuccess;
}

namespace cudalab::emu {
cudaError_t copy_symbol(void* dst, const void* src, size_t count, size_t offset, size_t symbol_size,
                        bool to_symbol) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (offset + count > symbol_size) {
    diagnose("cudaMemcpy" + std::string(to_symbol ? "To" : "From") +
             "Symbol: " + std::to_string(offset + count) + " bytes do not fit in a " +
             std::to_string(symbol_size) + "-byte symbol");
    return set_last_error(cudaErrorInvalidValue);
  }
  if (to_symbol)
    std::memcpy(static_cast<char*>(dst) + offset, src, count);
  else
    std::memcpy(dst, static_cast<const char*>(src) + offset, count);
  return cudaSuccess;
}
}  // namespace cudalab::emu

// ---- 2D copies, asynchronous forms -------------------------------------------------------
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (width > dpitch || width > spitch) return set_last_error(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return cudaSuccess;
  // Each end must hold its last row: checking the whole span checks every row.
  const size_t dst_span = dpitch * (height - 1) + width, src_span = spitch * (height - 1) + width;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return set_last_error(cudaErrorInvalidMemcpyDirection);
  if (dst == nullptr || src == nullptr) return set_last_error(cudaErrorInvalidValue);
  if (is_device(kind, true, dst))
    if (cudaError_t e = check_range(dst, dst_span, "cudaMemcpy2D", "destination"))
      return set_last_error(e);
  if (is_device(kind, false, src))
    if (cudaError_t e = check_range(src, src_span, "cudaMemcpy2D", "source"))
      return set_last_error(e);
  if (to_host(kind, dst, src)) warn_if_none_written(src, src_span, "cudaMemcpy2D", {});
  for (size_t row = 0; row < height; ++row) {
    char* d = static_cast<char*>(dst) + row * dpitch;
    const char* s = static_cast<const char*>(src) + row * spitch;
    std::memmove(d, s, width);
    note_copy_writers(d, s, width);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  if (!capturing(stream)) return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
  enqueue(stream, [=] { cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind); });
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream,
                            cudalab_source_location where) {
  if (!capturing(stream)) return cudaMemset(devPtr, value, count, where);
  enqueue(stream, [=] { cudaMemset(devPtr, value, count, where); });
  return cudaSuccess;
}

cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (width > pitch) return set_last_error(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return cudaSuccess;
  if (cudaError_t e =
          check_range(devPtr, pitch * (height - 1) + width, "cudaMemset2D", "destination"))
    return set_last_error(e);
  for (size_t row = 0; row < height; ++row) {
    char* d = static_cast<char*>(devPtr) + row * pitch;
    std::memset(d, value, width);
    mark_written(d, width, kHostStamp);
  }
  return cudaSuccess;
}

cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t) {
  return cudaMemset2D(devPtr, pitch, value, width, height);
}

// ---- host memory that kernels may use ------------------------------------------------------
namespace cudalab::emu {
namespace {
struct Registered {
  uintptr_t base;
  size_t bytes;
  unsigned flags;
};
std::vector<Registered> registered;  // guarded by mutex
}  // namespace

bool registered_host_memory(uintptr_t a) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const Registered& r : registered)
    if (a - r.base < r.bytes) return true;
  return false;
}
}  // namespace cudalab::emu

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned flags) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (ptr == nullptr || size == 0 || arena().contains(ptr))
    return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(mutex);
  const auto base = reinterpret_cast<uintptr_t>(ptr);
  for (const Registered& r : registered)
    if (base < r.base + r.bytes && r.base < base + size)
      return set_last_error(cudaErrorHostMemoryAlreadyRegistered);
  registered.push_back({base, size, flags});
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* ptr) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = std::find_if(registered.begin(), registered.end(), [&](const Registered& r) {
    return r.base == reinterpret_cast<uintptr_t>(ptr);
  });
  if (it == registered.end()) return set_last_error(cudaErrorHostMemoryNotRegistered);
  registered.erase(it);
  return cudaSuccess;
}

// Unified addressing: a kernel uses page-locked host memory at the host's own address.
cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned flags) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (pDevice == nullptr || flags != 0) return set_last_error(cudaErrorInvalidValue);
  const auto a = reinterpret_cast<uintptr_t>(pHost);
  bool ok = registered_host_memory(a);
  if (!ok) {
    std::lock_guard<std::mutex> lock(mutex);
    const Allocation* r = containing(pHost, false);
    ok = r != nullptr && r->kind == MemoryKind::host;
  }
  if (!ok) {
    diagnose(
        "cudaHostGetDevicePointer: the pointer is not page-locked host memory (it did not "
        "come from cudaHostAlloc or cudaMallocHost, nor was it given to cudaHostRegister)");
    return set_last_error(cudaErrorInvalidValue);
  }
  *pDevice = pHost;
  return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned* flags, void* pHost) {
  if (flags == nullptr) return set_last_error(cudaErrorInvalidValue);
  void* device = nullptr;
  if (cudaError_t e = cudaHostGetDevicePointer(&device, pHost, 0)) return e;
  *flags = cudaHostAllocMapped;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return set_last_error(cudaErrorInvalidValue);
  *attributes = cudaPointerAttributes{};
  attributes->device = 0;
  attributes->type = cudaMemoryTypeUnregistered;
  if (registered_host_memory(reinterpret_cast<uintptr_t>(ptr))) {
    attributes->type = cudaMemoryTypeHost;
  } else {
    std::lock_guard<std::mutex> lock(mutex);
    if (const Allocation* r = containing(ptr, false))
      attributes->type = r->kind == MemoryKind::device    ? cudaMemoryTypeDevice
                         : r->kind == MemoryKind::managed ? cudaMemoryTypeManaged
                                                          : cudaMemoryTypeHost;
  }
  if (attributes->type != cudaMemoryTypeUnregistered)
    attributes->devicePointer = const_cast<void*>(ptr);
  if (attributes->type == cudaMemoryTypeHost || attributes->type == cudaMemoryTypeManaged ||
      attributes->type == cudaMemoryTypeUnregistered)
    attributes->hostPointer = const_cast<void*>(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (free == nullptr || total == nullptr) return set_last_error(cudaErrorInvalidValue);
  *total = device_memory_bytes();
  *free = static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * page();
  return cudaSuccess;
}

// ---- unified memory hints ------------------------------------------------------------------
namespace {
cudaError_t check_managed(const void* p, size_t count, const char* call) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (count == 0) return set_last_error(cudaErrorInvalidValue);
  return set_last_error(check_range(p, count, call, "range"));
}
}  // namespace

cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation, unsigned,
                                 cudaStream_t) {
  return check_managed(devPtr, count, "cudaMemPrefetchAsync");
}
cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, int, cudaStream_t) {
  return check_managed(devPtr, count, "cudaMemPrefetchAsync");
}
cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise, cudaMemLocation) {
  return check_managed(devPtr, count, "cudaMemAdvise");
}
cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise, int) {
  return check_managed(devPtr, count, "cudaMemAdvise");
}
cudaError_t cudaStreamAttachMemAsync(cudaStream_t, void* devPtr, size_t, unsigned) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  return devPtr == nullptr ? set_last_error(cudaErrorInvalidValue) : cudaSuccess;
}
