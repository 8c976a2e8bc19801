// CUDA's device intrinsics beyond plain C++: cache-hinted loads and stores, bit casts, directed
// rounding, integer bit tricks and dot products, clocks and fast math. The CPU has no caches to
// steer or fast approximations to pick: hints are plain accesses and the fast functions are the
// exact ones.
#pragma once

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cudalab/emu/vector_types.h"

// ---- shifts as a GPU makes them ----------------------------------------------------------
// A GPU's shift instructions (PTX shl, shr) clamp the amount to the operand's width: a shift by
// the width or more (or by a negative amount, which they read as a large unsigned one) moves every
// bit out, leaving 0, or the sign of a negative number shifted right. C++ leaves such a shift
// undefined, and an x86 processor keeps the amount's low bits (1 << 32 is 1 there, 0 on a GPU).
// The translator writes device code's shifts by amounts that are not literals as these calls.
namespace cudalab::emu {
// Whether `amount` shifts every bit of a `P` out.
template <class P, class B>
constexpr bool shifts_out(B amount) {
  if constexpr (std::is_signed_v<B>)
    if (amount < 0) return true;
  return static_cast<unsigned long long>(amount) >= sizeof(P) * 8;
}
template <class A, class B>
constexpr auto shift_left(A a, B amount) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    using P = decltype(+a);
    return shifts_out<P>(amount) ? P(0) : static_cast<P>(a << amount);
  } else {
    return a << amount;
  }
}
template <class A, class B>
constexpr auto shift_right(A a, B amount) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    using P = decltype(+a);
    if (shifts_out<P>(amount)) return P(std::is_signed_v<P> && a < 0 ? -1 : 0);
    return static_cast<P>(a >> amount);
  } else {
    return a >> amount;
  }
}
template <class A, class B>
constexpr A& shift_left_assign(A& a, B amount) {
  if constexpr (std::is_integral_v<std::remove_cv_t<A>> && std::is_integral_v<B>)
    a = static_cast<std::remove_cv_t<A>>(shift_left(static_cast<std::remove_cv_t<A>>(a), amount));
  else
    a <<= amount;
  return a;
}
template <class A, class B>
constexpr A& shift_right_assign(A& a, B amount) {
  if constexpr (std::is_integral_v<std::remove_cv_t<A>> && std::is_integral_v<B>)
    a = static_cast<std::remove_cv_t<A>>(shift_right(static_cast<std::remove_cv_t<A>>(a), amount));
  else
    a >>= amount;
  return a;
}
}  // namespace cudalab::emu

// ---- loads and stores with cache hints ---------------------------------------------------
#define CUDALAB_LOAD(name)    \
  template <class T>          \
  inline T name(const T* p) { \
    return *p;                \
  }
#define CUDALAB_STORE(name)     \
  template <class T>            \
  inline void name(T* p, T v) { \
    *p = v;                     \
  }
CUDALAB_LOAD(__ldg)
CUDALAB_LOAD(__ldcg)
CUDALAB_LOAD(__ldca)
CUDALAB_LOAD(__ldcs)
CUDALAB_LOAD(__ldlu)
CUDALAB_LOAD(__ldcv)
CUDALAB_STORE(__stwb)
CUDALAB_STORE(__stcg)
CUDALAB_STORE(__stcs)
CUDALAB_STORE(__stwt)
#undef CUDALAB_LOAD
#undef CUDALAB_STORE

// ---- bit casts -----------------------------------------------------------------------------
namespace cudalab::emu {
template <class To, class From>
inline To bit_cast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
}  // namespace cudalab::emu
inline int __float_as_int(float x) { return cudalab::emu::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return cudalab::emu::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return cudalab::emu::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return cudalab::emu::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return cudalab::emu::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return cudalab::emu::bit_cast<double>(x); }
inline int __double2hiint(double x) { return static_cast<int>(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>(static_cast<unsigned long long>(hi) << 32 |
                                                     static_cast<unsigned>(lo)));
}

// ---- directed rounding: _rn to nearest, _rz toward zero, _ru up, _rd down ------------------
namespace cudalab::emu {
// One operation in a rounding mode (src/rounding.cpp): '+', '-', '*', '/', 'f' (fma), 'r' (1/a),
// 's' (sqrt), 'n' (to an integral value).
float rounded(int mode, char op, float a, float b = 0, float c = 0);
double rounded(int mode, char op, double a, double b = 0, double c = 0);
float narrowed(int mode, double a);
float from_integer(int mode, long long a);
float from_unsigned(int mode, unsigned long long a);
}  // namespace cudalab::emu
#define CUDALAB_ROUNDED(suffix, mode)                                                           \
  inline float __fadd_##suffix(float a, float b) {                                              \
    return cudalab::emu::rounded(mode, '+', a, b);                                              \
  }                                                                                             \
  inline float __fsub_##suffix(float a, float b) {                                              \
    return cudalab::emu::rounded(mode, '-', a, b);                                              \
  }                                                                                             \
  inline float __fmul_##suffix(float a, float b) {                                              \
    return cudalab::emu::rounded(mode, '*', a, b);                                              \
  }                                                                                             \
  inline float __fdiv_##suffix(float a, float b) {                                              \
    return cudalab::emu::rounded(mode, '/', a, b);                                              \
  }                                                                                             \
  inline float __fmaf_##suffix(float a, float b, float c) {                                     \
    return cudalab::emu::rounded(mode, 'f', a, b, c);                                           \
  }                                                                                             \
  inline float __frcp_##suffix(float a) { return cudalab::emu::rounded(mode, 'r', a); }         \
  inline float __fsqrt_##suffix(float a) { return cudalab::emu::rounded(mode, 's', a); }        \
  inline double __dadd_##suffix(double a, double b) {                                           \
    return cudalab::emu::rounded(mode, '+', a, b);                                              \
  }                                                                                             \
  inline double __dsub_##suffix(double a, double b) {                                           \
    return cudalab::emu::rounded(mode, '-', a, b);                                              \
  }                                                                                             \
  inline double __dmul_##suffix(double a, double b) {                                           \
    return cudalab::emu::rounded(mode, '*', a, b);                                              \
  }                                                                                             \
  inline double __ddiv_##suffix(double a, double b) {                                           \
    return cudalab::emu::rounded(mode, '/', a, b);                                              \
  }                                                                                             \
  inline double __fma_##suffix(double a, double b, double c) {                                  \
    return cudalab::emu::rounded(mode, 'f', a, b, c);                                           \
  }                                                                                             \
  inline double __dsqrt_##suffix(double a) { return cudalab::emu::rounded(mode, 's', a); }      \
  inline double __drcp_##suffix(double a) { return cudalab::emu::rounded(mode, 'r', a); }       \
  inline int __float2int_##suffix(float a) {                                                    \
    return static_cast<int>(cudalab::emu::rounded(mode, 'n', a));                               \
  }                                                                                             \
  inline unsigned __float2uint_##suffix(float a) {                                              \
    return static_cast<unsigned>(cudalab::emu::rounded(mode, 'n', a));                          \
  }                                                                                             \
  inline long long __float2ll_##suffix(float a) {                                               \
    return static_cast<long long>(cudalab::emu::rounded(mode, 'n', a));                         \
  }                                                                                             \
  inline int __double2int_##suffix(double a) {                                                  \
    return static_cast<int>(cudalab::emu::rounded(mode, 'n', a));                               \
  }                                                                                             \
  inline unsigned __double2uint_##suffix(double a) {                                            \
    return static_cast<unsigned>(cudalab::emu::rounded(mode, 'n', a));                          \
  }                                                                                             \
  inline long long __double2ll_##suffix(double a) {                                             \
    return static_cast<long long>(cudalab::emu::rounded(mode, 'n', a));                         \
  }                                                                                             \
  inline float __double2float_##suffix(double a) { return cudalab::emu::narrowed(mode, a); }    \
  inline float __int2float_##suffix(int a) { return cudalab::emu::from_integer(mode, a); }      \
  inline float __ll2float_##suffix(long long a) { return cudalab::emu::from_integer(mode, a); } \
  inline float __uint2float_##suffix(unsigned a) { return cudalab::emu::from_unsigned(mode, a); }
// clang-format off
CUDALAB_ROUNDED(rn, FE_TONEAREST)
CUDALAB_ROUNDED(rz, FE_TOWARDZERO)
CUDALAB_ROUNDED(ru, FE_UPWARD)
CUDALAB_ROUNDED(rd, FE_DOWNWARD)
// clang-format on
#undef CUDALAB_ROUNDED
inline double __int2double_rn(int a) { return a; }
inline double __uint2double_rn(unsigned a) { return a; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

// ---- integer bit tricks --------------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
  x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
  x = (x >> 4 & 0x0F0F0F0Fu) | (x & 0x0F0F0F0Fu) << 4;
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32 |
         __brev(static_cast<unsigned>(x >> 32));
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long bytes = static_cast<unsigned long long>(y) << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<unsigned>(bytes >> (8 * ((s >> (4 * i)) & 7)) & 0xFF) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = static_cast<unsigned long long>(hi) << 32 | lo;
  return static_cast<unsigned>((v << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = static_cast<unsigned long long>(hi) << 32 | lo;
  return static_cast<unsigned>(v >> (shift & 31));
}
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1);
}
inline unsigned __uhadd(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) + b) >> 1);
}
inline unsigned __urhadd(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) + b + 1) >> 1);
}
inline unsigned __sad(int a, int b, unsigned c) {
  return c + static_cast<unsigned>(a > b ? a - b : b - a);
}
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }

// ---- integer dot products (sm_61): four bytes of a by four of b, or two halves of a by two bytes
// of b (the low pair, _lo, or the high pair, _hi), summed into c; signed for int, unsigned else.
namespace cudalab::emu {
template <class Part, class Whole>
Part part(Whole w, int k) {  // the k-th piece of w's bytes, as the piece's type
  Part p;
  std::memcpy(&p, reinterpret_cast<const char*>(&w) + k * sizeof(Part), sizeof(Part));
  return p;
}
template <class Half, class Byte, class Whole>
Whole dot_pair(Whole a, Whole b, Whole c, int first_byte) {
  return c + static_cast<Whole>(part<Half>(a, 0) * part<Byte>(b, first_byte) +
                                part<Half>(a, 1) * part<Byte>(b, first_byte + 1));
}
}  // namespace cudalab::emu
inline int __dp4a(int a, int b, int c) {
  using cudalab::emu::part;
  for (int k = 0; k < 4; ++k) c += part<int8_t>(a, k) * part<int8_t>(b, k);
  return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  using cudalab::emu::part;
  for (int k = 0; k < 4; ++k) c += static_cast<unsigned>(part<uint8_t>(a, k) * part<uint8_t>(b, k));
  return c;
}
inline int __dp4a(char4 a, char4 b, int c) {
  return __dp4a(cudalab::emu::part<int>(a, 0), cudalab::emu::part<int>(b, 0), c);
}
inline unsigned __dp4a(uchar4 a, uchar4 b, unsigned c) {
  return __dp4a(cudalab::emu::part<unsigned>(a, 0), cudalab::emu::part<unsigned>(b, 0), c);
}
inline int __dp2a_lo(int a, int b, int c) {
  return cudalab::emu::dot_pair<int16_t, int8_t>(a, b, c, 0);
}
inline int __dp2a_hi(int a, int b, int c) {
  return cudalab::emu::dot_pair<int16_t, int8_t>(a, b, c, 2);
}
inline unsigned __dp2a_lo(unsigned a, unsigned b, unsigned c) {
  return cudalab::emu::dot_pair<uint16_t, uint8_t>(a, b, c, 0);
}
inline unsigned __dp2a_hi(unsigned a, unsigned b, unsigned c) {
  return cudalab::emu::dot_pair<uint16_t, uint8_t>(a, b, c, 2);
}
inline int __dp2a_lo(short2 a, char4 b, int c) {
  return __dp2a_lo(cudalab::emu::part<int>(a, 0), cudalab::emu::part<int>(b, 0), c);
}
inline int __dp2a_hi(short2 a, char4 b, int c) {
  return __dp2a_hi(cudalab::emu::part<int>(a, 0), cudalab::emu::part<int>(b, 0), c);
}
inline unsigned __dp2a_lo(ushort2 a, uchar4 b, unsigned c) {
  return __dp2a_lo(cudalab::emu::part<unsigned>(a, 0), cudalab::emu::part<unsigned>(b, 0), c);
}
inline unsigned __dp2a_hi(ushort2 a, uchar4 b, unsigned c) {
  return __dp2a_hi(cudalab::emu::part<unsigned>(a, 0), cudalab::emu::part<unsigned>(b, 0), c);
}

// ---- clocks: nanoseconds of the CPU's steady clock (the emulated device runs at 1 GHz) -------
long long clock64();  // (clocks.cpp)
void __nanosleep(unsigned ns);

// ---- fast math: the exact functions here; the GPU's are approximations ---------------------
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline double exp10(double x) { return std::pow(10.0, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x), *c = std::cos(x); }
inline void sincosf(float x, float* s, float* c) { *s = std::sin(x), *c = std::cos(x); }
inline void sincos(double x, double* s, double* c) { *s = std::sin(x), *c = std::cos(x); }
inline float sinpif(float x) { return static_cast<float>(std::sin(M_PI * x)); }
inline float cospif(float x) { return static_cast<float>(std::cos(M_PI * x)); }
inline double sinpi(double x) { return std::sin(M_PI * x); }
inline double cospi(double x) { return std::cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x), *c = cospif(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float rhypotf(float a, float b) { return 1.0f / std::hypot(a, b); }
inline float norm3df(float a, float b, float c) { return std::sqrt(a * a + b * b + c * c); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline float normcdff(float x) { return 0.5f * std::erfc(-x / std::sqrt(2.0f)); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float __frcp_rn_fast(float x) { return 1.0f / x; }

// ---- integer min and max by type (math_functions.h) -----------------------------------------
inline unsigned umin(unsigned a, unsigned b) { return b < a ? b : a; }
inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return b < a ? b : a; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
  return b < a ? b : a;
}
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
  return a < b ? b : a;
}

namespace cudalab::emu {
// clock() in device code (the translator renames it): the device's clock, like clock64().
inline long long device_clock() { return clock64(); }
}  // namespace cudalab::emu
