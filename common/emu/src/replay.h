// Internal header of the emu runtime (not for programs): a launch whose threads or blocks race on
// global memory, run again in the other order so that the race is judged by its result
// (replay.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "block.h"
#include "checks.h"
#include "diagnostic.h"
#include "memory.h"

namespace cudalab::emu {

// Pages of device memory kept before a launch's first store into them: the size of a page of the
// arena (allocations start at page boundaries and span whole pages).
constexpr uintptr_t kKeptPage = 4096;

// One launch's replay: the pages the launch stores into, kept before the first store into each;
// the first race the checks put off; and which run is running. One launch at a time keeps pages
// (launches hold device_mutex, and end() comes before the child grids run).
class LaunchReplay {
 public:
  LaunchReplay();
  ~LaunchReplay() { end(); }
  LaunchReplay(const LaunchReplay&) = delete;
  LaunchReplay& operator=(const LaunchReplay&) = delete;

  // Whether a launch's races may wait for a replay: checked code, no counters (a second run would
  // count twice), no cooperative launch, no host pointer among the arguments (host memory is not
  // kept).
  static bool wanted(const LaunchConfig& config, bool host_pointer_args);

  // Whether the checks put a race off (the first run) or let it pass (the second): false once
  // the launch cannot be run again.
  bool puts_off_races() const { return again_ || possible(); }
  // The first run's race (the first one put off wins), or a race no replay can excuse (a lost
  // update), told instead of it.
  void put_off(Diagnostic race);
  void tell_instead(Diagnostic race);
  bool race_waits() const { return race_waits_.load(std::memory_order_acquire); }
  const Diagnostic& race() const { return race_; }

  // Bytes [a, a + size) of a device array are about to be stored into: the pages that hold them
  // are kept, unless kept already in this launch.
  void keep(uintptr_t a, unsigned size) {
    for (uintptr_t page = (a - arena_) / kKeptPage; page <= (a + size - 1 - arena_) / kKeptPage;
         ++page)
      if (!(kept_pages[page / 64].load(std::memory_order_acquire) >> page % 64 & 1))
        keep_page(page);
  }
  // The launch does what a second run could not undo (a store into a __device__ variable, a
  // kernel's own cudaMalloc): nothing more is kept, and a race put off is reported.
  void give_up() { possible_ = false; }
  bool possible() const { return possible_.load(std::memory_order_relaxed); }

  // Between the runs: what the first run left is set aside, and the kept pages get their bytes
  // from before the launch back.
  void start_second_run();
  bool second_run() const { return again_; }
  // After the second run: whether every page the two runs stored into holds what the first run
  // left (and the second run failed no check); if not, the pages get the first run's bytes back.
  bool same_result(bool second_run_failed);
  // The launch is judged (or found no race): its pages are forgotten.
  void end();

 private:
  void keep_page(uintptr_t page);
  // At most this much memory is kept per launch; a launch that stores into more is not replayed.
  static constexpr size_t kBudget = size_t{512} << 20;
  // The arena's pages kept by the running launch, a bit each (mapped at the first launch).
  static std::atomic<uint64_t>* kept_pages;
  uintptr_t arena_;
  std::atomic<bool> possible_{true}, race_waits_{false};
  bool again_ = false;
  std::mutex mutex_;
  std::vector<uintptr_t> pages_;  // the kept pages' numbers, in the order they were kept
  // The kept pages' bytes before the launch, then (from the second run on) what the first run left
  // there, a page after another as pages_ orders them: buffers that outlive the launch (one
  // launch at a time uses them), so that the next launch finds their pages mapped.
  inline static std::vector<char> before_, first_result_;
  size_t kept_in_first_run_ = 0;
  Diagnostic race_;
};

// Block `b` is about to store into bytes [a, a + size) of a device array (the race checks,
// check_global): their pages are kept for the launch's replay.
inline void keep_before_store(const BlockState& b, uintptr_t a, unsigned size) {
  if (b.replay != nullptr) b.replay->keep(a, size);
}

// A kernel's store (or atomic) at `a`, outside device and shared memory (check_access): one into
// the program's image (a __device__ variable, a static variable) is what no replay can undo.
// (Stores elsewhere, to the heap of a kernel's malloc, leave the arrays the replay compares alone.)
void note_store_outside_arrays(BlockState& b, uintptr_t a);

// A check found a race between threads of block `b` on global memory (global_races.cpp,
// overwrites.cpp): put off until the launch's replay judges it, or (when there is none) the
// kernel stops here as fault() stops it. `what()` words the race (called only when it is told).
void put_off_race(const BlockState& b, const void* pc, const char* check, const std::string& what);
template <class Words>
void race_found(const BlockState& b, const void* pc, const char* check, const Words& what) {
  if (b.replay == nullptr || !b.replay->puts_off_races())
    fault(b, pc, cudaErrorLaunchFailure, check, what());
  if (b.replay->second_run() || b.replay->race_waits()) return;
  const EmuCodeRuns composing;
  put_off_race(b, pc, check, what());
}

// The program's output while a launch runs again: nothing (its printf, the warnings).
class QuietOutput {
 public:
  QuietOutput();
  ~QuietOutput();
  QuietOutput(const QuietOutput&) = delete;
  QuietOutput& operator=(const QuietOutput&) = delete;

 private:
  int saved_out_, saved_err_;
};

}  // namespace cudalab::emu
