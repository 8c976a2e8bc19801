// CUDA's complex numbers (cuComplex.h) in device code, on both backends with the same
// expectations: every function against std::complex<double> on the host, and the scaled division
// and absolute value where a plain formula overflows or underflows.
#include <cuComplex.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "cudalab/cuda_check.h"

namespace {

// What one thread computes from its x, y and d: every function of the header, float and double.
struct Results {
  cuFloatComplex add, sub, mul, div, conj, fma, from_double;
  float abs, re, im;
  cuDoubleComplex add_d, sub_d, mul_d, div_d, conj_d, fma_d, from_float;
  double abs_d, re_d, im_d;
};

__global__ void complex_functions(const cuDoubleComplex* x, const cuDoubleComplex* y,
                                  const cuDoubleComplex* d, Results* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const cuFloatComplex xf = cuComplexDoubleToFloat(x[i]), yf = cuComplexDoubleToFloat(y[i]);
  const cuFloatComplex df =
      make_cuFloatComplex(static_cast<float>(cuCreal(d[i])), static_cast<float>(cuCimag(d[i])));
  Results r;
  r.add = cuCaddf(xf, yf);
  r.sub = cuCsubf(xf, yf);
  r.mul = cuCmulf(xf, yf);
  r.div = cuCdivf(xf, yf);
  r.conj = cuConjf(xf);
  r.fma = cuCfmaf(xf, yf, df);
  r.from_double = cuComplexDoubleToFloat(x[i]);
  r.abs = cuCabsf(xf);
  r.re = cuCrealf(xf);
  r.im = cuCimagf(xf);
  r.add_d = cuCadd(x[i], y[i]);
  r.sub_d = cuCsub(x[i], y[i]);
  r.mul_d = cuCmul(x[i], y[i]);
  r.div_d = cuCdiv(x[i], y[i]);
  r.conj_d = cuConj(x[i]);
  r.fma_d = cuCfma(x[i], y[i], d[i]);
  r.from_float = cuComplexFloatToDouble(make_cuComplex(1.5f, -2.5f));
  r.abs_d = cuCabs(x[i]);
  r.re_d = cuCreal(x[i]);
  r.im_d = cuCimag(x[i]);
  out[i] = r;
}

using Exact = std::complex<double>;

// `got` within `tolerance` of `want`, relative to |want| (absolute below 1).
void expect_near(Exact want, double got_re, double got_im, double tolerance, const char* what,
                 int i) {
  const double scale = std::max(1.0, std::abs(want));
  EXPECT_NEAR(got_re, want.real(), tolerance * scale) << what << ", element " << i;
  EXPECT_NEAR(got_im, want.imag(), tolerance * scale) << what << ", element " << i;
}
void expect_near(Exact want, cuFloatComplex got, const char* what, int i) {
  expect_near(want, got.x, got.y, 1e-5, what, i);
}
void expect_near(Exact want, cuDoubleComplex got, const char* what, int i) {
  expect_near(want, got.x, got.y, 1e-13, what, i);
}

TEST(ComplexNumbers, EveryFunctionAgainstADoubleReference) {
  static_assert(sizeof(cuFloatComplex) == 8 && alignof(cuFloatComplex) == 8);
  static_assert(sizeof(cuDoubleComplex) == 16 && alignof(cuDoubleComplex) == 16);
  const int n = 1000;  // four blocks of 256, the last one short
  const unsigned seed = 20261203;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> part(-4.0, 4.0);
  cuDoubleComplex *x, *y, *d;
  Results* out;
  CUDA_CHECK(cudaMallocManaged(&x, n * sizeof(cuDoubleComplex)));
  CUDA_CHECK(cudaMallocManaged(&y, n * sizeof(cuDoubleComplex)));
  CUDA_CHECK(cudaMallocManaged(&d, n * sizeof(cuDoubleComplex)));
  CUDA_CHECK(cudaMallocManaged(&out, n * sizeof(Results)));
  for (int i = 0; i < n; ++i) {
    // Parts exact in float, so that the float functions see the same numbers as the reference.
    const auto draw = [&] { return static_cast<double>(static_cast<float>(part(random))); };
    x[i] = make_cuDoubleComplex(draw(), draw());
    do y[i] = make_cuDoubleComplex(draw(), draw());
    while (std::abs(Exact(y[i].x, y[i].y)) < 0.5);  // (a quotient's error grows with 1 / |y|)
    d[i] = make_cuDoubleComplex(draw(), draw());
  }
  std::memset(static_cast<void*>(out), 0xFF, n * sizeof(Results));  // poison: NaNs
  complex_functions<<<(n + 255) / 256, 256>>>(x, y, d, out, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    const Exact a(x[i].x, x[i].y), b(y[i].x, y[i].y), c(d[i].x, d[i].y);
    const Results& r = out[i];
    expect_near(a + b, r.add, "cuCaddf", i);
    expect_near(a - b, r.sub, "cuCsubf", i);
    expect_near(a * b, r.mul, "cuCmulf", i);
    expect_near(a / b, r.div, "cuCdivf", i);
    expect_near(std::conj(a), r.conj, "cuConjf", i);
    expect_near(a * b + c, r.fma, "cuCfmaf", i);
    expect_near(a, r.from_double, "cuComplexDoubleToFloat", i);
    EXPECT_NEAR(r.abs, std::abs(a), 1e-5 * std::max(1.0, std::abs(a))) << "cuCabsf, element " << i;
    EXPECT_EQ(r.re, a.real());
    EXPECT_EQ(r.im, a.imag());
    expect_near(a + b, r.add_d, "cuCadd", i);
    expect_near(a - b, r.sub_d, "cuCsub", i);
    expect_near(a * b, r.mul_d, "cuCmul", i);
    expect_near(a / b, r.div_d, "cuCdiv", i);
    expect_near(std::conj(a), r.conj_d, "cuConj", i);
    expect_near(a * b + c, r.fma_d, "cuCfma", i);
    EXPECT_EQ(r.from_float.x, 1.5);
    EXPECT_EQ(r.from_float.y, -2.5);
    EXPECT_NEAR(r.abs_d, std::abs(a), 1e-13 * std::max(1.0, std::abs(a)))
        << "cuCabs, element " << i;
    EXPECT_EQ(r.re_d, a.real());
    EXPECT_EQ(r.im_d, a.imag());
  }
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(y));
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaFree(out));
}

// Quotients and magnitudes of numbers whose squares overflow or underflow a float.
__global__ void scaled(const cuFloatComplex* x, const cuFloatComplex* y, cuFloatComplex* quotient,
                       float* magnitude, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    quotient[i] = cuCdivf(x[i], y[i]);
    magnitude[i] = cuCabsf(x[i]);
  }
}

TEST(ComplexNumbers, DivisionAndAbsoluteValueScaleTheirOperands) {
  const std::vector<cuFloatComplex> x = {
      {1e30f, 1e30f}, {1.0f, 1.0f}, {3e30f, 4e30f}, {3e-30f, 4e-30f}, {0.0f, 0.0f}};
  const std::vector<cuFloatComplex> y = {
      {1e30f, 1e30f}, {1e-30f, 1e-30f}, {1.0f, 0.0f}, {0.0f, 1.0f}, {2.0f, 0.0f}};
  const int n = static_cast<int>(x.size());
  cuFloatComplex *dx, *dy, *quotient;
  float* magnitude;
  CUDA_CHECK(cudaMallocManaged(&dx, n * sizeof(cuFloatComplex)));
  CUDA_CHECK(cudaMallocManaged(&dy, n * sizeof(cuFloatComplex)));
  CUDA_CHECK(cudaMallocManaged(&quotient, n * sizeof(cuFloatComplex)));
  CUDA_CHECK(cudaMallocManaged(&magnitude, n * sizeof(float)));
  std::copy(x.begin(), x.end(), dx);
  std::copy(y.begin(), y.end(), dy);
  scaled<<<1, 32>>>(dx, dy, quotient, magnitude, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const Exact want_quotient[] = {{1, 0}, {1e30, 0}, {3e30, 4e30}, {4e-30, -3e-30}, {0, 0}};
  const double want_magnitude[] = {std::sqrt(2.0) * 1e30, std::sqrt(2.0), 5e30, 5e-30, 0};
  for (int i = 0; i < n; ++i) {  // each within a relative 1e-6 (0 exactly)
    const Exact got(quotient[i].x, quotient[i].y);
    EXPECT_LE(std::abs(got - want_quotient[i]), 1e-6 * std::abs(want_quotient[i]))
        << "cuCdivf, element " << i << ": " << got.real() << " + " << got.imag() << "i";
    EXPECT_LE(std::abs(magnitude[i] - want_magnitude[i]), 1e-6 * want_magnitude[i])
        << "cuCabsf, element " << i << ": " << magnitude[i];
  }
  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(dy));
  CUDA_CHECK(cudaFree(quotient));
  CUDA_CHECK(cudaFree(magnitude));
}

}  // namespace
