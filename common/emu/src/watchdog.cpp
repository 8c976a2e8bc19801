// The launch watchdog: a kernel that loops forever is stopped, not waited for, and a long launch
// says how far it got.
//
// When a launch runs past CUDALAB_EMU_TIMEOUT seconds (default 20 for the labs' tests; 0: no
// limit, as under `cudalab run`), or the user presses Ctrl-C during a launch (CUDALAB_EMU_PROGRESS
// set, as under `cudalab run`), timed_out() turns true and each running thread is stopped a few
// thousand checked accesses later, with that thread and the loop's lines (checks.cpp). A loop that
// touches no memory cannot be stopped that way: after as long again (or a second Ctrl-C), the
// program ends with a message. With CUDALAB_EMU_PROGRESS, a launch that runs longer than 5 s prints
// blocks done of total every 5 s on stderr.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "block.h"
#include "cudalab/emu/inspect.h"
#include "errors.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

using Clock = std::chrono::steady_clock;
std::atomic<unsigned long long> blocks_done{0};
volatile std::sig_atomic_t interrupts = 0;

struct Watch {
  std::mutex mutex;
  std::condition_variable changed;
  unsigned long long launch = 0;  // counts launches; odd while one runs
  unsigned long long blocks = 0;
  std::string what;
  std::chrono::seconds limit{20};        // 0: none
  std::chrono::seconds launch_limit{0};  // the running launch's own (0: `limit`)
  bool progress = std::getenv("CUDALAB_EMU_PROGRESS") != nullptr;

  Watch() {
    if (const char* env = std::getenv("CUDALAB_EMU_TIMEOUT"))
      limit = std::chrono::seconds(std::max(0, std::atoi(env)));
    if (progress) std::signal(SIGINT, [](int) { interrupts = interrupts + 1; });
    std::thread([this] { loop(); }).detach();
  }
  // Waits up to `d` for the launch to end (or an interrupt); true if it ended.
  bool wait(std::unique_lock<std::mutex>& lock, unsigned long long mine, std::chrono::seconds d) {
    const auto until = Clock::now() + d;
    const int seen = interrupts;
    while (launch == mine && interrupts == seen) {
      const auto step =
          std::min<Clock::duration>(std::chrono::milliseconds(100), until - Clock::now());
      if (step <= Clock::duration::zero()) return false;
      changed.wait_for(lock, step);
    }
    return launch != mine;
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return launch % 2 == 1; });
      const unsigned long long mine = launch;
      const auto start = Clock::now();
      const std::chrono::seconds allowed = launch_limit.count() > 0 ? launch_limit : limit;
      // The limit, in steps of 5 s so that progress can be shown; forever when there is none.
      bool ended = false;
      for (;;) {
        const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start);
        if (allowed.count() > 0 && elapsed >= allowed) break;
        auto step = std::chrono::seconds(5);
        if (allowed.count() > 0) step = std::min(step, allowed - elapsed);
        const int seen = interrupts;
        if ((ended = wait(lock, mine, step))) break;
        if (interrupts != seen) break;
        if (progress)
          std::fprintf(
              stderr, "cudalab emu: %s: %llu of %llu blocks done after %lld s\n", what.c_str(),
              blocks_done.load(), blocks,
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count()));
      }
      if (ended) continue;
      launch_expired = true;
      const auto grace = allowed.count() > 0 ? allowed : std::chrono::seconds(10);
      if (wait(lock, mine, grace)) continue;
      std::fprintf(stderr,
                   "cudalab emu: %s still runs after it was asked to stop (time limit "
                   "CUDALAB_EMU_TIMEOUT=%lld s, or Ctrl-C), in a loop that touches no memory: "
                   "stopping the program. Look for a loop whose condition never changes.\n",
                   what.c_str(), static_cast<long long>(allowed.count()));
      std::fflush(stderr);
      _exit(124);
    }
  }
};

Watch& watch() {
  static Watch* w = new Watch;  // never destroyed: its thread outlives static destruction
  return *w;
}

}  // namespace

void set_time_limit(unsigned seconds) {
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.limit = std::chrono::seconds(seconds);
}

void watch_launch(const LaunchConfig& config, unsigned long long blocks,
                  std::chrono::seconds limit) {
  Watch& w = watch();
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.what = launch_site(config);
    w.blocks = blocks;
    w.launch_limit = limit;
    blocks_done = 0;
    ++w.launch;
  }
  w.changed.notify_all();
}

void blocks_finished(unsigned long long count) {
  blocks_done.fetch_add(count, std::memory_order_relaxed);
}

void launch_finished() {
  Watch& w = watch();
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    ++w.launch;
  }
  launch_expired = false;
  w.changed.notify_all();
}

}  // namespace cudalab::emu
