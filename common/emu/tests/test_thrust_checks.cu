// Thrust's algorithms called with thrust::device, or with no policy over device iterators, run on
// emu as a launch of the program's call (cudalab/emu/thrust_device.h): what they read and write is
// checked as a kernel's is, a fault names the call's line and the array, and the call throws
// thrust::system_error, as on a GPU.
#include <gtest/gtest.h>
#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/system_error.h>

#include <string>
#include <vector>

#include "cudalab/cuda_check.h"
#include "emu_fixture.h"

namespace {

// (named for what they test; Emu's device reset around each test)
class ThrustChecks : public Emu {};

// Sums `n` ints with thrust::device over an array of `room` ints from cudaMalloc, of which the
// first `written` were copied in; the error a failed sum threw, cudaSuccess if none.
cudaError_t sum(int n, int room, int written, int& line, std::string& array_line) {
  int* in = nullptr;
  array_line = "test_thrust_checks.cu:" + std::to_string(__LINE__ + 1);
  EXPECT_EQ(cudaMalloc(&in, room * sizeof(int)), cudaSuccess);
  const std::vector<int> ones(written, 1);
  EXPECT_EQ(cudaMemcpy(in, ones.data(), written * sizeof(int), cudaMemcpyHostToDevice),
            cudaSuccess);
  cudaError_t error = cudaSuccess;
  try {
    line = __LINE__ + 1;
    EXPECT_EQ(thrust::reduce(thrust::device, in, in + n), n);
  } catch (const thrust::system_error& e) {
    error = static_cast<cudaError_t>(e.code().value());
    EXPECT_NE(std::string(e.what()).find("thrust::reduce"), std::string::npos) << e.what();
  }
  cudaFree(in);
  return error;
}

}  // namespace

TEST_F(ThrustChecks, ACorrectSumPasses) {
  int line = 0;
  std::string array_line;
  EXPECT_EQ(sum(1000, 1000, 1000, line, array_line), cudaSuccess);
  EXPECT_EQ(diagnostic(), "");
}

TEST_F(ThrustChecks, AnInputPastItsArrayIsNamedAtTheCall) {
  int line = 0;
  std::string array_line;
  EXPECT_EQ(sum(1001, 1000, 1000, line, array_line), cudaErrorIllegalAddress);
  EXPECT_TRUE(says(
      "kernel 'thrust::reduce' (launched at test_thrust_checks.cu:" + std::to_string(line) + ")"))
      << diagnostic();
  EXPECT_TRUE(says("element 1000 of the 1000-element array")) << diagnostic();
  EXPECT_TRUE(says("allocated at " + array_line + " (in)")) << diagnostic();
}

TEST_F(ThrustChecks, AnInputNobodyWroteIsNamedAtTheCall) {
  int line = 0;
  std::string array_line;
  EXPECT_EQ(sum(1000, 1000, 600, line, array_line), cudaErrorLaunchFailure);
  EXPECT_TRUE(says(
      "kernel 'thrust::reduce' (launched at test_thrust_checks.cu:" + std::to_string(line) + ")"))
      << diagnostic();
  EXPECT_TRUE(says("element 600 of the array")) << diagnostic();
  EXPECT_TRUE(says("which nobody wrote since cudaMalloc")) << diagnostic();
}

// thrust::host is host code: over host memory it sorts there, with no launch.
TEST_F(ThrustChecks, HostAlgorithmsStayOnTheHost) {
  std::vector<int> values{3, 1, 2};
  thrust::sort(thrust::host, values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(diagnostic(), "");
}

namespace {
__global__ void sum_in_each_thread(const int* x, int n, long long* sums) {
  sums[threadIdx.x] = thrust::reduce(thrust::device, x, x + n, 0LL);
}
}  // namespace

// In a kernel, thrust::device runs the algorithm in the calling thread (Thrust's device code runs
// it sequentially there): no launch from inside the kernel.
TEST_F(ThrustChecks, InAKernelTheAlgorithmRunsInTheThread) {
  const std::vector<int> values{1, 2, 3, 4, 5, 6, 7, 8};
  int* x = nullptr;
  long long* sums = nullptr;
  CUDA_CHECK(cudaMalloc(&x, values.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&sums, 2 * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(x, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice));
  sum_in_each_thread<<<1, 2>>>(x, static_cast<int>(values.size()), sums);
  long long back[2] = {};
  CUDA_CHECK(cudaMemcpy(back, sums, sizeof back, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back[0], 36);
  EXPECT_EQ(back[1], 36);
  EXPECT_EQ(diagnostic(), "");
  cudaFree(x), cudaFree(sums);
}

namespace {

// The values 0..n-1 in a scrambled order, in a cudaMalloc array of n ints.
int* scrambled(int n) {
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = static_cast<int>((i * 7919L) % n);
  int* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, values.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

// A comparison that says whether it ran in a kernel.
struct LessSeen {
  bool* in_kernel;
  __host__ __device__ bool operator()(int a, int b) const {
    *in_kernel = *in_kernel || cudalab::emu::in_kernel();
    return a < b;
  }
};

struct Square {
  __host__ __device__ long operator()(int x) const { return static_cast<long>(x) * x; }
};

}  // namespace

// With no policy, Thrust runs where the iterators' memory is: over a device_ptr to cudaMalloc
// memory, on the device (a launch, as on a GPU), which the host code could not touch.
TEST_F(ThrustChecks, DeviceIteratorsWithNoPolicyRunOnTheDevice) {
  const int n = 1000;
  int* d = scrambled(n);
  const thrust::device_ptr<int> begin(d), end = begin + n;
  bool in_kernel = false;
  thrust::sort(begin, end, LessSeen{&in_kernel});
  EXPECT_TRUE(in_kernel);
  EXPECT_EQ(thrust::reduce(begin, end), n * (n - 1) / 2);
  EXPECT_EQ(thrust::reduce(thrust::make_transform_iterator(begin, Square{}),
                           thrust::make_transform_iterator(end, Square{}), 0L),
            332833500L);  // the sum of i * i below 1000
  std::vector<int> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], i) << "at " << i;
  EXPECT_EQ(diagnostic(), "");
  cudaFree(d);
}

// Host iterators with no policy stay host code (no launch).
TEST_F(ThrustChecks, HostIteratorsWithNoPolicyStayOnTheHost) {
  std::vector<int> values{3, 1, 2};
  thrust::host_vector<int> host(values.begin(), values.end());
  bool in_kernel = false;
  thrust::sort(values.begin(), values.end(), LessSeen{&in_kernel});
  thrust::sort(host.begin(), host.end(), LessSeen{&in_kernel});
  thrust::sort(host.data(), host.data() + host.size(), LessSeen{&in_kernel});
  EXPECT_FALSE(in_kernel);
  EXPECT_EQ(values, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(host[0], 1);
  EXPECT_EQ(diagnostic(), "");
}

TEST_F(ThrustChecks, ASortOfDeviceIteratorsPastTheArrayIsNamedAtTheCall) {
  const int n = 1000;
  int* d = scrambled(n);
  const thrust::device_ptr<int> begin(d);
  int line = 0;
  cudaError_t error = cudaSuccess;
  try {
    line = __LINE__ + 1;
    thrust::sort(begin, begin + n + 1);
  } catch (const thrust::system_error& e) {
    error = static_cast<cudaError_t>(e.code().value());
  }
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_TRUE(says(
      "kernel 'thrust::sort' (launched at test_thrust_checks.cu:" + std::to_string(line) + ")"))
      << diagnostic();
  EXPECT_TRUE(says("element 1000 of the 1000-element array")) << diagnostic();
  cudaFree(d);
}

// Host code reads and writes an element of device memory through a device reference as a GPU's
// Thrust does, by a copy: here a launch, which checks the element as a kernel's access.
TEST_F(ThrustChecks, ADeviceElementIsReadAndWrittenFromTheHost) {
  const int n = 10;
  int* d = scrambled(n);
  thrust::device_ptr<int> element(d);
  element[1] = 42;
  const int first = element[0], second = element[1];
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 42);
  EXPECT_EQ(diagnostic(), "");
  int line = 0;
  cudaError_t error = cudaSuccess;
  try {
    line = __LINE__ + 1;
    const int past = element[n];
    ADD_FAILURE() << "read " << past;
  } catch (const thrust::system_error& e) {
    error = static_cast<cudaError_t>(e.code().value());
  }
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("kernel 'thrust::device_reference' (launched at test_thrust_checks.cu:" +
                   std::to_string(line) + ")"))
      << diagnostic();
  cudaFree(d);
}

// A copy between host memory and device memory through device pointers, which a GPU's Thrust makes
// with a copy, runs on the device here: the device side is checked as a kernel's access.
TEST_F(ThrustChecks, CopiesBetweenHostAndDevicePointers) {
  const int n = 100;
  int* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, n * sizeof(int)));
  const thrust::device_ptr<int> begin(d);
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = 3 * i;
  thrust::copy(values.begin(), values.end(), begin);
  const thrust::host_vector<int> back(begin, begin + n);
  std::vector<int> again(n);
  thrust::copy(begin, begin + n, again.begin());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(back[i], 3 * i) << i;
    ASSERT_EQ(again[i], 3 * i) << i;
  }
  EXPECT_EQ(diagnostic(), "");
  cudaFree(d);
}
