// What the emu backend knows that a GPU does not tell: for tests and for the student's messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/counters.h"
#include "cudalab/emu/types.h"

namespace cudalab::emu {

struct AllocationInfo {
  size_t bytes;
  std::string where;  // "file:line" of the cudaMalloc
};

// Device memory from cudaMalloc that has not been freed.
std::vector<AllocationInfo> live_allocations();

// The explanation of the last error the backend diagnosed (empty if none), and a way to forget it.
std::string last_diagnostic();
void clear_diagnostic();

// Lets `successes` more cudaMalloc calls succeed and makes the one after fail with `error`: tests
// that a program checks every call and frees what it allocated before the failure.
void fail_malloc_after(unsigned successes, cudaError_t error = cudaErrorMemoryAllocation);

// Of `bytes` bytes at p (device memory, or host memory that a cudaMemcpy filled from the device),
// how many kernels wrote (known where the kernels are instrumented, as a lab's code always is).
struct DeviceWork {
  size_t bytes;
  size_t by_kernels;
};
DeviceWork device_work(const void* p, size_t bytes);

// How many blocks have run a kernel's copy without per-access checks, their ranges checked once
// (common/emu/src/proven_blocks.cpp), since the program started.
unsigned long long proven_blocks_run();
// How many times a loop form's stretch has run without per-access checks, the words its accesses
// touch checked once for the block (common/emu/src/proven_stretches.cpp).
unsigned long long proven_stretches_run();

// Who stored the `bytes` bytes at p (device memory, or host memory that a cudaMemcpy filled from
// the device) last: the launch, the block and thread, the store's line (known where the kernels
// are instrumented). For bytes no kernel stored, the last launch that stored into their array;
// nothing where that is not known either, or the host changed the bytes since the copy.
std::optional<ElementStore> element_store(const void* p, size_t bytes);

// The global loads of one thread (thread `thread` of block `block`) in the launches of
// instrumented code that follow, until watched_loads() returns them and stops watching: what the
// thread that stored a wrong element read, found by running the same launch again.
struct WatchedLoad {
  const void* address;
  unsigned bytes;
  records::SourceLine at;  // the load's line
};
void watch_thread(Dim3 block, Dim3 thread);
std::vector<WatchedLoad> watched_loads();

// Every copy of host memory into device memory (cudaMemcpy, cudaMemcpy2D, their async forms) is
// shown to `check` (the remote runner's, which knows what the checker gave: common/remote).
using UploadCheck = void (*)(const void* host, size_t bytes);
void set_upload_check(UploadCheck check);

// The host calls that follow are made for another program's line (the remote runner's checker,
// common/remote): their errors name `file`:`line`, and an allocation's array is called `array`;
// nullptr: each call's own line again.
void set_caller_site(const char* file, int line, std::string_view array = {});

// A launch that runs longer is stopped (default 20 s, or CUDALAB_EMU_TIMEOUT; 0: no limit).
void set_time_limit(unsigned seconds);

// Worker threads that run blocks in parallel (CUDALAB_EMU_THREADS, default: all cores).
unsigned worker_count();

}  // namespace cudalab::emu

namespace cudalab::emu {

// Counting costs time; it is on between these calls (and for the whole run under
// CUDALAB_REPORT=1, which prints a table per kernel when the program ends).
void start_counting();
std::vector<cudalab::LaunchCounters> stop_counting();

}  // namespace cudalab::emu
