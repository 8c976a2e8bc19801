// Internal header of the emu runtime (not for programs): what the checks of device accesses share.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "block.h"
#include "cudalab/emu/types.h"

namespace cudalab::emu {

// The code addresses the first threads of a launch's first block load global memory from (at most
// kSites each): the lines a wrong element stored by one of them came from (provenance.cpp keeps
// them with the launch). The threads that store a wrong result's first elements are most often
// these: the first two rows of a block 32 threads wide, the first four of one 16 wide.
struct LoadSites {
  static constexpr unsigned kSites = 16;
  const void* pcs[kSites] = {};
  unsigned count = 0;
  void add(const void* pc) {
    for (unsigned i = 0; i < count; ++i)
      if (pcs[i] == pc) return;
    if (count < kSites) pcs[count++] = pc;
  }
};
struct FirstThreadsLoads {
  static constexpr unsigned kThreads = 64;
  LoadSites thread[kThreads];
};
inline FirstThreadsLoads* first_threads_loads = nullptr;  // the running launch's, or nullptr

// Whether a thread's loads are watched (inspect.h: watch_thread), and the full check's note of a
// global load to the watched thread's record (watched_thread.cpp).
inline std::atomic<bool> watching_a_thread{false};
void note_watched_load(const BlockState& b, uintptr_t a, unsigned size, const void* pc);

// What the checks of each kind of memory share (checks.cpp): how they word a fault and stop
// the kernel.
std::string dim(uint3 d);
// The source line of a code address (not known: a hint to build with -g), and the same in words,
// "file.cu:12".
records::SourceLine place_of(const void* pc);
std::string at(const void* pc);
// Stops the kernel of block `b` with `code`: `check` (its name in the records) found `what` in
// the running thread at code address `pc`.
[[noreturn]] void fault(const BlockState& b, const void* pc, cudaError_t code, const char* check,
                        const std::string& what);
// The same, at a source line `where`.
[[noreturn]] void fault_at(const BlockState& b, const records::SourceLine& where, cudaError_t code,
                           const char* check, const std::string& what);
// What `check` found in the running thread of block `b` at `where`, as fault_at words it.
Diagnostic found_here(const BlockState& b, const records::SourceLine& where, const char* check,
                      const std::string& what);
std::string bytes_of(unsigned size);
// What an access does, as the messages say it: "an atomic on", "a write to" or "a read of".
inline const char* access_verb(bool store, bool atomic) {
  return atomic ? "an atomic on" : store ? "a write to" : "a read of";
}
// A read of memory nobody wrote stops the kernel (the labs' tests), or, with
// CUDALAB_EMU_UNWRITTEN=warn (as `cudalab run` sets), is told once per source line and the kernel
// goes on: real programs sometimes read garbage they then ignore.
bool unwritten_reads_stop();
void warn_once(const BlockState& b, const void* pc, const char* check, const std::string& what);

// Whether host code may touch the memory at p (cudalab/emu/thrust_device.h, which declares it for
// programs): outside the arena, or managed or page-locked memory.
namespace thrust_device {
bool host_may_touch(const void* p);
}

// The check of each kind of memory (check_access picks one).
// Global memory (global_checks.cpp): inside a live array, not unwritten, one block writing a byte.
void check_global(BlockState* b, uintptr_t a, unsigned size, bool store, bool atomic,
                  const void* pc);
// The (x,y,z) index of number `rank` among `d` (x fastest): a thread in its block, a block in
// its grid.
inline uint3 index_of(uint32_t rank, dim3 d) {
  return {rank % d.x, rank / d.x % d.y, rank / (d.x * d.y)};
}
// "thread (x,y,z)": the thread of b's block with that rank (thread_rank()).
std::string thread_named(const BlockState& b, uint32_t rank);
// The fix of a race between threads `them` and `me` of one block (ranks), as its report's last
// sentences: `barrier_fix` ("Put a __syncthreads() between ..."), and where the two are lanes of
// one warp, the barrier that code run by part of the block needs (the warp-synchronous tail of
// a reduction under `if (tid < 32)`, where a __syncthreads() would not be reached by all).
std::string race_fix(uint32_t them, uint32_t me, const std::string& barrier_fix);
// Which bytes of the 4-byte word at `word` an access of `size` bytes at `a` touches, as a mask.
inline uint8_t bytes_touched(uintptr_t word, uintptr_t a, unsigned size) {
  const uintptr_t first = a > word ? a : word, last = a + size < word + 4 ? a + size : word + 4;
  return static_cast<uint8_t>(((1u << (last - first)) - 1) << (first - word));
}
// The same for an access that lies within one word ((a & 3) + size <= 4): fewer instructions on
// the checks' fast path, where size is a constant.
inline uint8_t bytes_touched_in_word(uintptr_t a, unsigned size) {
  return static_cast<uint8_t>(((1u << size) - 1) << (a & 3));
}

struct Allocation;
// "element 5 of the array allocated at x.cu:12 (d_A)": where an access of `size` bytes at `a` lies
// in `r`, as every message about an array's element names it (global_checks.cpp).
std::string element_of(const Allocation& r, uintptr_t a, unsigned size);
// What a thread's race checks leave waiting until its next race check or until it stops (a read
// not yet in the table, global_races.cpp; a write over another thread's, overwrites.cpp) is
// flagged by race_checks_waiting and done by finish_race_checks(), both declared in launch.h,
// whose row of threads settles each thread's checks as it ends.
// The thread stops (barrier, warp-level call): what waits is done now.
inline void settle_race_checks() {
  if (race_checks_waiting) finish_race_checks();
}
// Whether the running block is still in barrier epoch `epoch` (epochs only grow on a worker): a
// check left waiting then is still due; one left by a thread a check stopped is not.
inline bool still_in_epoch(uint32_t epoch) {
  return current_block != nullptr && current_block->epoch == epoch;
}
// The write that a later one goes over: by which thread, at which code address, and of which
// block (another block's stamp; 0: the running block).
struct FirstWrite {
  uint32_t thread = 0;
  const void* pc = nullptr;
  uint32_t other_block = 0;
  // The writing thread read the bytes after that write (BlockState::raced_read) and writes them
  // back: another value is a lost update (report_lost_update).
  bool lost_update = false;
};
// overwrites.cpp: `bytes` (bit i: byte a + i) of this write go over what `first` wrote, in array
// `r` (nullptr: shared memory); the write waits to be judged by value (judge_overwrite, once its
// store has happened: a different value stops the kernel).
void wait_for_overwrite(BlockState& b, const Allocation* r, uintptr_t a, unsigned size,
                        uint32_t bytes, const FirstWrite& first, const void* pc);
void judge_overwrite();
bool overwrite_waiting();  // whether a write waits to be judged
// A __threadfence() (`fence`) or an atomic of the running thread: what orders threads that take
// turns through a lock (global_races.cpp).
void note_sync(BlockState& b, bool fence);
// Races inside a block on global memory (global_races.cpp): called for each plain access by a
// block, a read only when the block itself wrote the bytes or reads_watched(b.launch_stamp, r).
void check_global_race(BlockState& b, const Allocation& r, uintptr_t a, unsigned size, bool store,
                       const void* pc);
// Whether a store by the running thread to `word` writes back what it read after another thread
// or block wrote it (BlockState::raced_read); and, once such a store changed the value, the lost
// update (a read-modify-write by threads or blocks that run at once, which no order of whole
// threads shows) stops the kernel, except in a replay's second run (global_races.cpp).
bool writes_back_a_raced_read(const BlockState& b, uintptr_t word);
void report_lost_update(BlockState& b, const Allocation& r, uintptr_t a, unsigned size,
                        const void* pc);
// The same for a store within one word into which the block has not written in this launch, when
// nothing in the race table can race with it (no read of this epoch, no write waiting to be
// judged): logs the store and returns true; false: call check_global_race. The thread's own reads
// waiting outside the table that the store covers are dropped (what a[i] += x read).
bool log_fresh_store(BlockState& b, uintptr_t a, unsigned size, const void* pc);
// A watched read (reads_watched) of bytes within one word that no plain write of this launch has
// touched: no write in the race table to race with, so the read waits outside the table until the
// thread's next stop, where it is recorded (a later store of the thread over it drops it: an
// in-place compare-and-swap reads its words and writes them back without a look in the table).
// False when the access spans words or enough reads wait: call check_global_race.
bool wait_watched_read(BlockState& b, uintptr_t a, unsigned size, const void* pc);
// The word thread `me` wrote last, and its bytes that it wrote in this epoch: the fast path skips
// the race table for the thread's next access to them (rewrites_last_word, fast_path.h). A whole
// word next to or in the thread's run of this epoch extends the run; another thread's write, or
// part of a word, starts another.
inline void remember_last_write(BlockState& b, uintptr_t word, unsigned me, uint8_t bytes) {
  const bool same_run = me == b.last_writer && b.last_write_epoch == b.epoch &&
                        word >= b.last_run_first && word <= b.last_run_end &&
                        b.last_run_end != b.last_run_first;
  if (bytes != 0xF)
    b.last_run_first = b.last_run_end = 0;
  else if (!same_run)
    b.last_run_first = word, b.last_run_end = word + 4;
  else if (word == b.last_run_end)
    b.last_run_end += 4;
  b.last_write_word = word;
  b.last_write_epoch = b.epoch;
  b.last_writer = me;
  b.last_write_bytes = bytes;
}
// The log's open run (global_races.cpp): threads first_writer, first_writer + 1, ... storing whole
// words first_word, first_word + 4, ... at one line in barrier epoch `epoch` (0: none open), as a
// kernel that writes its output once does. The next store of the run extends it without a call
// (fast_path.h); the race table closes it into the log whenever it is looked at, so an open run
// means that no read of this epoch is in the table.
struct FreshStoreRun {
  uint32_t epoch = 0;
  uintptr_t first_word = 0;
  uint32_t first_writer = 0, count = 1;
  const void* pc = nullptr;
};
inline constinit thread_local FreshStoreRun fresh_store_run;
// Addresses below this lie in pages nothing maps (Linux's mmap_min_addr): an access there goes
// through a null pointer.
constexpr uintptr_t kNullPages = 64 * 1024;
// Whether `a` lies on the running thread's stack or in its kernel's arguments: memory a kernel
// always may touch. Inlined, so the frame is the caller's, on the same stack.
[[gnu::always_inline]] inline bool stack_or_arguments(const LaunchConfig& c, uintptr_t a) {
  const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return a - (frame - (1 << 20)) < (2u << 20) ||
         a - reinterpret_cast<uintptr_t>(c.params) < c.params_bytes;
}
// Host memory (host_checks.cpp): not behind a host pointer given as an argument.
void check_host(const BlockState& b, uintptr_t a, bool store, const void* pc);

// What the shared-memory checks remember about each 4-byte word (shared_races.cpp); its region
// is the __shared__ variable that holds it (shared_layout.cpp).
constexpr uint16_t kNobody = 0xFFFF;  // no thread (and, as a writer: an atomic)

// Which bytes of the word the writer and the readers touched: threads that use different bytes
// of one word (a histogram of uchar counters) do not race.
struct SharedSpace::Word {
  uint32_t write_epoch, read_epoch;
  uint16_t writer, reader, other_reader, region;
  uint8_t write_bytes, read_bytes, other_bytes;
  const void *write_pc, *read_pc, *other_pc;

  // Thread `me` read `bytes` of the word at `pc` in barrier epoch `epoch`: the first reader of the
  // epoch, and one other, are remembered.
  void note_read(uint32_t epoch, uint16_t me, uint8_t bytes, const void* pc) {
    if (read_epoch != epoch) {
      read_epoch = epoch;
      reader = me;
      read_pc = pc;
      read_bytes = bytes;
      other_reader = kNobody;
    } else if (reader == me) {
      read_bytes |= bytes;
    } else if (other_reader == kNobody) {
      other_reader = me;
      other_pc = pc;
      other_bytes = bytes;
    }
  }
  // Thread `me` wrote `bytes` of the word at `pc` in barrier epoch `epoch`.
  void note_write(uint32_t epoch, uint16_t me, uint8_t bytes, const void* pc) {
    write_bytes = write_epoch == epoch && writer == me ? write_bytes | bytes : bytes;
    write_epoch = epoch;
    writer = me;
    write_pc = pc;
  }
};

inline bool SharedSpace::proven_written(const BlockState& b, size_t w) const {
  const ProvenWritten& chunk = proven_written_[w / 64];
  return chunk.block_epoch == b.block_epoch && (chunk.bits >> (w % 64) & 1) != 0;
}

inline bool SharedSpace::written_in_block(const BlockState& b, size_t w) const {
  return words_[w].write_epoch >= b.block_epoch || proven_written(b, w);
}

}  // namespace cudalab::emu
