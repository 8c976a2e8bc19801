// The checks behind every device access of instrumented code (the student's kernels): what a GPU
// would corrupt or read as garbage stops the kernel here, with the thread, the line and the array.
//
// Global memory: the access must lie inside a live cudaMalloc array; it must not read bytes that
// nobody wrote; two blocks of one launch must not write the same byte without atomics.
// Shared memory: the access must lie inside a __shared__ variable or the dynamic array; it must
// not read what this block never wrote; and between two barriers, a word that one thread wrote
// must not be read or written by another (the missing __syncthreads()).
//
// This file picks the check of each access by the memory it touches and words the faults; the
// checks themselves: global_checks.cpp, host_checks.cpp, shared_layout.cpp and shared_races.cpp.
#include "checks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

#include "device_limits.h"
#include "errors.h"
#include "memory.h"
#include "replay.h"
#include "stores_in_flight.h"
#include "symbolize.h"

namespace cudalab::emu {

std::string dim(uint3 d) {
  std::ostringstream s;
  s << "(" << d.x << "," << d.y << "," << d.z << ")";
  return s.str();
}

records::SourceLine place_of(const void* pc) {
  records::SourceLine line = source_line(pc);
  if (!line.known()) line.file = "an unknown line (build with -g)";
  return line;
}

std::string at(const void* pc) { return place_of(pc).text(); }

void fault(const BlockState& b, const void* pc, cudaError_t code, const char* check,
           const std::string& what) {
  fault_at(b, place_of(pc), code, check, what);
}

void fault_at(const BlockState& b, const records::SourceLine& where, cudaError_t code,
              const char* check, const std::string& what) {
  stop_thread(code, found_here(b, where, check, what));
}

Diagnostic found_here(const BlockState& b, const records::SourceLine& where, const char* check,
                      const std::string& what) {
  return in_kernel(*b.config, b.block, ::threadIdx, where, check, what);
}

std::string bytes_of(unsigned size) {
  return std::to_string(size) + (size == 1 ? " byte" : " bytes");
}

// A read of memory nobody wrote stops the kernel (the labs' tests), or, with
// CUDALAB_EMU_UNWRITTEN=warn (as `cudalab run` sets), is told once per source line and the kernel
// goes on: real programs sometimes read garbage they then ignore.
bool unwritten_reads_stop() {
  static const bool stop = [] {
    const char* mode = std::getenv("CUDALAB_EMU_UNWRITTEN");
    return mode == nullptr || std::string(mode) != "warn";
  }();
  return stop;
}

void warn_once(const BlockState& b, const void* pc, const char* check, const std::string& what) {
  static std::mutex mutex;
  static std::set<records::SourceLine> told;
  if (b.replay != nullptr && b.replay->second_run()) return;  // (told in the first run)
  const EmuCodeRuns composing;
  const records::SourceLine line = place_of(pc);
  std::lock_guard<std::mutex> lock(mutex);
  if (!told.insert(line).second) return;
  const Diagnostic found = found_here(b, line, check, what);
  records::write(found.record(cudaSuccess).text("severity", "warning"));
  std::fprintf(stderr, "cudalab emu: warning: %s (told once per line)\n", found.english().c_str());
}

void thread_fence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  BlockState* b = current_block;
  if (b == nullptr) return;
  if (b->fenced != nullptr) b->fenced[b->block_rank].store(true);
  if (checked_code_linked()) note_sync(*b, true);
}

std::string thread_named(const BlockState& b, uint32_t rank) {
  return "thread " + dim(index_of(rank, b.config->block));
}

std::string race_fix(uint32_t them, uint32_t me, const std::string& barrier_fix) {
  if (them / device_limits::kWarpSize != me / device_limits::kWarpSize) return barrier_fix;
  return barrier_fix +
         " The two threads are lanes of one warp, which need not run in step (since Volta; "
         "volatile does not make them): where only part of the block runs this code (as the last "
         "warp of a reduction under if (tid < 32)), put a __syncwarp() there instead, each lane "
         "taking what it reads into a register before it (v += s[tid + 16]; __syncwarp(); "
         "s[tid] = v; __syncwarp();).";
}

namespace {

// After the time limit, a thread's next kStuckSamples accesses are watched before it is stopped,
// and the stop names the last source line among them: the same line every run (the first access
// after the limit could be any line of the loop, or of a helper it calls).
constexpr unsigned kStuckSamples = 4096;

[[noreturn]] void stop_stuck_thread(BlockState& b) {
  const void* at_last = b.stuck_at.front();
  records::SourceLine last = source_line(at_last);
  std::vector<records::SourceLine> seen;
  for (const void* pc : b.stuck_at) seen.push_back(source_line(pc));
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  for (size_t i = 0; i < b.stuck_at.size(); ++i) {
    const records::SourceLine where = source_line(b.stuck_at[i]);
    if (where.line > last.line) at_last = b.stuck_at[i], last = where;
  }
  std::string lines;
  for (const records::SourceLine& where : seen) lines += (lines.empty() ? "" : ", ") + where.text();
  b.stuck_at.clear();
  b.stuck_samples = 0;
  std::string waits_for_the_host;  // a loop that reads memory the host may change meanwhile
  if (b.stuck_host_load_size != 0)
    if (const Allocation* r = containing(reinterpret_cast<const void*>(b.stuck_host_load), false))
      waits_for_the_host =
          " It reads " + element_of(*r, b.stuck_host_load, b.stuck_host_load_size) + ", " +
          (r->kind == MemoryKind::managed ? "managed" : "page-locked host") +
          " memory: on a GPU the host code after a launch runs while the kernel runs and may "
          "change it, but emu runs each launch to its end before the host code after it, so a "
          "kernel that waits for the host cannot finish on emu (docs/design.md, what emu does "
          "not model). If nothing is meant to change it meanwhile,";
  b.stuck_host_load_size = 0;
  fault(b, at_last, cudaErrorLaunchTimeout, "time_limit",
        "the kernel was stopped here: it ran past its time limit (CUDALAB_EMU_TIMEOUT seconds) or "
        "was interrupted (Ctrl-C), and kept running " +
            lines + "." + waits_for_the_host + (waits_for_the_host.empty() ? " Look" : " look") +
            " for a loop whose condition never changes (a missing increment, a wrong bound).");
}

}  // namespace

void check_access(const void* address, unsigned size, bool store, bool atomic, const void* pc) {
  if (emu_code_runs) return;  // (an access of the emu's own code, while it checks this one)
  const EmuCodeRuns checking;
  const auto a = reinterpret_cast<uintptr_t>(address);
  BlockState* b = current_block;
  if (b != nullptr) publish_store(store && !atomic ? a : 0);
  if (atomic && b != nullptr) {  // on any memory: __device__ counters too
    b->made_atomic = true;
    note_sync(*b, false);
  }
  if (b != nullptr && timed_out()) {
    if (std::find(b->stuck_at.begin(), b->stuck_at.end(), pc) == b->stuck_at.end() &&
        b->stuck_at.size() < 64)
      b->stuck_at.push_back(pc);
    if (!store && !atomic && b->stuck_host_load_size == 0 && arena().contains(address))
      if (const Allocation* r = containing(address, false);
          r != nullptr && r->kind != MemoryKind::device) {
        b->stuck_host_load = a;
        b->stuck_host_load_size = size;
      }
    if (++b->stuck_samples >= kStuckSamples) stop_stuck_thread(*b);
  }
  if (arena().contains(address)) {
    if (watching_a_thread.load(std::memory_order_relaxed) && b != nullptr && !store && !atomic)
      note_watched_load(*b, a, size, pc);
    check_global(b, a, size, store, atomic, pc);
  } else if (b != nullptr && b->shared != nullptr && b->shared->contains(a)) {
    b->shared->access(*b, a, size, store, atomic, pc);
  } else if (b != nullptr && a < kNullPages) {
    char where[32];
    std::snprintf(where, sizeof where, "%#lx", static_cast<unsigned long>(a));
    fault(*b, pc, cudaErrorIllegalAddress, "null_pointer",
          std::string(access_verb(store, atomic)) + " address " + where +
              ", through a null pointer: an argument or variable that should hold an array's "
              "address (from cudaMalloc) holds 0 (NULL, nullptr)");
  } else if (b != nullptr) {
    if (store || atomic) note_store_outside_arrays(*b, a);
    check_host(*b, a, store, pc);
  }
  if (b != nullptr && counting()) count_checked_access(a, size, store, atomic, pc);  // a kernel's
}

}  // namespace cudalab::emu
