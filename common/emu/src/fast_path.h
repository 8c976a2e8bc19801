// Internal header of the emu runtime (not for programs): the common case of the checks, inlined
// into the instrumentation's entry points (hooks.cpp).
//
// Algorithm: most accesses of a kernel touch its own stack, its arguments, the built-in variables
// (threadIdx and kin) or an array it touched a moment ago, and break no rule. The fast path
// answers those with a few comparisons and no call: an access to the thread's stack, the
// arguments or the built-ins is fine (check_host looks only for host pointers given as
// arguments, and a launch with none needs no look); an access to one of the last few arrays this
// worker checked is decided from the array's shadow when every byte has the same writer and that
// writer is not another block of this launch (the race table is still kept: check_global_race).
// Everything else (the first access to an array, shared memory, a byte nobody wrote, another
// block's byte, a launch past its time limit, atomics) takes the full check
// (check_access), which words every message. The fast path never reports anything: it only says
// "nothing to report" or "look closer".
#pragma once

#include <atomic>
#include <cstdint>

#include "block.h"
#include "checks.h"
#include "memory.h"
#include "replay.h"
#include "stores_in_flight.h"

namespace cudalab::emu {

// The arrays a worker checked last, as the fast path needs them: valid while no array changes
// (allocations_changed). The full check of global memory adds to it (remember_array).
struct RecentArrays {
  struct Entry {
    uintptr_t base = 0;
    size_t bytes = 0;             // 0: an empty entry
    uint32_t* writers = nullptr;  // the shadow's word writers (shadow.h)
    uint32_t* stores = nullptr;   // and its store marks
    const Allocation* record = nullptr;
  };
  static constexpr unsigned kEntries = 4;  // A, B and C of the usual kernel, and one more
  Entry entries[kEntries];
  uint32_t changes = 0;  // allocations_changed when filled
  unsigned next = 0;     // the entry to replace next
};
inline thread_local RecentArrays recent_arrays;

// The spans of managed or page-locked arrays that this thread's host code touched last
// (global_checks.cpp fills it): host code of a translated file makes long runs of accesses to a few
// arrays (a Thrust algorithm on its C++ system sorting a device vector).
struct HostArrays {
  static constexpr unsigned kEntries = 4;
  uintptr_t base[kEntries] = {}, span[kEntries] = {};
  uint32_t changes = 0;  // allocations_changed when filled
  unsigned next = 0;
};
inline thread_local HostArrays host_arrays;

// Whether host code's access of `a` needs no look: the host's own memory, or an array it may touch
// that it touched last (device memory it may not touch: the full check says so).
[[gnu::always_inline]] inline bool host_access_fine(uintptr_t a) {
  if (a - reserved_arena.base >= reserved_arena.size) return true;
  const HostArrays& recent = host_arrays;
  if (recent.changes != allocations_changed.load(std::memory_order_relaxed)) return false;
  for (unsigned k = 0; k < HostArrays::kEntries; ++k)
    if (a - recent.base[k] < recent.span[k]) return true;
  return false;
}

// A live array with a shadow that an access of this worker passed the full check in.
inline void remember_array(const Allocation& r) {
  RecentArrays& recent = recent_arrays;
  const uint32_t changes = allocations_changed.load(std::memory_order_relaxed);
  if (recent.changes != changes) recent = RecentArrays{.changes = changes};
  recent.entries[recent.next] = {reinterpret_cast<uintptr_t>(r.base), r.bytes, r.shadow.words,
                                 r.shadow.stores, &r};
  recent.next = (recent.next + 1) % RecentArrays::kEntries;
}

// Records the line of a global store of block b into array r (global_checks.cpp): only a store
// that differs from the block's last one costs a call.
void record_new_store(BlockState& b, const Allocation* r, const void* pc);
inline void record_store(BlockState& b, const Allocation* r, const void* pc) {
  if (b.last_store_pc != pc || b.last_store_array != r || b.last_store_launch != b.launch_stamp)
    record_new_store(b, r, pc);
}

// Whether the race table (global_races.cpp) already says what this access would make it say: the
// thread touches bytes of the word it wrote last, or of its run of whole words, in the same
// barrier epoch.
[[gnu::always_inline]] inline bool rewrites_last_word(const BlockState& b, uintptr_t a,
                                                      unsigned size) {
  if (b.last_write_epoch != b.epoch || b.last_writer != running_thread()) return false;
  if (a >= b.last_run_first && a + size <= b.last_run_end) return true;
  return (a & ~uintptr_t{3}) == b.last_write_word && (a & 3) + size <= 4 &&
         (bytes_touched_in_word(a, size) & ~b.last_write_bytes) == 0;
}

// The same decision for an access within one word whose bytes have different writers, or a write
// of part of a word that another writer wrote (global_checks.cpp): byte by byte.
bool global_bytes_fine(BlockState& b, const Allocation& r, uintptr_t a, unsigned size, bool store,
                       const void* pc);

// A fresh store (log_fresh_store) that extends the log's open run: the next thread storing the
// next word at the same line. Counted, and remembered as the thread's last write.
[[gnu::always_inline]] inline bool extends_fresh_store_run(BlockState& b, uintptr_t a,
                                                           unsigned size, const void* pc) {
  FreshStoreRun& run = fresh_store_run;
  if (size != 4 || run.epoch != b.epoch || a != run.first_word + 4 * run.count ||
      running_thread() != run.first_writer + run.count || pc != run.pc || race_checks_waiting ||
      (a & (kKeptPage - 1)) == 0)  // (a new page: kept for a replay by log_fresh_store)
    return false;
  ++run.count;
  remember_last_write(b, a, running_thread(), 0xF);
  return true;
}

// Whether the full check of global memory would let this access pass without a word, decided
// from a recent array's shadow; false: look closer.
[[gnu::always_inline]] inline bool global_access_fine(BlockState& b, uintptr_t a, unsigned size,
                                                      bool store, const void* pc) {
  const RecentArrays& recent = recent_arrays;
  if (recent.changes != allocations_changed.load(std::memory_order_relaxed)) return false;
  for (const RecentArrays::Entry& e : recent.entries) {
    const uintptr_t offset = a - e.base;
    if (offset >= e.bytes || e.bytes - offset < size) continue;
    // The words the access touches, one writer for all (kMixed: look closer).
    uint32_t* words = e.writers + offset / 4;
    const unsigned count = static_cast<unsigned>((offset + size + 3) / 4 - offset / 4);
    const uint32_t writer = __atomic_load_n(words, __ATOMIC_ACQUIRE);
    if (count == 1 && (writer == kMixed || (store && ((offset | size) & 3) != 0 &&
                                            writer != b.stamp && writer != kBusy)))
      return global_bytes_fine(b, *e.record, a, size, store, pc);
    for (unsigned i = 1; i < count; ++i)
      if (__atomic_load_n(words + i, __ATOMIC_ACQUIRE) != writer) return false;
    // Written before this launch (by the host or a kernel), or by an atomic: no block's plain
    // write of this launch that an access could race with. kMixed is neither.
    const bool settled = !plain_write_in_launch(writer, b.launch_stamp);
    if (!store) {
      // Unwritten, or written by another block of this launch: the full check.
      if (writer == 0 || (!settled && writer != b.stamp)) return false;
      if (writer == b.stamp) {
        if (!rewrites_last_word(b, a, size)) check_global_race(b, *e.record, a, size, false, pc);
      } else if (reads_watched(b.launch_stamp, *e.record) && !wait_watched_read(b, a, size, pc)) {
        check_global_race(b, *e.record, a, size, false, pc);
      }
      return true;
    }
    if (!settled && writer != b.stamp) return false;  // another block wrote it, or mixed
    // A write of part of several words with another writer makes them mixed: the full check.
    if (((offset | size) & 3) != 0 && writer != b.stamp) return false;
    // A word this block has not touched in this launch: nothing of the block's to race with,
    // unless a read waits in the race table (log_fresh_store decides).
    const bool fresh = (writer & ~kAtomicBit) != b.stamp;
    if (!rewrites_last_word(b, a, size) &&
        !(fresh && (extends_fresh_store_run(b, a, size, pc) || log_fresh_store(b, a, size, pc))))
      check_global_race(b, *e.record, a, size, true, pc);
    record_store(b, e.record, pc);
    const uint32_t mark = b.last_store_site | running_thread();
    for (unsigned i = 0; i < count; ++i) {
      __atomic_store_n(words + i, b.stamp, __ATOMIC_RELEASE);
      __atomic_store_n(e.stores + offset / 4 + i, mark, __ATOMIC_RELAXED);
    }
    return true;
  }
  return false;
}

// Whether thread `me` of block b may make a plain access of `bytes` of shared word w: the word lies
// in a variable, and (between two barriers) no other thread wrote the bytes, nor read them if this
// is a write.
[[gnu::always_inline]] inline bool SharedSpace::word_access_fine(const BlockState& b, size_t w,
                                                                 uint16_t me, uint8_t bytes,
                                                                 bool store) const {
  const Word& s = words_[w];
  if (s.region == 0) return false;                      // outside every variable
  if (!store && !written_in_block(b, w)) return false;  // unwritten in this block
  if (s.write_epoch == b.epoch && s.writer != me && (s.write_bytes & bytes)) return false;
  return !store ||
         !(s.read_epoch == b.epoch &&
           ((s.reader != me && (s.read_bytes & bytes)) ||
            (s.other_reader != kNobody && s.other_reader != me && (s.other_bytes & bytes))));
}

// A plain access of shared memory within one word, or of whole words of one variable (a double, a
// float4), by a thread that may make it (word_access_fine, for each word). Records the access as
// SharedSpace::access does (shared_races.cpp).
[[gnu::always_inline]] inline bool SharedSpace::access_fine(const BlockState& b, uintptr_t a,
                                                            unsigned size, bool store,
                                                            const void* pc) {
  const uintptr_t offset = a - base_;
  const bool one_word = (offset & 3) + size <= 4;
  if (!one_word && (((offset | size) & 3) != 0 || size > 16 || offset + size > kSpace))
    return false;
  const uint16_t me = static_cast<uint16_t>(running_thread());
  const uint8_t bytes = one_word ? bytes_touched_in_word(offset, size) : 0xF;
  const size_t first = offset / 4, end = one_word ? first + 1 : (offset + size) / 4;
  for (size_t w = first; w < end; ++w)
    if (!word_access_fine(b, w, me, bytes, store) || words_[w].region != words_[first].region)
      return false;
  checked_epoch_ = b.epoch;
  for (size_t w = first; w < end; ++w)
    store ? words_[w].note_write(b.epoch, me, bytes, pc)
          : words_[w].note_read(b.epoch, me, bytes, pc);
  return true;
}

// The built-in variables' place in every worker's thread-local storage, relative to threadIdx
// (the same in every thread): reads of them are never checked.
struct BuiltinsPlace {
  intptr_t first;  // from &threadIdx
  uintptr_t bytes;
};
extern const BuiltinsPlace builtins_place;

// Whether the full check would let this plain (not atomic) access pass without a word; false:
// look closer (always while a thread is watched: watched_thread.cpp).
[[gnu::always_inline]] inline bool access_fine(const void* address, unsigned size, bool store,
                                               const void* pc) {
  BlockState* b = current_block;
  const auto a = reinterpret_cast<uintptr_t>(address);
  if (b == nullptr) return host_access_fine(a);
  publish_store(store ? a : 0);
  const bool global = a - reserved_arena.base < reserved_arena.size;
  if (global) b->checked_global_epoch = b->epoch;
  if (timed_out() || watching_a_thread.load(std::memory_order_relaxed)) return false;
  if (global) {
    if (!store && b->stamp == b->launch_stamp && running_thread() < FirstThreadsLoads::kThreads &&
        first_threads_loads != nullptr)
        [[unlikely]]  // a global load of the first block's first threads
      first_threads_loads->thread[running_thread()].add(pc);
    return global_access_fine(*b, a, size, store, pc);
  }
  if (b->shared != nullptr && b->shared->contains(a))
    return b->shared->access_fine(*b, a, size, store, pc);
  if (a < kNullPages) return false;  // through a null pointer
  // A store into the program's image (a __device__ variable), which no replay can undo (replay.h).
  if (store && b->replay != nullptr && program_global(address)) return false;
  if (!b->host_pointer_args) return true;  // check_host looks for nothing else
  const auto builtins = reinterpret_cast<uintptr_t>(&::threadIdx) + builtins_place.first;
  return a - builtins < builtins_place.bytes || stack_or_arguments(*b->config, a);
}

// A plain access as the program's instrumented code makes it: the checks, then the counters when
// they are on (check_access counts what it checks; an access the fast path passed is counted
// here). `pc`: where in the program the access is.
[[gnu::always_inline]] inline void access(void* a, unsigned size, bool store, const void* pc) {
  if (!access_fine(a, size, store, pc))
    check_access(a, size, store, false, pc);
  else if (counting() && current_block != nullptr)  // (a kernel's: host code is not counted)
    count_checked_access(reinterpret_cast<uintptr_t>(a), size, store, false, pc);
}

}  // namespace cudalab::emu
