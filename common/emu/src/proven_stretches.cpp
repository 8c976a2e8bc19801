// Stretches of a loop form whose loads of shared memory the kernel's code proves (the translator's
// stretch_loads.py): before the block runs such a stretch, shared_loads_fine bounds each subscript
// of each load over every thread of the block and every value of the stretch's loop counters (an
// affine subscript takes its least and greatest values at the corners of that box), and looks at
// the words between the least and the greatest element once: each must lie in a variable, have
// been written in this block, and not since the last barrier. Then no load of the stretch can
// leave its array, read memory nobody wrote, or race with a write (no thread wrote the words since
// the barrier, and the barrier or the kernel's end after the stretch leaves no later write), and
// the stretch runs its copy without the checks' instrumentation. (A launch run again in the other
// order, replay.h, loads the same values: none of them was written since the barrier.) Anything
// else (a subscript past its dimension, a word unwritten or written since the barrier, counters
// on, a watched thread) runs the checked stretch, which names the first faulting thread and its
// line as always.
//
// Limitations: the words looked at are all those between the least and the greatest element, so a
// stretch that reads a sparse part of an array runs checked where an element it skips is unwritten.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "checks.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/emu/thread_loops.h"

namespace cudalab::emu {
namespace {

std::atomic<unsigned long long> stretches_run{0};

// The least and greatest value of one subscript over the block's threads and the loops' counters.
struct Span {
  long long least, greatest;
  void add(long long coefficient, long long from, long long to) {
    least += std::min(coefficient * from, coefficient * to);
    greatest += std::max(coefficient * from, coefficient * to);
  }
};

}  // namespace

bool SharedSpace::loads_fine(const BlockState& b, uintptr_t first, uintptr_t end) const {
  for (uintptr_t w = (first - base_) / 4; w <= (end - 1 - base_) / 4; ++w) {
    const Word& s = words_[w];
    if (s.region == 0 || s.write_epoch < b.block_epoch || s.write_epoch == b.epoch) return false;
  }
  return true;
}

bool shared_loads_fine(std::initializer_list<ProvenLoop> loops,
                       std::initializer_list<ProvenLoad> loads) {
  const BlockState* b = current_block;
  if (b == nullptr || b->shared == nullptr || counting() || timed_out() ||
      watching_a_thread.load(std::memory_order_relaxed))
    return false;
  const uint3 d = ::blockDim;
  for (const ProvenLoad& load : loads) {
    const auto array = reinterpret_cast<uintptr_t>(load.array);
    if (!b->shared->contains(array) || load.subscripts.size() == 0) return false;
    long long least = 0, greatest = 0, element = 0;
    for (const ProvenSubscript& s : load.subscripts) {
      Span span{s.constant, s.constant};
      span.add(s.x, 0, d.x - 1LL);
      span.add(s.y, 0, d.y - 1LL);
      span.add(s.z, 0, d.z - 1LL);
      unsigned k = 0;
      for (const ProvenLoop& loop : loops)  // (a loop that runs no time: its first value)
        span.add(s.counters[k++], loop.first, std::max(loop.first, loop.end - 1));
      if (span.least < 0 || span.greatest >= s.extent) return false;
      least += span.least * s.stride;
      greatest += span.greatest * s.stride;
      element = s.stride;
    }
    if (!b->shared->loads_fine(*b, array + least, array + greatest + element)) return false;
  }
  stretches_run.fetch_add(1, std::memory_order_relaxed);
  return true;
}

unsigned long long proven_stretches_run() { return stretches_run.load(std::memory_order_relaxed); }

}  // namespace cudalab::emu
