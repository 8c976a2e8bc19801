// Stretches of a loop form whose memory accesses the kernel's code proves (the translator's
// stretch_accesses.py): before the block runs such a stretch, stretch_fine bounds each subscript
// of each access over every thread of the block and every value of the stretch's loop counters
// (an affine subscript takes its least and greatest values at the corners of that box), and looks
// at the words between the least and the greatest element once:
// - a load of a `__shared__` array: each word in a variable, written in this block, and not since
//   the last barrier;
// - a store to one (every thread makes it, or every thread below an x bound: the translator
//   proves it): each word in a variable, neither read nor written since the barrier, no two
//   threads' elements the same (the elements' offsets are a mixed-radix number of the thread's
//   index and the counters: each coefficient, by size, exceeds what all smaller ones can add up
//   to), and no element among the stretch's other shared accesses but the thread's own (`s[tid]
//   += v` loads what the same thread stores);
// - a load of global memory: the elements inside the live device array the pointer points into,
//   written before this launch and not in it (proven_blocks.h: words_fine), row by row of the
//   box along its unit-stride term.
// Then no access of the stretch can leave its array, read memory nobody wrote, or race (nothing
// touched the words since the barrier but what the proof allows, and the barrier or the kernel's
// end after the stretch leaves no later access), so the stores are recorded now, as the checks
// record them (the writer thread of each element, the store's line), and the stretch runs its
// copy without the checks' instrumentation. (A launch run again in the other order, replay.h,
// loads the same values and stores the same elements: no load reads what the stretch stores, and
// each element stored has one writer.) Anything else (a subscript
// past its dimension, a word unwritten or touched since the barrier, a thread that returned from
// the kernel before a stretch that stores, a loop that runs no time, counters on, a watched
// thread, the launch's first block where the stretch loads global memory) runs the checked
// stretch, which names the first faulting thread and its line as always.
//
// Limitations: the words looked at are all those between the least and the greatest element (of
// shared memory; of global memory, of each row of the box), so a stretch that reads a sparse part
// of an array runs checked where an element it skips is unwritten. Two threads that store one
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
#include "proven_blocks.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

// The proven runs, counted per worker (one counter that every worker adds to at each stretch
// would be a cache line the workers take from each other).
struct alignas(64) RunCount {
  std::atomic<unsigned long long> runs{0};
};
constexpr unsigned kRunCounts = 64;
RunCount run_counts[kRunCounts];
std::atomic<unsigned> workers_seen{0};
void count_run() {
  thread_local const unsigned mine = workers_seen.fetch_add(1) % kRunCounts;
  run_counts[mine].runs.fetch_add(1, std::memory_order_relaxed);
}

// One variable of an access's box: the thread's x, y or z, or a loop's counter, with the bytes
// one step of it moves the access, and its range [from, to].
struct Term {
  long long bytes, from, to;
};

// An access as byte offsets from its array: constant + the sum of each term's bytes times its
// variable, over the box (the terms that move it; no allocation: this runs before each stretch).
struct Affine {
  static constexpr unsigned kMostTerms = 3 + kProvenLoops;
  long long constant = 0;
  Term terms[kMostTerms];
  unsigned count = 0;

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
  // The terms by the size of their step, the smallest first.
  void sort() {
    std::sort(terms, terms + count,
              [](const Term& p, const Term& q) { return std::abs(p.bytes) < std::abs(q.bytes); });
  }
};

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

// The access's subscripts as one, in bytes from the array.
ProvenSubscript flat_of(const StretchAccess& access) {
  ProvenSubscript f{};
  for (const ProvenSubscript& s : access.subscripts) {
    f.constant += s.constant * s.stride;
    f.x += s.x * s.stride;
    f.y += s.y * s.stride;
    f.z += s.z * s.stride;
    for (unsigned i = 0; i < kProvenLoops; ++i) f.counters[i] += s.counters[i] * s.stride;
  }
  return f;
}

// How many x indices of the block's threads make the access: those below its bound.
unsigned long long threads_x(const StretchAccess& access) {
  return static_cast<unsigned long long>(std::clamp<long long>(access.x_end, 0, ::blockDim.x));
}

// Whether each subscript of the access lies within its dimension (a shared array's) or in
// [0, 2^31) (a global load's) over the box; its offsets in bytes (f: its subscripts as one) then
// go to `a`.
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
    for (const ProvenLoop& loop : loops)  // (a loop that runs no time: its first value)
      bound(s.counters[k++], loop.first, std::max(loop.first, loop.end - 1));
    if (least < 0 || greatest >= (access.in_shared ? s.extent : INT_MAX + 1LL)) return false;
  }
  a.constant = f.constant;
  a.add(f.x, 0, threads_x(access) - 1LL);
  a.add(f.y, 0, d.y - 1LL);
  a.add(f.z, 0, d.z - 1LL);
  unsigned k = 0;
  for (const ProvenLoop& loop : loops) a.add(f.counters[k++], loop.first, loop.end - 1);
  return true;
}

// The bytes of one element of the access (its innermost subscript's stride).
long long element_bytes(const StretchAccess& access) {
  return std::prev(access.subscripts.end())->stride;
}

// Whether distinct threads, and distinct values of the counters, give distinct elements: each
// of the block's dimensions moves the access (f: the access's subscripts as one), and by the size
// of their steps each term's step exceeds what the smaller ones span, the smallest an element or
// more.
bool one_element_each(const StretchAccess& access, const ProvenSubscript& f, Affine a,
                      long long element) {
  const uint3 d = ::blockDim;
  if ((f.x == 0 && threads_x(access) > 1) || (f.y == 0 && d.y > 1) || (f.z == 0 && d.z > 1))
    return false;
  a.sort();
  long long spanned = element - 1;
  for (unsigned i = 0; i < a.count; ++i) {
    if (std::abs(a.terms[i].bytes) <= spanned) return false;
    spanned += std::abs(a.terms[i].bytes) * (a.terms[i].to - a.terms[i].from);
  }
  return true;
}

// Whether the global elements of access `a` of `array` lie in its live device array and each was
// written before this launch and not in it: for each value of the other terms, the run of
// elements along the term of the smallest step where that step is one element.
bool global_loads_fine(const BlockState& b, const void* array, Affine a, long long element) {
  const Allocation* r = containing(array, false);
  const auto base = reinterpret_cast<uintptr_t>(array);
  if (r == nullptr || !r->shadow || element % 4 != 0 || base % 4 != 0) return false;
  const long long offset = static_cast<long long>(base - reinterpret_cast<uintptr_t>(r->base));
  if (offset + a.least() < 0 || offset + a.greatest() + element > static_cast<long long>(r->bytes))
    return false;
  a.sort();
  const bool runs = a.count > 0 && std::abs(a.terms[0].bytes) == element;
  const Term along = runs ? a.terms[0] : Term{0, 0, 0};
  const long long first =
      offset + a.constant + std::min(along.bytes * along.from, along.bytes * along.to);
  const size_t words = (along.to - along.from + 1) * element / 4;
  return each_value(a.terms + (runs ? 1 : 0), a.count - (runs ? 1 : 0), first, [&](long long at) {
    return words_fine(r->shadow.words + at / 4, words, b.launch_stamp, false);
  });
}

// A stand-in code address for `file`:`line`, kept by the worker (line_marker takes a lock).
const void* marker_of(const char* file, int line) {
  thread_local std::vector<std::pair<std::pair<const char*, int>, const void*>> known;
  for (const auto& [at, marker] : known)
    if (at.first == file && at.second == line) return marker;
  const void* marker = line_marker(file, static_cast<unsigned>(line));
  known.push_back({{file, line}, marker});
  return marker;
}

// Records the stores of `access` (every thread of the block below its x bound makes it, for every
// value of the counters), as the checks record them: each element's writer thread, and the
// store's line.
void record_stores(BlockState& b, const char* file, const StretchAccess& access,
                   const ProvenSubscript& f, std::initializer_list<ProvenLoop> loops) {
  const uint3 d = ::blockDim;
  const auto array = reinterpret_cast<uintptr_t>(access.array);
  const auto element = static_cast<unsigned>(element_bytes(access));
  const void* pc = marker_of(file, access.line);
  Affine counters;  // (the thread's terms are its index, below)
  unsigned k = 0;
  for (const ProvenLoop& loop : loops) counters.add(f.counters[k++], loop.first, loop.end - 1);
  const auto width = static_cast<unsigned>(threads_x(access));
  for (unsigned z = 0; z < d.z; ++z)
    for (unsigned y = 0; y < d.y; ++y) {  // (a row of threads at each value of the counters)
      const auto first = static_cast<uint16_t>((z * d.y + y) * d.x);
      each_value(counters.terms, counters.count, f.constant + f.y * y + f.z * z, [&](long long at) {
        b.shared->record_stores(b, array + at, element, width, f.x, first, pc);
        return true;
      });
    }
}

}  // namespace

bool SharedSpace::loads_fine(const BlockState& b, uintptr_t first, uintptr_t end) const {
  for (uintptr_t w = (first - base_) / 4; w <= (end - 1 - base_) / 4; ++w) {
    const Word& s = words_[w];
    if (s.region == 0 || s.write_epoch < b.block_epoch || s.write_epoch == b.epoch) return false;
  }
  return true;
}

bool SharedSpace::stores_fine(const BlockState& b, uintptr_t first, uintptr_t end) const {
  for (uintptr_t w = (first - base_) / 4; w <= (end - 1 - base_) / 4; ++w) {
    const Word& s = words_[w];
    if (s.region == 0 || s.write_epoch == b.epoch || s.read_epoch == b.epoch) return false;
  }
  return true;
}

void SharedSpace::record_stores(const BlockState& b, uintptr_t a, unsigned element, unsigned count,
                                long long step, uint16_t first_thread, const void* pc) {
  for (unsigned i = 0; i < count; ++i) {
    const uintptr_t at = a + i * step - base_;
    for (uintptr_t w = at / 4; w < (at + element) / 4; ++w)
      words_[w].note_write(b.epoch, static_cast<uint16_t>(first_thread + i), 0xF, pc);
  }
}

bool stretch_fine(const char* file, std::initializer_list<ProvenLoop> loops,
                  std::initializer_list<StretchAccess> accesses, const bool* returned) {
  BlockState* b = current_block;
  if (b == nullptr || b->shared == nullptr || counting() || timed_out() ||
      watching_a_thread.load(std::memory_order_relaxed))
    return false;
  bool stores = false, global = false;
  for (const StretchAccess& access : accesses) {
    stores |= access.store;
    global |= !access.in_shared;
  }
  // (every thread must make the stores, for every value of the counters)
  const auto runs_no_time = [](const ProvenLoop& loop) { return loop.end <= loop.first; };
  if (stores && (returned != nullptr || std::any_of(loops.begin(), loops.end(), runs_no_time)))
    return false;
  if (global && b->block_rank == 0) return false;  // (as proven_block: proven_blocks.h)
  struct Shared {
    const StretchAccess* access;
    ProvenSubscript flat;  // its subscripts as one
    uintptr_t first, end;  // the bytes between its least and greatest element
  };
  constexpr unsigned kMostShared = 16;
  Shared shared[kMostShared];
  unsigned count = 0;
  for (const StretchAccess& access : accesses) {
    if (threads_x(access) == 0) continue;  // (no thread makes it)
    if (access.subscripts.size() == 0) return false;
    const ProvenSubscript f = flat_of(access);
    Affine a;
    if (!affine_of(access, f, loops, a)) return false;
    const long long element = element_bytes(access);
    const auto array = reinterpret_cast<uintptr_t>(access.array);
    if (!access.in_shared) {
      if (!global_loads_fine(*b, access.array, a, element)) return false;
      continue;
    }
    if (count == kMostShared || !b->shared->contains(array) || element % 4 != 0) return false;
    const Shared span{&access, f, array + a.least(), array + a.greatest() + element};
    if (access.store ? !one_element_each(access, f, a, element) ||
                           !b->shared->stores_fine(*b, span.first, span.end)
                     : !b->shared->loads_fine(*b, span.first, span.end))
      return false;
    shared[count++] = span;
  }
  // No store's elements among another shared access's, but the thread's own element (`s[tid] +=
  // v`: the same array, threads and subscripts).
  const auto own = [](const Shared& p, const Shared& q) {
    const ProvenSubscript &f = p.flat, &g = q.flat;
    return p.access->array == q.access->array && p.access->x_end == q.access->x_end &&
           f.constant == g.constant && f.x == g.x && f.y == g.y && f.z == g.z &&
           std::equal(f.counters, f.counters + kProvenLoops, g.counters);
  };
  for (unsigned i = 0; i < count; ++i)
    for (unsigned j = 0; j < count; ++j)
      if (i != j && shared[i].access->store && shared[i].first < shared[j].end &&
          shared[j].first < shared[i].end && !own(shared[i], shared[j]))
        return false;
  for (unsigned i = 0; i < count; ++i)
    if (shared[i].access->store) record_stores(*b, file, *shared[i].access, shared[i].flat, loops);
  count_run();
  return true;
}

unsigned long long proven_stretches_run() {
  unsigned long long runs = 0;
  for (const RunCount& count : run_counts) runs += count.runs.load(std::memory_order_relaxed);
  return runs;
}

}  // namespace cudalab::emu
