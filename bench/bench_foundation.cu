// Foundation benchmark: what running a kernel on the emu backend costs against a plain C++ loop
// doing the same maths on one CPU core. Six textbook kernels (foundation_kernels.cuh), each timed
// as a plain loop, on emu unchecked (plain C++, `cudalab run --unchecked`), on emu checked (every
// access checked, as `make check` runs lab code) and checked with the memory counters on (as a
// counting test or CUDALAB_REPORT runs it), in one run; the ratios are the targets of the speed
// issue (docs/benchmarks.md). On emu a last line times vector add with the least a check of every
// access must do, inlined (checks_floor.h): how far checks of this kind could go. On a GPU the
// variants are the same code: the GPU against one core.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "checks_floor.h"
#include "cudalab/cuda_check.h"
#include "cudalab/data.h"
#include "foundation.h"
#ifdef CUDALAB_EMU
#include "cudalab/emu/inspect.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;

// Median wall time of `reps` runs, in milliseconds.
double median_ms(int reps, const std::function<void()>& run) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A device copy of `host`, or an output array of n floats.
float* device_floats(const std::vector<float>& host) {
  float* d;
  CUDA_CHECK(cudaMalloc(&d, host.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}
std::vector<float> host_copy(const float* d, size_t n) {
  std::vector<float> host(n);
  CUDA_CHECK(cudaMemcpy(host.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

// One row of the table: a kernel on device arrays (either variant) and the plain loop computing
// `expected`, which the kernel's output must match within `tolerance` (relative to `scale`, the
// size of the terms summed into one element).
struct Case {
  std::string kernel, size;
  std::function<cudaError_t(const FoundationKernels&)> launch;
  std::function<void()> loop;
  const float* output;  // on the device
  const std::vector<float>* expected;
  double scale;
};

constexpr double kTolerance = 1e-5;  // float sums of at most 512 terms of size <= 1, in any order

bool matches(const Case& c, const char* variant) {
  const std::vector<float> got = host_copy(c.output, c.expected->size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - (*c.expected)[i]) <= kTolerance * c.scale)) {
      std::printf("%s %s (%s): element %zu is %.9g, the loop gives %.9g\n", c.kernel.c_str(),
                  c.size.c_str(), variant, i, got[i], (*c.expected)[i]);
      return false;
    }
  return true;
}

bool run_case(const Case& c, bool emu) {
  const int reps = 5;
  const double loop = median_ms(reps, c.loop);
  auto timed = [&](const FoundationKernels& k) {
    return median_ms(reps, [&] { CUDA_CHECK(c.launch(k)); });
  };
  const double plain = timed(unchecked::kernels);
  if (!matches(c, "unchecked")) return false;
  if (!emu) {
    std::printf("%-20s %-9s %9.2f %11.2f %13.2f\n", c.kernel.c_str(), c.size.c_str(), loop, plain,
                plain / loop);
    return true;
  }
  const double check = timed(checked::kernels);
  if (!matches(c, "checked")) return false;
  double counted = 0;
#ifdef CUDALAB_EMU
  cudalab::emu::start_counting();
  counted = timed(checked::kernels);
  cudalab::emu::stop_counting();
#endif
  if (!matches(c, "counted")) return false;
  std::printf("%-20s %-9s %9.2f %11.2f %11.2f %11.2f %13.2f %11.2f %11.2f %13.2f\n",
              c.kernel.c_str(), c.size.c_str(), loop, plain, check, counted, plain / loop,
              check / loop, check / plain, counted / check);
  return true;
}

// Vector add with the least a check per access does, inlined (checks_floor.h), on one core, against
// the plain loop and, when emu runs on one worker, emu unchecked and checked on the same arrays;
// false if its sums differ from the loop's.
bool checks_floor_line(const std::vector<float>& X, const std::vector<float>& Y, const float* dX,
                       const float* dY, float* dOut, int n, int workers) {
  const int reps = 5;
  std::vector<float> expected(n);
  const double loop = median_ms(reps, [&] {
    for (int i = 0; i < n; ++i) expected[i] = X[i] + Y[i];
  });
  checks_floor::VectorAdd inlined_checks(X, Y, n);
  const double inlined = median_ms(reps, [&] { inlined_checks.launch(256); });
  if (inlined_checks.C() != expected) {
    std::printf("vector add with inlined checks: its sums differ from the loop's\n");
    return false;
  }
  std::printf(
      "the checks' floor (checks_floor.h): vector add of %d floats with the least checks of\n"
      "every access inlined, on one core: %.2f ms, %.2f x the loop",
      n, inlined, inlined / loop);
  if (workers == 1) {
    auto timed = [&](const FoundationKernels& k) {
      return median_ms(reps, [&] { CUDA_CHECK(k.vector_add(dX, dY, dOut, n)); });
    };
    const double plain = timed(unchecked::kernels), check = timed(checked::kernels);
    std::printf(", %.2f x emu unchecked (emu checked: %.2f x)", inlined / plain, check / plain);
  }
  std::printf("\n");
  return true;
}

double load_average() {
  double load = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

}  // namespace

int main() {
  const uint64_t seed = 2026;
  std::printf("inputs: random floats in [-1, 1), seed %llu; load average %.2f\n",
              (unsigned long long)seed, load_average());
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
#ifdef CUDALAB_EMU
  const bool emu = true;
  std::printf("backend: emu, %d worker threads (CUDALAB_EMU_THREADS)\n", prop.multiProcessorCount);
  std::printf("%-20s %-9s %9s %11s %11s %11s %13s %11s %11s %13s\n", "kernel", "size", "loop ms",
              "unchecked", "checked", "counted", "unchecked/loop", "checked/loop", "checks cost",
              "counters cost");
#else
  const bool emu = false;
  std::printf("backend: cuda, %s\n", prop.name);
  std::printf("%-20s %-9s %9s %11s %13s\n", "kernel", "size", "loop ms", "kernel ms",
              "kernel/loop");
#endif

  const int small = 1 << 20, large = 1 << 24, reduced = 1 << 22, W = 512;
  const std::vector<float> X = cudalab::random_floats(large, seed),
                           Y = cudalab::random_floats(large, seed + 1);
  const std::vector<float> M(X.begin(), X.begin() + W * W), N(Y.begin(), Y.begin() + W * W);
  float *dX = device_floats(X), *dY = device_floats(Y), *dOut = device_floats(X);
  float *dM = device_floats(M), *dN = device_floats(N);
  std::vector<float> expected(large);
  auto sized = [&](size_t n) { expected.resize(n); };

  auto vector_add = [&](int n, const char* size) {
    return Case{"vector add",
                size,
                [=](const FoundationKernels& k) { return k.vector_add(dX, dY, dOut, n); },
                [&, n] {
                  sized(n);
                  for (int i = 0; i < n; ++i) expected[i] = X[i] + Y[i];
                },
                dOut,
                &expected,
                1.0};
  };
  auto partial_sums = [&](int n, int group) {
    sized(n / group);
    for (int g = 0; g < n / group; ++g) {
      float sum = 0;
      for (int i = g * group; i < (g + 1) * group; ++i) sum += X[i];
      expected[g] = sum;
    }
  };
  auto matmul_loop = [&] {
    sized(W * W);
    for (int Row = 0; Row < W; ++Row)
      for (int Col = 0; Col < W; ++Col) {
        float sum = 0;
        for (int k = 0; k < W; ++k) sum += M[Row * W + k] * N[k * W + Col];
        expected[Row * W + Col] = sum;
      }
  };
  const std::vector<Case> cases = {
      vector_add(small, "2^20"),
      vector_add(large, "2^24"),
      {"naive matmul, 16 x 16", "512^2",
       [=](const FoundationKernels& k) { return k.naive_matmul(dM, dN, dOut, W); }, matmul_loop,
       dOut, &expected, W},
      {"tiled matmul, T16", "512^2",
       [=](const FoundationKernels& k) { return k.tiled_matmul(dM, dN, dOut, W); }, matmul_loop,
       dOut, &expected, W},
      {"1D stencil, halo", "2^20",
       [=](const FoundationKernels& k) { return k.stencil_1d(dX, dOut, small); },
       [&] {
         sized(small);
         for (int i = 0; i < small; ++i) {
           float sum = 0;
           for (int j = std::max(i - 3, 0); j <= std::min(i + 3, small - 1); ++j) sum += X[j];
           expected[i] = sum;
         }
       },
       dOut, &expected, 7},
      {"block reduction", "2^22",
       [=](const FoundationKernels& k) { return k.block_reduce(dX, dOut, reduced); },
       [&] { partial_sums(reduced, 256); }, dOut, &expected, 256},
      {"warp reduction", "2^22",
       [=](const FoundationKernels& k) { return k.warp_reduce(dX, dOut, reduced); },
       [&] { partial_sums(reduced, 32); }, dOut, &expected, 32},
  };
  bool ok = true;
  for (const Case& c : cases) ok = run_case(c, emu) && ok;
  if (emu) ok = checks_floor_line(X, Y, dX, dY, dOut, small, prop.multiProcessorCount) && ok;
  std::printf("each time: the median of 5 runs; the loop runs on one core%s\n",
              emu ? ", the kernels on every worker" : "");
  for (float* d : {dX, dY, dOut, dM, dN}) CUDA_CHECK(cudaFree(d));
  return ok ? 0 : 1;
}
