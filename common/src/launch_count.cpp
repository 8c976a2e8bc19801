// Kernel launches on the cuda backend, for the harnesses' check that the device did the work.
//
// A launch with <<<...>>> is a call, from the student's object, of __cudaLaunchKernel (what nvcc
// 13's launch code calls) or of cudaLaunchKernel (nvcc's older launch code, or the program's own
// call). The harness's link wraps both symbols (--wrap, common/CMakeLists.txt): the call comes
// here, is counted, and goes on to the CUDA runtime. (CUPTI's callbacks would also see launches
// made otherwise, at the cost of a profiling library in every test; the labs launch with
// <<<...>>>.)
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>

namespace {
std::atomic<unsigned long long> launches{0};
unsigned long long launches_before_this_test = 0;

// Each test counts from its own start (a student may run every test in one process).
class LaunchesPerTest : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { launches_before_this_test = launches; }
};
const bool listening = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new LaunchesPerTest);
  return true;
}();
}  // namespace

extern "C" {
cudaError_t __real_cudaLaunchKernel(const void* function, dim3 grid, dim3 block, void** args,
                                    size_t shared_bytes, cudaStream_t stream);
cudaError_t __wrap_cudaLaunchKernel(const void* function, dim3 grid, dim3 block, void** args,
                                    size_t shared_bytes, cudaStream_t stream) {
  ++launches;
  return __real_cudaLaunchKernel(function, grid, block, args, shared_bytes, stream);
}
cudaError_t __real___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                      size_t shared_bytes, cudaStream_t stream);
cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                      size_t shared_bytes, cudaStream_t stream) {
  ++launches;
  return __real___cudaLaunchKernel(kernel, grid, block, args, shared_bytes, stream);
}
}

namespace cudalab::testing {
unsigned long long launches_so_far() { return launches; }  // (the runner's answer to its checker)
unsigned long long launches_in_this_test() {
  (void)listening;
  return launches - launches_before_this_test;
}
}  // namespace cudalab::testing
