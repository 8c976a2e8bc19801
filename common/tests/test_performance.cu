// Tests of the harness's timing checks (common/include/cudalab/performance.h): a timing is graded
// only if it is plausible. Work that computes its result only on its first run (and is fast after
// it) is caught by the recheck of its output after the timed runs; work that skips its job is
// caught by the floor (the time moving its bytes takes at the GPU's peak rate).
#include <gtest/gtest-spi.h>

#include <string>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/testing.h"

namespace {

#ifdef CUDALAB_EMU
constexpr int kN = 1 << 16;  // floats per array (the emu checks only the output)
#else
constexpr int kN = 1 << 24;  // floats per array: 64 MiB, more than any L2 cache
#endif
constexpr const char* kRecheckFailed =
    "elements of the output differ from what the first run wrote";
constexpr const char* kBelowTheFloor = "the work cannot all have been done";
constexpr int kThreads = 256;

__device__ int runs_so_far;  // how often computeOnce ran

__global__ void add(const float* A, const float* B, float* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}

// The cheat: the first launch adds, later ones return at once (once a thread of it has counted).
__global__ void computeOnce(const float* A, const float* B, float* C, int n) {
  if (atomicAdd(&runs_so_far, 0) > 0) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
  if (i == 0) atomicAdd(&runs_so_far, 1);
}

// The other cheat: it writes the answer it remembers (A and B are 1 and 2 everywhere) without
// reading A and B: a third of the bytes, so it beats the floor of a true vector add.
__global__ void writeOnly(const float*, const float*, float* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = 3.0f;
}

struct Arrays {
  cudalab::DeviceArray<float> A{std::vector<float>(kN, 1.0f)}, B{std::vector<float>(kN, 2.0f)},
      C{std::vector<float>(kN, 0.0f)}, copy_from{std::vector<float>(kN / 2 * 3, 0.0f)},
      copy_to{std::vector<float>(kN / 2 * 3, 0.0f)};
};

// The failures that expect_speed reports for `kernel`, as one text ("" when it reports none);
// `recheck`: with the recheck of its output C.
template <class Kernel>
std::string failures_of(Kernel kernel, Arrays& a, bool recheck) {
  testing::TestPartResultArray failures;
  {
    testing::ScopedFakeTestPartResultReporter capture(&failures);
    cudalab::performance::expect_speed(
        "the kernel vs a copy of its bytes",
        [&] {
          kernel<<<(kN + kThreads - 1) / kThreads, kThreads>>>(a.A.get(), a.B.get(), a.C.get(), kN);
        },
        cudalab::performance::device_copy(a.copy_to.get(), a.copy_from.get(),
                                          kN / 2 * 3 * sizeof(float)),
        0.0, {.bytes = 3.0 * kN * sizeof(float)},
        cudalab::performance::Output<float>{recheck ? a.C.get() : nullptr, kN});
  }
  std::string text;
  for (int i = 0; i < failures.size(); ++i) text += failures.GetTestPartResult(i).message();
  return text;
}

TEST(TimingPlausibility, AnHonestKernelIsGraded) {
  Arrays a;
  const std::string failures = failures_of(add, a, true);  // (a busy machine may still fail it)
  EXPECT_EQ(failures.find(kRecheckFailed), std::string::npos) << failures;
  EXPECT_EQ(failures.find(kBelowTheFloor), std::string::npos) << failures;
}

TEST(TimingPlausibility, WorkThatComputesOnlyOnceIsCaughtByItsOutput) {
  Arrays a;
  const int zero = 0;
  CUDA_CHECK(cudaMemcpyToSymbol(runs_so_far, &zero, sizeof zero));
  EXPECT_NE(failures_of(computeOnce, a, true).find(kRecheckFailed), std::string::npos);
}

TEST(TimingPlausibility, WorkThatSkipsReadingIsCaughtByTheFloor) {
#ifdef CUDALAB_EMU
  GTEST_SKIP() << "a timing test: the floor is a GPU's (the emu's times are its host's)";
#endif
  Arrays a;
  const std::string failures = failures_of(writeOnly, a, true);
  EXPECT_EQ(failures.find(kRecheckFailed), std::string::npos) << "its output is right every time";
  EXPECT_NE(failures.find(kBelowTheFloor), std::string::npos);
}

}  // namespace
