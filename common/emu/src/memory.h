// Internal header of the emu runtime (not for programs): device memory, its arrays and the shadow
// of who wrote each byte (memory.cpp, provenance.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <source_location>
#include <string>
#include <vector>

#include "cudalab/emu/launch.h"
#include "cudalab/emu/types.h"
#include "cudalab/records.h"
#include "shadow.h"

namespace cudalab::emu {

// Held by a launch and by every change to device memory: host threads may launch kernels and
// allocate concurrently (a GPU takes them in some order), and a kernel's checks read the arrays
// of device arrays without a lock of their own.
std::recursive_mutex& device_mutex();
// device_mutex(), locked unless the caller is a kernel (whose launch holds it): a kernel's own
// cudaMalloc and cudaFree must not wait for the launch that waits for them.
std::unique_lock<std::recursive_mutex> lock_device_from_host();
// Called by a launch before its kernels run: room for the records of the arrays they allocate.
void make_room_for_kernel_allocations();

// The address range that holds every cudaMalloc array.
struct Arena {
  uintptr_t base, size;
  bool contains(const void* p) const { return reinterpret_cast<uintptr_t>(p) - base < size; }
};
// Reserves the range at the first call.
const Arena& arena();
// The range once reserved (empty before): what the checks' fast path reads without a call.
inline Arena reserved_arena{0, 0};

// One cudaMalloc array. Its shadow (shadow.h) says who wrote each byte last: 0 nobody, kHostStamp
// the host (cudaMemcpy, cudaMemset), otherwise the stamp of a block of a launch (see checks.cpp),
// with kAtomicBit set when the write was an atomic.
enum class MemoryKind : uint8_t {
  device,   // cudaMalloc: the host must not touch it
  managed,  // cudaMallocManaged: host and kernels alike
  host,     // cudaMallocHost, cudaHostAlloc: page-locked host memory that kernels may use too
};
struct Allocation {
  char* base;
  size_t bytes;
  size_t span;  // bytes of the arena it occupies: the array, its red zone, up to a page
  std::string where, freed_where;
  bool freed;
  Shadow shadow;  // empty for very large arrays: they are not checked
  MemoryKind kind = MemoryKind::device;
  // The last launch that stored into it, or into the array a copy brought its bytes from (its
  // stamp; stores write it through note_store_in_launch, copies directly, atomically).
  mutable uint32_t stored_in_launch = 0;
  // The words [first, end) seen written, as first << 32 | end: grown by the host's writes and by
  // looks at the shadow (note_written, look_written), kept until bytes may become nobody's again
  // (a copy of another array's bytes, a graph's allocation revived).
  mutable uint64_t seen_written = 0;
  bool told_copied_unwritten = false;  // a copy of it to the host, none of it written: told
};
// Whether every byte of r's words [first_word, end_word) is known to have a writer (among the
// words seen written), without a look at the shadow.
bool seen_written(const Allocation& r, size_t first_word, size_t end_word);
// The same, looking at the shadow's words not yet seen (which then join those seen, where all are
// written).
bool look_written(const Allocation& r, size_t first_word, size_t end_word);
// Words [first_word, end_word) of r were just written whole (by the host: cudaMemcpy, cudaMemset):
// they join those seen written.
void note_written(const Allocation& r, size_t first_word, size_t end_word);
// Whether a store of the launch of `launch_stamp` into `r` said so (note_store_in_launch).
inline bool stored_in_launch(const Allocation& r, uint32_t launch_stamp) {
  return __atomic_load_n(&r.stored_in_launch, __ATOMIC_RELAXED) == launch_stamp;
}
// The launch of `launch_stamp` stores into `r`: said before the store's words change, as the loads
// of proven stretches skip their look at an array's words where no store of the launch said so
// (proven_stretches.cpp: global_words_fine).
inline void note_store_in_launch(const Allocation& r, uint32_t launch_stamp) {
  // (stored only where it changes: the workers' blocks that store into one array would otherwise
  // pass its record's cache line between them at each store)
  if (!stored_in_launch(r, launch_stamp))
    __atomic_store_n(&r.stored_in_launch, launch_stamp, __ATOMIC_RELAXED);
}
// Whether the race check inside a block (global_races.cpp) watches the reads of `r` in launch
// `launch_stamp`: from the launch's first store into it on (arrays a kernel only reads cannot
// race).
inline bool reads_watched(uint32_t launch_stamp, const Allocation& r) {
  return stored_in_launch(r, launch_stamp);
}
// `n` rounded up to a multiple of `m`.
inline size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }
const char* describe(MemoryKind kind);
// cudaMalloc and its kin: places `size` bytes of `kind` in the arena, allocated at `where`.
cudaError_t allocate(void** ptr, size_t size, MemoryKind kind, const std::source_location& where);
// A graph's allocation executed again: the freed array at `base` is device memory once more, at
// the same address, poisoned and unwritten (an error if it is still live).
cudaError_t revive(void* base, const std::source_location& where);
// A graph's allocation (mempools.cpp): placed now, live from when `stream`'s work reaches it.
cudaError_t graph_allocate(void** ptr, size_t size, cudaStream_t stream,
                           const std::source_location& where);
// A graph's free: the array is freed when `stream`'s work reaches it.
cudaError_t graph_free(void* ptr, cudaStream_t stream, const std::source_location& where);
// Whether `base` is the start of a live array.
bool is_live(const void* base);
// cudaFree and its kin: `call` names the API call in a diagnosis.
cudaError_t deallocate(void* ptr, MemoryKind kind, const char* call,
                       const std::source_location& where);
// Host memory given to cudaHostRegister: kernels may use it.
bool registered_host_memory(uintptr_t a);
constexpr uint32_t kHostStamp = 1;
// A kernel of a launch whose stamp was forgotten: counted as a kernel's work (provenance.cpp),
// never held against the program. (Bytes copied from where no shadow says who wrote them are the
// host's: kHostStamp.)
constexpr uint32_t kEarlierKernelStamp = 2;
constexpr uint32_t kAtomicBit = 0x80000000u;
// Whether `writer` is a plain (not atomic) write by a block of the launch whose blocks' stamps
// start at `launch_stamp`: the only writes a block's access can race with.
inline bool plain_write_in_launch(uint32_t writer, uint32_t launch_stamp) {
  return writer >= launch_stamp && !(writer & kAtomicBit);
}
// Whether a kernel argument `p` is a host pointer: not null, not in the arena.
inline bool host_pointer(const void* p) { return p != nullptr && !arena().contains(p); }
// Every array since the last cudaDeviceReset, in address order (freed ones too).
std::vector<Allocation>& allocations();
// Counts the changes to the arrays (placed, freed, revived, reset): what a worker remembers of them
// (fast_path.h) holds while the count stays the same (a kernel's own cudaMalloc changes it too).
inline std::atomic<uint32_t> allocations_changed{0};
// The first record whose array starts after address `a` (the one before it may hold `a`).
std::vector<Allocation>::iterator first_allocation_after(uintptr_t a);
// The array that contains `p`, or nullptr (freed arrays count only if `freed_too`).
Allocation* containing(const void* p, bool freed_too);
// Checks that [p, p + count) lies inside one live device array (cudaMalloc, cudaMallocManaged,
// cudaMallocHost); otherwise explains why not, naming `call` (made at `at`, where known) and the
// pointer's `role`. `meant` ends the message where the caller knows what the
// program most likely meant.
cudaError_t check_range(const void* p, size_t count, const std::string& call, const char* role,
                        const std::string& meant = {}, const records::SourceLine& at = {});
// Whether the program has code compiled with the checks (hooks.cpp: its modules announce
// themselves before main()).
bool checked_code_linked();
// Whether p lies in the program's own image: its globals, __constant__ and __device__ variables.
// (__executable_start and _end are the linker's.)
extern "C" char __executable_start[], _end[];
inline bool program_global(const void* p) {
  return reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(__executable_start) <
         static_cast<uintptr_t>(_end - __executable_start);
}
// Marks bytes as written by `writer` (kHostStamp: cudaMemcpy, cudaMemset; kEarlierKernelStamp:
// a library's device work), or (forget_writers) every written byte by a kernel long ago.
void mark_written(const void* p, size_t count, uint32_t writer);
void forget_writers();
// Who wrote what a copy moved (provenance.cpp): device to device keeps the writers, host to device
// is the host's, and a copy from device to host memory is remembered.
void note_copy_writers(void* dst, const void* src, size_t count);
// The number of a kernel's store instruction at code address `pc` (a StoreMark's site: shadow.h),
// and the address again (nullptr for site 0: a store without a number).
uint32_t store_site(const void* pc);
const void* store_site_pc(uint32_t site);
// A launch's blocks write with stamps first_stamp + block (scheduler.cpp): remembered, so that a
// word's writer names the launch (provenance.cpp). forget_writers forgets them too.
void remember_launch(const LaunchConfig& config, uint32_t first_stamp);
// cudaDeviceReset: the copies to host memory are forgotten (their host memory may be reused).
void forget_deliveries();

// After a kernel ran: did it write past the end of any device array? Returns the explanation.
std::string check_redzones(const LaunchConfig& config);
// cudaDeviceReset frees every allocation.
void free_all_allocations();

}  // namespace cudalab::emu
