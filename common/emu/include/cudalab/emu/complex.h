// CUDA's complex numbers (cuComplex.h): cuFloatComplex is a float2 (x the real part, y the
// imaginary), cuDoubleComplex a double2, with the header's functions for host and device code.
// Division and the absolute value scale their operands as CUDA's header does, so that neither
// overflows nor underflows where the result is representable: (1e30 + 1e30i) / (1e30 + 1e30i) is 1,
// |3e30 + 4e30i| is 5e30. As everywhere on the emu, the host compiler decides contraction into
// fused multiply-adds (docs/design.md), so a product may differ from a GPU's in its last bit.
#pragma once

#include <cfloat>
#include <cmath>

#include "cudalab/emu/vector_types.h"

using cuFloatComplex = float2;
using cuDoubleComplex = double2;
using cuComplex = cuFloatComplex;

namespace cudalab::emu::complex {

// |re + im i| as v * sqrt(1 + (w / v)^2), v the larger magnitude and w the smaller; v + w where
// v is 0 or either is infinite or NaN.
template <class T>
inline T magnitude(T re, T im, T largest) {
  const T a = std::fabs(re), b = std::fabs(im);
  const T v = a > b ? a : b, w = a > b ? b : a;
  if (v == T(0) || v > largest || w > largest) return v + w;
  const T t = w / v;
  return v * std::sqrt(T(1) + t * t);
}

// (x.re + x.im i) / (y.re + y.im i), both scaled by 1 / (|y.re| + |y.im|) first.
template <class T, class V>
inline V quotient(V x, V y) {
  const T scale = T(1) / (std::fabs(y.x) + std::fabs(y.y));
  const T xr = x.x * scale, xi = x.y * scale, yr = y.x * scale, yi = y.y * scale;
  const T norm = T(1) / (yr * yr + yi * yi);
  return {(xr * yr + xi * yi) * norm, (xi * yr - xr * yi) * norm};
}

// x * y.
template <class V>
inline V product(V x, V y) {
  return {x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x};
}

// x * y + d, each part's sum made in the order re: (x.re y.re + d.re) - x.im y.im,
// im: (x.re y.im + d.im) + x.im y.re.
template <class V>
inline V fused(V x, V y, V d) {
  return {x.x * y.x + d.x - x.y * y.y, x.x * y.y + d.y + x.y * y.x};
}

}  // namespace cudalab::emu::complex

inline float cuCrealf(cuFloatComplex x) { return x.x; }
inline float cuCimagf(cuFloatComplex x) { return x.y; }
inline cuFloatComplex make_cuFloatComplex(float re, float im) { return {re, im}; }
inline cuFloatComplex cuConjf(cuFloatComplex x) { return {x.x, -x.y}; }
inline cuFloatComplex cuCaddf(cuFloatComplex x, cuFloatComplex y) { return {x.x + y.x, x.y + y.y}; }
inline cuFloatComplex cuCsubf(cuFloatComplex x, cuFloatComplex y) { return {x.x - y.x, x.y - y.y}; }
inline cuFloatComplex cuCmulf(cuFloatComplex x, cuFloatComplex y) {
  return cudalab::emu::complex::product(x, y);
}
inline cuFloatComplex cuCdivf(cuFloatComplex x, cuFloatComplex y) {
  return cudalab::emu::complex::quotient<float>(x, y);
}
inline float cuCabsf(cuFloatComplex x) {
  return cudalab::emu::complex::magnitude(x.x, x.y, FLT_MAX);
}

inline double cuCreal(cuDoubleComplex x) { return x.x; }
inline double cuCimag(cuDoubleComplex x) { return x.y; }
inline cuDoubleComplex make_cuDoubleComplex(double re, double im) { return {re, im}; }
inline cuDoubleComplex cuConj(cuDoubleComplex x) { return {x.x, -x.y}; }
inline cuDoubleComplex cuCadd(cuDoubleComplex x, cuDoubleComplex y) {
  return {x.x + y.x, x.y + y.y};
}
inline cuDoubleComplex cuCsub(cuDoubleComplex x, cuDoubleComplex y) {
  return {x.x - y.x, x.y - y.y};
}
inline cuDoubleComplex cuCmul(cuDoubleComplex x, cuDoubleComplex y) {
  return cudalab::emu::complex::product(x, y);
}
inline cuDoubleComplex cuCdiv(cuDoubleComplex x, cuDoubleComplex y) {
  return cudalab::emu::complex::quotient<double>(x, y);
}
inline double cuCabs(cuDoubleComplex x) {
  return cudalab::emu::complex::magnitude(x.x, x.y, DBL_MAX);
}

inline cuComplex make_cuComplex(float re, float im) { return {re, im}; }
inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex x) { return {x.x, x.y}; }
inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex x) {
  return {static_cast<float>(x.x), static_cast<float>(x.y)};
}

inline cuFloatComplex cuCfmaf(cuFloatComplex x, cuFloatComplex y, cuFloatComplex d) {
  return cudalab::emu::complex::fused(x, y, d);
}
inline cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
  return cudalab::emu::complex::fused(x, y, d);
}
