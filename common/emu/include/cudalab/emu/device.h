// Device-side built-ins of the emu backend: thread coordinates, barriers, atomics, math.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cudalab/emu/intrinsics.h"
#include "cudalab/emu/types.h"

// The coordinates of the GPU thread that runs now on this worker, as CUDA names them: variables
// (not macros, so that a struct may have a field called gridDim, as cudaKernelNodeParams does).
// The block scheduler rewrites threadIdx each time it switches threads; the others change once per
// block or launch. Only the runtime's own files write them; to programs they are const, as on a
// GPU, which also tells the compiler's instrumentation that reading them needs no check. That
// holds only for a type without constructors, so blockDim and gridDim are uint3 here (CUDA's are
// dim3: the same fields, and a uint3 converts to a dim3 wherever one is needed). The exception:
// threadIdx in unchecked code, where the loop over a row's threads (launch.h) has the kernel's
// body inlined and writes threadIdx between threads; a compiler would assume a const one unchanged.
#if defined(__SANITIZE_THREAD__)
#define CUDALAB_EMU_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUDALAB_EMU_CHECKED 1
#endif
#endif
#ifdef CUDALAB_EMU_RUNTIME
inline thread_local constinit uint3 threadIdx{0, 0, 0};
inline thread_local constinit uint3 blockIdx{0, 0, 0};
inline thread_local constinit uint3 blockDim{1, 1, 1};
inline thread_local constinit uint3 gridDim{1, 1, 1};
#else
#ifdef CUDALAB_EMU_CHECKED
extern thread_local constinit const uint3 threadIdx;
#else
extern thread_local constinit uint3 threadIdx;
#endif
extern thread_local constinit const uint3 blockIdx;
extern thread_local constinit const uint3 blockDim;
extern thread_local constinit const uint3 gridDim;
#endif

namespace cudalab::emu {

struct Builtins {
  unsigned char* dynamic_shared = nullptr;  // extern __shared__ arrays point here
};
inline thread_local Builtins builtins{};

// __syncthreads(): waits until every thread of the block has arrived here.
void syncthreads(const char* file, int line);

// A `__shared__` variable declared in a kernel. The translator turns
//     __shared__ float tile[16][16];
// into a static SharedSlot and a reference to the current block's copy:
//     static SharedSlot slot{"tile", __FILE__, __LINE__};  auto& tile =
//     shared<float[16][16]>(slot);
struct SharedSlot {
  const char* name;
  const char* file;
  int line;
  unsigned region = 0;  // set on first use: where the variable lives in every block's space
  size_t offset = 0;
};
// A __shared__ variable's declared dimensions (T a[4][16]: rank 2, extents 4 and 16), outermost
// first, and the size of an element: the checks compare where two threads' subscripts landed with
// them.
struct SharedShape {
  unsigned rank = 0;
  size_t extents[4] = {};
  size_t element = 0;
};
template <class T>
constexpr SharedShape shape_of() {
  constexpr size_t rank = std::rank_v<T>;
  SharedShape s;
  s.rank = rank < 4 ? rank : 0;
  if constexpr (rank > 0) s.extents[0] = std::extent_v<T, 0>;
  if constexpr (rank > 1) s.extents[1] = std::extent_v<T, 1>;
  if constexpr (rank > 2) s.extents[2] = std::extent_v<T, 2>;
  s.element = sizeof(std::remove_all_extents_t<T>);
  return s;
}
char* shared_address(SharedSlot& slot, size_t bytes, size_t align, const SharedShape& shape);
// Internal (shared_layout.cpp): the shared space of the blocks this worker runs, as shared<T>()
// reads it without a call: its first byte, and which variables (bit r: region r, up to 63) have
// their place set up in it. Empty outside a launch. (The call per thread and variable was a
// seventh of an unchecked 1D stencil's time.)
struct SharedSpaceView {
  char* base = nullptr;
  uint64_t known = 0;
};
inline constinit thread_local SharedSpaceView shared_space_view{};
// (Not instrumented: the slot and the view are the emulator's, not the kernel's.)
template <class T>
__attribute__((no_sanitize("thread"))) inline T& shared(SharedSlot& slot) {
  const unsigned region = __atomic_load_n(&slot.region, __ATOMIC_ACQUIRE);
  const SharedSpaceView& view = shared_space_view;
  if (region < 64 && (view.known >> region & 1) != 0)
    return *reinterpret_cast<T*>(view.base + slot.offset);
  return *reinterpret_cast<T*>(
      shared_address(slot, sizeof(T), alignof(T), shape_of<T>()));  // first use
}

namespace detail {
template <class T, class Op>
inline T atomic_update(T* address, Op op) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T desired = op(old);
  while (!__atomic_compare_exchange(address, &old, &desired, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
    desired = op(old);
  }
  return old;
}
}  // namespace detail
}  // namespace cudalab::emu

inline constexpr int warpSize = 32;

// min and max as CUDA declares them: same-type overloads first, mixed types by promotion.
#define CUDALAB_MIN_MAX(T)                         \
  inline T min(T a, T b) { return b < a ? b : a; } \
  inline T max(T a, T b) { return a < b ? b : a; }
CUDALAB_MIN_MAX(int)
CUDALAB_MIN_MAX(unsigned int)
CUDALAB_MIN_MAX(long)
CUDALAB_MIN_MAX(unsigned long)
CUDALAB_MIN_MAX(long long)
CUDALAB_MIN_MAX(unsigned long long)
CUDALAB_MIN_MAX(float)
CUDALAB_MIN_MAX(double)
#undef CUDALAB_MIN_MAX
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B,
          class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(b) : C(a);
}

// Warp-level primitives. Each lane publishes a value and waits for the lanes of the mask (the
// scheduler's warp barrier); then it reads what the others published.
namespace cudalab::emu {
const uint64_t* warp_exchange(unsigned mask, uint64_t value, const char* file, int line);
// The running thread's number in its block, 0..blockDim-1, x fastest: warps are its runs of 32.
inline unsigned thread_rank() {
  return ::threadIdx.x + ::blockDim.x * (::threadIdx.y + ::blockDim.y * ::threadIdx.z);
}
inline unsigned lane_id() { return thread_rank() % 32; }
// A shuffle's segment of `width` lanes, a power of two from 1 to 32 (CUDA leaves another width's
// result undefined; the emu stops the kernel and says so): where the running lane's starts. A lane
// whose source lies outside its segment keeps its own value.
[[noreturn]] void bad_shuffle_width(int width, const char* file, int line);
inline void check_shuffle_width(int width, const char* file, int line) {
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0) bad_shuffle_width(width, file, line);
}
inline int segment_start(int width, const char* file, int line) {
  check_shuffle_width(width, file, line);
  return static_cast<int>(lane_id()) & -width;
}
inline bool outside_segment(int src_lane, int segment, int width) {
  return src_lane < segment || src_lane >= segment + width;
}
// A value of any size moves in 8-byte pieces, one exchange each (as cooperative groups' shuffles
// of larger types do): the piece at byte `at` of a value, and the piece put back.
template <class T>
constexpr size_t piece_bytes(size_t at) {
  return sizeof(T) - at < 8 ? sizeof(T) - at : 8;
}
template <class T>
inline uint64_t piece_of(const T& value, size_t at) {
  uint64_t bits = 0;
  std::memcpy(&bits, reinterpret_cast<const char*>(&value) + at, piece_bytes<T>(at));
  return bits;
}
template <class T>
inline void put_piece(T& value, size_t at, uint64_t bits) {
  std::memcpy(reinterpret_cast<char*>(&value) + at, &bits, piece_bytes<T>(at));
}
template <class T>
inline T shuffle(unsigned mask, T var, int src_lane, int width, const char* file, int line) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffles move trivially copyable values");
  const bool outside = outside_segment(src_lane, segment_start(width, file, line), width);
  T out = var;
  for (size_t at = 0; at < sizeof(T); at += 8) {
    const uint64_t* lanes = warp_exchange(mask, piece_of(var, at), file, line);
    if (!outside) put_piece(out, at, lanes[src_lane]);
  }
  return out;
}
}  // namespace cudalab::emu

// The lane each shuffle reads, for the running lane.
namespace cudalab::emu::shuffle_source {
inline int lane() { return static_cast<int>(lane_id()); }
inline int idx(int src_lane, int width) { return (lane() & -width) + (src_lane & (width - 1)); }
inline int down(unsigned delta) { return lane() + static_cast<int>(delta); }
inline int up(unsigned delta) { return lane() - static_cast<int>(delta); }
inline int xor_(int lane_mask) { return lane() ^ lane_mask; }
}  // namespace cudalab::emu::shuffle_source

template <class T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cudalab::emu::shuffle(mask, var, cudalab::emu::shuffle_source::idx(srcLane, width), width,
                               file, line);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cudalab::emu::shuffle(mask, var, cudalab::emu::shuffle_source::down(delta), width, file,
                               line);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cudalab::emu::shuffle(mask, var, cudalab::emu::shuffle_source::up(delta), width, file,
                               line);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize,
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cudalab::emu::shuffle(mask, var, cudalab::emu::shuffle_source::xor_(laneMask), width, file,
                               line);
}
// Votes and __syncwarp, each as what its lane publishes (`mine`, to the lanes of `mask`) and what
// it returns from what its warp's lanes published (`lanes`), made by on_fibers. Only the lanes that
// exist take part (a block's last warp may have fewer than 32; a mask may name the others, as a
// full mask often does).
namespace cudalab::emu::warp_calls {
// The lanes that exist of the warp whose first thread is `first`, in a block of `threads`.
inline unsigned lanes_that_exist(unsigned threads, unsigned first) {
  return threads - first >= 32 ? 0xffffffffu : (1u << (threads - first)) - 1;
}
inline unsigned existing_lanes() {
  return lanes_that_exist(::blockDim.x * ::blockDim.y * ::blockDim.z, thread_rank() / 32 * 32);
}
// Calls f(lane) for each lane of `mask` that exists.
template <class F>
inline void each_lane(unsigned mask, F f) {
  for (unsigned lanes = mask & existing_lanes(); lanes != 0; lanes &= lanes - 1)
    f(static_cast<unsigned>(__builtin_ctz(lanes)));
}
struct SyncWarp {
  unsigned mask;
  uint64_t mine = 0;
  void result(const uint64_t*) const {}
};
struct Ballot {
  unsigned mask;
  uint64_t mine;
  unsigned result(const uint64_t* lanes) const {
    unsigned bits = 0;
    each_lane(mask, [&](unsigned lane) { bits |= lanes[lane] != 0 ? 1u << lane : 0u; });
    return bits;
  }
};
struct Any : Ballot {
  int result(const uint64_t* lanes) const { return Ballot::result(lanes) != 0; }
};
struct All : Ballot {
  int result(const uint64_t* lanes) const {
    return Ballot::result(lanes) == (mask & existing_lanes());
  }
};
struct MatchAny {
  unsigned mask;
  uint64_t mine;
  unsigned result(const uint64_t* lanes) const {
    unsigned bits = 0;
    each_lane(mask, [&](unsigned lane) { bits |= lanes[lane] == mine ? 1u << lane : 0u; });
    return bits;
  }
};
// __reduce_*_sync (compute capability 8.0): every lane of the mask gets op of their values.
template <class T, T (*op)(T, T)>
struct Reduce {
  unsigned mask;
  uint64_t mine;
  T result(const uint64_t* lanes) const {
    bool first = true;
    T r{};
    each_lane(mask, [&](unsigned lane) {
      const T v = static_cast<T>(lanes[lane]);
      r = first ? v : op(r, v);
      first = false;
    });
    return r;
  }
};
template <class T>
T add(T a, T b) {
  return a + b;
}
inline unsigned bit_and(unsigned a, unsigned b) { return a & b; }
inline unsigned bit_or(unsigned a, unsigned b) { return a | b; }
inline unsigned bit_xor(unsigned a, unsigned b) { return a ^ b; }

// The call on fibers: the lane publishes, waits for its warp, and reads.
template <class Call>
inline auto on_fibers(Call call, const char* file, int line) {
  return call.result(warp_exchange(call.mask, call.mine, file, line));
}
}  // namespace cudalab::emu::warp_calls

inline unsigned __ballot_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  return on_fibers(cudalab::emu::warp_calls::Ballot{mask, predicate != 0}, file, line);
}
inline int __any_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return on_fibers(cudalab::emu::warp_calls::Any{{mask, predicate != 0}}, file, line);
}
inline int __all_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return on_fibers(cudalab::emu::warp_calls::All{{mask, predicate != 0}}, file, line);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  on_fibers(cudalab::emu::warp_calls::SyncWarp{mask}, file, line);
}
inline unsigned __match_any_sync(unsigned mask, unsigned long long value,
                                 const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return on_fibers(cudalab::emu::warp_calls::MatchAny{mask, value}, file, line);
}
// (Each reduction's types and operation (min and max: the device API's above), once.)
// clang-format off
#define CUDALAB_WARP_REDUCTIONS(X)                                                        \
  X(add, unsigned, cudalab::emu::warp_calls::add<unsigned>)                               \
  X(add, int, cudalab::emu::warp_calls::add<int>)                                         \
  X(min, unsigned, ::min) X(min, int, ::min) X(max, unsigned, ::max) X(max, int, ::max)   \
  X(and, unsigned, cudalab::emu::warp_calls::bit_and)                                     \
  X(or, unsigned, cudalab::emu::warp_calls::bit_or)                                       \
  X(xor, unsigned, cudalab::emu::warp_calls::bit_xor)
// clang-format on
#define CUDALAB_WARP_REDUCE(what, T, op)                                                          \
  inline T __reduce_##what##_sync(unsigned mask, T value, const char* file = __builtin_FILE(),    \
                                  int line = __builtin_LINE()) {                                  \
    return on_fibers(cudalab::emu::warp_calls::Reduce<T, op>{mask, static_cast<uint64_t>(value)}, \
                     file, line);                                                                 \
  }
CUDALAB_WARP_REDUCTIONS(CUDALAB_WARP_REDUCE)
#undef CUDALAB_WARP_REDUCE

namespace cudalab::emu {
// __threadfence(): orders this thread's writes before its later ones, for every block; the race
// check between blocks knows it (a write after another block's fence and an atomic is ordered).
void thread_fence();
}  // namespace cudalab::emu
inline void __threadfence() { cudalab::emu::thread_fence(); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// The lanes of the running thread's warp that exist (emu cannot tell which ones diverged).
inline unsigned __activemask() { return cudalab::emu::warp_calls::existing_lanes(); }

// Atomics: the GPU's read-modify-write operations, returning the old value. In checked code each
// becomes a call of its hook (hooks.cpp), which names the atomic's line by its return address; the
// result passes through not_last() so that the call is never a kernel's last act (a jump to the
// hook then, and the line named would be the launch's).
namespace cudalab::emu::detail {
template <class T>
inline T not_last(T v) {
  asm volatile("" : "+r"(v));
  return v;
}
}  // namespace cudalab::emu::detail
#define CUDALAB_INTEGER_ATOMICS(T)                                                           \
  inline T atomicAdd(T* a, T v) {                                                            \
    return cudalab::emu::detail::not_last(__atomic_fetch_add(a, v, __ATOMIC_RELAXED));       \
  }                                                                                          \
  inline T atomicSub(T* a, T v) {                                                            \
    return cudalab::emu::detail::not_last(__atomic_fetch_sub(a, v, __ATOMIC_RELAXED));       \
  }                                                                                          \
  inline T atomicExch(T* a, T v) {                                                           \
    return cudalab::emu::detail::not_last(__atomic_exchange_n(a, v, __ATOMIC_RELAXED));      \
  }                                                                                          \
  inline T atomicAnd(T* a, T v) {                                                            \
    return cudalab::emu::detail::not_last(__atomic_fetch_and(a, v, __ATOMIC_RELAXED));       \
  }                                                                                          \
  inline T atomicOr(T* a, T v) {                                                             \
    return cudalab::emu::detail::not_last(__atomic_fetch_or(a, v, __ATOMIC_RELAXED));        \
  }                                                                                          \
  inline T atomicXor(T* a, T v) {                                                            \
    return cudalab::emu::detail::not_last(__atomic_fetch_xor(a, v, __ATOMIC_RELAXED));       \
  }                                                                                          \
  inline T atomicMin(T* a, T v) {                                                            \
    return cudalab::emu::detail::atomic_update(a, [v](T old) { return v < old ? v : old; }); \
  }                                                                                          \
  inline T atomicMax(T* a, T v) {                                                            \
    return cudalab::emu::detail::atomic_update(a, [v](T old) { return v > old ? v : old; }); \
  }                                                                                          \
  inline T atomicCAS(T* a, T compare, T v) {                                                 \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);  \
    return compare;                                                                          \
  }
CUDALAB_INTEGER_ATOMICS(int)
CUDALAB_INTEGER_ATOMICS(unsigned int)
CUDALAB_INTEGER_ATOMICS(unsigned long long)
#undef CUDALAB_INTEGER_ATOMICS
inline long long atomicMin(long long* a, long long v) {
  return cudalab::emu::detail::atomic_update(a, [v](long long old) { return v < old ? v : old; });
}
inline long long atomicMax(long long* a, long long v) {
  return cudalab::emu::detail::atomic_update(a, [v](long long old) { return v > old ? v : old; });
}
inline float atomicAdd(float* a, float v) {
  return cudalab::emu::detail::atomic_update(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
  return cudalab::emu::detail::atomic_update(a, [v](double old) { return old + v; });
}
inline float atomicExch(float* a, float v) {
  float old;
  __atomic_exchange(a, &v, &old, __ATOMIC_RELAXED);
  return old;
}
inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
  return cudalab::emu::detail::atomic_update(
      a, [limit](unsigned int old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
  return cudalab::emu::detail::atomic_update(
      a, [limit](unsigned int old) { return (old == 0 || old > limit) ? limit : old - 1; });
}

// The _block and _system scopes are the same operation on one CPU.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

namespace cudalab::emu {
// A feature the emu does not model: says what, and stops the program.
[[noreturn]] void unsupported(const char* what);
// A failed assert(): in a kernel, stops the launch with cudaErrorAssert; on the host, aborts.
[[noreturn]] void assert_failed(const char* expression, const char* file, int line,
                                const char* function);
// __trap(): in a kernel, stops the launch with cudaErrorLaunchFailure, as a GPU's trap does.
[[noreturn]] void trapped(const char* file, int line);
inline int block_threads() { return static_cast<int>(::blockDim.x * ::blockDim.y * ::blockDim.z); }
}  // namespace cudalab::emu
#define __trap() ::cudalab::emu::trapped(__FILE__, __LINE__)

// Special registers that inline PTX reads, e.g. asm("mov.u32 %0, %%laneid;" : "=r"(lane)): the
// translator turns such a read into a call of the function of the register's name. Any other
// inline assembly is refused when the file is translated.
namespace cudalab::emu::ptx {
inline unsigned laneid() { return lane_id(); }
inline unsigned warpid() { return thread_rank() / 32; }
inline unsigned lanemask_eq() { return 1u << laneid(); }
inline unsigned lanemask_lt() { return lanemask_eq() - 1; }
inline unsigned lanemask_le() { return lanemask_lt() | lanemask_eq(); }
inline unsigned lanemask_gt() { return ~lanemask_le(); }
inline unsigned lanemask_ge() { return ~lanemask_lt(); }
inline unsigned clock() { return static_cast<unsigned>(clock64()); }
inline unsigned long long clock64() { return static_cast<unsigned long long>(::clock64()); }
unsigned long long globaltimer();  // nanoseconds, as the GPU's global timer counts (clocks.cpp)
// Instructions of one operand (asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(x))).
inline unsigned bfind(unsigned x) { return x == 0 ? 0xFFFFFFFFu : 31u - __clz(x); }
inline unsigned popc(unsigned x) { return __popc(x); }
inline unsigned brev(unsigned x) { return __brev(x); }
inline unsigned clz(unsigned x) { return __clz(x); }
}  // namespace cudalab::emu::ptx
