// Races on global memory inside one block: between two barriers (or warp meetings), bytes that
// one thread of the block wrote must not be read by another thread of the block (an in-place
// update, `a[i] = a[i - 1]`, with no __syncthreads()), bytes one thread read must not be written
// by another (`a[i] = a[i + 1]`: the reader may run before or after the writer), and two threads
// must not write different values to the same bytes (which one lands depends on the order).
//
// Algorithm: each worker keeps, for the block it runs, a table of the global words the block has
// touched since its last barrier: the word's address, its last writer (thread, line, bytes) and
// up to two readers. A store looks its word up, checks the readers and records itself; a read
// looks up only the words whose shadow says this block wrote them (shadow.h), and records itself
// only in arrays that this launch writes (reads_watched, memory.h), so kernels that read one array
// and write another pay nothing for reads; a read of a word the table does not hold (up to eight
// of them) waits outside it until the thread stops, and is dropped if the thread then writes the
// same bytes (`a[i] += x`, or a compare-and-swap that reads two elements and writes both back,
// costs no look). Most stores are a block's first to their word, with no read
// in the table to race with (a kernel that writes its output once): such a store is only logged
// (log_fresh_store), and the log enters the table when the epoch first needs the table. Thread
// t + 1 storing the word after thread t's at the same line extends a run in the log (one record
// for the row of threads, extended by the fast path without a call, FreshStoreRun). The
// table is open addressing keyed by the word; entries of earlier epochs (before the barrier, or
// another block) count as free, so a barrier empties the table and the log at no cost.
//
// Threads that take turns through a lock are ordered without a barrier: a thread's accesses before
// its `__threadfence()` happen before what another thread does after an atomic of its own made
// after that fence (the lock of CUDA by Example's hash table: atomicCAS then __threadfence() to
// take it, __threadfence() then atomicExch to give it back). Each worker keeps a clock that the
// block's fences and atomics advance, each thread's last fence and last atomic on it, and each
// write and read the clock's value when it was made; such a pair is no race, whatever the values.
//
// Limitations: the table grows to 2^15 entries; a block that touches more words between two
// barriers (a grid-stride loop of a small grid over a large array) forgets some of them, and a
// race on one of those is not seen. A read is watched from the launch's first store into its
// array on: in `a[i] = a[i + 1]` the first thread's read comes before any store and is not seen
// (the second thread's is). A write over another thread's write waits to be judged by its value
// (overwrites.cpp): threads that store the same value (every thread setting a flag) are no race.
// A word remembers its last writer only (with the bytes it wrote), and two readers: a read
// of bytes an earlier writer of the same word wrote in the same epoch, or a third reader, is not
// seen. Atomics are neither readers nor writers here.
#include <cstdint>
#include <string>
#include <vector>

#include "checks.h"
#include "cudalab/emu/device.h"
#include "errors.h"
#include "memory.h"
#include "replay.h"

namespace cudalab::emu {
namespace {

struct WordWrite {
  static constexpr uint16_t kNobody = 0xFFFF;
  uintptr_t word = 0;
  const void* pc = nullptr;  // the last write's line; nullptr: not written yet
  const void* read_pc[2] = {nullptr, nullptr};
  uint32_t epoch = 0;   // the barrier epoch of the accesses (another epoch's entry is free)
  uint16_t writer = 0;  // thread rank
  uint16_t reader[2] = {kNobody, kNobody};  // two of the threads that read it
  uint8_t bytes = 0;                        // which bytes of the word the writer wrote
  uint8_t read_bytes[2] = {0, 0};
  uint32_t written_at = 0;       // the block's sync clock at the write
  uint32_t read_at[2] = {0, 0};  // and at each reader's read
};

class BlockWrites {
 public:
  // The entry of `word` in barrier epoch `epoch`; a free one if `insert`, else nullptr when the
  // block has not written it since its last barrier (or its entry was given to another word).
  WordWrite* find(uintptr_t word, uint32_t epoch, bool insert) {
    start_epoch(epoch);
    close_run();
    if (!log_.empty()) enter_log();
    if (table_.empty()) table_.resize(1024);
    const size_t home = hash(word);
    for (size_t n = 0, i = home; n < kProbes; ++n, i = (i + 1) & (table_.size() - 1)) {
      WordWrite& e = table_[i];
      if (e.epoch != epoch) {
        if (!insert) return nullptr;
        if (2 * ++used_ > table_.size() && table_.size() < kMaxEntries) {
          grow();
          return find(word, epoch, true);
        }
        e = {.word = word, .epoch = epoch};
        return &e;
      }
      if (e.word == word) return &e;
    }
    if (!insert) return nullptr;
    if (table_.size() < kMaxEntries) {
      grow();
      return find(word, epoch, true);
    }
    table_[home] = {.word = word, .epoch = epoch};  // full: the home entry makes room
    return &table_[home];
  }

  // A store of thread `writer` into a word that no thread of the block wrote in this epoch, while
  // the table holds no read of it (log_fresh_store): kept aside until the table is needed.
  // A whole aligned word starts a run (fresh_store_run, checks.h) that the next thread's store
  // into the next word extends without a call (fast_path.h).
  void log_store(uintptr_t word, uint32_t epoch, uint16_t writer, uint8_t bytes, const void* pc) {
    start_epoch(epoch);
    close_run();
    if (log_.size() == kMaxEntries) enter_log();
    if (bytes == 0xF)
      fresh_store_run = {.epoch = epoch, .first_word = word, .first_writer = writer, .pc = pc};
    else
      log_.push_back({word, pc, writer, bytes, 1, sync_clock_});
  }

  // A fence or an atomic of thread `me` (in barrier epoch `epoch`): the clock moves on, and an open
  // run of fresh stores ends (its stores were made before).
  void note_sync(uint32_t epoch, unsigned me, bool fence) {
    start_epoch(epoch);
    close_run();
    ThreadSync& s = sync_[me];
    if (s.epoch != epoch) s = {.epoch = epoch};
    (fence ? s.last_fence : s.last_atomic) = ++sync_clock_;
  }
  uint32_t sync_clock() const { return sync_clock_; }
  // Whether what thread `first` did at clock `at` happens before what thread `then` does now:
  // `first` fenced after it, and `then` made an atomic after that fence.
  bool ordered(uint32_t epoch, unsigned first, uint32_t at, unsigned then) const {
    const ThreadSync &f = sync_[first], &t = sync_[then];
    return f.epoch == epoch && t.epoch == epoch && f.last_fence > at &&
           t.last_atomic > f.last_fence;
  }
  // Whether the table holds a read of this epoch (a store must then look for its readers).
  bool holds_reads(uint32_t epoch) const { return read_epoch_ == epoch; }
  void note_read_in(uint32_t epoch) { read_epoch_ = epoch; }

 private:
  struct LoggedStore {  // `count` stores: thread writer + k into word + 4k (k < count)
    uintptr_t word;
    const void* pc;
    uint16_t writer;
    uint8_t bytes;
    uint32_t count;
    uint32_t clock;  // the sync clock at the stores
  };
  struct ThreadSync {
    uint32_t epoch = 0;
    uint32_t last_fence = 0, last_atomic = 0;  // the sync clock at them
  };
  // The open run of fresh stores goes into the log (a run of an earlier epoch is dropped).
  void close_run() {
    FreshStoreRun& run = fresh_store_run;
    if (run.epoch == 0) return;
    if (run.epoch == epoch_)
      log_.push_back({run.first_word, run.pc, static_cast<uint16_t>(run.first_writer), 0xF,
                      run.count, sync_clock_});
    run.epoch = 0;
  }
  void start_epoch(uint32_t epoch) {
    if (epoch == epoch_) return;
    epoch_ = epoch;  // a barrier or a new block: every entry is now free
    used_ = 0;
    log_.clear();
  }
  // The logged stores into the table (each is its word's only store of the epoch so far).
  void enter_log() {
    std::vector<LoggedStore> log;
    log.swap(log_);
    for (const LoggedStore& s : log)
      for (uint32_t k = 0; k < s.count; ++k) {
        WordWrite& w = *find(s.word + 4 * k, epoch_, true);
        w.pc = s.pc;
        w.writer = static_cast<uint16_t>(s.writer + k);
        w.bytes = s.bytes;
        w.written_at = s.clock;
      }
    log.clear();
    log.swap(log_);  // keeps its memory
  }

  // A word is looked for in kProbes entries from its home; the table grows to kMaxEntries (1.5 MB,
  // within a core's caches), then a block that touches more words between two barriers forgets
  // some of them (a full table gives a word's home entry to the newcomer).
  static constexpr size_t kProbes = 8, kMaxEntries = size_t{1} << 15;
  size_t hash(uintptr_t word) const {
    return (word / 4 * 0x9E3779B97F4A7C15ull >> 20) & (table_.size() - 1);
  }
  void grow() {
    std::vector<WordWrite> old(table_.size() * 2);
    old.swap(table_);
    used_ = 0;
    for (const WordWrite& e : old)
      if (e.epoch == epoch_) *find(e.word, epoch_, true) = e;
  }
  std::vector<WordWrite> table_;
  std::vector<LoggedStore> log_;
  uint32_t epoch_ = 0, read_epoch_ = 0;
  size_t used_ = 0;
  uint32_t sync_clock_ = 0;  // advanced by the fences and atomics of the blocks this worker runs
  ThreadSync sync_[1024];    // per thread of the block
};

// Bits of `word_bytes` (bit j: byte word + j) as bits of an access at `a` (bit i: byte a + i).
uint32_t access_bytes(uintptr_t word, uintptr_t a, uint8_t word_bytes) {
  uint32_t bits = 0;
  for (unsigned j = 0; j < 4; ++j)
    if ((word_bytes >> j & 1u) && word + j >= a && word + j - a < 32) bits |= 1u << (word + j - a);
  return bits;
}

// Each worker's table, made at its first use and kept for the worker's life: a plain pointer, so
// that reaching it costs no check of whether it was constructed.
constinit thread_local BlockWrites* worker_writes = nullptr;

BlockWrites& worker_table() {
  if (worker_writes == nullptr) worker_writes = new BlockWrites;
  return *worker_writes;
}

// Out of the hot path: the words of the report (put off while the launch may judge the race by
// running again: replay.cpp).
[[gnu::cold, gnu::noinline]] void report_read_after_write(BlockState& b, const Allocation& r,
                                                          uintptr_t a, unsigned size,
                                                          const WordWrite& w, const void* pc) {
  b.raced_read = {.word = w.word,
                  .epoch = b.epoch,
                  .thread = running_thread(),
                  .writer = w.writer,
                  .write_pc = w.pc,
                  .read_pc = pc};
  race_found(b, pc, "global_race", [&] {
    return "a read of " + element_of(r, a, size) + ", which " + thread_named(b, w.writer) +
           " of this block wrote at " + at(w.pc) +
           " with no __syncthreads() in between: the result depends on which thread runs "
           "first. " +
           race_fix(w.writer, running_thread(),
                    "Put a __syncthreads() between the write and the read, or read from another "
                    "array than the one written.");
  });
}

[[gnu::cold, gnu::noinline]] void report_write_after_read(BlockState& b, const Allocation& r,
                                                          uintptr_t a, unsigned size,
                                                          unsigned reader, const void* read_pc,
                                                          const void* pc) {
  race_found(b, pc, "global_race", [&] {
    return "a write to " + element_of(r, a, size) + ", which " + thread_named(b, reader) +
           " of this block read at " + at(read_pc) +
           " with no __syncthreads() in between: the reader sees the old or the new value "
           "depending on which thread runs first. " +
           race_fix(reader, running_thread(),
                    "Put a __syncthreads() between the read and the write, or write to another "
                    "array than the one read.");
  });
}

// Keeps thread `me` as a reader of `bytes` of w: in the slot it has, else a free one, else the
// second slot (so that the first reader and the latest other one are known).
void note_read(WordWrite& w, uint16_t me, uint8_t bytes, const void* pc) {
  worker_writes->note_read_in(w.epoch);
  const int slot = w.reader[0] == me || w.reader[0] == WordWrite::kNobody ? 0 : 1;
  if (w.reader[slot] != me) w.read_bytes[slot] = 0;
  w.reader[slot] = me;
  w.read_pc[slot] = pc;
  w.read_bytes[slot] |= bytes;
  w.read_at[slot] = worker_writes->sync_clock();
}

// Watched reads of words the table does not hold, kept out of it until the thread stops (all are
// the running thread's, of its barrier epoch): a thread that reads words and then writes them
// (`a[i] += x`, the common in-place update) costs no look in the table for them.
struct WaitingRead {
  uint32_t epoch = 0;
  uintptr_t word = 0;
  const void* pc = nullptr;
  uint16_t reader = 0;
  uint8_t bytes = 0;
};
struct WaitingReads {
  static constexpr unsigned kReads = 8;
  unsigned count = 0;
  WaitingRead read[kReads];
};
constinit thread_local WaitingReads waiting_reads;

// Whether any check waits for the thread's stop (race_checks_waiting), after some were done.
void still_waiting() { race_checks_waiting = waiting_reads.count != 0 || overwrite_waiting(); }

// Keeps the read of `bytes` of `word` waiting; false when there is no room.
bool keep_waiting(uint32_t epoch, uintptr_t word, uint16_t me, uint8_t bytes, const void* pc) {
  WaitingReads& w = waiting_reads;
  for (unsigned i = 0; i < w.count; ++i) {
    WaitingRead& r = w.read[i];
    if (r.word == word && r.epoch == epoch && r.reader == me) {
      r.bytes |= bytes;
      r.pc = pc;  // (the table keeps a reader's latest line)
      return true;
    }
  }
  if (w.count == WaitingReads::kReads) return false;
  w.read[w.count++] = {epoch, word, pc, me, bytes};
  race_checks_waiting = true;
  return true;
}

// A store of the running thread over bytes it read: those reads need no place in the table.
void drop_waiting_reads(uint32_t epoch, uintptr_t a, unsigned size, uint16_t me) {
  WaitingReads& w = waiting_reads;
  for (unsigned i = 0; i < w.count;) {
    const WaitingRead& r = w.read[i];
    if (r.epoch == epoch && r.reader == me && r.word + 4 > a && r.word < a + size &&
        (r.bytes & ~bytes_touched(r.word, a, size)) == 0)
      w.read[i] = w.read[--w.count];
    else
      ++i;
  }
}

void record_waiting_reads() {
  WaitingReads& w = waiting_reads;
  for (unsigned i = 0; i < w.count; ++i) {
    const WaitingRead& r = w.read[i];
    if (still_in_epoch(r.epoch))
      note_read(*worker_table().find(r.word, r.epoch, true), r.reader, r.bytes, r.pc);
  }
  w.count = 0;
}

}  // namespace

bool writes_back_a_raced_read(const BlockState& b, uintptr_t word) {
  const BlockState::RacedRead& read = b.raced_read;
  return read.word == word && read.thread == running_thread() && read.epoch == b.epoch;
}

void report_lost_update(BlockState& b, const Allocation& r, uintptr_t a, unsigned size,
                        const void* pc) {
  if (b.replay != nullptr && b.replay->second_run()) return;
  const BlockState::RacedRead& read = b.raced_read;
  const bool blocks = read.other_block != 0;
  const std::string writer =
      blocks ? "block " + dim(index_of(read.other_block - b.launch_stamp, b.config->grid)) +
                   " also wrote in this launch"
             : thread_named(b, read.writer) + " of this block wrote it at " + at(read.write_pc);
  const char* check = blocks ? "race_between_blocks" : "global_race";
  const std::string what =
      "a write to " + element_of(r, a, size) + ", which this thread read at " + at(read.read_pc) +
      " after " + writer + ", with no " + (blocks ? "launch" : "__syncthreads()") +
      " in between: " + (blocks ? "blocks" : "threads") +
      " that read an element, change it and write it back lose each other's updates when they "
      "run at once. Use an atomic (atomicAdd), or give each " +
      (blocks ? "block" : "thread") + " an element of its own.";
  Diagnostic found;
  {
    const EmuCodeRuns composing;
    found = found_here(b, place_of(pc), check, what);
  }
  // (told rather than a race the launch put off: it is certain)
  if (b.replay != nullptr) b.replay->tell_instead(found);
  stop_thread(cudaErrorLaunchFailure, std::move(found));
}

void note_sync(BlockState& b, bool fence) {
  if (race_checks_waiting) finish_race_checks();  // (what waits was made before the sync)
  worker_table().note_sync(b.epoch, running_thread(), fence);
}

void finish_race_checks() {
  const EmuCodeRuns checking;
  race_checks_waiting = false;
  record_waiting_reads();
  judge_overwrite();
}

bool log_fresh_store(BlockState& b, uintptr_t a, unsigned size, const void* pc) {
  if ((a & 3) + size > 4 || overwrite_waiting()) return false;
  const auto me = static_cast<uint16_t>(running_thread());
  if (race_checks_waiting) {
    drop_waiting_reads(b.epoch, a, size, me);
    still_waiting();
  }
  keep_before_store(b, a, size);
  BlockWrites& writes = worker_table();
  if (writes.holds_reads(b.epoch)) return false;
  const uintptr_t word = a & ~uintptr_t{3};
  const uint8_t bytes = bytes_touched(word, a, size);
  writes.log_store(word, b.epoch, me, bytes, pc);
  remember_last_write(b, word, me, bytes);
  return true;
}

void check_global_race(BlockState& b, const Allocation& r, uintptr_t a, unsigned size, bool store,
                       const void* pc) {
  const EmuCodeRuns checking;  // (the fast path's call, as check_access's)
  const auto me = static_cast<uint16_t>(running_thread());
  if (race_checks_waiting) {  // the thread's own waiting reads stay out of the table
    if (store) drop_waiting_reads(b.epoch, a, size, me);  // a write over all it read
    judge_overwrite();
    still_waiting();
  }
  if (store) keep_before_store(b, a, size);
  BlockWrites& writes = worker_table();
  const bool watch_reads = !store && reads_watched(b.launch_stamp, r);
  uint32_t overwritten = 0;  // bytes of this write that another thread wrote (bit i: a + i)
  uint16_t first_writer = 0;
  const void* first_pc = nullptr;
  bool lost_update = false;
  for (uintptr_t word = a & ~uintptr_t{3}; word < a + size; word += 4) {
    const uint8_t bytes = bytes_touched(word, a, size);
    WordWrite* w = writes.find(word, b.epoch, store);
    if (w == nullptr) {
      if (!watch_reads) continue;
      if (wait_watched_read(b, a, size, pc)) continue;
      w = writes.find(word, b.epoch, true);
    }
    if (store) {
      lost_update = lost_update || writes_back_a_raced_read(b, word);
      for (int i = 0; i < 2; ++i)
        if (w->reader[i] != WordWrite::kNobody && w->reader[i] != me &&
            (w->read_bytes[i] & bytes) && !writes.ordered(b.epoch, w->reader[i], w->read_at[i], me))
          report_write_after_read(b, r, a, size, w->reader[i], w->read_pc[i], pc);
      if (w->pc != nullptr && w->writer == me) {
        w->bytes |= bytes;
      } else {
        const bool after_lock =
            w->pc != nullptr && writes.ordered(b.epoch, w->writer, w->written_at, me);
        if (w->pc != nullptr && (w->bytes & bytes) && overwritten == 0 && !after_lock) {
          first_writer = w->writer;
          first_pc = w->pc;
        }
        if (w->pc != nullptr && !after_lock) overwritten |= access_bytes(word, a, w->bytes & bytes);
        w->pc = pc;
        w->writer = me;
        w->bytes = bytes;
      }
      w->written_at = writes.sync_clock();
      remember_last_write(b, word, me, w->bytes);
      continue;
    }
    if (w->pc != nullptr && w->writer != me && (w->bytes & bytes) &&
        !writes.ordered(b.epoch, w->writer, w->written_at, me))
      report_read_after_write(b, r, a, size, *w, pc);
    if (watch_reads) note_read(*w, me, bytes, pc);
  }
  if (overwritten != 0) {
    b.threads_overwrote = true;
    wait_for_overwrite(b, &r, a, size, overwritten,
                       {.thread = first_writer, .pc = first_pc, .lost_update = lost_update}, pc);
  }
}

bool wait_watched_read(BlockState& b, uintptr_t a, unsigned size, const void* pc) {
  if ((a & 3) + size > 4) return false;
  const uintptr_t word = a & ~uintptr_t{3};
  return keep_waiting(b.epoch, word, static_cast<uint16_t>(running_thread()),
                      bytes_touched(word, a, size), pc);
}

}  // namespace cudalab::emu
