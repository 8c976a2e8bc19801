// Lab 07 tests: every case of the averaging filter against the same steps in double precision, for
// many sizes and numbers of steps, and against the course's worked table (16 elements, 4 steps).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "averaging_filter.h"
#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/testing.h"

namespace {

using cudalab::DeviceArray;

// `iterations` steps of the filter on A, in double precision.
std::vector<double> reference(const std::vector<float>& A, int iterations) {
  std::vector<double> a(A.begin(), A.end()), b = a;
  const size_t n = a.size();
  for (int step = 0; step < iterations; ++step) {
    for (size_t i = 1; i + 1 < n; ++i) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3;
    a.swap(b);
  }
  return a;
}

// A version of the filter run on a copy of A (and a poisoned B); returns A afterwards.
struct Version {
  const char* name;
  std::function<cudaError_t(float* A, float* B, int n, int iterations)> run;
  const char* hint;
  int max_n;
};

const Version kGlobal{
    "averageGlobal", averageGlobal,
    "One launch of averageStep per step, A into B then B into A; copy B into A at the end "
    "if the number of steps is odd.",
    1 << 30};
const Version kGlobalOneBlock{
    "averageGlobalOneBlock",
    [](float* A, float*, int n, int it) { return averageGlobalOneBlock(A, n, it); },
    "Each step: read the neighbours into a register, __syncthreads(), write, "
    "__syncthreads(). Threads past n must still reach the barriers.",
    AVG_MAX_ONE_BLOCK};
const Version kSharedOneBlock{
    "averageSharedOneBlock",
    [](float* A, float*, int n, int it) { return averageSharedOneBlock(A, n, it); },
    "Copy A into one shared array, alternate between the two with a __syncthreads() "
    "after each step, copy the last one back.",
    AVG_MAX_ONE_BLOCK};
const Version kSharedManyBlocks{
    "averageSharedManyBlocks", averageSharedManyBlocks,
    "Each block owns AVG_BLOCK_SIZE - 2 * steps elements and loads `steps` more on "
    "each side; after the steps it writes only its own elements.",
    1 << 30};

std::vector<float> run(const Version& v, const std::vector<float>& A, int iterations) {
  const int n = static_cast<int>(A.size());
  DeviceArray<float> d_A(A), d_B(std::vector<float>(A.size(), cudalab::poison_float()));
  cudaError_t err = v.run(d_A.get(), d_B.get(), n, iterations);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    ADD_FAILURE() << v.name << "(n = " << n << ", iterations = " << iterations << ") returned "
                  << cudalab::error_text(err);
    return std::vector<float>(A.size(), cudalab::poison_float());
  }
  return d_A.to_host();
}

void check(const Version& v, int n, int iterations) {
  std::vector<float> A = cudalab::random_floats(n, cudalab::testing::test_seed());
  for (float& a : A) a = std::abs(a) * 100;
  std::vector<double> expected = reference(A, iterations);
  std::vector<float> got = run(v, A, iterations);
  // Each step rounds once per addition and once for the division: a few float ulps per step.
  if (iterations > 0) EXPECT_COMPUTED_ON_DEVICE("A", got.data(), got.size());
  EXPECT_MATCHES("A", got.data(), expected.data(), expected.size(), {1e-5, 1e-4})
      << "after " << iterations << " steps on " << n << " elements. " << v.hint;
}

void check_sizes(const Version& v) {
  for (int n : {0, 1, 2, 3, 255, 256, 257, 1000, 1024, 5000, 100000})
    if (n <= v.max_n)
      for (int iterations : {0, 1, 7, 8, 9, 50}) check(v, n, iterations);
}

// The course's table: the input, then the array after steps 1 to 4, rounded to whole numbers for
// display. Its last row says 40 for element 8; the arithmetic gives 36.9 (see README.md).
const std::vector<float> kTableInput = {25, 6, 34, 91, 10, 62, 55, 5, 80, 20, 10, 40, 6, 99, 26, 2};
const std::vector<std::vector<int>> kTable = {
    {25, 22, 44, 45, 54, 42, 41, 47, 35, 37, 23, 19, 48, 44, 42, 2},
    {25, 30, 37, 48, 47, 46, 43, 41, 39, 32, 26, 30, 37, 45, 29, 2},
    {25, 31, 38, 44, 47, 45, 43, 41, 37, 32, 29, 31, 37, 37, 25, 2},
    {25, 31, 38, 43, 45, 45, 43, 41, 37, 33, 31, 33, 35, 33, 21, 2},
};

void check_table(const Version& v) {
  for (int step = 1; step <= 4; ++step) {
    std::vector<float> got = run(v, kTableInput, step);
    std::vector<int> rounded;
    for (float x : got) rounded.push_back(static_cast<int>(std::lround(x)));
    EXPECT_EQ(rounded, kTable[step - 1]) << "step " << step << " of the course's table. " << v.hint;
  }
}

TEST(AverageGlobal, CourseTable) { check_table(kGlobal); }
TEST(AverageGlobal, SizesAndSteps) { check_sizes(kGlobal); }
TEST(AverageGlobalOneBlock, CourseTable) { check_table(kGlobalOneBlock); }
TEST(AverageGlobalOneBlock, SizesAndSteps) { check_sizes(kGlobalOneBlock); }
TEST(AverageSharedOneBlock, CourseTable) { check_table(kSharedOneBlock); }
TEST(AverageSharedOneBlock, SizesAndSteps) { check_sizes(kSharedOneBlock); }
TEST(AverageSharedManyBlocks, CourseTable) { check_table(kSharedManyBlocks); }
TEST(AverageSharedManyBlocks, SizesAndSteps) { check_sizes(kSharedManyBlocks); }

TEST(AverageOneBlock, RefusesMoreThanOneBlock) {
  DeviceArray<float> d_A(std::vector<float>(AVG_MAX_ONE_BLOCK + 1, 1.0f));
  for (const Version* v : {&kGlobalOneBlock, &kSharedOneBlock})
    EXPECT_EQ(v->run(d_A.get(), nullptr, AVG_MAX_ONE_BLOCK + 1, 1), cudaErrorInvalidValue)
        << v->name << " must answer n > AVG_MAX_ONE_BLOCK with cudaErrorInvalidValue: one block "
        << "cannot hold more threads";
}

// Performance. On emu: 50 steps read global memory 50 times in the global-only case, and about
// 50 / AVG_STEPS_PER_LAUNCH times with redundant borders.
TEST(AveragePerformance, BordersSaveGlobalTraffic) {
  CUDALAB_COUNTING_TEST();
  const int n = 4000, iterations = 50;
  std::vector<float> A(n, 1.0f);
  const double flops = cudalab::performance::flops::averaging(n, iterations);
  auto global =
      cudalab::performance::count([&] { run(kGlobal, A, iterations); }, {kGlobal.name, flops});
  auto borders = cudalab::performance::count([&] { run(kSharedManyBlocks, A, iterations); },
                                             {kSharedManyBlocks.name, flops});
  unsigned long long global_bytes = 0, border_bytes = 0;
  for (const auto& c : global) global_bytes += c.global_load_bytes;
  for (const auto& c : borders) border_bytes += c.global_load_bytes;
  std::printf(
      "[ COUNTED  ] bytes loaded in %d steps: global only %llu (%zu launches), borders %llu "
      "(%zu)\n",
      iterations, global_bytes, global.size(), border_bytes, borders.size());
  EXPECT_EQ(borders.size(), size_t((iterations + AVG_STEPS_PER_LAUNCH - 1) / AVG_STEPS_PER_LAUNCH));
  EXPECT_GT(border_bytes, 0u);
  EXPECT_LE(border_bytes * 10, global_bytes)
      << "the redundant-border kernel should load each element about once per launch";
}

// On a GPU: 50 steps on 2^24 elements, redundant borders against one launch per step.
TEST(AveragePerformance, BordersFasterThanLaunchPerStep) {
  CUDALAB_TIMING_TEST();
  const int n = 1 << 24, iterations = 50;
  std::vector<float> A = cudalab::random_floats(n, 3);
  std::vector<float> expect = run(kGlobal, A, iterations),
                     got = run(kSharedManyBlocks, A, iterations);
  ASSERT_EQ(expect, got) << "not timed: the two versions disagree";
  DeviceArray<float> d_A(A), d_B(A);
  cudalab::performance::expect_speed(
      "averageSharedManyBlocks vs averageGlobal, 50 steps",
      [&] { averageSharedManyBlocks(d_A.get(), d_B.get(), n, iterations); },
      [&] { averageGlobal(d_A.get(), d_B.get(), n, iterations); }, 2.0,
      // (no recheck of the output: each run goes on smoothing the grid that the last one left)
      {.bytes = 2.0 * n * sizeof(float), .flops = 3.0 * n * iterations});
}

}  // namespace
