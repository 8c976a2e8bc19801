// Brain floating point (cuda_bf16.h): __nv_bfloat16 and __nv_bfloat162 with CUDA's conversions,
// arithmetic and comparisons. A __nv_bfloat16 holds the upper 16 bits of a float; a float becomes
// one rounded to nearest even, and a NaN becomes 0x7FFF, as CUDA's __float2bfloat16 does.
// Arithmetic is done in float and rounded on the way back: for one addition, subtraction,
// multiplication, division or square root, float's 24 bits make that the correctly rounded result
// a GPU's bf16 instructions give (a fused multiply-add is rounded twice, to float then to bf16).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cudalab/emu/device.h"  // detail::atomic_update
#include "cudalab/emu/vector_types.h"

struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};

struct alignas(2) __nv_bfloat16 {
  unsigned short x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : x(from_float(f)) {}
  __nv_bfloat16(double f) : x(from_float(static_cast<float>(f))) {}
  __nv_bfloat16(int i) : x(from_float(static_cast<float>(i))) {}
  __nv_bfloat16(__nv_bfloat16_raw r) : x(r.x) {}
  operator float() const {
    const uint32_t bits = static_cast<uint32_t>(x) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  operator __nv_bfloat16_raw() const { return {x}; }
  static unsigned short from_float(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;  // NaN
    const uint32_t rest = bits & 0xFFFFu, kept = bits >> 16;
    return static_cast<unsigned short>(kept + (rest > 0x8000u || (rest == 0x8000u && (kept & 1u))));
  }
  __nv_bfloat16& operator+=(__nv_bfloat16 o) {
    return *this = __nv_bfloat16(float(*this) + float(o));
  }
  __nv_bfloat16& operator-=(__nv_bfloat16 o) {
    return *this = __nv_bfloat16(float(*this) - float(o));
  }
  __nv_bfloat16& operator*=(__nv_bfloat16 o) {
    return *this = __nv_bfloat16(float(*this) * float(o));
  }
  __nv_bfloat16& operator/=(__nv_bfloat16 o) {
    return *this = __nv_bfloat16(float(*this) / float(o));
  }
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
  __nv_bfloat162(__nv_bfloat162_raw r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) + float(b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) - float(b); }
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) * float(b); }
inline __nv_bfloat16 operator/(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) / float(b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a) {
  return __nv_bfloat16_raw{static_cast<unsigned short>(a.x ^ 0x8000u)};
}
inline bool operator==(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) == float(b); }
inline bool operator!=(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) != float(b); }
inline bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) < float(b); }
inline bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) > float(b); }
inline bool operator<=(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) <= float(b); }
inline bool operator>=(__nv_bfloat16 a, __nv_bfloat16 b) { return float(a) >= float(b); }

inline __nv_bfloat16 __float2bfloat16(float f) { return f; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return f; }
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return __nv_bfloat16_raw{0x7FFF};
  return __nv_bfloat16_raw{static_cast<unsigned short>(bits >> 16)};
}
inline __nv_bfloat16 __double2bfloat16(double f) { return static_cast<float>(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }
inline __nv_bfloat16 __int2bfloat16_rn(int i) { return static_cast<float>(i); }
inline int __bfloat162int_rn(__nv_bfloat16 h) { return static_cast<int>(std::nearbyint(float(h))); }
inline int __bfloat162int_rz(__nv_bfloat16 h) { return static_cast<int>(float(h)); }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return {f, f}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {a, b}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return {f.x, f.y}; }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return {float(h.x), float(h.y)}; }
inline float __low2float(__nv_bfloat162 h) { return float(h.x); }
inline float __high2float(__nv_bfloat162 h) { return float(h.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return {a, a}; }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return {a.x, b.x}; }
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return {a.y, b.y}; }
inline short __bfloat16_as_short(__nv_bfloat16 h) { return static_cast<short>(h.x); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }
inline __nv_bfloat16 __short_as_bfloat16(short s) {
  return __nv_bfloat16_raw{static_cast<unsigned short>(s)};
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __nv_bfloat16_raw{s}; }

inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return a + b; }
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return a - b; }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return a * b; }
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) { return a / b; }
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return -a; }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) {
  return __nv_bfloat16_raw{static_cast<unsigned short>(a.x & 0x7FFFu)};
}
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return std::fma(float(a), float(b), float(c));
}
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return a < b ? b : a; }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return b < a ? b : a; }
inline bool __heq(__nv_bfloat16 a, __nv_bfloat16 b) { return a == b; }
inline bool __hne(__nv_bfloat16 a, __nv_bfloat16 b) { return a != b; }
inline bool __hlt(__nv_bfloat16 a, __nv_bfloat16 b) { return a < b; }
inline bool __hle(__nv_bfloat16 a, __nv_bfloat16 b) { return a <= b; }
inline bool __hgt(__nv_bfloat16 a, __nv_bfloat16 b) { return a > b; }
inline bool __hge(__nv_bfloat16 a, __nv_bfloat16 b) { return a >= b; }
inline bool __hisnan(__nv_bfloat16 a) { return std::isnan(float(a)); }
inline int __hisinf(__nv_bfloat16 a) { return std::isinf(float(a)) ? (a.x >> 15 ? -1 : 1) : 0; }
inline __nv_bfloat16 hsqrt(__nv_bfloat16 a) { return std::sqrt(float(a)); }
inline __nv_bfloat16 hrsqrt(__nv_bfloat16 a) { return 1.0f / std::sqrt(float(a)); }
inline __nv_bfloat16 hexp(__nv_bfloat16 a) { return std::exp(float(a)); }
inline __nv_bfloat16 hlog(__nv_bfloat16 a) { return std::log(float(a)); }
inline __nv_bfloat16 hsin(__nv_bfloat16 a) { return std::sin(float(a)); }
inline __nv_bfloat16 hcos(__nv_bfloat16 a) { return std::cos(float(a)); }
inline __nv_bfloat16 htanh(__nv_bfloat16 a) { return std::tanh(float(a)); }
inline __nv_bfloat16 hfloor(__nv_bfloat16 a) { return std::floor(float(a)); }
inline __nv_bfloat16 hceil(__nv_bfloat16 a) { return std::ceil(float(a)); }

#define CUDALAB_BF162_OP(name, op)                                 \
  inline __nv_bfloat162 name(__nv_bfloat162 a, __nv_bfloat162 b) { \
    return {op(a.x, b.x), op(a.y, b.y)};                           \
  }
CUDALAB_BF162_OP(__hadd2, __hadd)
CUDALAB_BF162_OP(__hsub2, __hsub)
CUDALAB_BF162_OP(__hmul2, __hmul)
CUDALAB_BF162_OP(__h2div, __hdiv)
CUDALAB_BF162_OP(__hmax2, __hmax)
CUDALAB_BF162_OP(__hmin2, __hmin)
#undef CUDALAB_BF162_OP
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return {-a.x, -a.y}; }
inline __nv_bfloat162 __habs2(__nv_bfloat162 a) { return {__habs(a.x), __habs(a.y)}; }
inline __nv_bfloat162 h2sqrt(__nv_bfloat162 a) { return {hsqrt(a.x), hsqrt(a.y)}; }
inline __nv_bfloat162 operator+(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator-(__nv_bfloat162 a, __nv_bfloat162 b) { return __hsub2(a, b); }
inline __nv_bfloat162 operator*(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }
inline __nv_bfloat162 operator/(__nv_bfloat162 a, __nv_bfloat162 b) { return __h2div(a, b); }
inline __nv_bfloat162& operator+=(__nv_bfloat162& a, __nv_bfloat162 b) { return a = a + b; }
inline __nv_bfloat162& operator*=(__nv_bfloat162& a, __nv_bfloat162 b) { return a = a * b; }

inline __nv_bfloat16 atomicAdd(__nv_bfloat16* address, __nv_bfloat16 value) {
  return cudalab::emu::detail::atomic_update(address,
                                             [value](__nv_bfloat16 old) { return old + value; });
}
// Each half of the pair is added atomically (as on a GPU, the pair is not one atomic operation).
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* address, __nv_bfloat162 value) {
  return {atomicAdd(&address->x, value.x), atomicAdd(&address->y, value.y)};
}
