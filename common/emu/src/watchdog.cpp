// The launch time limit: a kernel that loops forever is stopped, not waited for. When a launch
// runs past CUDALAB_EMU_TIMEOUT seconds (default 20), timed_out() turns true and the next checked
// access of the kernel stops it with the thread and line. A loop that touches no memory cannot be
// stopped that way: after as long again, the program ends with a message.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "block.h"
#include "cudalab/emu/inspect.h"
#include "state.h"

namespace cudalab::emu {
namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> expired{false};

struct Watch {
  std::mutex mutex;
  std::condition_variable changed;
  unsigned long long launch = 0;  // counts launches; odd while one runs
  std::string what;
  std::chrono::seconds limit{20};

  Watch() {
    if (const char* env = std::getenv("CUDALAB_EMU_TIMEOUT"))
      limit = std::chrono::seconds(std::max(1, std::atoi(env)));
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return launch % 2 == 1; });
      const unsigned long long mine = launch;
      if (changed.wait_for(lock, limit, [&] { return launch != mine; })) continue;
      expired = true;
      if (changed.wait_for(lock, limit, [&] { return launch != mine; })) continue;
      std::fprintf(stderr,
                   "cudalab emu: %s still runs %lld s after its time limit of %lld s "
                   "(CUDALAB_EMU_TIMEOUT), in a loop that touches no memory: stopping the program. "
                   "Look for a loop whose condition never changes.\n",
                   what.c_str(), static_cast<long long>(limit.count()),
                   static_cast<long long>(limit.count()));
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
  w.limit = std::chrono::seconds(std::max(1u, seconds));
}

bool timed_out() { return expired.load(std::memory_order_relaxed); }

void watch_launch(const LaunchConfig& config) {
  Watch& w = watch();
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.what = launch_site(config);
    ++w.launch;
  }
  w.changed.notify_all();
}

void launch_finished() {
  Watch& w = watch();
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    ++w.launch;
  }
  expired = false;
  w.changed.notify_all();
}

}  // namespace cudalab::emu
