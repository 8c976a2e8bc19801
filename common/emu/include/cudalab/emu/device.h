// Device-side built-ins of the emu backend: thread coordinates, barriers, atomics, math.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cudalab/emu/types.h"

namespace cudalab::emu {

// The coordinates of the GPU thread that runs now on this worker. The block scheduler rewrites
// threadIdx each time it switches threads; the other fields change once per block or launch.
struct Builtins {
  uint3 threadIdx{0, 0, 0};
  uint3 blockIdx{0, 0, 0};
  dim3 blockDim{};
  dim3 gridDim{};
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
char* shared_address(SharedSlot& slot, size_t bytes, size_t align);
template <class T>
inline T& shared(SharedSlot& slot) {
  return *reinterpret_cast<T*>(shared_address(slot, sizeof(T), alignof(T)));
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

// Warp-level primitives. Each lane publishes a value and waits for the lanes of the mask (the
// scheduler's warp barrier); then it reads what the others published.
namespace cudalab::emu {
const uint64_t* warp_exchange(unsigned mask, uint64_t value, const char* file, int line);
inline unsigned lane_id() {
  const auto& b = builtins;
  return (b.threadIdx.x + b.blockDim.x * (b.threadIdx.y + b.blockDim.y * b.threadIdx.z)) % 32;
}
template <class T>
inline T shuffle(unsigned mask, T var, int src_lane, int width, const char* file, int line) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  uint64_t mine = 0;
  std::memcpy(&mine, &var, sizeof(T));
  const uint64_t* lanes = warp_exchange(mask, mine, file, line);
  const int lane = static_cast<int>(lane_id()), segment = lane / width * width;
  if (src_lane < segment || src_lane >= segment + width) return var;  // outside its segment
  T out;
  std::memcpy(&out, &lanes[src_lane], sizeof(T));
  return out;
}
}  // namespace cudalab::emu

template <class T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const int lane = static_cast<int>(cudalab::emu::lane_id());
  return cudalab::emu::shuffle(mask, var, lane / width * width + srcLane % width, width, file,
                               line);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                          const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const int lane = static_cast<int>(cudalab::emu::lane_id());
  return cudalab::emu::shuffle(mask, var, lane + static_cast<int>(delta), width, file, line);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const int lane = static_cast<int>(cudalab::emu::lane_id());
  return cudalab::emu::shuffle(mask, var, lane - static_cast<int>(delta), width, file, line);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize,
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const int lane = static_cast<int>(cudalab::emu::lane_id());
  return cudalab::emu::shuffle(mask, var, lane ^ laneMask, width, file, line);
}
inline unsigned __ballot_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  const uint64_t* lanes = cudalab::emu::warp_exchange(mask, predicate != 0, file, line);
  unsigned bits = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if ((mask >> lane & 1u) && lanes[lane]) bits |= 1u << lane;
  return bits;
}
inline int __any_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return __ballot_sync(mask, predicate, file, line) != 0;
}
inline int __all_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return __ballot_sync(mask, predicate, file, line) == (mask & __ballot_sync(mask, 1, file, line));
}
inline void __syncwarp(unsigned mask = 0xffffffffu, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  cudalab::emu::warp_exchange(mask, 0, file, line);
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

// Atomics: the GPU's read-modify-write operations, returning the old value.
#define CUDALAB_INTEGER_ATOMICS(T)                                                           \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }       \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }       \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }     \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }       \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }         \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }       \
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

// The fast-math intrinsics compute the exact functions here; the GPU's are approximations.
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline int __mul24(int a, int b) { return a * b; }
inline unsigned int __umul24(unsigned int a, unsigned int b) { return a * b; }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
