// What the emu backend knows that a GPU does not tell: for tests and for the student's messages.
#pragma once

#include <string>
#include <vector>

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

// A launch that runs longer is stopped (default 20 s, or CUDALAB_EMU_TIMEOUT).
void set_time_limit(unsigned seconds);

// Worker threads that run blocks in parallel (CUDALAB_EMU_THREADS, default: all cores).
unsigned worker_count();

}  // namespace cudalab::emu

namespace cudalab::emu {

// Counters of the memory traffic of instrumented kernels, as a GPU would see it. A warp is 32
// consecutive threads of a block; the accesses of a warp at one place in the code (the n-th time
// each of its threads gets there since the last barrier) form one request, as in lockstep.
// Global memory moves 32-byte sectors; shared memory serves 32 banks of 4-byte words per
// wavefront, and threads reading the same word share it (a broadcast).
struct AccessSite {
  std::string where;  // "file.cu:12"
  bool shared, store, atomic;
  unsigned long long requests = 0;
  unsigned long long transactions = 0;        // global: sectors; shared: wavefronts
  unsigned long long ideal_transactions = 0;  // the fewest that the same bytes could need
  unsigned long long bytes = 0;               // requested by the threads
  unsigned max_degree = 0;                    // worst transactions/ideal of one request
};

struct LaunchCounters {
  std::string kernel, where;
  unsigned long long global_load_requests = 0, global_store_requests = 0;
  unsigned long long global_load_sectors = 0, global_store_sectors = 0;
  unsigned long long global_load_bytes = 0, global_store_bytes = 0;
  unsigned long long shared_load_requests = 0, shared_store_requests = 0;
  unsigned long long shared_wavefronts = 0, shared_ideal_wavefronts = 0;
  unsigned long long barriers = 0, atomics = 0;
  std::vector<AccessSite> sites;  // by source line

  // Bytes the threads asked for per byte moved (1: every sector fully used).
  double load_efficiency() const;
  double store_efficiency() const;
  // Wavefronts per ideal wavefront over all shared accesses (1: conflict-free).
  double bank_conflict_degree() const;
};

// Counting costs time; it is on between these calls (and for the whole run under
// CUDALAB_REPORT=1, which prints a table per kernel when the program ends).
void start_counting();
std::vector<LaunchCounters> stop_counting();

}  // namespace cudalab::emu
