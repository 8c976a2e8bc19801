// Stretches of a loop form whose memory accesses the kernel's code proves (the translator's
// stretch_accesses.py): before the block runs such a stretch, stretch_fine bounds each subscript
// of each access over every thread of the block and every value of the stretch's loop counters
// (an affine subscript takes its least and greatest values at the corners of that box), and looks
// once at the words of each run of elements the access makes (each_run: the terms whose steps
// leave no gap make a run):
// - a load of a `__shared__` array: each word in a variable, written in this block, and not since
//   the last barrier;
// - a store to one (every thread makes it, or every thread below an x bound: the translator
//   proves it): each word in a variable, neither read nor written since the barrier, no two
//   threads' elements the same (the elements' offsets are a mixed-radix number of the thread's
//   index and the counters: each coefficient, by size, exceeds what all smaller ones can add up
//   to), and no element among the stretch's other shared accesses but the thread's own (`s[tid]
//   += v` loads what the same thread stores): where the two spans meet, their runs are apart;
// - a load of global memory: the elements inside the live device array the pointer points into,
//   written before this launch and not in it, but by this block before the last barrier (where no
//   checked access touched global memory since it: BlockState::checked_global_epoch; each proven
//   stretch that stores ends at a barrier), as a reduction in place loads its last step's sums
//   (proven_blocks.h: words_fine; no look at the words where no block stored into the array in
//   this launch so far and they are seen written: memory.h); where a warp's meeting, not a
//   barrier, follows the stretch (a load before a shuffle), only loads of global and constant
//   memory, of arrays nobody stored into in this launch so far: a checked load of such an array
//   records nothing for the stores after it (reads_watched, memory.h), so the epoch's later
//   accesses find what they would have found;
// - a store to global memory (the translator proves it where a barrier or the kernel's end
//   follows, so that no later access of the epoch can meet it), where no checked access touched
//   global memory since the block's start or its last barrier (BlockState::checked_global_epoch:
//   what did, a store or a load that recorded itself, is the checks' to judge against the store;
//   the stretches before it in the epoch that ran proven only load arrays nobody stored into in
//   the launch, which a checked load would not have recorded either): the elements
//   inside the live device array, each thread on its own element, none among the stretch's
//   other accesses but the thread's own; the words are then looked at as they are taken for the
//   block, a few elements at a time, and a word written in this launch but by the block before the
//   last barrier (another block's, even one taken meanwhile) leaves the stretch checked;
// - a load of a `__constant__` array: its subscripts within their dimensions (device code cannot
//   write the array, and the host writes it between launches; the checks know nothing else of it).
// Then no access of the stretch can leave its array, read memory nobody wrote, or race (nothing
// touched the words since the barrier but what the proof allows, and the barrier or the kernel's
// end after the stretch leaves no later access, or its loads leave no record), so the stores are
// recorded now and the stretch
// runs its copy without the checks' instrumentation. Shared stores are recorded as the words the
// block wrote, a bit per word (SharedSpace::record_stores): the words' records hold a writer and
// readers for one barrier interval, and the barrier after the stretch ends it, so that all a later
// access asks of them is whether the block wrote them. Where no checked access touched shared
// memory since the barrier, the looks above take whole runs at once: a load's words must all be
// among those bits, a store's need nothing but their variable (SharedSpace::loads_fine). Global
// stores: each word's writer the block and its mark the store's line and thread, as a proven block
// records them, their pages kept for a launch run again in the other order (replay.h), which then
// starts from the memory before the launch and loads the same values (no load reads what the
// stretch stores, and each element stored has one writer). Anything else (a subscript
// past its dimension, a word unwritten or touched since the barrier, a thread that returned from
// the kernel before a stretch that stores, a loop that runs no time, a watched thread, the
// launch's first block where the stretch touches global or constant memory; with the counters on,
// a load that some threads skip, a thread that returned, or two visits that may reach one element
// in a thread: visits_distinct) runs the checked stretch, which names the first faulting thread
// and its line as always.
//
// With the counters on, a proven stretch's requests are counted from the same record
// (count_requests): each warp of the block makes one request per access and per value of the
// loops the access is in, its lanes at the access's offsets for the warp's threads (below the x
// bound). A request's price (sectors, or bank wavefronts) depends on its base only through the
// base's place in a 32- or 128-byte period, so each worker prices each place of a pattern of lanes
// once (count_proven_requests, counters.cpp). The counts equal those of the checked stretch, access
// by access (Counters.ProvenStretchesCountAsEachAccessDoes).
//
// Limitations: the words looked at are all those of each run, so a stretch that reads a sparse
// part of a run (every other element) runs checked where an element it skips is unwritten; two
// accesses of one array with more than 4096 runs each, or of two pointers into one array, whose
// spans meet, are taken to share an element. Two threads that store one
// element, or a thread that loads an element another access of the stretch stores, keep the
// stretch checked even where the checks would pass it (the same value; an element the thread
// itself stores at other subscripts). Global loads at an index
// below 0 or past 2^31 - 1 are not proven (the kernel's arithmetic may wrap where the record's
// does not).
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "checks.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/emu/thread_loops.h"
#include "memory.h"
#include "per_worker_count.h"
#include "proven_blocks.h"
#include "remembered_stretches.h"
#include "replay.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

PerWorkerCount stretches_run;

// One variable of an access's box: the thread's x, y or z, or a loop's counter, with the bytes
// one step of it moves the access, and its range [from, to].
struct Term {
  long long bytes, from, to;
};

// An access as byte offsets from its array: constant + the sum of each term's bytes times its
// variable, over the box (the terms that move it; no allocation: this runs before each stretch).
// each_run and steps_apart take it sorted.
struct Affine {
  static constexpr unsigned kMostTerms = 3 + kProvenLoops;
  long long constant = 0;
  Term terms[kMostTerms];
  unsigned count = 0;

  void clear() {
    constant = 0;
    count = 0;
  }
  void add(long long bytes, long long from, long long to) {
    if (bytes != 0 && to > from) terms[count++] = {bytes, from, to};
  }
  long long least() const {
    long long v = constant;
    for (unsigned i = 0; i < count; ++i)
      v += std::min(terms[i].bytes * terms[i].from, terms[i].bytes * terms[i].to);
    return v;
  }
  long long greatest() const {
    long long v = constant;
    for (unsigned i = 0; i < count; ++i)
      v += std::max(terms[i].bytes * terms[i].from, terms[i].bytes * terms[i].to);
    return v;
  }
  // The terms by the size of their step, the smallest first (a few terms: by insertion).
  void sort() {
    for (unsigned i = 1; i < count; ++i)
      for (unsigned j = i; j > 0 && std::abs(terms[j].bytes) < std::abs(terms[j - 1].bytes); --j)
        std::swap(terms[j], terms[j - 1]);
  }
};

// The last value of a loop's counter (a loop that runs no time: its first).
long long last_value(const ProvenLoop& loop) {
  return loop.first +
         (loop.end > loop.first ? (loop.end - loop.first - 1) / loop.step : 0) * loop.step;
}

// Adds a loop's counter, `bytes` per unit, to `a`: its first value to the constant, and a term of
// `step` units per step.
void add_counter(Affine& a, long long bytes, const ProvenLoop& loop) {
  a.constant += bytes * loop.first;
  a.add(bytes * loop.step, 0, (last_value(loop) - loop.first) / loop.step);
}

// Calls visit(offset) for the offset `start` + the terms' sum at each value of `terms` (the first
// fastest); stops at the first call that returns false, and says whether none did.
template <class Visit>
bool each_value(const Term* terms, unsigned count, long long start, Visit visit) {
  long long at[Affine::kMostTerms];
  for (unsigned i = 0; i < count; ++i) at[i] = terms[i].from;
  while (true) {
    long long offset = start;
    for (unsigned i = 0; i < count; ++i) offset += terms[i].bytes * at[i];
    if (!visit(offset)) return false;
    unsigned i = 0;
    while (i < count && ++at[i] > terms[i].to) at[i] = terms[i].from, ++i;
    if (i == count) return true;
  }
}

// Calls visit(first, end) for each run of an access's bytes (`a`, its elements `element` bytes):
// the terms whose steps leave no gap (by the size of their steps, each no larger than what the
// smaller ones span, from one element) make a run, [first, end) from the array, and the others
// its starts. Stops at the first call that returns false, and says whether none did. (A padded
// tile's column of padding, `float tile[16][17]`, lies between its runs.)
template <class Visit>
bool each_run(const Affine& a, long long element, Visit visit) {
  long long low = 0, high = element;
  unsigned inner = 0;
  for (; inner < a.count && std::abs(a.terms[inner].bytes) <= high - low; ++inner) {
    const Term& t = a.terms[inner];
    low += std::min(t.bytes * t.from, t.bytes * t.to);
    high += std::max(t.bytes * t.from, t.bytes * t.to);
  }
  return each_value(a.terms + inner, a.count - inner, a.constant,
                    [&](long long at) { return visit(at + low, at + high); });
}

// Writes the access's subscripts as one, in bytes from the array, to `f` (in place: a copy of
// the sum, read whole right after its parts were written, would wait for them).
void flatten(const StretchAccess& access, ProvenSubscript& f) {
  f = ProvenSubscript{};
  for (const ProvenSubscript& s : access.subscripts) {
    f.constant += s.constant * s.stride;
    f.x += s.x * s.stride;
    f.y += s.y * s.stride;
    f.z += s.z * s.stride;
    for (unsigned i = 0; i < kProvenLoops; ++i) f.counters[i] += s.counters[i] * s.stride;
  }
}

// How many x indices of the block's threads make the access: those below its bound (of them,
// the multiples of its x_every).
unsigned long long threads_x(const StretchAccess& access) {
  const auto below =
      static_cast<unsigned long long>(std::clamp<long long>(access.x_end, 0, ::blockDim.x));
  return (below + access.x_every - 1) / access.x_every;
}

// The elements of a shared or constant access's dimension: its declared extent, or as many as the
// launch's dynamic shared bytes hold (kDynamicExtent: the `extern __shared__` array).
long long extent_of(const ProvenSubscript& s) {
  if (s.extent != kDynamicExtent) return s.extent;
  return static_cast<long long>(current_block->config->shared_bytes) / s.stride;
}

// Whether each subscript of the access lies within its dimension (a shared array's) or in
// [0, 2^31) (a global load's) over the box; its offsets in bytes (f: its subscripts as one) then
// go to `a`, sorted.
bool affine_of(const StretchAccess& access, const ProvenSubscript& f,
               std::initializer_list<ProvenLoop> loops, Affine& a) {
  const uint3 d = ::blockDim;
  for (const ProvenSubscript& s : access.subscripts) {
    long long least = s.constant, greatest = s.constant;
    const auto bound = [&](long long coefficient, long long from, long long to) {
      least += std::min(coefficient * from, coefficient * to);
      greatest += std::max(coefficient * from, coefficient * to);
    };
    bound(s.x, 0, threads_x(access) - 1LL);
    bound(s.y, 0, d.y - 1LL);
    bound(s.z, 0, d.z - 1LL);
    unsigned k = 0;
    for (const ProvenLoop& loop : loops) bound(s.counters[k++], loop.first, last_value(loop));
    if (least < 0 || greatest >= (access.space != Space::global ? extent_of(s) : INT_MAX + 1LL))
      return false;
  }
  a.constant = f.constant;
  a.add(f.x, 0, threads_x(access) - 1LL);
  a.add(f.y, 0, d.y - 1LL);
  a.add(f.z, 0, d.z - 1LL);
  unsigned k = 0;
  for (const ProvenLoop& loop : loops) add_counter(a, f.counters[k++], loop);
  a.sort();
  return true;
}

// The bytes of one element of the access (its innermost subscript's stride).
long long element_bytes(const StretchAccess& access) {
  return std::prev(access.subscripts.end())->stride;
}

// Whether distinct values of a's terms (sorted) give offsets more than `spanned` bytes apart: by
// the size of their steps, each term's step exceeds what the smaller ones span (from `spanned`).
bool steps_apart(const Affine& a, long long spanned) {
  for (unsigned i = 0; i < a.count; ++i) {
    if (std::abs(a.terms[i].bytes) <= spanned) return false;
    spanned += std::abs(a.terms[i].bytes) * (a.terms[i].to - a.terms[i].from);
  }
  return true;
}

// Whether distinct threads, and distinct values of the counters, give distinct elements: each
// of the block's dimensions moves the access (f: the access's subscripts as one), and the terms'
// steps leave an element or more between any two values (steps_apart).
bool one_element_each(const StretchAccess& access, const ProvenSubscript& f, const Affine& a,
                      long long element) {
  const uint3 d = ::blockDim;
  if ((f.x == 0 && threads_x(access) > 1) || (f.y == 0 && d.y > 1) || (f.z == 0 && d.z > 1))
    return false;
  return steps_apart(a, element - 1);
}

// An access's offsets in bytes at its visits (f: its subscripts as one), the thread's terms left
// out: a term for each loop it is in (add_counter).
Affine visits_of(const StretchAccess& access, const ProvenSubscript& f,
                 std::initializer_list<ProvenLoop> loops) {
  Affine a;
  a.constant = f.constant;
  unsigned k = 0;
  for (const ProvenLoop& loop : loops) {
    if ((access.enclosing >> k & 1) != 0) add_counter(a, f.counters[k], loop);
    ++k;
  }
  return a;
}

// The block's stamp where its plain writes of this launch all came before the last barrier (no
// checked access touched global memory since: each proven stretch that stores ends at a barrier),
// so that the stretch may load and store over them; else 0.
uint32_t own_before_barrier(const BlockState& b) {
  return b.checked_global_epoch != b.epoch ? b.stamp : 0;
}

// Whether the global elements of access `a` of `array` lie in its live device array, and for a
// load none was written in this launch but by the block before the last barrier
// (own_before_barrier) and each was written before it (words_fine), run by run. A
// load of an array that nobody stored into in this launch so far, whose words between the
// access's least and greatest element are seen written (memory.h), needs no look at them.
bool global_words_fine(const BlockState& b, const void* array, bool store, const Affine& a,
                       long long element, bool barrier_follows) {
  const Allocation* r = containing(array, false);
  const auto base = reinterpret_cast<uintptr_t>(array);
  if (r == nullptr || !r->shadow || element % 4 != 0 || base % 4 != 0) return false;
  const long long offset = static_cast<long long>(base - reinterpret_cast<uintptr_t>(r->base));
  if (offset + a.least() < 0 || offset + a.greatest() + element > static_cast<long long>(r->bytes))
    return false;
  if (store) return true;  // (its words are looked at as they are taken: record_global_stores)
  if (!barrier_follows && reads_watched(b.launch_stamp, *r))
    return false;  // (a checked load records itself for the stores after it in the epoch)
  if (!stored_in_launch(*r, b.launch_stamp) &&
      seen_written(*r, static_cast<size_t>(offset + a.least()) / 4,
                   static_cast<size_t>(offset + a.greatest() + element) / 4))
    return true;
  return each_run(a, element, [&](long long first, long long end) {
    const auto words = static_cast<size_t>(end - first) / 4;
    return words_fine(r->shadow.words + (offset + first) / 4, words, b.launch_stamp, store,
                      own_before_barrier(b));
  });
}

// Whether no element of access p is among those of access q (their runs apart), where each has at
// most kMostRuns runs; else (or where they share an element) false.
bool apart(const Affine& p, long long p_element, const Affine& q, long long q_element) {
  constexpr size_t kMostRuns = 4096;
  thread_local std::vector<std::pair<long long, long long>> runs;
  runs.clear();
  const auto collect = [&](long long first, long long end) {
    runs.emplace_back(first, end);
    return runs.size() <= kMostRuns;
  };
  if (!each_run(p, p_element, collect)) return false;
  const size_t p_runs = runs.size();
  if (!each_run(q, q_element, [&](long long first, long long end) {
        return collect(first, end) && runs.size() <= p_runs + kMostRuns;
      }))
    return false;
  std::sort(runs.begin(), runs.begin() + p_runs);
  for (size_t k = p_runs; k < runs.size(); ++k) {  // (q's run against p's runs that end after it)
    const auto [first, end] = runs[k];
    auto after =
        std::upper_bound(runs.begin(), runs.begin() + p_runs, std::make_pair(first, first));
    if (after != runs.begin() && std::prev(after)->second > first) return false;
    if (after != runs.begin() + p_runs && after->first < end) return false;
  }
  return true;
}

// The stand-in code address of `file`:`line` (line_marker) and its store site (store_site), kept
// by the worker (both take a lock).
struct Place {
  const char* file;
  int line;
  const void* marker;
  uint32_t site;
};
const Place& place_of(const char* file, int line) {
  thread_local std::vector<Place> known;
  for (const Place& place : known)
    if (place.file == file && place.line == line) return place;
  const void* marker = line_marker(file, static_cast<unsigned>(line));
  return known.emplace_back(Place{file, line, marker, store_site(marker)});
}

// Calls row(offset, first_thread) for each row of threads below the access's x bound and each
// value of the counters: the row's first element at `offset` bytes from the array, element x of
// the row by thread first_thread + x, f.x bytes apart; stops at the first call that returns
// false, and says whether none did.
template <class Row>
bool each_row(const StretchAccess& access, const ProvenSubscript& f,
              std::initializer_list<ProvenLoop> loops, Row row) {
  const uint3 d = ::blockDim;
  Affine counters;  // (the thread's terms are its index)
  unsigned k = 0;
  for (const ProvenLoop& loop : loops) add_counter(counters, f.counters[k++], loop);
  for (unsigned z = 0; z < d.z; ++z)
    for (unsigned y = 0; y < d.y; ++y) {
      const auto first = static_cast<uint16_t>((z * d.y + y) * d.x);
      if (!each_value(counters.terms, counters.count,
                      counters.constant + f.constant + f.y * y + f.z * z,
                      [&](long long at) { return row(at, first); }))
        return false;
    }
  return true;
}

// Records the stores of `access` (every thread of the block below its x bound makes it, for every
// value of the counters): the block wrote their words.
// Each row goes to `learned` too, where there is room (else its row_count goes past kMostRows).
void record_stores(BlockState& b, const StretchAccess& access, const ProvenSubscript& f,
                   std::initializer_list<ProvenLoop> loops, RememberedProof& learned) {
  const auto array = reinterpret_cast<uintptr_t>(access.array);
  const auto element = static_cast<unsigned>(element_bytes(access));
  const auto width = static_cast<unsigned>(threads_x(access));
  each_row(access, f, loops, [&](long long at, uint16_t) {
    b.shared->record_stores(b, array + at, element, width, f.x);
    if (learned.row_count < RememberedProof::kMostRows)
      learned.rows[learned.row_count] = {array + at, element, width, f.x};
    ++learned.row_count;
    return true;
  });
}

// A remembered proof in block `b` (remembered_stretches.h): the words of its runs, then its
// stores' rows recorded.
bool proven_again(BlockState& b, const RememberedProof& proof) {
  for (unsigned i = 0; i < proof.run_count; ++i) {
    const SharedRun& run = proof.runs[i];
    if (!(run.store ? b.shared->stores_fine(b, run.first, run.end)
                    : b.shared->loads_fine(b, run.first, run.end)))
      return false;
  }
  for (unsigned i = 0; i < proof.row_count; ++i) {
    const SharedRow& row = proof.rows[i];
    b.shared->record_stores(b, row.at, row.element, row.count, row.step);
  }
  stretches_run.add();
  return true;
}

// Takes the words of `count` elements for the block (its stamp `stamp`), each `words_each` words
// long, the first at word `first`, each `step` words after the one before: where none was written
// in the launch (`launch_stamp`) but by `own`, their writers before go to `before` and it says
// so; else nothing is taken. (Another block storing to one of them at the same time may find it
// taken: a load, then a store, as the checks' fast path takes a word: fast_path.h.) Out of line,
// as mark_words: inlined into each_row's lambda, their loops kept their values on the stack.
__attribute__((noinline)) bool take_words(uint32_t* writers, size_t first, long long step,
                                          unsigned words_each, unsigned count,
                                          uint32_t launch_stamp, uint32_t own, uint32_t stamp,
                                          uint32_t* before) {
  bool clash = false;
  for (unsigned x = 0, i = 0; x < count; ++x)
    for (unsigned k = 0; k < words_each; ++k, ++i) {
      const uint32_t writer = __atomic_load_n(writers + first + x * step + k, __ATOMIC_ACQUIRE);
      before[i] = writer;
      clash |= plain_write_in_launch(writer, launch_stamp) && writer != own;
    }
  if (clash) return false;
  for (unsigned x = 0; x < count; ++x)
    for (unsigned k = 0; k < words_each; ++k)
      __atomic_store_n(writers + first + x * step + k, stamp, __ATOMIC_RELEASE);
  return true;
}

// Gives back the words take_words took (the same arguments), but those another block wrote since.
void give_back_words(uint32_t* writers, size_t first, long long step, unsigned words_each,
                     unsigned count, uint32_t stamp, const uint32_t* before) {
  for (unsigned x = 0, i = 0; x < count; ++x)
    for (unsigned k = 0; k < words_each; ++k, ++i) {
      uint32_t* word = writers + first + x * step + k;
      if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == stamp)
        __atomic_store_n(word, before[i], __ATOMIC_RELEASE);
    }
}

// Marks the words of take_words' elements as stored by the element's thread: element x by thread
// `thread` + x * `thread_step`, at site `site` (StoreMark).
__attribute__((noinline)) void mark_words(uint32_t* marks, size_t first, long long step,
                                          unsigned words_each, unsigned count, uint32_t site,
                                          unsigned thread, unsigned thread_step) {
  for (unsigned x = 0; x < count; ++x)
    for (unsigned k = 0; k < words_each; ++k)
      __atomic_store_n(marks + first + x * step + k, site | (thread + x * thread_step),
                       __ATOMIC_RELAXED);
}

// Records the global stores of `access` as the checks record them (each word's writer the block,
// its mark the store's line and the element's thread), where no other block wrote one of its
// words since stretch_fine looked; else gives back the words it took and says so. The words are
// taken as the checks' fast path takes them, kChunk elements at a time (take_words).
bool record_global_stores(BlockState& b, const char* file, const StretchAccess& access,
                          const ProvenSubscript& f, std::initializer_list<ProvenLoop> loops) {
  constexpr unsigned kChunk = 16;
  Allocation& r = *containing(access.array, false);
  const auto base = static_cast<long long>(static_cast<const char*>(access.array) - r.base);
  const auto element = static_cast<unsigned>(element_bytes(access));
  const unsigned width = static_cast<unsigned>(threads_x(access)), words_each = element / 4;
  const long long step = f.x / 4;  // (global_words_fine saw the words aligned)
  // (the first word of the row at `at`)
  const auto row_word = [&](long long at) { return static_cast<size_t>(base + at) / 4; };
  thread_local std::vector<uint32_t> before;  // the words' writers before, in the order taken
  size_t taken = 0;
  note_store_in_launch(r, b.launch_stamp);
  const uint32_t own = own_before_barrier(b);
  const bool all_taken = each_row(access, f, loops, [&](long long at, uint16_t) {
    // (a launch run again starts from the memory before its first store: the stretch may load
    // what its block stored before)
    const long long last = at + (width - 1LL) * f.x;
    keep_before_store(b, reinterpret_cast<uintptr_t>(r.base) + base + std::min(at, last),
                      static_cast<unsigned>(std::abs(last - at) + element));
    if (before.size() < taken + size_t{width} * words_each)
      before.resize(taken + size_t{width} * words_each);
    for (unsigned from = 0; from < width; from += kChunk) {
      const unsigned count = std::min(kChunk, width - from);
      if (!take_words(r.shadow.words, row_word(at) + from * step, step, words_each, count,
                      b.launch_stamp, own, b.stamp, before.data() + taken))
        return false;
      taken += count * words_each;
    }
    return true;
  });
  if (!all_taken) {  // (the words taken, in the order taken)
    size_t given = 0;
    each_row(access, f, loops, [&](long long at, uint16_t) {
      const auto count =
          static_cast<unsigned>(std::min<size_t>(width, (taken - given) / words_each));
      give_back_words(r.shadow.words, row_word(at), step, words_each, count, b.stamp,
                      before.data() + given);
      given += count * words_each;
      return given < taken;
    });
    return false;
  }
  const uint32_t site = StoreMark::site_part(place_of(file, access.line).site);
  each_row(access, f, loops, [&](long long at, uint16_t first) {
    mark_words(r.shadow.stores, row_word(at), step, words_each, width, site, first, access.x_every);
    return true;
  });
  return true;
}

// Whether in each thread no two visits of the stretch's accesses reach one element, where the
// compiler may have merged them (a load of an element the thread loaded or stored before it, a
// load or store that does not move in its loop), so that the checked stretch's accesses are the
// record's: each access takes each element once over the values of the loops it is in (by the
// size of their steps, each step exceeds what the smaller ones span), and two accesses of one array
// that move alike with the thread's index reach apart elements, but a load followed by the store of
// its element (`s[tid] += v`). (Loads of `__constant__` arrays are not counted: they may merge.)
bool visits_distinct(std::initializer_list<ProvenLoop> loops,
                     std::initializer_list<StretchAccess> accesses) {
  constexpr unsigned kMostAccesses = 16;
  ProvenSubscript flat[kMostAccesses];
  Affine visits[kMostAccesses];  // each access's offset at each visit, the thread's terms left out
  const StretchAccess* listed[kMostAccesses];
  unsigned count = 0;
  for (const StretchAccess& access : accesses) {
    if (access.space == Space::constant) continue;
    if (count == kMostAccesses) return false;
    ProvenSubscript f;
    flatten(access, f);
    unsigned k = 0;
    for (const ProvenLoop& loop : loops) {  // (an access that does not move in a loop that steps)
      if ((access.enclosing >> k & 1) != 0 && f.counters[k] == 0 && last_value(loop) > loop.first)
        return false;
      ++k;
    }
    Affine a = visits_of(access, f, loops);
    a.sort();
    if (!steps_apart(a, 0)) return false;
    flat[count] = f;
    visits[count] = a;
    listed[count++] = &access;
  }
  for (unsigned q = 0; q < count; ++q)
    for (unsigned p = 0; p < q; ++p) {
      const StretchAccess &first = *listed[p], &then = *listed[q];
      const ProvenSubscript &f = flat[p], &g = flat[q];
      if (first.array != then.array || f.x != g.x || f.y != g.y || f.z != g.z) continue;
      const bool compound = p + 1 == q && !first.store && then.store && f.constant == g.constant &&
                            first.enclosing == then.enclosing &&
                            std::equal(f.counters, f.counters + kProvenLoops, g.counters);
      if (!compound && visits[p].least() <= visits[q].greatest() &&
          visits[q].least() <= visits[p].greatest())
        return false;
    }
  return true;
}

// Counts the requests of the stretch's accesses of global and shared memory (the counters count
// no other; every thread of the block makes each one, below its x bound): for each warp of the
// block, one request per value of the loops the access is in.
void count_requests(const char* file, std::initializer_list<ProvenLoop> loops,
                    std::initializer_list<StretchAccess> accesses) {
  const uint3 d = ::blockDim;
  const unsigned threads = d.x * d.y * d.z;
  thread_local std::vector<uintptr_t> bases;
  for (const StretchAccess& access : accesses) {
    if (access.space == Space::constant) continue;
    unsigned k = 0;
    bool visited = true;  // (a loop it is in that runs no time: no visit)
    for (const ProvenLoop& loop : loops)
      visited &= (access.enclosing >> k++ & 1) == 0 || loop.end > loop.first;
    if (!visited) continue;
    ProvenSubscript f;
    flatten(access, f);
    const Affine visits = visits_of(access, f, loops);  // (visits_distinct: each moves the access)
    bases.clear();
    const auto array = reinterpret_cast<uintptr_t>(access.array);
    each_value(visits.terms, visits.count, visits.constant, [&](long long at) {
      bases.push_back(array + at);
      return true;
    });
    const unsigned width = static_cast<unsigned>(threads_x(access));
    const void* marker = place_of(file, access.line).marker;
    unsigned x = 0, y = 0, z = 0;  // the next thread's index
    for (unsigned warp = 0; warp < threads; warp += 32) {
      if (d.y * d.z == 1 && warp >= width) break;  // (one row: no later warp makes it)
      long long offsets[32];
      unsigned lanes = 0;
      for (unsigned t = warp; t < std::min(warp + 32, threads); ++t) {
        if (x < width) offsets[lanes++] = f.x * x + f.y * y + f.z * z;
        if (++x == d.x) {
          x = 0;
          if (++y == d.y) y = 0, ++z;
        }
      }
      if (lanes != 0)
        count_proven_requests(marker, access.space == Space::shared, access.store,
                              static_cast<unsigned>(element_bytes(access)), offsets, lanes,
                              bases.data(), bases.size());
    }
  }
}

// Calls visit(chunk, bits) for each chunk of 64 words that words [first, end) meet, with the bits
// of their words in it; stops at the first call that returns false, and says whether none did.
template <class Visit>
bool each_chunk(size_t first, size_t end, Visit visit) {
  for (size_t c = first / 64; c * 64 < end; ++c) {
    const size_t low = std::max(first, c * 64) - c * 64, high = std::min(end, c * 64 + 64) - c * 64;
    if (!visit(c, (high - low == 64 ? ~uint64_t{0} : (uint64_t{1} << (high - low)) - 1) << low))
      return false;
  }
  return true;
}

}  // namespace

void SharedSpace::note_proven_written(const BlockState& b, size_t first, size_t end) {
  each_chunk(first, end, [&](size_t c, uint64_t bits) {
    ProvenWritten& chunk = proven_written_[c];
    if (chunk.block_epoch != b.block_epoch) chunk = {b.block_epoch, 0};
    chunk.bits |= bits;
    return true;
  });
}

bool SharedSpace::all_proven_written(const BlockState& b, size_t first, size_t end) const {
  return each_chunk(first, end, [&](size_t c, uint64_t bits) {
    const ProvenWritten& chunk = proven_written_[c];
    return chunk.block_epoch == b.block_epoch && (chunk.bits & bits) == bits;
  });
}

bool SharedSpace::one_variable(size_t first, size_t last) const {
  return words_[first].region != 0 && words_[first].region == words_[last].region;
}

// Where no checked access touched the space since the barrier (checked_epoch_), no word's record
// holds a read or write of this epoch, and the stretch's own accesses are the only others: the
// words then need no look but whether the block wrote them (for a load), by the stores of earlier
// proven stretches (all_proven_written); elsewhere, each word's record.
bool SharedSpace::loads_fine(const BlockState& b, uintptr_t first, uintptr_t end) const {
  const size_t first_word = (first - base_) / 4, last_word = (end - 1 - base_) / 4;
  if (checked_epoch_ != b.epoch && one_variable(first_word, last_word) &&
      all_proven_written(b, first_word, last_word + 1))
    return true;
  for (size_t w = first_word; w <= last_word; ++w) {
    const Word& s = words_[w];
    if (s.region == 0 || !written_in_block(b, w) || s.write_epoch == b.epoch) return false;
  }
  return true;
}

bool SharedSpace::stores_fine(const BlockState& b, uintptr_t first, uintptr_t end) const {
  const size_t first_word = (first - base_) / 4, last_word = (end - 1 - base_) / 4;
  if (checked_epoch_ != b.epoch && one_variable(first_word, last_word)) return true;
  for (size_t w = first_word; w <= last_word; ++w) {
    const Word& s = words_[w];
    if (s.region == 0 || s.write_epoch == b.epoch || s.read_epoch == b.epoch) return false;
  }
  return true;
}

void SharedSpace::record_stores(const BlockState& b, uintptr_t a, unsigned element, unsigned count,
                                long long step) {
  const uintptr_t at = a - base_;
  if (step == element) {  // (one run)
    note_proven_written(b, at / 4, (at + count * element) / 4);
    return;
  }
  for (unsigned i = 0; i < count; ++i)
    note_proven_written(b, (at + i * step) / 4, (at + i * step + element) / 4);
}

bool stretch_fine(const char* file, std::initializer_list<ProvenLoop> loops,
                  std::initializer_list<StretchAccess> accesses, const bool* returned,
                  bool barrier_follows) {
  BlockState* b = current_block;
  if (b == nullptr || b->shared == nullptr || timed_out() ||
      watching_a_thread.load(std::memory_order_relaxed))
    return false;
  const auto steps_back = [](const ProvenLoop& loop) { return loop.step <= 0; };
  if (std::any_of(loops.begin(), loops.end(), steps_back))
    return false;  // (a loop that may not end)
  // (the counters need the accesses each thread makes: all of them, by every thread, as compiled)
  const bool counted = counting();
  // (a warp's first lanes alone: the counters' lanes are every thread's)
  const auto skipped = [](const StretchAccess& access) {
    return access.sometimes || access.x_every != 1;
  };
  if (counted && (returned != nullptr || std::any_of(accesses.begin(), accesses.end(), skipped) ||
                  !visits_distinct(loops, accesses)))
    return false;
  bool stores = false, global = false, global_stores = false;
  for (const StretchAccess& access : accesses) {
    stores |= access.store;
    global |= access.space != Space::shared;
    global_stores |= access.store && access.space == Space::global;
    if (!barrier_follows && (access.store || access.space == Space::shared))
      return false;  // (a later access of the epoch would not see its record)
  }
  // (every thread must make the stores, for every value of the counters)
  const auto runs_no_time = [](const ProvenLoop& loop) { return loop.end <= loop.first; };
  if (stores && (returned != nullptr || std::any_of(loops.begin(), loops.end(), runs_no_time)))
    return false;
  if (global && b->block_rank == 0) return false;  // (as proven_block: proven_blocks.h)
  // (what a checked access of the epoch recorded is the checks' to judge against the stores)
  if (global_stores && b->checked_global_epoch == b->epoch) return false;
  // (a stretch of shared memory only: what the proof found in an earlier block of the worker)
  const bool rememberable = !global && !counted;
  if (rememberable)
    if (const RememberedProof* proof = remembered_proof(*b, file, loops, accesses, returned))
      return proven_again(*b, *proof);
  thread_local RememberedProof learned;
  learned.run_count = learned.row_count = 0;
  struct Proven {
    const StretchAccess* access;
    ProvenSubscript flat;  // its subscripts as one
    Affine bytes;          // its offsets in bytes from the array, over the box
    uintptr_t first, end;  // the bytes between its least and greatest element
  };
  constexpr unsigned kMostAccesses = 16;
  thread_local Proven proven[kMostAccesses];  // (4.6 KB: built in place, not at each call)
  unsigned count = 0;
  for (const StretchAccess& access : accesses) {
    if (access.x_end == kNoBound) return false;
    if (threads_x(access) == 0) continue;  // (no thread makes it)
    if (access.subscripts.size() == 0 || count == kMostAccesses) return false;
    Proven& span = proven[count];
    span.access = &access;
    flatten(access, span.flat);
    span.bytes.clear();
    const ProvenSubscript& f = span.flat;
    Affine& a = span.bytes;
    if (!affine_of(access, f, loops, a)) return false;
    if (access.space == Space::constant) continue;  // (in its bounds, nothing else can fail)
    const long long element = element_bytes(access);
    const auto array = reinterpret_cast<uintptr_t>(access.array);
    span.first = array + a.least();
    span.end = array + a.greatest() + element;
    if (access.store && !one_element_each(access, f, a, element)) return false;
    if (access.space == Space::global) {
      if (!global_words_fine(*b, access.array, access.store, a, element, barrier_follows))
        return false;
    } else if (!b->shared->contains(array) || element % 4 != 0 ||
               !each_run(a, element, [&](long long first, long long end) {
                 if (learned.run_count < RememberedProof::kMostRuns)
                   learned.runs[learned.run_count] = {array + first, array + end, access.store};
                 ++learned.run_count;
                 return access.store ? b->shared->stores_fine(*b, array + first, array + end)
                                     : b->shared->loads_fine(*b, array + first, array + end);
               })) {
      return false;
    }
    ++count;
  }
  // No store's elements among another access's, but the thread's own element (`s[tid] += v`:
  // the same array, threads and subscripts).
  const auto own = [](const Proven& p, const Proven& q) {
    const ProvenSubscript &f = p.flat, &g = q.flat;
    return p.access->array == q.access->array && p.access->x_end == q.access->x_end &&
           p.access->x_every == q.access->x_every && f.constant == g.constant && f.x == g.x &&
           f.y == g.y && f.z == g.z &&
           std::equal(f.counters, f.counters + kProvenLoops, g.counters);
  };
  for (unsigned i = 0; i < count; ++i)
    for (unsigned j = 0; j < count; ++j) {
      const Proven &p = proven[i], &q = proven[j];
      if (i != j && p.access->store && p.first < q.end && q.first < p.end && !own(p, q) &&
          !(p.access->array == q.access->array &&
            apart(p.bytes, element_bytes(*p.access), q.bytes, element_bytes(*q.access))))
        return false;
    }
  // The global stores first: another block's store to one of their words since the look above
  // leaves the stretch checked, which then names it (the words an earlier store recorded are
  // this block's, as the checked stretch finds them).
  for (unsigned i = 0; i < count; ++i) {
    const Proven& p = proven[i];
    if (p.access->store && p.access->space == Space::global &&
        !record_global_stores(*b, file, *p.access, p.flat, loops))
      return false;
  }
  for (unsigned i = 0; i < count; ++i)
    if (proven[i].access->store && proven[i].access->space == Space::shared)
      record_stores(*b, *proven[i].access, proven[i].flat, loops, learned);
  if (counted) count_requests(file, loops, accesses);
  if (rememberable && learned.run_count <= RememberedProof::kMostRuns &&
      learned.row_count <= RememberedProof::kMostRows)
    remember_proof(*b, file, loops, accesses, returned, learned);
  stretches_run.add();
  return true;
}

unsigned long long proven_stretches_run() { return stretches_run.total(); }

}  // namespace cudalab::emu
