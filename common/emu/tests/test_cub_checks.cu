// CUB's device-wide algorithms on emu run as a launch of the program's call (common/emu/cub): what
// they read and write is checked as a kernel's is, and a fault names the call's line and the array.
#include <gtest/gtest.h>

#include <cub/cub.cuh>
#include <string>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/emu/inspect.h"
#include "emu_fixture.h"

namespace {

// (named for what they test; Emu's device reset around each test)
class CubChecks : public Emu {};

// Sums `n` ints of an array of `room` ints, of which the first `written` were copied in.
cudaError_t sum(int n, int room, int written, int& line, std::string& array_line) {
  int *in = nullptr, *out = nullptr;
  array_line = "test_cub_checks.cu:" + std::to_string(__LINE__ + 1);
  EXPECT_EQ(cudaMalloc(&in, room * sizeof(int)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&out, sizeof(int)), cudaSuccess);
  const std::vector<int> ones(written, 1);
  EXPECT_EQ(cudaMemcpy(in, ones.data(), written * sizeof(int), cudaMemcpyHostToDevice),
            cudaSuccess);
  size_t bytes = 0;
  EXPECT_EQ(cub::DeviceReduce::Sum(nullptr, bytes, in, out, n), cudaSuccess);
  void* temp = nullptr;
  EXPECT_EQ(cudaMalloc(&temp, bytes), cudaSuccess);
  line = __LINE__ + 1;
  cub::DeviceReduce::Sum(temp, bytes, in, out, n);
  const cudaError_t status = cudaDeviceSynchronize();
  cudaFree(in), cudaFree(out), cudaFree(temp);
  return status;
}

}  // namespace

TEST_F(CubChecks, AnInputPastItsArrayIsNamedAtTheCall) {
  int line = 0;
  std::string array_line;
  EXPECT_EQ(sum(1001, 1000, 1000, line, array_line), cudaErrorIllegalAddress);
  const std::string call =
      "kernel 'cub::DeviceReduce::Sum' (launched at test_cub_checks.cu:" + std::to_string(line) +
      ")";
  EXPECT_TRUE(says(call)) << diagnostic();
  EXPECT_TRUE(says("element 1000 of the 1000-element array")) << diagnostic();
  EXPECT_TRUE(says("allocated at " + array_line + " (in)")) << diagnostic();
}

TEST_F(CubChecks, AnInputNobodyWroteIsNamedAtTheCall) {
  int line = 0;
  std::string array_line;
  EXPECT_EQ(sum(1000, 1000, 600, line, array_line), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("kernel 'cub::DeviceReduce::Sum' (launched at test_cub_checks.cu:" +
                   std::to_string(line) + ")"))
      << diagnostic();
  EXPECT_TRUE(says("element 600 of the array")) << diagnostic();
  EXPECT_TRUE(says("which nobody wrote since cudaMalloc")) << diagnostic();
}

// Temporary storage that is not device memory is named, as CUB's own kernels would fault on it.
TEST_F(CubChecks, HostTemporaryStorageIsNamed) {
  int *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, 4 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&out, sizeof(int)));
  CUDA_CHECK(cudaMemset(in, 0, 4 * sizeof(int)));
  size_t bytes = 0;
  ASSERT_EQ(cub::DeviceReduce::Sum(nullptr, bytes, in, out, 4), cudaSuccess);
  std::vector<unsigned char> host(bytes);
  cudalab::emu::clear_diagnostic();
  cub::DeviceReduce::Sum(host.data(), bytes, in, out, 4);
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(says("cub::DeviceReduce::Sum")) << diagnostic();
  EXPECT_TRUE(says("a write to host memory through argument 1")) << diagnostic();
  cudaFree(in), cudaFree(out);
}
