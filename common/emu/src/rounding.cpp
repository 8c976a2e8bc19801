// Directed rounding for the intrinsics (__fadd_rd, __float2int_ru, ...).
//
// The algorithm. An addition, subtraction, multiplication, division, reciprocal or square root is
// done to nearest, and the exact error of that result is found with one more exact operation:
// TwoSum's `(a - (s - bb)) + (b - bb)` for a sum, `fma(a, b, -p)` for a product, the remainder
// `fma(-q, b, a)` for a quotient and `fma(-r, r, a)` for a root (Knuth; Boldo and Muller). The
// error's sign says on which side of the exact value the nearest result lies, and the directed
// result is that one or its neighbour toward the mode's side (std::nextafter). These exact
// operations need no change of the processor's rounding mode, which costs more than the arithmetic
// itself (fesetround and fegetround, twice per operation).
//
// Limitations: where the error might not be exact or the result's sign of zero depends on the mode
// (results and operands near the smallest normal numbers or near overflow, zeros, infinities,
// NaNs) and for fma, integral rounding of other kinds and conversions, the operation is done
// between setting the rounding mode and restoring it. This file is compiled with -frounding-math
// so that the compiler neither folds nor moves the arithmetic across the change.
#include <cfenv>
#include <cmath>
#include <limits>

#include "cudalab/emu/intrinsics.h"

namespace cudalab::emu {
namespace {
template <class T>
T apply(char op, T a, T b, T c) {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
    case 'f':
      return std::fma(a, b, c);
    case 'r':
      return T(1) / a;
    case 's':
      return std::sqrt(a);
    case 'n':
      return std::nearbyint(a);
  }
  return a;
}
class Mode {
 public:
  explicit Mode(int mode) : old_(std::fegetround()) { std::fesetround(mode); }
  ~Mode() { std::fesetround(old_); }

 private:
  int old_;
};

// Whether x is far enough from underflow and overflow for the exact errors above: at least
// 2^(emin + 2 * digits) and at most a quarter of the largest finite number.
template <class T>
bool well_inside(T x) {
  using limits = std::numeric_limits<T>;
  const T smallest = std::ldexp(T(1), limits::min_exponent + 2 * limits::digits);
  const T magnitude = std::fabs(x);
  return magnitude >= smallest && magnitude <= limits::max() / 4;
}

// `nearest` (the operation rounded to nearest) rounded in `mode` instead, given the sign of the
// exact value minus `nearest`.
template <class T>
T directed(int mode, T nearest, T error) {
  constexpr T kInfinity = std::numeric_limits<T>::infinity();
  if (error == 0 || mode == FE_TONEAREST) return nearest;
  if (mode == FE_DOWNWARD) return error < 0 ? std::nextafter(nearest, -kInfinity) : nearest;
  if (mode == FE_UPWARD) return error > 0 ? std::nextafter(nearest, kInfinity) : nearest;
  return (nearest > 0) == (error < 0) ? std::nextafter(nearest, T(0)) : nearest;  // toward zero
}

// The operation in `mode` by the exact error of its nearest result, or false where that is not
// known to be exact (then the caller sets the mode).
template <class T>
bool by_exact_error(int mode, char op, T a, T b, T& result) {
  if (op == '-') return by_exact_error(mode, '+', a, -b, result);
  if (op == 'r') return by_exact_error(mode, '/', T(1), a, result);
  if (!well_inside(a)) return false;
  switch (op) {
    case '+': {
      if (!well_inside(b)) return false;
      const T sum = a + b;
      if (!well_inside(sum)) return false;
      const T bb = sum - a;
      result = directed(mode, sum, (a - (sum - bb)) + (b - bb));
      return true;
    }
    case '*': {
      if (!well_inside(b)) return false;
      const T product = a * b;
      if (!well_inside(product)) return false;
      result = directed(mode, product, std::fma(a, b, -product));
      return true;
    }
    case '/': {
      if (!well_inside(b)) return false;
      const T quotient = a / b;
      if (!well_inside(quotient)) return false;
      const T remainder = std::fma(-quotient, b, a);  // a - quotient * b, exactly
      result = directed(mode, quotient, b > 0 ? remainder : -remainder);
      return true;
    }
    case 's': {
      if (a < 0) return false;
      const T root = std::sqrt(a);
      result = directed(mode, root, std::fma(-root, root, a));
      return true;
    }
  }
  return false;
}

template <class T>
T rounded_in(int mode, char op, T a, T b, T c) {
  T result;
  if (op == 'n') {
    switch (mode) {
      case FE_DOWNWARD:
        return std::floor(a);
      case FE_UPWARD:
        return std::ceil(a);
      case FE_TOWARDZERO:
        return std::trunc(a);
    }
  } else if (by_exact_error(mode, op, a, b, result)) {
    return result;
  }
  Mode m(mode);
  return apply(op, a, b, c);
}
}  // namespace

float rounded(int mode, char op, float a, float b, float c) {
  return rounded_in(mode, op, a, b, c);
}
double rounded(int mode, char op, double a, double b, double c) {
  return rounded_in(mode, op, a, b, c);
}
float narrowed(int mode, double a) {
  Mode m(mode);
  return static_cast<float>(a);
}
float from_integer(int mode, long long a) {
  Mode m(mode);
  return static_cast<float>(a);
}
float from_unsigned(int mode, unsigned long long a) {
  Mode m(mode);
  return static_cast<float>(a);
}
}  // namespace cudalab::emu
