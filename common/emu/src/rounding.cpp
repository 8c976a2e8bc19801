// Directed rounding for the intrinsics (__fadd_rd, __float2int_ru, ...): each operation is done
// here, between setting the rounding mode and restoring it, in a file compiled with
// -frounding-math so that the compiler neither folds nor moves the arithmetic across the change.
#include <cfenv>
#include <cmath>

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
}  // namespace

float rounded(int mode, char op, float a, float b, float c) {
  Mode m(mode);
  return apply(op, a, b, c);
}
double rounded(int mode, char op, double a, double b, double c) {
  Mode m(mode);
  return apply(op, a, b, c);
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
