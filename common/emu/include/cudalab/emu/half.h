// Half precision (cuda_fp16.h): __half and __half2 with CUDA's conversions, arithmetic and
// comparisons. A __half holds the IEEE binary16 bits; arithmetic is done in float and rounded to
// nearest even on the way back, which is what a GPU's half instructions give for one operation.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cudalab/emu/device.h"  // detail::atomic_update
#include "cudalab/emu/vector_types.h"

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};

struct alignas(2) __half {
  unsigned short x;
  __half() = default;
  __half(float f) : x(from_float(f)) {}
  __half(double f) : x(from_float(static_cast<float>(f))) {}
  __half(int i) : x(from_float(static_cast<float>(i))) {}
  __half(__half_raw r) : x(r.x) {}
  operator float() const {
    _Float16 h;
    std::memcpy(&h, &x, 2);
    return static_cast<float>(h);
  }
  operator __half_raw() const { return {x}; }
  static unsigned short from_float(float f) {
    const _Float16 h = static_cast<_Float16>(f);  // rounds to nearest even
    unsigned short bits;
    std::memcpy(&bits, &h, 2);
    return bits;
  }
  __half& operator+=(__half o) { return *this = __half(float(*this) + float(o)); }
  __half& operator-=(__half o) { return *this = __half(float(*this) - float(o)); }
  __half& operator*=(__half o) { return *this = __half(float(*this) * float(o)); }
  __half& operator/=(__half o) { return *this = __half(float(*this) / float(o)); }
};
struct alignas(4) __half2 {
  __half x, y;
  __half2() = default;
  __half2(__half a, __half b) : x(a), y(b) {}
  __half2(__half2_raw r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
};
typedef __half half;
typedef __half2 half2;

inline __half operator+(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half operator-(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half operator*(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half operator/(__half a, __half b) { return __half(float(a) / float(b)); }
inline __half operator-(__half a) { return __half(-float(a)); }
inline bool operator==(__half a, __half b) { return float(a) == float(b); }
inline bool operator!=(__half a, __half b) { return float(a) != float(b); }
inline bool operator<(__half a, __half b) { return float(a) < float(b); }
inline bool operator>(__half a, __half b) { return float(a) > float(b); }
inline bool operator<=(__half a, __half b) { return float(a) <= float(b); }
inline bool operator>=(__half a, __half b) { return float(a) >= float(b); }

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __half __int2half_rn(int i) { return __half(static_cast<float>(i)); }
inline int __half2int_rn(__half h) { return static_cast<int>(std::nearbyint(float(h))); }
inline int __half2int_rz(__half h) { return static_cast<int>(float(h)); }
inline __half2 __float2half2_rn(float f) { return {__half(f), __half(f)}; }
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __half2 __float22half2_rn(float2 f) { return {__half(f.x), __half(f.y)}; }
inline float2 __half22float2(__half2 h) { return {float(h.x), float(h.y)}; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
inline __half2 __half2half2(__half a) { return {a, a}; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return {a.x, b.x}; }
inline __half2 __highs2half2(__half2 a, __half2 b) { return {a.y, b.y}; }
inline short __half_as_short(__half h) { return static_cast<short>(h.x); }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline __half __short_as_half(short s) { return __half_raw{static_cast<unsigned short>(s)}; }
inline __half __ushort_as_half(unsigned short s) { return __half_raw{s}; }

inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hneg(__half a) { return -a; }
inline __half __habs(__half a) { return __half(std::fabs(float(a))); }
inline __half __hfma(__half a, __half b, __half c) {
  return __half(std::fma(float(a), float(b), float(c)));
}
inline __half __hmax(__half a, __half b) { return a < b ? b : a; }
inline __half __hmin(__half a, __half b) { return b < a ? b : a; }
inline bool __heq(__half a, __half b) { return a == b; }
inline bool __hne(__half a, __half b) { return a != b; }
inline bool __hlt(__half a, __half b) { return a < b; }
inline bool __hle(__half a, __half b) { return a <= b; }
inline bool __hgt(__half a, __half b) { return a > b; }
inline bool __hge(__half a, __half b) { return a >= b; }
inline bool __hisnan(__half a) { return std::isnan(float(a)); }
inline bool __hisinf(__half a) { return std::isinf(float(a)); }
inline __half hsqrt(__half a) { return __half(std::sqrt(float(a))); }
inline __half hrsqrt(__half a) { return __half(1.0f / std::sqrt(float(a))); }
inline __half hexp(__half a) { return __half(std::exp(float(a))); }
inline __half hlog(__half a) { return __half(std::log(float(a))); }
inline __half hsin(__half a) { return __half(std::sin(float(a))); }
inline __half hcos(__half a) { return __half(std::cos(float(a))); }
inline __half hfloor(__half a) { return __half(std::floor(float(a))); }
inline __half hceil(__half a) { return __half(std::ceil(float(a))); }

#define CUDALAB_HALF2_OP(name, op) \
  inline __half2 name(__half2 a, __half2 b) { return {op(a.x, b.x), op(a.y, b.y)}; }
CUDALAB_HALF2_OP(__hadd2, __hadd)
CUDALAB_HALF2_OP(__hsub2, __hsub)
CUDALAB_HALF2_OP(__hmul2, __hmul)
CUDALAB_HALF2_OP(__h2div, __hdiv)
CUDALAB_HALF2_OP(__hmax2, __hmax)
CUDALAB_HALF2_OP(__hmin2, __hmin)
#undef CUDALAB_HALF2_OP
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __half2 __hneg2(__half2 a) { return {-a.x, -a.y}; }
inline __half2 __habs2(__half2 a) { return {__habs(a.x), __habs(a.y)}; }
inline __half2 h2sqrt(__half2 a) { return {hsqrt(a.x), hsqrt(a.y)}; }
inline __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
inline __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
inline __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
inline __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
inline __half2& operator+=(__half2& a, __half2 b) { return a = a + b; }
inline __half2& operator*=(__half2& a, __half2 b) { return a = a * b; }

inline __half atomicAdd(__half* address, __half value) {
  return cudalab::emu::detail::atomic_update(address, [value](__half old) { return old + value; });
}
