// The device's clocks on the CPU: clock64() counts nanoseconds of the CPU's steady clock (the
// emulated device runs at 1 GHz), globaltimer the nanoseconds of the system clock, as a GPU's
// global timer does; __nanosleep sleeps the calling thread. Out of line so that every translated
// file does not parse <chrono> and <thread>, which nvcc's headers do not bring in either.
#include <chrono>
#include <thread>

#include "cudalab/emu/prelude.h"

long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void __nanosleep(unsigned ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

namespace cudalab::emu::ptx {
unsigned long long globaltimer() {
  return static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
}
}  // namespace cudalab::emu::ptx
