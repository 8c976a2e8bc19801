// Kernels whose threads run as coroutines (unchecked code only; scheduler.cpp says how they run).
//
// For a kernel whose own body waits only at `__syncthreads()` (or its block group's sync) and at
// shuffles, and calls nothing that could wait, the translator (common/emu/translate.py) adds a
// twin in which each barrier is `co_await barrier_arrival(...)`, each `__shfl_*_sync(` a
// `co_await shfl_*_arrival(` and each `return` a `co_return`; a launch of it from unchecked code
// runs the twin. A thread is then a coroutine frame of the kernel's live variables, not a stack:
// a wait costs a return to the scheduler's loop and a call back, not a switch of stacks.
//
// Limitations: checked code runs the kernel itself, on fibers (the checks' instrumentation would
// check each use of a frame's variable: twice the time of fibers for a checked block reduction);
// a twin's shuffle moves at most 8 bytes in its one meeting, as CUDA's shuffle intrinsics do (the
// emu's own take any trivially copyable type, in 8-byte pieces: cooperative groups' tiles need it,
// and those keep fibers); a wait inside a function the kernel calls, which the translator could not
// see, stops the block with an error that says so (the checked build runs such a kernel).
#pragma once

#include <coroutine>
#include <cstdint>
#include <cstring>
#include <exception>

#include "cudalab/emu/device.h"

namespace cudalab::emu {

void* coroutine_frame(size_t bytes);  // internal (scheduler.cpp): memory for a frame of the block

// What a twin returns: its thread's coroutine, as a handle's address().
struct ThreadTask {
  struct promise_type {
    ThreadTask get_return_object() {
      return {std::coroutine_handle<promise_type>::from_promise(*this).address()};
    }
    std::suspend_never initial_suspend() noexcept { return {}; }  // runs to its first wait
    std::suspend_always final_suspend() noexcept { return {}; }   // done() when finished
    void return_void() noexcept {}
    [[noreturn]] void unhandled_exception() noexcept { std::terminate(); }
    // Frames come from the worker's arena, given back all at once when its block ends: a
    // thread's frame is never destroyed (nor its variables, as on a GPU).
    static void* operator new(size_t bytes) { return coroutine_frame(bytes); }
    static void operator delete(void*) noexcept {}
  };
  void* handle;
};

// Internal: the __syncthreads() at which the running thread waits, written down when it suspends;
// the scheduler reads it when the thread has returned to it.
struct BarrierSite {
  const char* file;
  int line;
};
inline constinit thread_local BarrierSite coroutine_waits_at{};
struct BarrierArrival {
  const char* file;
  int line;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept { coroutine_waits_at = {file, line}; }
  void await_resume() const noexcept {}
};
inline BarrierArrival barrier_arrival(const char* file, int line) { return {file, line}; }

// Internal (scheduler.cpp): the running thread publishes `value` at a warp-level call for the
// lanes of `mask`; returns where its warp's 32 values will be when the lanes have all published.
const uint64_t* publish_as_coroutine(unsigned mask, uint64_t value, const char* file, int line);
// A shuffle: the lane publishes its value, and when its warp goes on, takes the source lane's
// (its own, from a lane outside its segment of `width`), as shuffle() does on fibers.
template <class T>
struct ShuffleArrival {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "emu: in unchecked code a kernel whose threads are coroutines shuffles values of "
                "at most 8 bytes; build it with the checks (the default) to shuffle this type");
  unsigned mask;
  T var;
  int source, width;
  const char* file;
  int line;
  const uint64_t* lanes = nullptr;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) noexcept {
    uint64_t mine = 0;
    std::memcpy(&mine, &var, sizeof(T));
    lanes = publish_as_coroutine(mask, mine, file, line);
  }
  T await_resume() const noexcept {
    if (outside_segment(source, width)) return var;
    T out;
    std::memcpy(&out, &lanes[source], sizeof(T));
    return out;
  }
};
template <class T>
ShuffleArrival<T> shfl_arrival(unsigned mask, T var, int srcLane, int width = warpSize,
                               const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return {mask, var, shuffle_source::idx(srcLane, width), width, file, line};
}
template <class T>
ShuffleArrival<T> shfl_down_arrival(unsigned mask, T var, unsigned delta, int width = warpSize,
                                    const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
  return {mask, var, shuffle_source::down(delta), width, file, line};
}
template <class T>
ShuffleArrival<T> shfl_up_arrival(unsigned mask, T var, unsigned delta, int width = warpSize,
                                  const char* file = __builtin_FILE(),
                                  int line = __builtin_LINE()) {
  return {mask, var, shuffle_source::up(delta), width, file, line};
}
template <class T>
ShuffleArrival<T> shfl_xor_arrival(unsigned mask, T var, int laneMask, int width = warpSize,
                                   const char* file = __builtin_FILE(),
                                   int line = __builtin_LINE()) {
  return {mask, var, shuffle_source::xor_(laneMask), width, file, line};
}

// The twin's call, as a launch gives it (CUDALAB_KERNEL_THREADS).
template <class Start>
struct CoroutineThreads {
  Start start;
};
template <class T>
constexpr bool is_coroutine_threads = false;
template <class Start>
constexpr bool is_coroutine_threads<CoroutineThreads<Start>> = true;

}  // namespace cudalab::emu

// A launch of a kernel that has a twin: the twin in unchecked code, the kernel in checked code.
#ifdef CUDALAB_EMU_CHECKED
#define CUDALAB_KERNEL_THREADS(fibers, coroutines) fibers
#else
#define CUDALAB_KERNEL_THREADS(fibers, coroutines) \
  ::cudalab::emu::CoroutineThreads { coroutines }
#endif
