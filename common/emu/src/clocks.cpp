// The device's clocks on the CPU: clock64() counts the cycles of the worker running the thread
// (an SM's clock on a GPU, which the SM's other threads share): the nanoseconds of the CPU's
// steady clock (the emulated device runs at 1 GHz), and at least kCyclesPerRead more than the
// worker's last read. A GPU runs a thread beside thousands of others, whose work the thread's
// clock counts; the worker runs them one after another, so a thread that spins until its clock
// has moved on N cycles (`while (clock() - start < N)`, to keep a GPU busy) spins N /
// kCyclesPerRead times rather than N nanoseconds of the CPU. globaltimer counts the nanoseconds
// of the system clock, as a GPU's global timer does; __nanosleep sleeps the calling thread. Out of
// line so that every translated file does not parse <chrono> and <thread>, which nvcc's headers do
// not bring in either.
#include <algorithm>
#include <chrono>
#include <thread>

#include "cudalab/emu/prelude.h"

namespace {
constexpr long long kCyclesPerRead = 1000;
}

long long clock64() {
  thread_local long long last = 0;
  const long long now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  last = std::max(now, last + kCyclesPerRead);
  return last;
}

void __nanosleep(unsigned ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

namespace cudalab::emu::ptx {
unsigned long long globaltimer() {
  return static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
}
}  // namespace cudalab::emu::ptx
