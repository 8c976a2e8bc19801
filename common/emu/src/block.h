// What the checks and the counters know about the block that a worker thread runs now.
#pragma once

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/emu/device.h"
#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "diagnostic.h"

namespace cudalab::emu {

// A check failed inside a kernel: the running GPU thread stops where it is, and its block and the
// launch fail with `code` and `found` (scheduler.cpp). Called on the thread's own fiber; never
// returns (the thread's frames are given up, as a GPU that stops a kernel runs no destructors).
[[noreturn]] void stop_thread(cudaError_t code, Diagnostic found);

// Set while the emu's own code runs for a kernel's thread (the check of one of its accesses, a
// `__shared__` variable placed, a report composed): an access that reaches the hooks then comes
// from library code the program's instrumentation compiled (std::string's: the linker may take the
// program's copy of an inline function for the emu's too), on the emu's memory, not the kernel's.
inline constinit thread_local bool emu_code_runs = false;
class EmuCodeRuns {
 public:
  EmuCodeRuns() : ran_(std::exchange(emu_code_runs, true)) {}
  ~EmuCodeRuns() { emu_code_runs = ran_; }
  EmuCodeRuns(const EmuCodeRuns&) = delete;
  EmuCodeRuns& operator=(const EmuCodeRuns&) = delete;

 private:
  bool ran_;
};

class SharedSpace;
class LaunchReplay;

struct BlockState {
  const LaunchConfig* config = nullptr;
  uint3 block{};
  uint32_t launch_stamp = 0;  // the launch's first stamp; block b writes with launch_stamp + b
  uint32_t stamp = 0;
  uint32_t epoch = 0;        // counts block starts and barriers on this worker
  uint32_t block_epoch = 0;  // the epoch this block started in
  // The last epoch in which a checked access (not a proven stretch's) touched global memory: where
  // it is not this one, the block's plain writes of this launch came before the last barrier
  // (proven_stretches.cpp).
  uint32_t checked_global_epoch = 0;
  SharedSpace* shared = nullptr;
  Diagnostic unwritten_read;  // the first read of unwritten shared memory, reported at the barrier
  // The "last block" pattern (a block's __threadfence() before an atomic, another block's atomic
  // that sees it, then its writes): blocks that fenced, and whether this block made an atomic.
  std::atomic<bool>* fenced = nullptr;  // per block of the launch, or nullptr (too many blocks)
  bool made_atomic = false;
  // A cooperative launch: the grid barrier, and the block's number in the grid.
  std::barrier<void (*)() noexcept>* grid = nullptr;
  uint32_t block_rank = 0;
  // Whether an argument of the launch is a host pointer (check_host looks only then).
  bool host_pointer_args = false;
  // The last global store this block recorded (global_checks.cpp): where, and into which array;
  // the site part of its StoreMark (shadow.h).
  const void* last_store_pc = nullptr;
  uint32_t last_store_site = 0;
  const void* last_store_array = nullptr;
  uint32_t last_store_launch = 0;
  // The last global word this block wrote (global_races.cpp): in which barrier epoch, by which
  // thread, which of its bytes; and the run of whole words around it that the same thread wrote
  // one after another in that epoch, [last_run_first, last_run_end) (a struct's fields, a double
  // is two words). A thread that reads or writes again what it wrote last (g[i] += x in a loop,
  // f[i].x += dx, f[i].y += dy) needs no look in the race table.
  uintptr_t last_write_word = 0, last_run_first = 0, last_run_end = 0;
  uint32_t last_write_epoch = 0, last_writer = 0;
  uint8_t last_write_bytes = 0;
  // This block's writes over elements that another block wrote in the launch, and those of them
  // where it was the same thread at the same line, each at another address (global_checks.cpp):
  // when most are, the index leaves out blockIdx. (One address written again and again is a
  // flag: two blocks that run at once set it from threads of the same number by chance.)
  struct WritesOverOtherBlocks {
    uint32_t all = 0, by_the_same_thread = 0;
    uintptr_t last_address = 0;             // of the last write counted in by_the_same_thread
    static constexpr uint32_t kEnough = 4;  // (a few by chance among many are no pattern)
    // Counts one; whether the block's writes now show the pattern.
    bool count(bool same_thread, uintptr_t address) {
      ++all;
      if (same_thread && address != last_address) {
        ++by_the_same_thread;
        last_address = address;
      }
      return by_the_same_thread >= kEnough && 2 * by_the_same_thread > all;
    }
  } writes_over_other_blocks;
  // The pattern found (the diagnosis, at the write that completed it), told when the block ends
  // unless its threads also wrote over each other's global elements in it (threads_overwrote):
  // then every thread writes the same elements (a softmax whose threads each write the whole row),
  // the blocks' writes agree as its threads' do, and each is judged by its value instead.
  Diagnostic blocks_agree;
  bool threads_overwrote = false;
  // The launch's replay (replay.h), nullptr when it has none; and whether this run starts the
  // threads of each block last first (the replay's second run).
  LaunchReplay* replay = nullptr;
  bool reversed = false;
  // The last read of global memory that another thread of the block (or another block) wrote, put
  // off for the replay: the same thread writing the word back is a lost update, told at once
  // (report_lost_update, global_races.cpp).
  struct RacedRead {
    uintptr_t word = 0;
    uint32_t epoch = 0;
    unsigned thread = 0, writer = 0;  // the reader, and the thread that wrote (of this block)
    uint32_t other_block = 0;         // or the stamp of the other block that wrote it
    const void *write_pc = nullptr, *read_pc = nullptr;
  } raced_read;
  // After the time limit: the code addresses of the accesses watched before the stop (checks.cpp),
  // and the first of them that loaded memory the host may write while a kernel runs (managed or
  // page-locked), with its size (0: none).
  std::vector<const void*> stuck_at;
  unsigned stuck_samples = 0;
  uintptr_t stuck_host_load = 0;
  unsigned stuck_host_load_size = 0;
};
// The first stamp of the blocks of a cooperative launch after its last grid.sync(): every block
// writes with new stamps then, so what was written before the sync is no race.
inline uint32_t grid_phase_stamp = 0;
// The block this worker thread runs, nullptr outside kernels.
inline thread_local BlockState* current_block = nullptr;
// The GPU thread it runs now: running_thread() (launch.h), thread_rank(), kept with threadIdx.

// The shared memory of the block a worker runs: the launch's dynamic array and every __shared__
// variable at fixed offsets, with unused space between them so that overruns are recognised.
class SharedSpace {
 public:
  SharedSpace();
  ~SharedSpace();
  // Called when the worker starts a launch's blocks: the dynamic array gets `bytes`.
  void start_launch(size_t bytes);
  bool contains(uintptr_t a) const { return a - base_ < kSpace; }
  char* dynamic() const { return reinterpret_cast<char*>(base_); }
  char* address_of(SharedSlot& slot, size_t bytes, size_t align, const SharedShape& shape);
  // The element at `offset` as its variable's declaration subscripts it (tile[1][0] of a
  // tile[16][16]); nothing for the dynamic array or a variable that is no array.
  struct Element {
    std::string name, subscripts, declared, where;
    size_t row_length;  // the declaration's last extent
    unsigned rank;      // its number of extents
  };
  std::optional<Element> element_at(uintptr_t offset) const;
  // What shared<T>() needs to find this space's variables without a call (device.h); the worker
  // shows it while it runs a launch's blocks, and learn() keeps it up to date.
  SharedSpaceView view() const;
  // Checks one access of a thread of block `b` (see checks.cpp) and records it.
  void access(BlockState& b, uintptr_t a, unsigned size, bool store, bool atomic, const void* pc);
  // The same for a plain access within one word, or of whole words, that breaks no rule
  // (fast_path.h); false when it needs the full check, which then says what is wrong.
  bool access_fine(const BlockState& b, uintptr_t a, unsigned size, bool store, const void* pc);
  // Whether every word of [first, end) lies in a variable and was written in block `b`, and none
  // since its last barrier: loads of them need no check (proven_stretches.cpp).
  bool loads_fine(const BlockState& b, uintptr_t first, uintptr_t end) const;
  // Whether every word of [first, end) lies in a variable and no thread of block `b` read or wrote
  // it since its last barrier: stores to them, one thread per element, need no check.
  bool stores_fine(const BlockState& b, uintptr_t first, uintptr_t end) const;
  // Records that block `b` wrote `count` elements of `element` bytes (whole words), from `a` on,
  // `step` bytes apart: the stores of a proven stretch, which a barrier or the kernel's end
  // follows, so that what a later access may ask of them is only whether the block wrote them
  // (the words' records, whose writer and readers count within one epoch, stay as they were).
  void record_stores(const BlockState& b, uintptr_t a, unsigned element, unsigned count,
                     long long step);
  // Whether block `b` wrote word `w` (of the space): its record says so, or a proven stretch's
  // stores did (record_stores).
  bool written_in_block(const BlockState& b, size_t w) const;

  static constexpr size_t kDynamicSpace = 256 * 1024;  // 227 KiB allowed, then a gap
  static constexpr size_t kSpace = kDynamicSpace + 1024 * 1024;

 private:
  struct Word;  // what the checks remember about each 4-byte word
  void learn(unsigned region);
  bool word_access_fine(const BlockState& b, size_t w, uint16_t me, uint8_t bytes,
                        bool store) const;
  std::string describe_outside(uintptr_t offset, unsigned size) const;

  // The words proven stretches stored into (record_stores): a bit per word, 64 words a chunk,
  // each chunk stamped with the block epoch its bits belong to, so that a new block finds none.
  struct ProvenWritten {
    uint32_t block_epoch;
    uint64_t bits;
  };
  void note_proven_written(const BlockState& b, size_t first, size_t end);
  bool all_proven_written(const BlockState& b, size_t first, size_t end) const;
  bool proven_written(const BlockState& b, size_t w) const;
  // Whether the words [first, last] lie in one variable.
  bool one_variable(size_t first, size_t last) const;

  uintptr_t base_;
  Word* words_;
  ProvenWritten* proven_written_;
  // The last barrier epoch in which a checked access (access, access_fine) touched the space: in
  // any other, no word's record holds a read or write of the epoch.
  uint32_t checked_epoch_ = 0;
  std::vector<bool> known_;  // regions whose words are marked in words_
  size_t dynamic_bytes_ = 0;
};

// Set around the check of an atomic store or exchange: it needs no written value before it.
inline thread_local bool atomic_overwrites = false;
// Device accesses of instrumented code: checked (checks.cpp), then counted (counters.cpp).
void check_access(const void* address, unsigned size, bool store, bool atomic, const void* pc);
// A kernel's access that passed the checks (check_access, or the fast path: fast_path.h), counted
// if it touched global or shared memory.
void count_checked_access(uintptr_t address, unsigned size, bool store, bool atomic,
                          const void* pc);
// Requests that a proof gives without instrumenting the accesses (proven_stretches.cpp): one
// warp's, its `lanes` lanes at byte offsets[l] from each of `requests` bases (one request per
// base), filed under `marker` (line_marker's stand-in address of the access's line) and priced as
// count_checked_access's requests are.
void count_proven_requests(const void* marker, bool shared, bool store, unsigned size,
                           const long long* offsets, unsigned lanes, const uintptr_t* bases,
                           size_t requests);
// Counting is on (CUDALAB_REPORT, or a test's start_counting()).
inline std::atomic<bool> counters_on{std::getenv("CUDALAB_REPORT") != nullptr};
inline bool counting() { return counters_on.load(std::memory_order_relaxed); }
// Counters: the block's accesses between two barriers form the warps' requests.
void count_barrier(const char* file, int line);  // the barrier that opens
void count_block_end();
void count_worker_done();
void count_launch_end(const LaunchConfig& config);

// The launch watchdog (watchdog.cpp): set when the running launch passed its time limit.
inline std::atomic<bool> launch_expired{false};
inline bool timed_out() { return launch_expired.load(std::memory_order_relaxed); }
// `limit`: this launch's own time limit (a replay's second run: replay.cpp), or 0 for the
// program's (CUDALAB_EMU_TIMEOUT).
void watch_launch(const LaunchConfig& config, unsigned long long blocks,
                  std::chrono::seconds limit = std::chrono::seconds(0));
// Blocks of the running launch have finished (for the progress report of long launches).
void blocks_finished(unsigned long long count);
void launch_finished();

}  // namespace cudalab::emu
