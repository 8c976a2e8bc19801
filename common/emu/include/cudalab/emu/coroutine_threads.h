// Kernels whose threads run as coroutines (unchecked code only; scheduler.cpp says how they run).
//
// For a kernel whose own body waits only at barriers (`__syncthreads()` and its votes, its block
// group's sync) and at warp-level calls (shuffles, votes, `__syncwarp()`, matches, reductions,
// and those of cooperative groups' tiles), and calls nothing that could wait, the translator
// (common/emu/translate.py) adds a twin in which each wait `__X(` is `co_await X_arrival(` (less
// a `_sync`; a tile's `tile.X(` is `co_await tile.X_arrival(`: cooperative_groups.h), and each
// `return` a `co_return`; a launch of it from unchecked code runs the twin. A thread is then a
// coroutine frame of the kernel's live variables, not a stack: a wait costs a return to the
// scheduler's loop and a call back, not a switch of stacks.
//
// Limitations: checked code runs the kernel itself, on fibers (the checks' instrumentation would
// check each use of a frame's variable: twice the time of fibers for a checked block reduction);
// a wait inside a function the kernel calls, which the translator could not see, stops the block
// with an error that says so (the checked build runs such a kernel).
#pragma once

#include <bit>
#include <coroutine>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "cudalab/emu/device.h"

namespace cudalab::emu {

// Internal (scheduler.cpp): memory for a frame of a kernel's twin (the block's), and for one of a
// function's twin (until the function returns).
void* coroutine_frame(size_t bytes);
void* function_frame(size_t bytes);
void free_function_frame(void* frame, size_t bytes) noexcept;
// Internal: what is left of the chunk the worker's kernel frames come from, [next, end) (set by
// scheduler.cpp's CoroutineFrames): a frame that fits is a bump of `next`, without a call (the
// call was a sixth of an unchecked 1D stencil's time). Every frame's bytes are a multiple of
// kFrameGrain; coroutine_frame() gets those that do not fit.
struct FrameChunk {
  std::byte* next = nullptr;
  std::byte* end = nullptr;
};
inline constinit thread_local FrameChunk frame_chunk{};
inline constexpr size_t kFrameGrain = 64;
// The bytes a frame of `bytes` takes: a multiple of kFrameGrain (aligned as operator new aligns).
inline constexpr size_t frame_bytes(size_t bytes) {
  return (bytes + kFrameGrain - 1) / kFrameGrain * kFrameGrain;
}
// Memory for the running block, given back when it ends (a kernel's frame, thread_loops.h's
// PerThread): a bump of the chunk where it fits.
inline void* block_memory(size_t bytes) {
  bytes = frame_bytes(bytes);
  FrameChunk& chunk = frame_chunk;
  if (static_cast<size_t>(chunk.end - chunk.next) < bytes) return coroutine_frame(bytes);
  void* frame = chunk.next;
  chunk.next += bytes;
  return frame;
}
// What the translator puts before a kernel's name to name its twin.
inline constexpr char kTwinPrefix[] = "cudalab_coroutine_";

// Internal: the running thread's innermost coroutine (its kernel's twin, or the twin of a function
// that it calls, from the call to the return), and nullptr when the thread has finished: the
// scheduler resumes it when the thread waits there.
inline constinit thread_local void* coroutine_waiting = nullptr;

// What a kernel's twin returns (nothing: the scheduler keeps coroutine_waiting).
struct ThreadTask {
  struct promise_type {
    ThreadTask get_return_object() {
      coroutine_waiting = std::coroutine_handle<promise_type>::from_promise(*this).address();
      return {};
    }
    std::suspend_never initial_suspend() noexcept { return {}; }  // runs to its first wait
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept { coroutine_waiting = nullptr; }
    [[noreturn]] void unhandled_exception() noexcept { std::terminate(); }
    // Frames come from the worker's arena, given back all at once when its block ends: a
    // thread's frame is never destroyed (nor its variables, as on a GPU).
    static void* operator new(size_t bytes) { return block_memory(bytes); }
    static void operator delete(void*) noexcept {}
  };
};

// What the twin of a __device__ function that waits returns: its coroutine, which starts when the
// caller awaits it and, when it returns, goes back to the caller with its value. (A block that
// fails leaves its threads' frames as they are.)
template <class T>
struct ReturnOf {
  std::optional<std::remove_cv_t<T>> value;
  void return_value(T v) { value.emplace(std::move(v)); }
  T result() { return std::move(*value); }
};
template <>
struct ReturnOf<void> {
  void return_void() noexcept {}
  void result() {}
};
template <class T>
struct DeviceTask {
  struct promise_type : ReturnOf<T> {
    std::coroutine_handle<> caller;
    DeviceTask get_return_object() {
      return DeviceTask{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct BackToCaller {
      bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> me) noexcept {
        coroutine_waiting = me.promise().caller.address();
        return me.promise().caller;
      }
      void await_resume() const noexcept {}
    };
    BackToCaller final_suspend() noexcept { return {}; }
    [[noreturn]] void unhandled_exception() noexcept { std::terminate(); }
    static void* operator new(size_t bytes) { return function_frame(bytes); }
    static void operator delete(void* frame, size_t bytes) noexcept {
      free_function_frame(frame, bytes);
    }
  };
  std::coroutine_handle<promise_type> callee;
  explicit DeviceTask(std::coroutine_handle<promise_type> h) : callee(h) {}
  DeviceTask(DeviceTask&& other) noexcept : callee(std::exchange(other.callee, {})) {}
  ~DeviceTask() {
    if (callee) callee.destroy();
  }
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    callee.promise().caller = caller;
    coroutine_waiting = callee.address();
    return callee;  // the callee runs now, until it waits or returns
  }
  T await_resume() { return callee.promise().result(); }
};

// Internal: the __syncthreads() at which the running thread waits, written down when it suspends;
// the scheduler reads it when the thread has returned to it.
struct BarrierSite {
  const char* file;
  int line;
};
inline constinit thread_local BarrierSite coroutine_waits_at{};
// Internal (scheduler.cpp): the running thread's predicate at __syncthreads_count() and friends;
// returns where the count of the block's threads whose predicate holds will be when it opens.
const int* vote_as_coroutine(bool predicate);
// A barrier: __syncthreads(), and with a vote __syncthreads_count(), _and() and _or().
template <class Result = void>
struct BarrierArrival {
  const char* file;
  int line;
  int predicate = 0;
  Result (*result)(int count) = nullptr;
  const int* count = nullptr;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) noexcept {
    coroutine_waits_at = {file, line};
    if constexpr (!std::is_void_v<Result>) count = vote_as_coroutine(predicate != 0);
  }
  Result await_resume() const noexcept {
    if constexpr (!std::is_void_v<Result>) return result(*count);
  }
};
inline BarrierArrival<> syncthreads_arrival(const char* file = __builtin_FILE(),
                                            int line = __builtin_LINE()) {
  return {file, line};
}
inline BarrierArrival<int> syncthreads_count_arrival(int predicate,
                                                     const char* file = __builtin_FILE(),
                                                     int line = __builtin_LINE()) {
  return {file, line, predicate, [](int count) { return count; }};
}
inline BarrierArrival<int> syncthreads_and_arrival(int predicate,
                                                   const char* file = __builtin_FILE(),
                                                   int line = __builtin_LINE()) {
  return {file, line, predicate, [](int count) { return int{count == block_threads()}; }};
}
inline BarrierArrival<int> syncthreads_or_arrival(int predicate,
                                                  const char* file = __builtin_FILE(),
                                                  int line = __builtin_LINE()) {
  return {file, line, predicate, [](int count) { return int{count != 0}; }};
}

// Internal (scheduler.cpp): the running thread publishes `value` at a warp-level call for the
// lanes of `mask`; returns where its warp's 32 values will be when the lanes have all published.
const uint64_t* publish_as_coroutine(unsigned mask, uint64_t value, const char* file, int line);
// A warp-level call (device.h's warp_calls, or a Shuffle): the lane publishes, and when its warp
// goes on, the call's result comes from what the warp's lanes published, as on fibers.
template <class Call>
struct WarpArrival {
  Call call;
  const char* file;
  int line;
  const uint64_t* lanes = nullptr;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) noexcept {
    lanes = publish_as_coroutine(call.mask, call.mine, file, line);
  }
  auto await_resume() const noexcept { return call.result(lanes); }
};
// The call in a meeting of a twin's warp: the lane's value of at most 8 bytes, and the lane whose
// value it takes (its own, from a lane outside its segment of `width`), as shuffle() on fibers.
template <class T>
struct Shuffle {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
  unsigned mask;
  uint64_t mine;
  T var;
  int source, segment, width;
  Shuffle(unsigned mask, T var, int source, int width, const char* file, int line)
      : mask(mask),
        mine(bits_of(var)),
        var(var),
        source(source),
        segment(segment_start(width, file, line)),
        width(width) {}
  // (In a register: zeroed in the frame, then written in part, `mine` took a stalled load to
  // publish, a third of a warp reduction's time.)
  static uint64_t bits_of(T var) {
    if constexpr (sizeof(T) == 8) return std::bit_cast<uint64_t>(var);
    if constexpr (sizeof(T) == 4) return std::bit_cast<uint32_t>(var);
    if constexpr (sizeof(T) == 2) return std::bit_cast<uint16_t>(var);
    if constexpr (sizeof(T) == 1) return std::bit_cast<uint8_t>(var);
    uint64_t bits = 0;
    std::memcpy(&bits, &var, sizeof(T));
    return bits;
  }
  T result(const uint64_t* lanes) const {
    if (outside_segment(source, segment, width)) return var;
    T out;
    std::memcpy(&out, &lanes[source], sizeof(T));
    return out;
  }
};
// A meeting whose result is what the warp's lanes published.
struct Publish {
  unsigned mask;
  uint64_t mine;
  const uint64_t* result(const uint64_t* lanes) const { return lanes; }
};
// A larger value moves in 8-byte pieces (device.h's piece_of), a meeting each, as on fibers. (Its
// frame, a type of this header, holds the program's T: GCC would warn of a T of the program's
// unnamed namespace.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif
template <class T>
DeviceTask<T> shuffle_in_pieces(unsigned mask, T var, int source, int width, const char* file,
                                int line) {
  const bool outside = outside_segment(source, segment_start(width, file, line), width);
  T out = var;
  for (size_t at = 0; at < sizeof(T); at += 8) {
    const uint64_t* lanes = co_await WarpArrival<Publish>{{mask, piece_of(var, at)}, file, line};
    if (!outside) put_piece(out, at, lanes[source]);
  }
  co_return out;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
// What a twin awaits for a shuffle of any trivially copyable type (`source`: shuffle_source's).
template <class T>
auto shuffle_arrival(unsigned mask, T var, int source, int width, const char* file, int line) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffles move trivially copyable values");
  if constexpr (sizeof(T) <= 8)
    return WarpArrival<Shuffle<T>>{{mask, var, source, width, file, line}, file, line};
  else
    return shuffle_in_pieces(mask, var, source, width, file, line);
}
// What a twin awaits for a warp-level call of device.h's warp_calls (or a call of that form).
template <class Call>
WarpArrival<Call> awaited(Call call, const char* file, int line) {
  return {call, file, line};
}

// What a twin awaits instead of each warp-level call (the translator's names: the call's, less
// its `__` and `_sync`, and `_arrival`).
#define CUDALAB_ARRIVAL_PLACE const char *file = __builtin_FILE(), int line = __builtin_LINE()
template <class T>
auto shfl_arrival(unsigned mask, T var, int srcLane, int width = warpSize, CUDALAB_ARRIVAL_PLACE) {
  return shuffle_arrival(mask, var, shuffle_source::idx(srcLane, width), width, file, line);
}
template <class T>
auto shfl_down_arrival(unsigned mask, T var, unsigned delta, int width = warpSize,
                       CUDALAB_ARRIVAL_PLACE) {
  return shuffle_arrival(mask, var, shuffle_source::down(delta), width, file, line);
}
template <class T>
auto shfl_up_arrival(unsigned mask, T var, unsigned delta, int width = warpSize,
                     CUDALAB_ARRIVAL_PLACE) {
  return shuffle_arrival(mask, var, shuffle_source::up(delta), width, file, line);
}
template <class T>
auto shfl_xor_arrival(unsigned mask, T var, int laneMask, int width = warpSize,
                      CUDALAB_ARRIVAL_PLACE) {
  return shuffle_arrival(mask, var, shuffle_source::xor_(laneMask), width, file, line);
}
inline auto syncwarp_arrival(unsigned mask = 0xffffffffu, CUDALAB_ARRIVAL_PLACE) {
  return awaited(warp_calls::SyncWarp{mask}, file, line);
}
inline auto ballot_arrival(unsigned mask, int predicate, CUDALAB_ARRIVAL_PLACE) {
  return awaited(warp_calls::Ballot{mask, predicate != 0}, file, line);
}
inline auto any_arrival(unsigned mask, int predicate, CUDALAB_ARRIVAL_PLACE) {
  return awaited(warp_calls::Any{{mask, predicate != 0}}, file, line);
}
inline auto all_arrival(unsigned mask, int predicate, CUDALAB_ARRIVAL_PLACE) {
  return awaited(warp_calls::All{{mask, predicate != 0}}, file, line);
}
inline auto match_any_arrival(unsigned mask, unsigned long long value, CUDALAB_ARRIVAL_PLACE) {
  return awaited(warp_calls::MatchAny{mask, value}, file, line);
}
#define CUDALAB_REDUCE_ARRIVAL(what, T, op)                                                    \
  inline auto reduce_##what##_arrival(unsigned mask, T value, CUDALAB_ARRIVAL_PLACE) {         \
    return awaited(warp_calls::Reduce<T, op>{mask, static_cast<uint64_t>(value)}, file, line); \
  }
CUDALAB_WARP_REDUCTIONS(CUDALAB_REDUCE_ARRIVAL)
#undef CUDALAB_REDUCE_ARRIVAL
#undef CUDALAB_ARRIVAL_PLACE

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
