// Internal header of the emu runtime (not for programs): a count that every worker adds to often
// (proven blocks, proven stretches), kept per worker, so that no cache line passes between the
// workers at each addition.
#pragma once

#include <atomic>

namespace cudalab::emu {

class PerWorkerCount {
 public:
  // (the first kCounts threads own their counts: a plain addition, no locked instruction to wait
  // for the stores before it)
  void add() {
    const unsigned w = worker();
    if (w >= kCounts) {
      later_threads_.value.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::atomic<unsigned long long>& value = counts_[w].value;
    value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  unsigned long long total() const {
    unsigned long long sum = later_threads_.value.load(std::memory_order_relaxed);
    for (const Count& c : counts_) sum += c.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  struct alignas(64) Count {
    std::atomic<unsigned long long> value{0};
  };
  static constexpr unsigned kCounts = 64;
  // The calling thread's number, in the order the threads first counted (threads beyond kCounts
  // share one count).
  static unsigned worker() {
    static std::atomic<unsigned> threads_seen{0};
    thread_local const unsigned mine = threads_seen.fetch_add(1);
    return mine;
  }
  Count counts_[kCounts];
  Count later_threads_;
};

}  // namespace cudalab::emu
