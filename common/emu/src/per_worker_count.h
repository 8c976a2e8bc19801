// Internal header of the emu runtime (not for programs): a count that every worker adds to often
// (proven blocks, proven stretches), kept per worker, so that no cache line passes between the
// workers at each addition.
#pragma once

#include <atomic>

namespace cudalab::emu {

class PerWorkerCount {
 public:
  void add() { counts_[worker()].value.fetch_add(1, std::memory_order_relaxed); }
  unsigned long long total() const {
    unsigned long long sum = 0;
    for (const Count& c : counts_) sum += c.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  struct alignas(64) Count {
    std::atomic<unsigned long long> value{0};
  };
  static constexpr unsigned kCounts = 64;
  // The calling thread's counter (threads beyond kCounts share them).
  static unsigned worker() {
    static std::atomic<unsigned> threads_seen{0};
    thread_local const unsigned mine = threads_seen.fetch_add(1) % kCounts;
    return mine;
  }
  Count counts_[kCounts];
};

}  // namespace cudalab::emu
