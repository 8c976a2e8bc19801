// Foundation benchmark: what running a kernel on the emu backend costs against a plain C++ loop
// doing the same maths on one CPU core. Six textbook kernels (foundation_kernels.cuh), each timed
// as a plain loop, on emu unchecked (plain C++, `cudalab run --unchecked`), on emu checked (every
// access checked, as `make check` runs lab code) and checked with the memory counters on (as a
// counting test or CUDALAB_REPORT runs it), in one run; the ratios are the targets of the speed
// issue (docs/benchmarks.md). On emu the last lines time vector add and the tiled matmul with the
// least a check of every access must do, inlined (checks_floor.h), on as many threads as emu has
// workers: how far checks of this kind could go. On a GPU the variants are the same code: the GPU
// against one core.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
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

// A row's times in milliseconds (0 where the variant did not run).
struct Times {
  double loop = 0, unchecked = 0, checked = 0, counted = 0;
};

// Times the case's loop and variants and prints its row; nothing where a variant's output differs
// from the loop's.
std::optional<Times> run_case(const Case& c, bool emu) {
  const int reps = 5;
  Times t;
  t.loop = median_ms(reps, c.loop);
  auto timed = [&](const FoundationKernels& k) {
    return median_ms(reps, [&] { CUDA_CHECK(c.launch(k)); });
  };
  t.unchecked = timed(unchecked::kernels);
  if (!matches(c, "unchecked")) return std::nullopt;
  if (!emu) {
    std::printf("%-20s %-9s %9.2f %11.2f %13.2f\n", c.kernel.c_str(), c.size.c_str(), t.loop,
                t.unchecked, t.unchecked / t.loop);
    return t;
  }
  t.checked = timed(checked::kernels);
  if (!matches(c, "checked")) return std::nullopt;
#ifdef CUDALAB_EMU
  cudalab::emu::start_counting();
  t.counted = timed(checked::kernels);
  cudalab::emu::stop_counting();
#endif
  if (!matches(c, "counted")) return std::nullopt;
  std::printf("%-20s %-9s %9.2f %11.2f %11.2f %11.2f %13.2f %11.2f %11.2f %13.2f\n",
              c.kernel.c_str(), c.size.c_str(), t.loop, t.unchecked, t.checked, t.counted,
              t.unchecked / t.loop, t.checked / t.loop, t.checked / t.unchecked,
              t.counted / t.checked);
  return t;
}

// One line of the checks' floor: the case's kernel with the least checks of every access inlined
// (checks_floor.h), `launch` run as often as the case's, against the plain loop and emu's checked
// run (the case's times); false if its `output` then differs from the loop's `expected` by more
// than kTolerance * scale.
bool floor_line(const Case& c, const Times& row, const std::function<void()>& launch,
                const std::function<std::vector<float>()>& output,
                const std::vector<float>& expected) {
  const double floor = median_ms(5, launch);
  const std::vector<float> got = output();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - expected[i]) <= kTolerance * c.scale)) {
      std::printf("%s with inlined checks: element %zu is %.9g, the loop gives %.9g\n",
                  c.kernel.c_str(), i, got[i], expected[i]);
      return false;
    }
  std::printf("%-20s %-9s %9.2f %11.2f %11.2f %13.2f\n", c.kernel.c_str(), c.size.c_str(), floor,
              row.checked, floor / row.loop, row.checked / floor);
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
  std::vector<Times> times;
  for (const Case& c : cases) {
    const std::optional<Times> t = run_case(c, emu);
    ok = t.has_value() && ok;
    times.push_back(t.value_or(Times{}));
  }
  if (emu && ok) {
    const int workers = prop.multiProcessorCount;
    std::printf(
        "the checks' floor (checks_floor.h): the least checks of every access inlined, on %d "
        "threads\n%-20s %-9s %9s %11s %11s %13s\n",
        workers, "kernel", "size", "floor ms", "checked", "floor/loop", "checked/floor");
    checks_floor::VectorAdd vector_add_floor(X, Y, small);
    std::vector<float> sums(small);
    for (int i = 0; i < small; ++i) sums[i] = X[i] + Y[i];
    // (the case and its times by the row's name)
    const auto row = [&](const char* kernel, const char* size) {
      size_t r = 0;
      while (cases[r].kernel != kernel || cases[r].size != size) ++r;
      return r;
    };
    const size_t sums_row = row("vector add", "2^20"),
                 tiled_row = row("tiled matmul, T16", "512^2");
    ok = floor_line(
        cases[sums_row], times[sums_row], [&] { vector_add_floor.launch(256, workers); },
        [&] { return vector_add_floor.C(); }, sums);
    checks_floor::TiledMatMul<16> tiled_floor(M, N, W);
    matmul_loop();
    ok = floor_line(
             cases[tiled_row], times[tiled_row], [&] { tiled_floor.launch(workers); },
             [&] { return tiled_floor.P(); }, expected) &&
         ok;
  }
  std::printf("each time: the median of 5 runs; the loop runs on one core%s\n",
              emu ? ", the kernels on every worker" : "");
  for (float* d : {dX, dY, dOut, dM, dN}) CUDA_CHECK(cudaFree(d));
  return ok ? 0 : 1;
}
