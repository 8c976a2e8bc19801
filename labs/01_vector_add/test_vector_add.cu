// Lab 01 tests: vecAdd and vecAddKernel against the sum computed in double precision.
// Points per test are in rubric.toml. Inputs are random from a printed seed; outputs are poisoned
// before each run so that an element nobody wrote shows as "(never written)".
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/testing.h"
#include "vector_add.h"
#ifdef CUDALAB_EMU
#include "cudalab/emu/inspect.h"
#endif

namespace {

using cudalab::DeviceArray;
using cudalab::poison_float;
using cudalab::random_floats;
using cudalab::testing::test_seed;

// A float addition is rounded once: its result is within 2^-24 (6e-8) of the exact sum.
constexpr cudalab::Tolerance kTolerance{1e-6, 0.0};
constexpr const char* kHowToIndex =
    "Each thread adds one pair: i = blockIdx.x * blockDim.x + threadIdx.x; C[i] = A[i] + B[i].";

struct Inputs {
  std::vector<float> A, B;
  std::vector<double> sum;  // the reference, in double precision
};

Inputs make_inputs(int n) {
  uint64_t seed = test_seed();
  Inputs in{random_floats(n, seed), random_floats(n, seed + 1), std::vector<double>(n)};
  for (int i = 0; i < n; ++i) in.sum[i] = double(in.A[i]) + double(in.B[i]);
  return in;
}

void check_vec_add(int n) {
  Inputs in = make_inputs(n);
  std::vector<float> C(n, poison_float());
  cudaError_t err = vecAdd(in.A.data(), in.B.data(), C.data(), n);
  if (err != cudaSuccess) FAIL() << "vecAdd(n = " << n << ") returned " << cudalab::error_text(err);
  EXPECT_MATCHES("C", C.data(), in.sum.data(), n, kTolerance) << kHowToIndex;
  EXPECT_COMPUTED_ON_DEVICE("C", C.data(), n);
}

// Launches the student's kernel directly on device arrays with `slack` poisoned elements behind C.
std::vector<float> run_kernel(const Inputs& in, int n, int threads_per_block, int slack) {
  DeviceArray<float> d_A(in.A);
  DeviceArray<float> d_B(in.B);
  DeviceArray<float> d_C(std::vector<float>(n, poison_float()), slack, poison_float());
  int blocks = (n + threads_per_block - 1) / threads_per_block;
  (void)cudaGetLastError();  // forget errors of earlier tests: this launch's error is checked next
  vecAddKernel<<<blocks, threads_per_block>>>(d_A.get(), d_B.get(), d_C.get(), n);
  CUDA_CHECK(cudaGetLastError());
  return d_C.to_host();
}

#ifdef CUDALAB_EMU
// The device arrays that are still allocated, one line each.
std::string unfreed() {
  std::string list;
  for (const auto& a : cudalab::emu::live_allocations())
    list += "\n  " + std::to_string(a.bytes) + " bytes allocated at " + a.where;
  return list;
}
#endif

TEST(VectorAdd, Empty) {
  float A = 1.0f, B = 2.0f, C = poison_float();
  cudaError_t err = vecAdd(&A, &B, &C, 0);
  if (err != cudaSuccess)
    FAIL() << "vecAdd(n = 0) returned " << cudalab::error_text(err)
           << ". An empty vector is valid input: launch nothing (a grid of 0 "
              "blocks is refused as invalid) and return cudaSuccess.";
  EXPECT_TRUE(cudalab::is_poison(C)) << "vecAdd(n = 0) wrote into h_C";
}

TEST(VectorAdd, One) { check_vec_add(1); }
TEST(VectorAdd, Size255) { check_vec_add(255); }
TEST(VectorAdd, Size256) { check_vec_add(256); }
TEST(VectorAdd, Size257) { check_vec_add(257); }
TEST(VectorAdd, Size1M) { check_vec_add(1 << 20); }
TEST(VectorAdd, SizePrime) { check_vec_add(1000003); }

TEST(VectorAddKernel, GuardsTheEnd) {
  const int n = 1000, slack = 24;  // 4 blocks of 256 threads: 24 threads past the end
  Inputs in = make_inputs(n);
  std::vector<float> C = run_kernel(in, n, 256, slack);
  EXPECT_MATCHES("C", C.data(), in.sum.data(), n, kTolerance) << kHowToIndex;
  int stray = 0;
  for (int i = n; i < n + slack; ++i) stray += cudalab::is_poison(C[i]) ? 0 : 1;
  EXPECT_EQ(stray, 0) << "vecAddKernel wrote " << stray << " elements past C[" << n - 1
                      << "] although n = " << n << ". The grid has " << n + slack
                      << " threads; the last " << slack
                      << " must not write (if (i < n)). On a GPU such a write silently corrupts "
                         "whatever lies behind the array.";
}

// llm.c's sweep of block sizes, and 96 (not a power of two): n = 1001 leaves a partial block for
// each.
TEST(VectorAddKernel, AnyBlockSize) {
  const int n = 1001;
  Inputs in = make_inputs(n);
  for (int threads_per_block : {32, 64, 96, 128, 256, 512, 1024}) {
    std::vector<float> C = run_kernel(in, n, threads_per_block, 0);
    EXPECT_MATCHES("C", C.data(), in.sum.data(), n, kTolerance)
        << "The kernel ran with blocks of " << threads_per_block
        << " threads: use blockDim.x, not a fixed 256. " << kHowToIndex;
    if (HasFailure()) return;  // one block size's report is enough
  }
}

TEST(VectorAdd, FreesDeviceMemory) {
#ifndef CUDALAB_EMU
  GTEST_SKIP() << "needs the emu backend, which tracks every cudaMalloc";
#else
  ASSERT_NO_FATAL_FAILURE(check_vec_add(1000));
  std::string leaks = unfreed();
  EXPECT_TRUE(leaks.empty()) << "vecAdd returned without freeing device memory:" << leaks;
#endif
}

TEST(VectorAdd, ReportsAFailedCall) {
#ifndef CUDALAB_EMU
  GTEST_SKIP() << "needs the emu backend, which can make a cudaMalloc fail on purpose";
#else
  Inputs in = make_inputs(1000);
  std::vector<float> C(1000, poison_float());
  cudalab::emu::fail_malloc_after(2);  // the third cudaMalloc runs out of memory
  cudaError_t err = vecAdd(in.A.data(), in.B.data(), C.data(), 1000);
  cudalab::emu::fail_malloc_after(0, cudaSuccess);
  (void)cudaGetLastError();  // the planted failure is also the last error: clear it
  EXPECT_EQ(err, cudaErrorMemoryAllocation)
      << "the third cudaMalloc failed with cudaErrorMemoryAllocation, but vecAdd returned "
      << cudalab::error_text(err)
      << ". Check what every CUDA call returns and pass the first error on.";
  std::string leaks = unfreed();
  EXPECT_TRUE(leaks.empty()) << "after the failed cudaMalloc, vecAdd did not free:" << leaks;
#endif
}

// Performance. On emu: every element of A and B is read once and C written once, by warps whose
// 32 threads touch 32 consecutive floats (4 full sectors per request: coalesced).
TEST(VectorAddPerformance, CoalescedTraffic) {
  CUDALAB_COUNTING_TEST();
  const int n = 1 << 14;
  Inputs in = make_inputs(n);
  auto launches =
      cudalab::performance::count([&] { run_kernel(in, n, 256, 0); },
                                  {"vecAddKernel", cudalab::performance::flops::vector_add(n)});
  ASSERT_EQ(launches.size(), 1u);
  const auto& c = launches[0];
  EXPECT_EQ(c.global_load_bytes, 2ull * n * sizeof(float))
      << "each element of A and B is read once";
  EXPECT_EQ(c.global_store_bytes, 1ull * n * sizeof(float)) << "each element of C is written once";
  EXPECT_DOUBLE_EQ(c.load_efficiency(), 1.0)
      << "neighbouring threads should read neighbouring elements (index with threadIdx.x last). "
      << c.worst_line(false);
  EXPECT_DOUBLE_EQ(c.store_efficiency(), 1.0) << c.worst_line(false);
}

// On a GPU: at least 70% of the device's own copy speed. A vector add reads 2n and writes n
// floats, as much traffic as a device-to-device copy of 1.5n floats. 2^25 floats per array are
// far larger than any L2 cache.
TEST(VectorAddPerformance, NearCopyBandwidth) {
  CUDALAB_TIMING_TEST();
  const int n = 1 << 25;
  DeviceArray<float> d_A(n, 1.0f);
  DeviceArray<float> d_B(n, 2.0f);
  DeviceArray<float> d_C(n, poison_float());
  auto kernel = [&] { vecAddKernel<<<(n + 255) / 256, 256>>>(d_A.get(), d_B.get(), d_C.get(), n); };
  kernel();
  std::vector<float> C = d_C.to_host();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += C[i] == 3.0f ? 0 : 1;
  if (wrong > 0) {
    ADD_FAILURE() << "not timed: " << wrong << " of " << n << " elements are wrong";
    return;
  }
  const size_t copy_floats = size_t(n) / 2 * 3;
  DeviceArray<float> from(copy_floats, 0.0f);
  DeviceArray<float> to(copy_floats, 0.0f);
  cudalab::performance::expect_speed(
      "vecAddKernel vs a device copy of the same bytes", kernel,
      cudalab::performance::device_copy(to.get(), from.get(), copy_floats * sizeof(float)), 0.70,
      {.bytes = 3.0 * n * sizeof(float)},
      cudalab::performance::Output<float>{d_C.get(), size_t(n)});
}

}  // namespace
