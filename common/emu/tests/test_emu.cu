// What only the emu backend does: explain a broken kernel instead of hanging or corrupting memory.
// Each test plants a bug and checks the error code and the diagnostic (kernel, block, threads,
// source lines) that the student would read.
#include <cooperative_groups.h>
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>
#include <mma.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/data.h"
#include "cudalab/device_array.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/testing.h"
#include "emu_fixture.h"

namespace {

// Threads 16 and up return before the barrier (planted bug, line below).
__global__ void early_return(int* out) {
  if (threadIdx.x >= 16) return;
  __syncthreads();  // LINE_EARLY_RETURN_BARRIER
  out[threadIdx.x] = 1;
}

// The same, with the block's barrier as cooperative groups write it (the kernel runs as loops
// between its barriers, thread_loops.py).
__global__ void early_return_group(int* out) {
  cooperative_groups::thread_block block = cooperative_groups::this_thread_block();
  if (threadIdx.x >= 16) return;
  cooperative_groups::sync(block);  // LINE_EARLY_RETURN_GROUP_SYNC
  out[threadIdx.x] = static_cast<int>(block.thread_rank());
}

// Even and odd threads wait at different barriers (planted bug).
__global__ void two_barriers(int* out) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();  // LINE_EVEN_BARRIER
  } else {
    __syncthreads();  // LINE_ODD_BARRIER
  }
  out[threadIdx.x] = 1;
}

// Warp 0 shuffles before its barrier, warp 1 waits at another one (planted bug): the threads
// reach their barriers in different rounds of the block's scheduler.
__global__ void shuffle_then_other_barrier(int* out, bool same) {
  int v = threadIdx.x;
  if (threadIdx.x >= 32 && !same) {
    __syncthreads();  // LINE_WARP1_BARRIER
  } else {
    if (threadIdx.x < 32) v += __shfl_down_sync(0xffffffffu, v, 1);
    __syncthreads();  // LINE_WARP0_BARRIER
  }
  out[threadIdx.x] = v;
}

// Writes one element past n (planted bug: no bounds check).
__global__ void no_bounds_check(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;  // LINE_NO_BOUNDS_CHECK
}

// Shared memory is per block, and blocks run at the same time on several workers.
__global__ void block_private_shared(int* out) {
  __shared__ int mine;
  if (threadIdx.x == 0) mine = blockIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = mine;
}

// One warp per row of 64 values: lanes add pairs, then a shuffle reduction (as in SpMV's vector
// kernel); lane 0 writes the row's sum and the ballot of lanes with odd sums.
__global__ void warp_sums(const int* in, int* sums, unsigned* odd, int rows) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;  // whole warps leave together
  int sum = in[row * 64 + lane] + in[row * 64 + lane + 32];
  unsigned ballot = __ballot_sync(0xffffffff, sum % 2);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
  if (lane == 0) {
    sums[row] = sum;
    odd[row] = ballot;
  }
}

// Half a warp leaves before the shuffle (planted bug).
__global__ void half_warp_shuffle(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_down_sync(0xffffffff, 1, 1);  // LINE_HALF_WARP
}

// The source line of a marker comment in this file.
int line_of(const std::string& marker) {
  FILE* f = std::fopen(__FILE__, "r");
  if (f == nullptr) return -1;
  char buf[512];
  for (int line = 1; std::fgets(buf, sizeof buf, f); ++line) {
    if (std::string(buf).find("// " + marker) != std::string::npos) {
      std::fclose(f);
      return line;
    }
  }
  std::fclose(f);
  return -1;
}

std::string at(const std::string& marker) {
  return "test_emu.cu:" + std::to_string(line_of(marker));
}

TEST_F(Emu, EarlyReturnBeforeBarrierIsAnErrorNotAHang) {
  int* d;
  CUDA_CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  early_return<<<3, 64>>>(d);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure) << "an execution error is sticky";
  EXPECT_TRUE(says("barrier divergence in kernel 'early_return'")) << diagnostic();
  EXPECT_TRUE(says("threads 0-15")) << diagnostic();
  EXPECT_TRUE(says("threads 16-63")) << diagnostic();
  EXPECT_TRUE(says("__syncthreads() at " + at("LINE_EARLY_RETURN_BARRIER"))) << diagnostic();
  EXPECT_TRUE(says("finished without reaching it")) << diagnostic();
}

TEST_F(Emu, EarlyReturnBeforeAGroupsBarrierIsAnErrorNotAHang) {
  int* d;
  CUDA_CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  early_return_group<<<3, 64>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("barrier divergence in kernel 'early_return_group'")) << diagnostic();
  EXPECT_TRUE(says("threads 16-63")) << diagnostic();
  EXPECT_TRUE(says("__syncthreads() at " + at("LINE_EARLY_RETURN_GROUP_SYNC"))) << diagnostic();
}

TEST_F(Emu, DifferentBarriersAreNamedWithBothLines) {
  int* d;
  CUDA_CHECK(cudaMalloc(&d, 32 * sizeof(int)));
  two_barriers<<<1, 32>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says(at("LINE_EVEN_BARRIER"))) << diagnostic();
  EXPECT_TRUE(says(at("LINE_ODD_BARRIER"))) << diagnostic();
  EXPECT_TRUE(says("block (0,0,0)")) << diagnostic();
}

TEST_F(Emu, BarriersReachedAfterAShuffleAreComparedAcrossRounds) {
  int* d;
  CUDA_CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  shuffle_then_other_barrier<<<1, 64>>>(d, true);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  int h[64];
  CUDA_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ(h[0], 0 + 1);
  EXPECT_EQ(h[30], 30 + 31);
  EXPECT_EQ(h[40], 40);
  shuffle_then_other_barrier<<<1, 64>>>(d, false);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("threads 0-31 (the first is threadIdx (0,0,0)) wait at __syncthreads() at " +
                   at("LINE_WARP0_BARRIER") + ", but threads 32-63"))
      << diagnostic();
  EXPECT_TRUE(says("wait at a different __syncthreads() at " + at("LINE_WARP1_BARRIER")))
      << diagnostic();
}

TEST_F(Emu, StickyErrorLastsUntilDeviceReset) {
  int* d;
  CUDA_CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  early_return<<<1, 64>>>(d);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure) << "sticky: not reset by reading it";
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&p, 16), cudaSuccess);
}

TEST_F(Emu, WritePastTheEndNamesKernelAndAllocation) {
  float* d;
  CUDA_CHECK(cudaMalloc(&d, 100 * sizeof(float)));  // LINE_ALLOCATION
  no_bounds_check<<<1, 128>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("kernel 'no_bounds_check'")) << diagnostic();
  EXPECT_TRUE(says("block (0,0,0), thread (100,0,0), at " + at("LINE_NO_BOUNDS_CHECK")))
      << diagnostic();
  EXPECT_TRUE(says("element 100 of the 100-element array")) << diagnostic();
  EXPECT_TRUE(says("allocated at " + at("LINE_ALLOCATION") + " (d)")) << diagnostic();
}

// An allocation is named by the variable its line declares, and by none where the line declares
// two (a DeviceArray's line is the caller's: the array cannot tell which declarator it is).
TEST_F(Emu, AnArrayIsNamedOnlyWhenItsLineNamesOneArray) {
  {
    cudalab::DeviceArray<float> d_alone(100, 0.0f);  // LINE_ONE_ARRAY
    no_bounds_check<<<1, 128>>>(d_alone.get());
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    EXPECT_TRUE(says("allocated at " + at("LINE_ONE_ARRAY") + " (d_alone)")) << diagnostic();
  }
  Reset();
  cudalab::DeviceArray<float> d_first(std::vector<float>(8)), d_second(100, 0.0f);  // LINE_TWO
  no_bounds_check<<<1, 128>>>(d_second.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("allocated at " + at("LINE_TWO") + ": ")) << diagnostic();
}

TEST_F(Emu, MemcpyPastTheEndOfAnArray) {
  float* d;
  float h[200] = {};
  CUDA_CHECK(cudaMalloc(&d, 100 * sizeof(float)));
  EXPECT_EQ(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_TRUE(says("run 400 bytes past the end of the 400-byte array")) << diagnostic();
  EXPECT_EQ(cudaMemcpy(h, d + 50, 50 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
}

TEST_F(Emu, HostPointerWhereDeviceMemoryBelongs) {
  float a[4] = {}, b[4] = {};
  EXPECT_EQ(cudaMemcpy(a, b, sizeof a, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_TRUE(says("the destination is not device memory")) << diagnostic();
  float* d;
  CUDA_CHECK(cudaMalloc(&d, sizeof a));
  CUDA_CHECK(cudaFree(d));
  EXPECT_EQ(cudaMemcpy(a, d, sizeof a, cudaMemcpyDeviceToHost), cudaErrorInvalidValue)
      << "use after free";
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidValue) << "double free";
}

TEST_F(Emu, FreshDeviceMemoryIsNotZero) {
  float* d;
  float h = 0;
  CUDA_CHECK(cudaMalloc(&d, sizeof h));
  CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(cudalab::is_poison(h)) << "unwritten device memory holds the poison (a NaN)";
}

// The line, and the variable it fills (read from the source).
TEST_F(Emu, AllocationsAreTrackedWithTheirLine) {
  ASSERT_TRUE(cudalab::emu::live_allocations().empty());
  void* p;
  CUDA_CHECK(cudaMalloc(&p, 24));  // LINE_TRACKED
  auto live = cudalab::emu::live_allocations();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].bytes, 24u);
  EXPECT_EQ(live[0].where, at("LINE_TRACKED") + " (p)");
  CUDA_CHECK(cudaFree(p));
  EXPECT_TRUE(cudalab::emu::live_allocations().empty());
}

TEST_F(Emu, PlannedMallocFailure) {
  void *a, *b;
  cudalab::emu::fail_malloc_after(1);
  EXPECT_EQ(cudaMalloc(&a, 8), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&b, 8), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaMalloc(&b, 8), cudaSuccess) << "only one call fails";
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
}

TEST_F(Emu, SharedMemoryIsPrivateToEachBlock) {
  const int BLOCKS = 500, THREADS = 64;
  int* d;
  std::vector<int> h(BLOCKS * THREADS);
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  block_private_shared<<<BLOCKS, THREADS>>>(d);
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < BLOCKS * THREADS; ++i) ASSERT_EQ(h[i], i / THREADS) << i;
  EXPECT_GE(cudalab::emu::worker_count(), 1u);
}

TEST_F(Emu, WarpShufflesAndBallots) {
  const int rows = 10;  // 320 threads in blocks of 128: the third block has 64 with rows
  std::vector<int> h(rows * 64);
  for (int i = 0; i < rows * 64; ++i) h[i] = i % 7;
  int *in, *sums;
  unsigned* odd;
  CUDA_CHECK(cudaMalloc(&in, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&sums, rows * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&odd, rows * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(in, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  warp_sums<<<3, 128>>>(in, sums, odd, rows);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> got(rows);
  std::vector<unsigned> ballots(rows);
  CUDA_CHECK(cudaMemcpy(got.data(), sums, rows * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(ballots.data(), odd, rows * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r) {
    int sum = 0;
    unsigned ballot = 0;
    for (int lane = 0; lane < 32; ++lane) {
      int pair = h[r * 64 + lane] + h[r * 64 + lane + 32];
      sum += pair;
      ballot |= (pair % 2 ? 1u : 0u) << lane;
    }
    EXPECT_EQ(got[r], sum) << "row " << r;
    EXPECT_EQ(ballots[r], ballot) << "row " << r;
  }
}

TEST_F(Emu, ShuffleWithMissingLanesIsNamed) {
  int* d;
  CUDA_CHECK(cudaMalloc(&d, 32 * sizeof(int)));
  half_warp_shuffle<<<1, 32>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("warp divergence")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_HALF_WARP"))) << diagnostic();
  EXPECT_TRUE(says("threads 16-31")) << diagnostic();
}

__global__ void fill_half(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) out[i] = 1.0f + i;
}

// Which bytes kernels wrote follows them to the host: through a copy between arrays, through the
// copy to host memory, and only while the host leaves them as they came.
TEST_F(Emu, DeviceWorkIsFollowedFromTheKernelToTheHost) {
  const int n = 1000;
  const size_t bytes = n * sizeof(float);
  float *d, *copy;
  CUDA_CHECK(cudaMalloc(&d, bytes));
  CUDA_CHECK(cudaMalloc(&copy, bytes));
  std::vector<float> host(n, 7.0f);
  CUDA_CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
  EXPECT_EQ(cudalab::emu::device_work(d, bytes).by_kernels, 0u) << "copied from the host";
  fill_half<<<4, 256>>>(d, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(cudalab::emu::device_work(d, bytes).by_kernels, bytes / 2);
  CUDA_CHECK(cudaMemcpy(copy, d, bytes, cudaMemcpyDeviceToDevice));
  EXPECT_EQ(cudalab::emu::device_work(copy, bytes).by_kernels, bytes / 2) << "device to device";
  std::vector<float> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), copy, bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudalab::emu::device_work(back.data(), bytes).by_kernels, bytes / 2);
  back[0] = 1.5f;  // the host changes an element a kernel computed (a byte of it, here)
  EXPECT_LT(cudalab::emu::device_work(back.data(), bytes).by_kernels, bytes / 2);
  EXPECT_EQ(cudalab::emu::device_work(host.data(), bytes).by_kernels, 0u) << "never copied back";
  CUDA_CHECK(cudaMemset(copy, 0, bytes));
  EXPECT_EQ(cudalab::emu::device_work(copy, bytes).by_kernels, 0u) << "cudaMemset is the host's";
  cudaFree(d), cudaFree(copy);
}

__global__ void fill_odd_bytes(unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 2 == 1) out[i] = 1;
}

// Words whose bytes have different writers (a kernel's and the host's), copied back whole and from
// inside a word: the bytes the kernel wrote are followed one by one.
TEST_F(Emu, DeviceWorkIsFollowedByteByByte) {
  const int n = 1001;
  unsigned char* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, n));
  std::vector<unsigned char> host(n, 7);
  CUDA_CHECK(cudaMemcpy(d, host.data(), n, cudaMemcpyHostToDevice));
  fill_odd_bytes<<<4, 256>>>(d, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), d, n, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudalab::emu::device_work(back.data(), n).by_kernels, n / 2u);
  std::vector<unsigned char> inside(n - 3);  // (from byte 3 on: odd bytes 3, 5, ..., 999)
  CUDA_CHECK(cudaMemcpy(inside.data(), d + 3, n - 3, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudalab::emu::device_work(inside.data(), n - 3).by_kernels, n / 2u - 1);
  cudaFree(d);
}

// Two threads of one statement store one shared element. Only where the array's rows are
// narrower than the block do the message's words blame the subscripts and the declared
// dimensions; a 1D array as wide as the block keeps the race's words. Threads that store the same
// value (a warp's lanes storing their reduction's result, llm.c's global_norm) are no race.
__global__ void halves_share_an_element(float* out, bool same_value) {
  __shared__ float pairs[64];
  pairs[threadIdx.x / 2] = same_value ? 1.0f : threadIdx.x;  // LINE_HALVES
  __syncthreads();
  out[threadIdx.x] = pairs[threadIdx.x / 2];
}

TEST_F(Emu, SubscriptsAreBlamedOnlyWhereTheRowsAreNarrowerThanTheBlock) {
  float* out;
  CUDA_CHECK(cudaMalloc(&out, 64 * sizeof(float)));
  halves_share_an_element<<<1, 64>>>(out, true);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  halves_share_an_element<<<1, 64>>>(out, false);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("with another value")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_HALVES"))) << diagnostic();
  EXPECT_TRUE(says("no __syncthreads() in between")) << diagnostic();
  EXPECT_FALSE(says("declared dimensions")) << diagnostic();
  cudaDeviceReset();
}

// A race inside a block whose two orders leave the same memory (NVIDIA's segmentationTreeThrust):
// vertices 2k and 2k + 1 are each other's successor, and the thread of each breaks the cycle by
// making the smaller its own successor. Thread 2k + 1 reads successors[2k], which thread 2k
// writes with no barrier between; whichever runs first, successors[2k] ends as 2k. The emu runs
// such a launch again with each block's threads last first and reports the race only if the
// memory differs. `marks`, when given, is a __device__ variable the kernel writes: no second run
// can undo that, and the race is reported as found.
__device__ int cycles_marked;
__global__ void break_two_cycles(unsigned* successors, unsigned n, bool mark) {
  const unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  if (v == 0) printf("breaking cycles\n");
  if (mark && v == 0) cycles_marked = 1;
  const unsigned successor = successors[v];
  if (successors[successor] == v) {  // LINE_CYCLE_READ
    if (v < successor)
      successors[v] = v;  // LINE_CYCLE_WRITE
    else
      successors[successor] = successor;
  }
}

TEST_F(Emu, ARaceWhoseOrdersAgreeIsNoAlarm) {
  const unsigned n = 1024;
  std::vector<unsigned> pairs(n);
  unsigned* successors;
  CUDA_CHECK(cudaMalloc(&successors, n * sizeof(unsigned)));
  // Partners in one block (v ^ 1), then in two blocks (v ^ 256, the same thread of each: no index
  // without blockIdx, as each thread writes back what it read there).
  for (const unsigned partner : {1u, 256u}) {
    for (unsigned v = 0; v < n; ++v) pairs[v] = v ^ partner;
    CUDA_CHECK(cudaMemcpy(successors, pairs.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    testing::internal::CaptureStdout();
    break_two_cycles<<<n / 256, 256>>>(successors, n, false);
    const cudaError_t error = cudaDeviceSynchronize();
    const std::string printed = testing::internal::GetCapturedStdout();
    ASSERT_EQ(error, cudaSuccess) << diagnostic();
    EXPECT_EQ(printed, "breaking cycles\n") << "the second run prints nothing";
    std::vector<unsigned> after(n);
    CUDA_CHECK(cudaMemcpy(after.data(), successors, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned v = 0; v < n; ++v) ASSERT_EQ(after[v], std::min(v, v ^ partner)) << v;
  }
  int marked = -1;
  CUDA_CHECK(cudaMemcpyFromSymbol(&marked, cycles_marked, sizeof marked));
  EXPECT_EQ(marked, 0);

  // The same race in a launch that writes a __device__ variable: reported where it was found.
  for (unsigned v = 0; v < n; ++v) pairs[v] = v ^ 1u;
  CUDA_CHECK(cudaMemcpy(successors, pairs.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  break_two_cycles<<<n / 256, 256>>>(successors, n, true);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (1,0,0)")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_CYCLE_READ"))) << diagnostic();
  EXPECT_TRUE(says(at("LINE_CYCLE_WRITE"))) << diagnostic();
  cudaDeviceReset();
}

// A race whose orders differ: each thread adds its neighbour's element to its own, in place. The
// second run (last thread first) reads the elements before they change; the first, after. The
// race is reported as the first run found it, and the array holds what the first run left.
__global__ void add_left_neighbour(float* a, int n) {
  const int i = threadIdx.x;
  if (i > 0 && i < n) a[i] += a[i - 1];  // LINE_ADD_LEFT
}

TEST_F(Emu, ARaceWhoseOrdersDifferIsNamedAsFound) {
  const int n = 64;
  float* a;
  CUDA_CHECK(cudaMalloc(&a, n * sizeof(float)));
  std::vector<float> ones(n, 1.0f);
  CUDA_CHECK(cudaMemcpy(a, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  add_left_neighbour<<<1, n>>>(a, n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("a read of element 1 of the array")) << diagnostic();
  EXPECT_TRUE(says("thread (2,0,0)")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_ADD_LEFT"))) << diagnostic();
  cudaDeviceReset();
}

// Threads that add into one counter without an atomic: every order of whole threads (or blocks)
// gives the full count, but on a GPU threads that run at once lose each other's updates. The
// write back of another value into an element read after another thread (of the block, or of
// another block) wrote it is named at once.
__global__ void count_without_atomics(int* counts, bool one_per_block) {
  if (one_per_block && threadIdx.x != 0) return;
  counts[threadIdx.x % 4] = counts[threadIdx.x % 4] + 1;  // LINE_COUNT
}

TEST_F(Emu, AReadModifyWriteByThreadsOrBlocksIsNamedWhateverTheOrder) {
  int* counts;
  CUDA_CHECK(cudaMalloc(&counts, 4 * sizeof(int)));
  CUDA_CHECK(cudaMemset(counts, 0, 4 * sizeof(int)));
  count_without_atomics<<<1, 64>>>(counts, false);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("lose each other's updates")) << diagnostic();
  EXPECT_TRUE(says("thread (4,0,0)")) << diagnostic();
  EXPECT_TRUE(says("of this block wrote it at " + at("LINE_COUNT"))) << diagnostic();
  Reset();
  CUDA_CHECK(cudaMalloc(&counts, 4 * sizeof(int)));
  CUDA_CHECK(cudaMemset(counts, 0, 4 * sizeof(int)));
  count_without_atomics<<<8, 64>>>(counts, true);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("lose each other's updates")) << diagnostic();
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_COUNT"))) << diagnostic();
  cudaDeviceReset();
}

__global__ void fill_from_block(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) out[i] = 2.0f * i;  // LINE_FILL_FROM_BLOCK
}

// Who stored an element follows it from the kernel to the host: its launch, block, thread and
// line; for an element no thread stored, the launch that stored into its array.
TEST_F(Emu, AnElementsStoreIsFollowedFromTheKernelToTheHost) {
  const int n = 1000;
  const size_t bytes = n * sizeof(float);
  float *d, *copy;
  CUDA_CHECK(cudaMalloc(&d, bytes));
  CUDA_CHECK(cudaMalloc(&copy, bytes));
  CUDA_CHECK(cudaMemset(d, 0, bytes));
  fill_from_block<<<dim3(4), dim3(256)>>>(d, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(copy, d, bytes, cudaMemcpyDeviceToDevice));
  std::vector<float> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), copy, bytes, cudaMemcpyDeviceToHost));
  const auto stored = cudalab::emu::element_store(&back[300], sizeof(float));
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->stored);
  EXPECT_EQ(stored->kernel, "fill_from_block");
  EXPECT_EQ(stored->grid.x, 4u);
  EXPECT_EQ(stored->block.x, 256u);
  EXPECT_EQ(stored->block_index.x, 1u);
  EXPECT_EQ(stored->thread_index.x, 44u);
  EXPECT_EQ(stored->store.text(), at("LINE_FILL_FROM_BLOCK"));
  const auto unstored = cudalab::emu::element_store(&back[700], sizeof(float));
  ASSERT_TRUE(unstored.has_value());
  EXPECT_FALSE(unstored->stored);
  EXPECT_EQ(unstored->kernel, "fill_from_block") << "the launch that stored into the array";
  back[300] = -1.0f;  // the host changed it: nothing is claimed
  EXPECT_FALSE(cudalab::emu::element_store(&back[300], sizeof(float)).has_value());
  const auto on_device = cudalab::emu::element_store(d + 3, sizeof(float));
  ASSERT_TRUE(on_device.has_value());
  EXPECT_EQ(on_device->thread_index.x, 3u);
  cudaFree(d), cudaFree(copy);
}

// One thread per element, each access P[i] under i < n: a block's ranges are checked once, before
// it runs (common/emu/src/proven_blocks.cpp), and its threads run without a check per access.
__global__ void scaled_sum(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * a[i] + b[i];  // LINE_SCALED_SUM
}

// Runs scaled_sum on n elements in blocks of 256, a[i] = i and b[i] = 1 copied for the first
// `written` elements; `out` has room for `room` elements (n when 0), or is `a` shifted by `shift`.
struct ScaledSum {
  int n, written = -1, room = 0, shift = 0;
  cudaError_t status;
  std::vector<float> out;
  unsigned long long proven_blocks;
  std::optional<cudalab::ElementStore> store_of_300;
};
ScaledSum run_scaled_sum(ScaledSum s) {
  const int written = s.written < 0 ? s.n : s.written;
  std::vector<float> a(s.n), b(s.n, 1.0f);
  for (int i = 0; i < s.n; ++i) a[i] = static_cast<float>(i);
  float *da, *db, *dout = nullptr;
  CUDA_CHECK(cudaMalloc(&da, s.n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&db, s.n * sizeof(float)));
  if (s.shift == 0) CUDA_CHECK(cudaMalloc(&dout, (s.room ? s.room : s.n) * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), written * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), written * sizeof(float), cudaMemcpyHostToDevice));
  const unsigned long long before = cudalab::emu::proven_blocks_run();
  scaled_sum<<<(s.n + 255) / 256, 256>>>(da, db, s.shift ? da + s.shift : dout, s.n);
  s.status = cudaDeviceSynchronize();
  s.proven_blocks = cudalab::emu::proven_blocks_run() - before;
  if (s.status == cudaSuccess) {
    s.out.resize(s.n);
    CUDA_CHECK(cudaMemcpy(s.out.data(), dout, s.n * sizeof(float), cudaMemcpyDeviceToHost));
    s.store_of_300 = cudalab::emu::element_store(&s.out[300], sizeof(float));
  }
  cudaFree(da), cudaFree(db), cudaFree(dout);
  return s;
}

// The blocks after the first run without per-access checks, and their stores are recorded as the
// checks record them: the report of a wrong result still names an element's thread and line.
TEST_F(Emu, ProvenBlocksRunWithoutPerAccessChecksAndKeepWhoStoredWhat) {
  const ScaledSum s = run_scaled_sum({.n = 1000});
  ASSERT_EQ(s.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < s.n; ++i) ASSERT_EQ(s.out[i], 2.0f * i + 1.0f) << "element " << i;
  EXPECT_EQ(s.proven_blocks, 3u) << "blocks 1 to 3 (the first block runs checked)";
  ASSERT_TRUE(s.store_of_300.has_value());
  EXPECT_EQ(s.store_of_300->kernel, "scaled_sum");
  EXPECT_EQ(s.store_of_300->block_index.x, 1u);
  EXPECT_EQ(s.store_of_300->thread_index.x, 44u);
  EXPECT_EQ(s.store_of_300->store.text(), at("LINE_SCALED_SUM"));
}

// A block whose ranges the launch cannot pass runs checked, and its first faulting thread is named
// as always: a load of an element nobody wrote, a store past the array's end.
TEST_F(Emu, AProvenBlockWithAFaultRunsCheckedAndTheThreadIsNamed) {
  const ScaledSum unwritten = run_scaled_sum({.n = 512, .written = 300});
  EXPECT_EQ(unwritten.status, cudaErrorLaunchFailure);
  EXPECT_EQ(unwritten.proven_blocks, 0u);
  EXPECT_TRUE(says("block (1,0,0), thread (44,0,0), at " + at("LINE_SCALED_SUM"))) << diagnostic();
  EXPECT_TRUE(says("element 300 of the array")) << diagnostic();
  EXPECT_TRUE(says("which nobody wrote since cudaMalloc")) << diagnostic();
  Reset();
  const ScaledSum past_the_end = run_scaled_sum({.n = 512, .room = 500});
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_EQ(past_the_end.proven_blocks, 0u);
  EXPECT_TRUE(says("block (1,0,0), thread (244,0,0), at " + at("LINE_SCALED_SUM"))) << diagnostic();
  EXPECT_TRUE(says("element 500 of the 500-element array")) << diagnostic();
}

// A load's array once seen written throughout is not looked at word by word again, until a copy
// brings bytes nobody wrote into it: the next launch looks again and names the load.
TEST_F(Emu, ACopyOfBytesNobodyWroteIntoAnArraySeenWrittenIsLookedAtAgain) {
  const int n = 1000;
  const std::vector<float> ones(n, 1.0f);
  float *a, *b, *out, *unwritten;
  for (float** p : {&a, &b, &out, &unwritten}) CUDA_CHECK(cudaMalloc(p, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(a, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const unsigned long long before = cudalab::emu::proven_blocks_run();
  scaled_sum<<<(n + 255) / 256, 256>>>(a, b, out, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 3u);
  CUDA_CHECK(cudaMemcpy(a + 300, unwritten, 4 * sizeof(float), cudaMemcpyDeviceToDevice));
  scaled_sum<<<(n + 255) / 256, 256>>>(a, b, out, n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("block (1,0,0), thread (44,0,0), at " + at("LINE_SCALED_SUM"))) << diagnostic();
  EXPECT_TRUE(says("element 300 of the array")) << diagnostic();
  EXPECT_TRUE(says("nobody wrote")) << diagnostic();
  for (float* p : {a, b, out, unwritten}) cudaFree(p);
}

// What a launch saw written is the elements it loads, no more: a later launch that loads further
// looks at the words past them, and names a load of one nobody wrote.
TEST_F(Emu, AnArraySeenWrittenInPartIsLookedAtPastThatPart) {
  const int n = 768, written = 700;  // (only the last block loads an element nobody wrote)
  const std::vector<float> ones(n, 1.0f);
  float *a, *b, *out;
  for (float** p : {&a, &b, &out}) CUDA_CHECK(cudaMalloc(p, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(a, ones.data(), written * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int part : {256, 512}) {  // (a's elements [0, 512) seen written, b's too)
    const unsigned long long before = cudalab::emu::proven_blocks_run();
    scaled_sum<<<(part + 255) / 256, 256>>>(a, b, out, part);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
    EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, part / 256u - 1);
  }
  scaled_sum<<<n / 256, 256>>>(a, b, out, n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("block (2,0,0), thread (188,0,0), at " + at("LINE_SCALED_SUM"))) << diagnostic();
  EXPECT_TRUE(says("element 700 of the array")) << diagnostic();
  EXPECT_TRUE(says("nobody wrote")) << diagnostic();
  for (float* p : {a, b, out}) cudaFree(p);
}

// The same in a grid-stride loop: a block's threads touch one row of elements per pass of the grid.
__global__ void scaled_sum_by_strides(const float* a, const float* b, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = 2.0f * a[i] + b[i];  // LINE_SCALED_SUM_BY_STRIDES
}

// Each row of an 8 x 8 tile summed (a tiled product's inner loop): the stretch between the
// barriers only loads the tile, so the block checks the words it reads once
// (common/emu/src/proven_stretches.cpp) and runs the stretch without a check per access (the
// tile's loads, below the thread bound `loaded`, and the output are proven too, in the launch's
// blocks after the first).
// Threads with tx >= `loaded` leave their element unwritten, and the sum reads `shift` elements
// further on (planted bugs, for loaded < 8 or shift > 0).
__global__ void tile_row_sums(const float* in, float* out, int loaded, int shift) {
  __shared__ float tile[8][8];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = (blockIdx.x * 8 + ty) * 8 + tx;
  if (tx < loaded) tile[ty][tx] = in[i];
  __syncthreads();
  float sum = 0;
  for (int k = 0; k < 8; ++k) sum += tile[ty][k + shift];  // LINE_TILE_ROW_SUM
  __syncthreads();
  out[i] = sum;
}

// A launch of a kernel with proven stretches: its status, its output where it succeeded, and the
// stretches it ran proven.
struct ProvenRun {
  cudaError_t status;
  std::vector<float> out;
  unsigned long long proven_stretches;
};
template <class Launch>
ProvenRun run_proven(cudalab::DeviceArray<float>& out, Launch launch) {
  const unsigned long long before = cudalab::emu::proven_stretches_run();
  launch();
  ProvenRun r{cudaDeviceSynchronize(), {}, cudalab::emu::proven_stretches_run() - before};
  if (r.status == cudaSuccess) r.out = out.to_host();
  return r;
}

ProvenRun run_tile_row_sums(int loaded, int shift, int blocks = 2) {
  const int n = blocks * 64;  // blocks of 8 x 8 threads
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 13);
  cudalab::DeviceArray<float> d_in(in), d_out(n, -1.0f);  // (poisoned)
  return run_proven(d_out, [&] {
    tile_row_sums<<<blocks, dim3(8, 8)>>>(d_in.get(), d_out.get(), loaded, shift);
  });
}

TEST_F(Emu, AStretchThatOnlyLoadsSharedMemoryRunsUncheckedWhereTheBlockProvesItsWords) {
  const ProvenRun r = run_tile_row_sums(8, 0);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 128; ++i) {
    const int row = i / 8 * 8;
    double sum = 0;
    for (int k = 0; k < 8; ++k) sum += (row + k) % 13;
    ASSERT_EQ(r.out[i], sum) << "element " << i;
  }
  EXPECT_EQ(r.proven_stretches, 4u) << "the sums in each block, the loads and output in block 1";
}

// A tile element nobody wrote, a load past the tile: the stretch runs checked, and the first
// faulting thread is named at the sum's line as always. (One block: its stretches that touch global
// memory run checked as the launch's first block's do, so none is proven.)
TEST_F(Emu, AProvenStretchWhoseWordsFailRunsCheckedAndTheThreadIsNamed) {
  const ProvenRun unwritten = run_tile_row_sums(7, 0, 1);
  EXPECT_EQ(unwritten.status, cudaErrorLaunchFailure);
  EXPECT_EQ(unwritten.proven_stretches, 0u);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_TILE_ROW_SUM"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that no thread of this block wrote")) << diagnostic();
  Reset();
  const ProvenRun past_the_tile = run_tile_row_sums(8, 1, 1);
  EXPECT_EQ(past_the_tile.status, cudaErrorIllegalAddress);
  EXPECT_EQ(past_the_tile.proven_stretches, 0u);
  EXPECT_TRUE(says("thread (0,7,0), at " + at("LINE_TILE_ROW_SUM"))) << diagnostic();
}

// Each block stores a tile, reverses it into a second tile (a stretch of shared memory only,
// whose proof a worker remembers for its next blocks: remembered_stretches.h), and stores that.
// Planted bug: in block `short_block`, only the threads below 32 store their tile element, so its
// reversal reads words nobody wrote: the remembered proof looks at the block's own words and the
// stretch runs checked there, which names the first thread that reads one.
__global__ void reversed_tiles(float* out, int short_block) {
  __shared__ float tile[64], reversed[64];
  const int tid = threadIdx.x;
  if (blockIdx.x != short_block || tid < 32) tile[tid] = tid;
  __syncthreads();
  reversed[tid] = tile[63 - tid];  // LINE_REVERSED_TILE
  __syncthreads();
  out[blockIdx.x * 64 + tid] = reversed[tid];
}

TEST_F(Emu, ARememberedProofLooksAtEachBlocksOwnWords) {
  const int blocks = 16;
  cudalab::DeviceArray<float> out(blocks * 64, -1.0f);  // (poisoned)
  const ProvenRun whole = run_proven(out, [&] { reversed_tiles<<<blocks, 64>>>(out.get(), -1); });
  ASSERT_EQ(whole.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < blocks * 64; ++i) ASSERT_EQ(whole.out[i], 63 - i % 64) << "element " << i;
  EXPECT_GE(whole.proven_stretches, 2u * (blocks - 1)) << "the reversal in every block";
  Reset();
  cudalab::DeviceArray<float> short_out(blocks * 64, -1.0f);
  const ProvenRun short_tile =
      run_proven(short_out, [&] { reversed_tiles<<<blocks, 64>>>(short_out.get(), 11); });
  EXPECT_EQ(short_tile.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("block (11,0,0)")) << diagnostic();
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_REVERSED_TILE"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that no thread of this block wrote")) << diagnostic();
}

// An 8 x 8 tile of `in` staged in shared memory, every thread storing one element (a tiled
// product's tile loads), then read across: the stretch that loads the tile stores to shared memory
// and loads global memory only, at subscripts affine in the thread's index, so the block checks
// its words once and records its stores (common/emu/src/proven_stretches.cpp) and runs it without
// a check per access. Planted bugs: `shift` moves each load one element on (the last block's last
// thread reads past `in`), `extra` makes block 1 read a column of the tile that no thread wrote
// (after stores the proof recorded: the launch's first block runs checked).
__global__ void tile_across(const float* in, float* out, int shift, int extra) {
  __shared__ float tile[8][9];
  const int tx = threadIdx.x, ty = threadIdx.y;
  tile[ty][tx] = in[(blockIdx.x * 8 + ty) * 8 + tx + shift];  // LINE_TILE_LOAD
  __syncthreads();
  const int column = ty + (blockIdx.x == 1 ? extra : 0);
  out[(blockIdx.x * 8 + ty) * 8 + tx] = tile[tx][column];  // LINE_TILE_ACROSS
}

// Three blocks of 8 x 8 threads; `written`: whether `in` holds numbers (else nobody wrote it).
ProvenRun run_tile_across(int shift, int extra, bool written = true) {
  const int n = 3 * 64;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 29);
  cudalab::DeviceArray<float> d_in(in), d_out(n, -1.0f);  // (poisoned)
  float* d_unwritten = nullptr;
  CUDA_CHECK(cudaMalloc(&d_unwritten, n * sizeof(float)));
  const ProvenRun r = run_proven(d_out, [&] {
    tile_across<<<3, dim3(8, 8)>>>(written ? d_in.get() : d_unwritten, d_out.get(), shift, extra);
  });
  cudaFree(d_unwritten);
  return r;
}

TEST_F(Emu, ATileLoadStretchRunsUncheckedWhereTheBlockProvesItsWords) {
  const ProvenRun r = run_tile_across(0, 0);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 3 * 64; ++i) {
    const int block = i / 64, y = i / 8 % 8, x = i % 8;
    ASSERT_EQ(r.out[i], static_cast<float>((block * 64 + x * 8 + y) % 29)) << "element " << i;
  }
  // (the launch's first block runs checked, as a proven block does)
  EXPECT_EQ(r.proven_stretches, 2u) << "the tile's stretch, in blocks 1 and 2";
}

// Each block stores a row of `out` after a barrier, row blockIdx.x / fold (fold 2: blocks 0 and
// 1 store one row, a planted bug), in a stretch the block proves where no other block wrote.
__global__ void rows_out(float* out, int fold) {
  __syncthreads();
  out[blockIdx.x / fold * 64 + threadIdx.x] = blockIdx.x;  // LINE_ROWS_OUT
}

ProvenRun run_rows_out(int fold) {
  cudalab::DeviceArray<float> out(4 * 64, -1.0f);  // (poisoned)
  return run_proven(out, [&] { rows_out<<<4, 64>>>(out.get(), fold); });
}

// The stores a proven stretch recorded name their block, thread and line as the checks' do.
TEST_F(Emu, AProvenStoreToGlobalMemoryKeepsWhoStoredWhat) {
  const ProvenRun r = run_rows_out(1);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  EXPECT_EQ(r.proven_stretches, 3u) << "blocks 1 to 3";
  for (int i = 0; i < 4 * 64; ++i) ASSERT_EQ(r.out[i], i / 64) << "element " << i;
  const auto stored = cudalab::emu::element_store(&r.out[2 * 64 + 37], sizeof(float));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->block_index.x, 2u);
  EXPECT_EQ(stored->thread_index.x, 37u);
  EXPECT_EQ(stored->store.text(), at("LINE_ROWS_OUT"));
}

// Two blocks that store one element: the second to store is named, its stretch proven or not.
TEST_F(Emu, AProvenStoreOverAnotherBlocksElementIsNamed) {
  const ProvenRun r = run_rows_out(2);
  EXPECT_EQ(r.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("at " + at("LINE_ROWS_OUT"))) << diagnostic();
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
}

// Block b stores 64 elements from (blocks - 1 - b) * 48: each block's last 16 elements are the
// next block's first 16. A block that runs after its neighbour proves its stretch and takes its
// words a few at a time; where the neighbour's elements come last in its row, it meets them
// after taking the others, gives those back and runs checked, which names the race. (Two blocks
// that store at the same instant on two workers may each miss the other's words: 16 blocks
// leave the launch pairs that run one after the other.)
__global__ void overlapping_rows(float* out) {
  __syncthreads();
  out[(gridDim.x - 1 - blockIdx.x) * 48 + threadIdx.x] = blockIdx.x;  // LINE_OVERLAPPING_ROWS
}

TEST_F(Emu, AProvenStoreThatMeetsAnotherBlocksElementsPastItsFirstIsNamed) {
  cudalab::DeviceArray<float> out(16 * 48 + 16, -1.0f);
  overlapping_rows<<<16, 64>>>(out.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("at " + at("LINE_OVERLAPPING_ROWS"))) << diagnostic();
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
}

// Each block stores its row of `out` (after a first row that the host wrote), then after a barrier
// loads the row before its own: the previous block's, stored in this launch, a race between blocks.
// `out` was seen written before the launch, and the race is named still, where the previous block
// ran first (the loads' stretch then runs checked): within a worker's share of the 64 blocks.
__global__ void previous_rows(const float* in, float* out, float* copy) {
  __shared__ float row[64];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  out[blockDim.x + g] = in[g];
  __syncthreads();
  row[threadIdx.x] = out[g];  // LINE_PREVIOUS_ROW
  __syncthreads();
  copy[g] = row[threadIdx.x];
}

TEST_F(Emu, ALoadOfWhatAnotherBlockStoredInTheLaunchIsNamedInAnArraySeenWritten) {
  const int blocks = 64, n = blocks * 64;
  cudalab::DeviceArray<float> in(n, 1.0f), out(n + 64, 2.0f), copy(n, 0.0f);
  previous_rows<<<blocks, 64>>>(in.get(), out.get(), copy.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("at " + at("LINE_PREVIOUS_ROW"))) << diagnostic();
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
}

// Each warp's first lane stores its warp's sum into `sums` (a proven shared store of those
// threads: its record says which words the block wrote), and thread 0 adds the four. Launched
// with 96 threads (planted bug), no warp writes sums[3], and thread 0's read of it is named.
__global__ void warp_partials(const float* in, float* out) {
  __shared__ float sums[4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (lane == 0) sums[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = sums[0] + sums[1] + sums[2] + sums[3];  // LINE_PARTIALS
}

TEST_F(Emu, AWarpsFirstLanesSharedStoresAreRecordedAsTheBlocksWrites) {
  const int blocks = 8;
  std::vector<float> in(blocks * 128);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 5);
  cudalab::DeviceArray<float> d_in(in), out(blocks, -1.0f);  // (poisoned)
  const ProvenRun whole =
      run_proven(out, [&] { warp_partials<<<blocks, 128>>>(d_in.get(), out.get()); });
  ASSERT_EQ(whole.status, cudaSuccess) << diagnostic();
  for (int b = 0; b < blocks; ++b) {
    double sum = 0;
    for (int i = b * 128; i < b * 128 + 128; ++i) sum += i % 5;
    ASSERT_EQ(whole.out[b], sum) << "block " << b;
  }
  cudalab::DeviceArray<float> short_out(blocks, -1.0f);
  const ProvenRun short_block =
      run_proven(short_out, [&] { warp_partials<<<blocks, 96>>>(d_in.get(), short_out.get()); });
  EXPECT_EQ(short_block.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_PARTIALS"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that no thread of this block wrote")) << diagnostic();
}

// In block `marked`, each thread stores 1 into its element of `marks` (a checked stretch: a store
// under an `if` other than a thread's bound); then each thread stores 2 into its element of x. The
// translator proves the second stretch, but where a checked access touched global memory since
// the block began (block `marked`) it runs checked: the checks judge a store against what they
// recorded since the barrier (global_races.cpp).
__global__ void store_after_checked_store(float* x, float* marks, int marked) {
  if (blockIdx.x == marked) marks[threadIdx.x] = 1.0f;
  const int base = blockIdx.x * 64;
  x[base + threadIdx.x] = 2.0f;
  __syncthreads();  // (the kernel runs as loops between its barriers)
}

TEST_F(Emu, AProvenStoreAfterACheckedAccessOfItsEpochRunsChecked) {
  for (const int marked : {-1, 2}) {
    cudalab::DeviceArray<float> x(4 * 64, 0.0f), marks(64, 0.0f);
    const ProvenRun r =
        run_proven(x, [&] { store_after_checked_store<<<4, 64>>>(x.get(), marks.get(), marked); });
    ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
    for (int i = 0; i < 4 * 64; ++i) ASSERT_EQ(r.out[i], 2.0f) << "element " << i;
    EXPECT_EQ(r.proven_stretches, marked < 0 ? 3u : 2u)
        << "the stores of blocks 1-3 but " << marked;
  }
}

// A host copy of part of an array: the words it wrote whole are seen written, no more. The copy
// ends two bytes into the array's last element, 138, which the third block's proven stretch loads
// (its threads below n), so the stretch is looked at and the load of element 138 is named.
__global__ void staged_rows(const float* in, float* out, int n) {
  __shared__ float row[64];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  row[threadIdx.x] = g < n ? in[g] : 0.0f;  // LINE_STAGED_LOAD
  __syncthreads();
  if (g < n) out[g] = row[threadIdx.x];
}

TEST_F(Emu, AHostCopyOfPartOfAnArrayIsSeenWrittenNoFurther) {
  const int n = 139;
  const std::vector<float> ones(n, 1.0f);
  float *in, *out;
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(in, ones.data(), (n - 1) * sizeof(float) + 2, cudaMemcpyHostToDevice));
  staged_rows<<<3, 64>>>(in, out, n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("block (2,0,0), thread (10,0,0), at " + at("LINE_STAGED_LOAD"))) << diagnostic();
  EXPECT_TRUE(says("nobody wrote")) << diagnostic();
  cudaFree(in), cudaFree(out);
}

// Each warp sums its 32 elements by shuffles and its first lane stores the sum (at `past` beyond
// its own element: a planted bug where past > 0). The load before the first shuffle is a proven
// stretch (a warp's meeting, not a barrier, follows it) where nobody stored into `in` in the launch
// so far, and the first lanes' store one where 32 divides the block's first index. Planted bug
// (`into_next`): thread 0 of each block but the last then stores its warp's sum over the first
// element of the next block's row, which that block loads: where it runs after the store, its
// load is named (a store into `in` in the launch leaves the loads of `in` checked, as they then
// record themselves for the stores after them).
__global__ void shuffled_sums(float* in, float* out, int n, int past, bool into_next) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;  // LINE_SHUFFLED_SUMS_LOAD
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x % 32 == 0 && i < n) out[i / 32 + past] = v;  // LINE_SHUFFLED_SUMS_STORE
  __syncthreads();
  if (into_next && threadIdx.x == 0 && blockIdx.x + 1 < gridDim.x) in[i + 64] = v;
}

ProvenRun run_shuffled_sums(int blocks, int n, int past = 0, bool into_next = false) {
  std::vector<float> in(blocks * 64);
  for (int i = 0; i < blocks * 64; ++i) in[i] = static_cast<float>(i % 7);
  cudalab::DeviceArray<float> d_in(in), d_out(blocks * 2, -1.0f);  // (poisoned)
  return run_proven(
      d_out, [&] { shuffled_sums<<<blocks, 64>>>(d_in.get(), d_out.get(), n, past, into_next); });
}

TEST_F(Emu, ALoadBeforeAShuffleAndTheFirstLanesStoreAreProven) {
  const ProvenRun one = run_shuffled_sums(1, 64), eight = run_shuffled_sums(8, 8 * 64 - 5);
  ASSERT_EQ(one.status, cudaSuccess) << diagnostic();
  ASSERT_EQ(eight.status, cudaSuccess) << diagnostic();
  for (int w = 0; w < 16; ++w) {
    double sum = 0;
    for (int i = w * 32; i < std::min(w * 32 + 32, 8 * 64 - 5); ++i) sum += i % 7;
    ASSERT_EQ(eight.out[w], sum) << "warp " << w;
  }
  // (the launch's first block touches global memory checked; the shuffles' stretches, no access,
  // are proven in every block)
  EXPECT_EQ(eight.proven_stretches - 8 * one.proven_stretches, 14u)
      << "the loads and the stores of blocks 1-7";
}

// The store one element further on: the last warp's first lane writes past the array, and the
// stretch that proves the store runs checked there, which names that thread.
TEST_F(Emu, AFirstLanesStorePastItsArrayNamesTheThread) {
  const ProvenRun r = run_shuffled_sums(8, 8 * 64, 1);
  EXPECT_EQ(r.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (7,0,0), thread (32,0,0), at " + at("LINE_SHUFFLED_SUMS_STORE")))
      << diagnostic();
  EXPECT_TRUE(says("1 past its last element")) << diagnostic();
}

TEST_F(Emu, ALoadBeforeAShuffleOfWhatAnotherBlockStoredInTheLaunchIsNamed) {
  const ProvenRun r = run_shuffled_sums(64, 64 * 64, 0, true);
  EXPECT_EQ(r.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_SHUFFLED_SUMS_LOAD"))) << diagnostic();
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
}

// Each block reverses a row of `in` into `out` through pointers the kernel moves to the thread's
// element (as NVIDIA's convolutionSeparable does): the accesses after the move are the arguments'
// elements at the move's offset plus their subscripts, proven as any other. Planted bug: `shift`
// moves `in` one element on (the last block's last thread reads past it).
__global__ void moved_rows(float* out, const float* in, int pitch, int shift) {
  __shared__ float row[64];
  in += blockIdx.x * pitch + threadIdx.x + shift;
  out += blockIdx.x * pitch + threadIdx.x;
  row[threadIdx.x] = in[0];  // LINE_MOVED_LOAD
  __syncthreads();
  out[0] = row[63 - threadIdx.x];
}

ProvenRun run_moved_rows(int shift) {
  std::vector<float> in(3 * 64);
  for (int i = 0; i < 3 * 64; ++i) in[i] = static_cast<float>(i);
  cudalab::DeviceArray<float> d_in(in), d_out(3 * 64, -1.0f);  // (poisoned)
  return run_proven(d_out, [&] { moved_rows<<<3, 64>>>(d_out.get(), d_in.get(), 64, shift); });
}

TEST_F(Emu, AccessesThroughAMovedPointerAreProven) {
  const ProvenRun r = run_moved_rows(0);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 3 * 64; ++i)
    ASSERT_EQ(r.out[i], i / 64 * 64 + 63 - i % 64) << "element " << i;
  EXPECT_EQ(r.proven_stretches, 4u) << "both stretches, in blocks 1 and 2";
  Reset();
  const ProvenRun past_the_end = run_moved_rows(1);
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (2,0,0), thread (63,0,0), at " + at("LINE_MOVED_LOAD"))) << diagnostic();
}

// A 5-point weighted sum of `in` with the weights in constant memory, each block's row staged in
// shared memory with a halo of zeros: the weights' loads are proven by their subscripts alone
// (device code cannot write constant memory). `shift` moves each weight's subscript on, past the
// array for the last (a planted bug: the sum's stretch is then not proven, and runs checked).
__constant__ float weights[5];
__global__ void weighted_sums(float* out, const float* in, int shift) {
  __shared__ float row[68];
  row[threadIdx.x + 2] = in[blockIdx.x * 64 + threadIdx.x];
  if (threadIdx.x < 2) {
    row[threadIdx.x] = 0;
    row[threadIdx.x + 66] = 0;
  }
  __syncthreads();
  float sum = 0;
  for (int j = 0; j < 5; ++j) sum += weights[j + shift] * row[threadIdx.x + j];
  out[blockIdx.x * 64 + threadIdx.x] = sum;
}

TEST_F(Emu, LoadsOfAConstantArrayAreProvenByTheirSubscripts) {
  const float w[5] = {1, 2, 4, 8, 16};
  CUDA_CHECK(cudaMemcpyToSymbol(weights, w, sizeof w));
  std::vector<float> in(4 * 64);
  for (int i = 0; i < 4 * 64; ++i) in[i] = static_cast<float>(i % 7);
  cudalab::DeviceArray<float> d_in(in), d_out(4 * 64, -1.0f);  // (poisoned)
  const ProvenRun r =
      run_proven(d_out, [&] { weighted_sums<<<4, 64>>>(d_out.get(), d_in.get(), 0); });
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 4 * 64; ++i) {
    double sum = 0;
    for (int j = 0; j < 5; ++j) {
      const int at = i % 64 + j - 2;  // (zeros past the block's row)
      sum += w[j] * (at >= 0 && at < 64 ? in[i / 64 * 64 + at] : 0.0);
    }
    ASSERT_EQ(r.out[i], sum) << "element " << i;
  }
  EXPECT_EQ(r.proven_stretches, 6u) << "both stretches, in blocks 1 to 3";
  const ProvenRun past_the_weights =
      run_proven(d_out, [&] { weighted_sums<<<4, 64>>>(d_out.get(), d_in.get(), 1); });
  EXPECT_EQ(past_the_weights.proven_stretches, 3u) << "the row's stretch alone";
}

// Each block stages four rows of `in` with a halo, as NVIDIA's convolutionSeparable stages a tile:
// the middle of each row (a loop's two steps) and its halo are stores of one stretch whose
// elements interleave without meeting, and the rows are read across a padding column nobody
// writes; the proof looks at the runs of elements each access makes, not at the span between its
// least and greatest. Planted bug: `halo` 9 stores the halo onto the middle's elements, each
// another thread's (a race).
__global__ void halo_rows(float* out, const float* in, int halo) {
  __shared__ float rows[4][8 * 3 + 1];
  const int x = threadIdx.x, y = threadIdx.y;
  for (int i = 1; i < 3; ++i) rows[y][x + i * 8] = in[(blockIdx.x * 4 + y) * 16 + x + i * 8 - 8];
  rows[y][x + halo] = 0;  // LINE_HALO_ROWS
  __syncthreads();
  float sum = 0;
  for (int j = 0; j < 24; ++j) sum += rows[y][j];
  out[(blockIdx.x * 4 + y) * 8 + x] = sum;
}

ProvenRun run_halo_rows(int halo) {
  std::vector<float> in(3 * 64);
  for (int i = 0; i < 3 * 64; ++i) in[i] = static_cast<float>(i % 11);
  cudalab::DeviceArray<float> d_in(in), d_out(3 * 32, -1.0f);  // (poisoned)
  return run_proven(d_out, [&] { halo_rows<<<3, dim3(8, 4)>>>(d_out.get(), d_in.get(), halo); });
}

TEST_F(Emu, StoresWhoseElementsInterleaveAndReadsAcrossPaddingAreProven) {
  const ProvenRun r = run_halo_rows(0);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 3 * 32; ++i) {
    double sum = 0;
    for (int k = 0; k < 16; ++k) sum += (i / 8 * 16 + k) % 11;
    ASSERT_EQ(r.out[i], sum) << "element " << i;
  }
  EXPECT_EQ(r.proven_stretches, 4u) << "both stretches, in blocks 1 and 2";
  Reset();
  const ProvenRun onto_the_middle = run_halo_rows(9);
  EXPECT_EQ(onto_the_middle.status, cudaErrorLaunchFailure);
  EXPECT_EQ(onto_the_middle.proven_stretches, 0u);
  EXPECT_TRUE(says("at " + at("LINE_HALO_ROWS"))) << diagnostic();
  EXPECT_TRUE(says("also wrote the same shared word")) << diagnostic();
}

// A transpose through a padded tile, each thread moving a column of it in loops that step by the
// block's rows (as NVIDIA's transpose sample does, `j += BLOCK_ROWS`): the counters' steps are the
// loops' `step`. Planted bug: `step` 2 takes the threads' rows past the tile's (row ty + 6).
__global__ void stepped_transpose(float* out, const float* in, int width, int step) {
  __shared__ float tile[8][9];
  const int col = blockIdx.x * 8 + threadIdx.x, row = blockIdx.y * 8 + threadIdx.y;
  for (int j = 0; j < 8; j += step)
    tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * width + col];  // LINE_STEPPED_TILE
  __syncthreads();
  const int out_col = blockIdx.y * 8 + threadIdx.x, out_row = blockIdx.x * 8 + threadIdx.y;
  for (int j = 0; j < 8; j += 4)
    out[(out_row + j) * width + out_col] = tile[threadIdx.x][threadIdx.y + j];
}

ProvenRun run_stepped_transpose(int step) {
  std::vector<float> in(16 * 16);
  for (int i = 0; i < 16 * 16; ++i) in[i] = static_cast<float>(i);
  cudalab::DeviceArray<float> d_in(in), d_out(16 * 16, -1.0f);  // (poisoned)
  return run_proven(d_out, [&] {
    stepped_transpose<<<dim3(2, 2), dim3(8, 4)>>>(d_out.get(), d_in.get(), 16, step);
  });
}

TEST_F(Emu, LoopsThatStepByTheBlocksRowsAreProven) {
  const ProvenRun r = run_stepped_transpose(4);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 16 * 16; ++i) ASSERT_EQ(r.out[i], i % 16 * 16 + i / 16) << "element " << i;
  EXPECT_EQ(r.proven_stretches, 6u) << "both stretches, in blocks 1 to 3";
  Reset();
  const ProvenRun past_the_tile = run_stepped_transpose(2);
  EXPECT_EQ(past_the_tile.status, cudaErrorIllegalAddress);
  EXPECT_EQ(past_the_tile.proven_stretches, 0u);
  EXPECT_TRUE(says("thread (0,2,0), at " + at("LINE_STEPPED_TILE"))) << diagnostic();
  EXPECT_TRUE(says("past the end of __shared__ array 'tile'")) << diagnostic();
}

// A load past `in`, a load of memory nobody wrote, a tile element nobody wrote (read after the
// proven stores, which recorded which elements they wrote): each is named at its thread and line
// as without the proof.
TEST_F(Emu, ATileLoadStretchWhoseWordsFailRunsCheckedAndTheThreadIsNamed) {
  const ProvenRun past_the_end = run_tile_across(1, 0);
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (2,0,0), thread (7,7,0), at " + at("LINE_TILE_LOAD"))) << diagnostic();
  Reset();
  const ProvenRun unwritten = run_tile_across(0, 0, false);
  EXPECT_EQ(unwritten.proven_stretches, 0u);
  EXPECT_TRUE(says("at " + at("LINE_TILE_LOAD"))) << diagnostic();
  EXPECT_TRUE(says("nobody wrote")) << diagnostic();
  Reset();
  const ProvenRun unwritten_column = run_tile_across(0, 1);
  EXPECT_EQ(unwritten_column.status, cudaErrorLaunchFailure);
  EXPECT_GE(unwritten_column.proven_stretches, 1u) << "the tile's stretch, in block 1";
  EXPECT_TRUE(says("block (1,0,0), thread (0,7,0), at " + at("LINE_TILE_ACROSS"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that no thread of this block wrote")) << diagnostic();
}

// Each thread stores its number in a tile, its row `step` rows on (0: a column's threads on one
// element), then reads the tile across. No global load: the launch's first block is proven too.
__global__ void numbered_tile(float* out, int step) {
  __shared__ float tile[8][8];
  tile[threadIdx.y * step][threadIdx.x] = threadIdx.y * 8 + threadIdx.x;  // LINE_NUMBERED_TILE
  __syncthreads();
  out[threadIdx.y * 8 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

// Two threads that store one element keep the stretch checked, which names the second.
TEST_F(Emu, AStretchWhoseThreadsStoreOneElementRunsChecked) {
  for (const int step : {1, 0}) {
    cudalab::DeviceArray<float> out(64, -1.0f);  // (poisoned)
    const unsigned long long before = cudalab::emu::proven_stretches_run();
    numbered_tile<<<1, dim3(8, 8)>>>(out.get(), step);
    const cudaError_t status = cudaDeviceSynchronize();
    const unsigned long long proven = cudalab::emu::proven_stretches_run() - before;
    if (step == 1) {
      ASSERT_EQ(status, cudaSuccess) << diagnostic();
      EXPECT_EQ(proven, 1u);
      const std::vector<float> got = out.to_host();
      for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], i % 8 * 8 + i / 8) << "element " << i;
    } else {
      EXPECT_EQ(status, cudaErrorLaunchFailure);
      EXPECT_EQ(proven, 0u);
      EXPECT_TRUE(says("thread (0,1,0), at " + at("LINE_NUMBERED_TILE"))) << diagnostic();
      EXPECT_TRUE(says("also wrote the same shared word")) << diagnostic();
    }
  }
}

// Each thread stores its element of a row and loads its mirror's in the same stretch: a race (the
// mirror may store before or after the load), which the proof leaves to the checks (the words
// themselves pass: the row was written before the barrier, and not since).
__global__ void mirrored_row(float* out) {
  __shared__ float row[8];
  row[threadIdx.x] = 0;
  __syncthreads();
  row[threadIdx.x] = threadIdx.x;  // LINE_MIRRORED_STORE
  const float mirror = row[7 - threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = mirror;
}

TEST_F(Emu, AStretchThatLoadsWhatItStoresRunsChecked) {
  cudalab::DeviceArray<float> out(8, -1.0f);
  const unsigned long long before = cudalab::emu::proven_stretches_run();
  mirrored_row<<<1, 8>>>(out.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudalab::emu::proven_stretches_run() - before, 1u) << "the row's first stores only";
  EXPECT_TRUE(says("at " + at("LINE_MIRRORED_STORE"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that thread")) << diagnostic();
}

// A tree sum of 64 elements per block: each step `if (tid < s) partial[tid] += partial[tid + s]`
// loads and stores the thread's own element and loads another, for the threads below the step's
// bound (a stretch run_while runs), so the block checks the step's words once; the block's sum is
// stored by its first thread (`if (tid == 0)`: the threads below 1). Planted bugs: `extra` 1 reads
// one past the array in the first step, -1 reads the element the thread before the bound stores
// in the same step (a race); `past` 1 stores the last block's sum past the output.
__global__ void tree_sum(const float* in, float* out, int extra, int past) {
  __shared__ float partial[64];
  const int tid = threadIdx.x;
  partial[tid] = in[blockIdx.x * 64 + tid];
  __syncthreads();
  for (int s = 32; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s + extra];  // LINE_TREE_STEP
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x + past] = partial[0];  // LINE_TREE_SUM_STORED
}

// A tree sum's launch, `launch(in, out)`, over three blocks of 64 elements (element i: i % 17).
template <class Launch>
ProvenRun run_tree_sums(Launch launch) {
  const int n = 3 * 64;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 17);
  cudalab::DeviceArray<float> d_in(in), d_out(3, -1.0f);  // (poisoned)
  return run_proven(d_out, [&] { launch(d_in.get(), d_out.get()); });
}

// That a tree sum's run passed with each block's sum, its loads and stored sum proven in blocks 1
// and 2 and its six steps in every block.
void expect_tree_sums(const ProvenRun& r) {
  ASSERT_EQ(r.status, cudaSuccess) << cudalab::emu::last_diagnostic();
  for (int b = 0; b < 3; ++b) {
    double sum = 0;
    for (int i = 0; i < 64; ++i) sum += (b * 64 + i) % 17;
    EXPECT_EQ(r.out[b], sum) << "block " << b;
  }
  EXPECT_EQ(r.proven_stretches, 2u + 3 * 6 + 2)
      << "the loads in blocks 1 and 2, six steps in each, the sums stored in blocks 1 and 2";
}

ProvenRun run_tree_sum(int extra, int past = 0) {
  return run_tree_sums(
      [&](const float* in, float* out) { tree_sum<<<3, 64>>>(in, out, extra, past); });
}

TEST_F(Emu, AReductionStepBelowAThreadBoundRunsUncheckedWhereTheBlockProvesItsWords) {
  expect_tree_sums(run_tree_sum(0));
}

TEST_F(Emu, AReductionStepWhoseWordsFailRunsCheckedAndTheThreadIsNamed) {
  const ProvenRun past_the_end = run_tree_sum(1);
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("thread (31,0,0), at " + at("LINE_TREE_STEP"))) << diagnostic();
  Reset();
  const ProvenRun race = run_tree_sum(-1);
  EXPECT_EQ(race.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (31,0,0), at " + at("LINE_TREE_STEP"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that thread (0,0,0) read")) << diagnostic();
  Reset();
  const ProvenRun stored_past = run_tree_sum(0, 1);
  EXPECT_EQ(stored_past.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (2,0,0), thread (0,0,0), at " + at("LINE_TREE_SUM_STORED")))
      << diagnostic();
}

// A stretch that touches no memory (`const int tid = threadIdx.x;`, parted from the next by a
// declaration the block runs once) runs as a proven stretch's copy wherever it lies: nothing in it
// can race with a later access. Each block's output is its input reversed.
__global__ void reversed_blocks(const float* in, float* out) {
  __shared__ float s[64];
  const int tid = threadIdx.x;
  const int base = blockIdx.x * 64;
  const int i = base + tid;
  s[tid] = in[i];
  __syncthreads();
  out[i] = s[63 - tid];
}

TEST_F(Emu, AStretchThatTouchesNoMemoryRunsAsAProvenCopy) {
  std::vector<float> in(128);
  for (int i = 0; i < 128; ++i) in[i] = static_cast<float>(i);
  cudalab::DeviceArray<float> d_in(in), d_out(128, -1.0f);  // (poisoned)
  const ProvenRun r =
      run_proven(d_out, [&] { reversed_blocks<<<2, 64>>>(d_in.get(), d_out.get()); });
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 128; ++i) ASSERT_EQ(r.out[i], i / 64 * 64 + 63 - i % 64) << "element " << i;
  EXPECT_EQ(r.proven_stretches, 2u + 2) << "tid's in each block, the load and output in block 1";
}

// tree_sum in global memory (Fan's reduce_global): each block sums its 64 elements in place
// through a pointer moved by its offset (`float* x = in + blockIdx.x * 64 + shift`), so that each
// step loads and stores what its block stored before the last barrier. Planted bug: `shift` 1
// moves each block's elements one on, so that the last block's first step reads one past the
// array.
__global__ void global_tree_sum(float* in, float* out, int shift) {
  const int tid = threadIdx.x;
  float* x = in + blockIdx.x * 64 + shift;
  for (int s = 32; s > 0; s >>= 1) {
    if (tid < s) x[tid] += x[tid + s];  // LINE_GLOBAL_TREE_STEP
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = x[0];
}

ProvenRun run_global_tree_sum(int shift) {
  return run_tree_sums([&](const float* in, float* out) {
    global_tree_sum<<<3, 64>>>(const_cast<float*>(in), out, shift);
  });
}

// That a global tree sum's run passed with each block's sum, its six steps and its stored sum
// proven in blocks 1 and 2.
void expect_global_tree_sums(const ProvenRun& r) {
  ASSERT_EQ(r.status, cudaSuccess) << cudalab::emu::last_diagnostic();
  for (int b = 0; b < 3; ++b) {
    double sum = 0;
    for (int i = 0; i < 64; ++i) sum += (b * 64 + i) % 17;
    EXPECT_EQ(r.out[b], sum) << "block " << b;
  }
  EXPECT_GE(r.proven_stretches, 2u * 6 + 2) << "six steps and the sum stored in blocks 1 and 2";
}

TEST_F(Emu, AStepThatLoadsWhatItsBlockStoredBeforeTheBarrierIsProven) {
  const ProvenRun r = run_global_tree_sum(0);
  expect_global_tree_sums(r);
  EXPECT_EQ(r.proven_stretches, 3u + 2 * 6 + 2)
      << "tid and x in each block, six steps and the sum stored in blocks 1 and 2";
  const ProvenRun past_the_end = run_global_tree_sum(1);
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (2,0,0), thread (31,0,0), at " + at("LINE_GLOBAL_TREE_STEP")))
      << diagnostic();
}

// global_tree_sum beside a race that a second run in the other order excuses (replay.h): thread 1
// reads the flag that thread 0 stores, which held the same value before. Each block sums the first
// 64 of its 1024 elements (a page of its own). The second run starts from the memory before the
// launch's first stores, the proven steps' too, and sums the same elements.
__global__ void global_tree_sum_beside_a_race(float* in, float* out, float* flag, float* seen) {
  const int tid = threadIdx.x;
  float* x = in + blockIdx.x * 1024;
  if (tid == 0) flag[blockIdx.x] = 1.0f;
  if (tid == 1) seen[blockIdx.x] = flag[blockIdx.x];
  __syncthreads();
  for (int s = 32; s > 0; s >>= 1) {
    if (tid < s) x[tid] += x[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = x[0];
}

TEST_F(Emu, ALaunchRunAgainRestoresWhatItsProvenStepsStored) {
  std::vector<float> in(3 * 1024);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 64; ++i) in[b * 1024 + i] = static_cast<float>((b * 64 + i) % 17);
  cudalab::DeviceArray<float> d_in(in), d_out(3, -1.0f);  // (poisoned)
  cudalab::DeviceArray<float> d_flag(std::vector<float>(3, 1.0f)), d_seen(3, -1.0f);
  expect_global_tree_sums(run_proven(d_out, [&] {
    global_tree_sum_beside_a_race<<<3, 64>>>(d_in.get(), d_out.get(), d_flag.get(), d_seen.get());
  }));
  EXPECT_EQ(d_seen.to_host(), std::vector<float>(3, 1.0f));
}

// An in-place step over global memory that reads a later element, which that element's thread
// stores in the same step (`x[tid] += x[tid + s]` with no second buffer): on a GPU the reader sees
// the old or the new value, as the warps run. The kernel runs as loops between its barriers (its
// first stretch, which touches no memory, is a proven copy); the launch run again to judge the
// race (replay.h) runs each stretch's threads last first, so the two runs leave different sums and
// the race is named where the first run found it.
__global__ void global_sums_in_place(float* x) {
  const int tid = threadIdx.x;
  for (int s = 1; s < blockDim.x; s *= 2) {
    if (tid + s < blockDim.x) x[tid] += x[tid + s];  // LINE_SUMS_IN_PLACE
    __syncthreads();
  }
}

TEST_F(Emu, ARaceOfALoopFormIsJudgedWithItsThreadsInTheOtherOrder) {
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<float>(i % 7 + 1);
  cudalab::DeviceArray<float> d_x(in);
  const ProvenRun r = run_proven(d_x, [&] { global_sums_in_place<<<1, 64>>>(d_x.get()); });
  EXPECT_EQ(r.status, cudaErrorLaunchFailure);
  EXPECT_GE(r.proven_stretches, 1u) << "the kernel runs as loops";
  EXPECT_TRUE(says("thread (2,0,0), at " + at("LINE_SUMS_IN_PLACE"))) << diagnostic();
  EXPECT_TRUE(says("which thread (1,0,0) of this block read")) << diagnostic();
}

// A stretch that loads what its block stored in the launch is proven only where those stores came
// before the last barrier: in block 1 the threads' checked stores (under `if (flags[i])`) and the
// loads of another warp's elements share a barrier interval (the `if` that would wait is not
// taken), and the race is named. (`host`, a host pointer the kernel does not use, leaves the
// launch without a second run in the other order, replay.h: the race is told where it is found.)
__global__ void reads_another_warps_store(float* x, const int* flags, float* out,
                                          const float* host) {
  __shared__ float s[32];
  const int tid = threadIdx.x;
  float* seg = x + blockIdx.x * 64;
  if (flags[blockIdx.x * 64 + tid] != 0) seg[tid] = 2.0f;
  if (blockDim.x > 1024) {
    __syncthreads();
  }
  if (tid < 32) s[tid] = seg[tid + 32];  // LINE_READS_ANOTHER_WARPS_STORE
  __syncthreads();
  if (tid < 32) out[blockIdx.x * 32 + tid] = s[tid];
}

// The same kernel with no store: it runs to its end. (The emu's own strings that name `s` when it
// is placed, on the heap near the host array, are no access of the kernel's: a fault among them
// would stop the block with the variables' lock held, and the next block would wait for it.)
TEST_F(Emu, AHostPointerArgumentTheKernelDoesNotUseIsNoFault) {
  const std::vector<float> host(1, 0.0f);
  cudalab::DeviceArray<float> d_x(std::vector<float>(3 * 64, 1.0f)), d_out(3 * 32, -1.0f);
  cudalab::DeviceArray<int> d_flags(std::vector<int>(3 * 64, 0));
  const ProvenRun r = run_proven(d_out, [&] {
    reads_another_warps_store<<<3, 64>>>(d_x.get(), d_flags.get(), d_out.get(), host.data());
  });
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  EXPECT_EQ(r.out, std::vector<float>(3 * 32, 1.0f));
}

TEST_F(Emu, AStretchLoadingWhatACheckedStoreOfItsIntervalStoredRunsCheckedAndTheRaceIsNamed) {
  std::vector<int> flags(3 * 64, 0);
  for (int i = 64; i < 128; ++i) flags[i] = 1;  // (block 1's threads store)
  const std::vector<float> host(1, 0.0f);
  cudalab::DeviceArray<float> d_x(std::vector<float>(3 * 64, 1.0f)), d_out(3 * 32, -1.0f);
  cudalab::DeviceArray<int> d_flags(flags);
  const ProvenRun r = run_proven(d_out, [&] {
    reads_another_warps_store<<<3, 64>>>(d_x.get(), d_flags.get(), d_out.get(), host.data());
  });
  EXPECT_EQ(r.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("block (1,0,0), thread (0,0,0), at " + at("LINE_READS_ANOTHER_WARPS_STORE")))
      << diagnostic();
  EXPECT_TRUE(says("which thread (32,0,0) of this block wrote")) << diagnostic();
}

// tree_sum over the dynamic shared array (`extern __shared__`), whose one dimension is as long as
// the launch's dynamic shared bytes hold. Planted bug: `extra` 1 reads element 64 in the first
// step: past the array where the launch gives it 64 elements, unwritten where it gives 65.
__global__ void dynamic_tree_sum(const float* in, float* out, int extra) {
  extern __shared__ float partial[];
  const int tid = threadIdx.x;
  partial[tid] = in[blockIdx.x * 64 + tid];
  __syncthreads();
  for (int s = 32; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s + extra];  // LINE_DYNAMIC_TREE_STEP
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}

ProvenRun run_dynamic_tree_sum(int extra, size_t elements) {
  return run_tree_sums([&](const float* in, float* out) {
    dynamic_tree_sum<<<3, 64, elements * sizeof(float)>>>(in, out, extra);
  });
}

TEST_F(Emu, AStretchOfTheDynamicSharedArrayIsProvenWithinTheLaunchsSize) {
  expect_tree_sums(run_dynamic_tree_sum(0, 64));
  const ProvenRun past_the_end = run_dynamic_tree_sum(1, 64);
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("thread (31,0,0), at " + at("LINE_DYNAMIC_TREE_STEP"))) << diagnostic();
  Reset();
  const ProvenRun unwritten = run_dynamic_tree_sum(1, 65);
  EXPECT_EQ(unwritten.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (31,0,0), at " + at("LINE_DYNAMIC_TREE_STEP"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that no thread of this block wrote")) << diagnostic();
}

// The threads below `stored` store their element (a proven stretch), then each thread loads its
// neighbour's (`tid ^ 1`, no affine subscript: a check per load). A proven stretch's stores leave
// the words' records alone and say only that the block wrote them (SharedSpace::record_stores),
// which the checked loads must see, in this block and in no later one.
__global__ void neighbour_of_stored(float* out, int stored) {
  __shared__ float s[64];
  const int tid = threadIdx.x;
  if (tid < stored) s[tid] = tid;
  __syncthreads();
  out[blockIdx.x * 64 + tid] = s[tid ^ 1];  // LINE_NEIGHBOUR_LOAD
}

ProvenRun run_neighbour_of_stored(int stored) {
  cudalab::DeviceArray<float> d_out(128, -1.0f);  // (poisoned)
  return run_proven(d_out, [&] { neighbour_of_stored<<<2, 64>>>(d_out.get(), stored); });
}

TEST_F(Emu, ACheckedLoadOfWhatAProvenStretchStoredIsALoadOfWrittenMemory) {
  const ProvenRun r = run_neighbour_of_stored(64);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 128; ++i) ASSERT_EQ(r.out[i], (i % 64) ^ 1) << "element " << i;
  EXPECT_EQ(r.proven_stretches, 2u) << "the stores in each block";
}

// The same kernel launched again with no thread storing: thread 0 loads an element that only the
// blocks of the launch before stored.
TEST_F(Emu, AProvenStretchsStoresAreTheirBlocksOnly) {
  ASSERT_EQ(run_neighbour_of_stored(64).status, cudaSuccess) << diagnostic();
  const ProvenRun r = run_neighbour_of_stored(0);
  EXPECT_EQ(r.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_NEIGHBOUR_LOAD"))) << diagnostic();
  EXPECT_TRUE(says("shared memory that no thread of this block wrote")) << diagnostic();
}

// A store that the proof does not cover (under `if (planted && ...)`: checked) and a proven stretch
// in the same barrier interval (a declaration the block runs once parts them): with `planted`,
// thread 63's checked store and thread 0's proven one write s[0] with different values, a race the
// proven stretch must leave to its checked run to name.
__global__ void proven_store_after_a_checked_one(float* out, int planted) {
  __shared__ float s[64];
  const int tid = threadIdx.x;
  if (planted != 0 && tid == 63) s[0] = -1.0f;
  const int half = blockDim.x / 2;
  s[tid] = half + tid;  // LINE_STORE_AFTER_CHECKED
  __syncthreads();
  out[blockIdx.x * 64 + tid] = s[tid];
}

TEST_F(Emu, AProvenStoreOverACheckedStoreOfItsIntervalRunsCheckedAndTheRaceIsNamed) {
  cudalab::DeviceArray<float> d_out(128, -1.0f);  // (poisoned)
  const ProvenRun fine =
      run_proven(d_out, [&] { proven_store_after_a_checked_one<<<2, 64>>>(d_out.get(), 0); });
  ASSERT_EQ(fine.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 128; ++i) ASSERT_EQ(fine.out[i], 32 + i % 64) << "element " << i;
  EXPECT_EQ(fine.proven_stretches, 3u) << "the stores in each block, the output in block 1";
  const ProvenRun race =
      run_proven(d_out, [&] { proven_store_after_a_checked_one<<<2, 64>>>(d_out.get(), 1); });
  EXPECT_EQ(race.status, cudaErrorLaunchFailure);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_STORE_AFTER_CHECKED"))) << diagnostic();
  EXPECT_TRUE(says("thread (63,0,0)")) << diagnostic();
}

// Sums of each element's window of three, staged in shared memory, stored under the guard of the
// thread's global index (`if (g < n)`): the output's stretch stores for the threads below n -
// blockIdx.x * blockDim.x, which the block proves (in the last block, 44 of 64). Planted bug:
// `extra` 1 lets thread n store one past the array.
__global__ void guarded_window_sums(const float* in, float* out, int n, int extra) {
  __shared__ float window[66];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  window[threadIdx.x] = in[g];
  if (threadIdx.x < 2) window[threadIdx.x + 64] = in[g + 64];
  __syncthreads();
  const float sum = window[threadIdx.x] + window[threadIdx.x + 1] + window[threadIdx.x + 2];
  if (g < n + extra) out[g] = sum;  // LINE_GUARDED_STORE
}

// A tile loaded under the guard of the global index inside an expression (`g < n ? in[g] : 0`):
// the load is the threads' below n - blockIdx.x * blockDim.x, so the last block, whose threads
// past n would read past the array, proves its loads too.
__global__ void bounded_tile_loads(const float* in, float* out, int n) {
  __shared__ float tile[64];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = g < n ? in[g] : 0.0f;
  __syncthreads();
  if (g < n) out[g] = tile[threadIdx.x] + tile[63 - threadIdx.x];
}

TEST_F(Emu, ALoadUnderTheGuardOfTheGlobalIndexInAnExpressionIsProvenForTheThreadsBelowIt) {
  const int n = 3 * 64 - 20;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 7);
  cudalab::DeviceArray<float> d_in(in), d_out(n, -1.0f);  // (poisoned)
  const ProvenRun r =
      run_proven(d_out, [&] { bounded_tile_loads<<<3, 64>>>(d_in.get(), d_out.get(), n); });
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int g = 0; g < n; ++g) {
    const int mirror = g / 64 * 64 + 63 - g % 64;
    const float expected = in[g] + (mirror < n ? in[mirror] : 0.0f);
    ASSERT_EQ(r.out[g], expected) << "element " << g;
  }
  EXPECT_EQ(r.proven_stretches, 2u + 2u) << "the loads and the stores in blocks 1 and 2";
}

// A bound below 0 against threadIdx.x (unsigned): the comparison is unsigned, so every thread is
// below it, and thread 63 stores one past the tile.
__global__ void below_a_negative_bound(float* out, int n) {
  __shared__ float part[64];
  part[threadIdx.x] = 0;
  __syncthreads();
  if (threadIdx.x < n - 64) part[threadIdx.x + 1] = 1;  // LINE_NEGATIVE_BOUND
  __syncthreads();
  out[threadIdx.x] = part[threadIdx.x];
}

TEST_F(Emu, ABoundBelowZeroAgainstTheUnsignedThreadIndexIsPastEveryThread) {
  cudalab::DeviceArray<float> out(64, -1.0f);
  below_a_negative_bound<<<1, 64>>>(out.get(), 32);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("thread (63,0,0), at " + at("LINE_NEGATIVE_BOUND"))) << diagnostic();
}

// The bound the launch gives such a guard (index_bound), for offsets where the kernel's index may
// wrap and where it may not.
__global__ void global_index_bounds(long long* out) {
  if (threadIdx.x != 0) return;
  out[0] = cudalab::emu::index_bound(300, 256);
  out[1] = cudalab::emu::index_bound(300, 0x7fffffffLL - 511);  // (the last thread's x is 511)
  out[2] = cudalab::emu::index_bound(300, 0x7fffffffLL - 510);
  out[3] = cudalab::emu::index_bound(300, -1);
}

ProvenRun run_guarded_window_sums(int extra) {
  const int n = 3 * 64 - 20;
  std::vector<float> in(3 * 64 + 2);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 11);
  cudalab::DeviceArray<float> d_in(in), d_out(n, -1.0f);  // (poisoned)
  return run_proven(d_out,
                    [&] { guarded_window_sums<<<3, 64>>>(d_in.get(), d_out.get(), n, extra); });
}

TEST_F(Emu, AStoreUnderTheGuardOfTheGlobalIndexIsProvenForTheThreadsBelowIt) {
  const ProvenRun r = run_guarded_window_sums(0);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  ASSERT_EQ(r.out.size(), 172u);
  for (int i = 0; i < 172; ++i)
    ASSERT_EQ(r.out[i], static_cast<float>(i % 11 + (i + 1) % 11 + (i + 2) % 11))
        << "element " << i;
  EXPECT_EQ(r.proven_stretches, 2u + 2u) << "the loads and the stores in blocks 1 and 2";
  const auto stored = cudalab::emu::element_store(&r.out[171], sizeof(float));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->block_index.x, 2u);
  EXPECT_EQ(stored->thread_index.x, 43u);
  EXPECT_EQ(stored->store.text(), at("LINE_GUARDED_STORE"));
  Reset();
  const ProvenRun past_the_end = run_guarded_window_sums(1);
  EXPECT_EQ(past_the_end.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("thread (44,0,0), at " + at("LINE_GUARDED_STORE"))) << diagnostic();
  Reset();
  cudalab::DeviceArray<long long> bounds(4, 0);
  global_index_bounds<<<1, 512>>>(bounds.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  const std::vector<long long> got = bounds.to_host();
  using cudalab::emu::kNoBound;
  EXPECT_EQ(got, (std::vector<long long>{44, 300 - (0x7fffffffLL - 511), kNoBound, kNoBound}));
}

TEST_F(Emu, ProvenBlocksOfAGridStrideLoopKeepWhoStoredWhat) {
  const int n = 1000;  // 3 blocks of 64 threads: 192 elements per pass, 6 passes
  std::vector<float> a(n), b(n, 1.0f), out(n);
  for (int i = 0; i < n; ++i) a[i] = static_cast<float>(i);
  cudalab::DeviceArray<float> da(a), db(b), dout(n, 0.0f);
  const unsigned long long before = cudalab::emu::proven_blocks_run();
  scaled_sum_by_strides<<<3, 64>>>(da.get(), db.get(), dout.get(), n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 2u) << "blocks 1 and 2";
  CUDA_CHECK(cudaMemcpy(out.data(), dout.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * i + 1.0f) << "element " << i;
  const auto stored = cudalab::emu::element_store(&out[700], sizeof(float));  // 3 * 192 + 64 + 60
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->block_index.x, 1u);
  EXPECT_EQ(stored->thread_index.x, 60u);
  EXPECT_EQ(stored->store.text(), at("LINE_SCALED_SUM_BY_STRIDES"));
}

// A guard of an unsigned index against an int limit compares unsigned numbers: a limit below 0 is
// past every index, and each thread stores (the grid's threads past the array's end too).
__global__ void unsigned_fill(float* out, int n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;  // LINE_UNSIGNED_FILL
}

TEST_F(Emu, AGuardOfAnUnsignedIndexComparesAsTheKernelDoes) {
  cudalab::DeviceArray<float> out(256, -1.0f);
  unsigned_fill<<<4, 64>>>(out.get(), 256);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  EXPECT_EQ(out.to_host(), std::vector<float>(256, 1.0f));
  unsigned_fill<<<8, 64>>>(out.get(), -1);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_UNSIGNED_FILL"))) << diagnostic();
}

// The same in 2D: each access is P[Row * width + Col], under Row < height && Col < width.
__global__ void doubled_picture(const float* in, float* out, int width, int height) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < height && Col < width) out[Row * width + Col] = 2 * in[Row * width + Col];  // LINE_2D
}

// The same with the element's index in a variable before the guard (`int idx = Row * width +
// Col;`, never changed): the variable stands for its initializer.
__global__ void doubled_picture_by_index(const float* in, float* out, int width, int height) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  int idx = Row * width + Col;
  if (Row < height && Col < width) out[idx] = 2 * in[idx];  // LINE_2D_BY_INDEX
}

TEST_F(Emu, ProvenBlocksOfA2DKernelKeepWhoStoredWhat) {
  const int width = 100, height = 50;  // blocks of 16 x 16: a grid of 7 x 4, the last ones partial
  const dim3 grid(7, 4), block(16, 16);
  std::vector<float> in(width * height);
  for (int i = 0; i < width * height; ++i) in[i] = static_cast<float>(i);
  // Each form of the kernel: its launch (input, output), and its store's line.
  const auto each_form = [&](auto launch, const std::string& line) {
    {  // (the arrays go before the device is reset)
      cudalab::DeviceArray<float> din(in), dout(width * height, 0.0f);
      const unsigned long long before = cudalab::emu::proven_blocks_run();
      launch(din.get(), dout.get());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
      EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 27u) << "every block but the first";
      const std::vector<float> out = dout.to_host();
      for (int i = 0; i < width * height; ++i) ASSERT_EQ(out[i], 2.0f * i) << "element " << i;
      const auto stored = cudalab::emu::element_store(&out[20 * width + 37], sizeof(float));
      ASSERT_TRUE(stored.has_value());
      EXPECT_EQ(stored->block_index.x, 2u);
      EXPECT_EQ(stored->block_index.y, 1u);
      EXPECT_EQ(stored->thread_index.x, 5u);
      EXPECT_EQ(stored->thread_index.y, 4u);
      EXPECT_EQ(stored->store.text(), line);
      // An output four elements short (the last four columns of the last row: one block's, so
      // that one block faults): that block runs checked, and its first faulting thread is named.
      cudalab::DeviceArray<float> short_out(width * height - 4, 0.0f);
      launch(din.get(), short_out.get());
      EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
      EXPECT_TRUE(says("block (6,3,0), thread (0,1,0), at " + line)) << diagnostic();
      EXPECT_TRUE(says("element 4996 of the 4996-element array")) << diagnostic();
    }
    Reset();
  };
  each_form([&](const float* din,
                float* out) { doubled_picture<<<grid, block>>>(din, out, width, height); },
            at("LINE_2D"));
  each_form([&](const float* din,
                float* out) { doubled_picture_by_index<<<grid, block>>>(din, out, width, height); },
            at("LINE_2D_BY_INDEX"));
}

// A device function that a proven kernel calls is checked code: its own accesses keep their checks
// (here a read past the end of an 8-element table, from element 800 on: thread 32 of block 3).
__device__ const float* table_of_eight;
__device__ float from_the_table(int k) {
  return table_of_eight[k];  // LINE_FROM_THE_TABLE
}
__global__ void scaled_by_the_table(const float* a, float* out, int n, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * from_the_table(i / width);
}

TEST_F(Emu, TheDeviceFunctionsAProvenKernelCallsKeepTheirChecks) {
  const int n = 1024;
  cudalab::DeviceArray<float> a(n, 1.0f), out(n, 0.0f), table(8, 3.0f);
  const float* t = table.get();
  CUDA_CHECK(cudaMemcpyToSymbol(table_of_eight, &t, sizeof t));
  const unsigned long long before = cudalab::emu::proven_blocks_run();
  scaled_by_the_table<<<n / 256, 256>>>(a.get(), out.get(), n, 128);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 3u);
  EXPECT_EQ(out.to_host()[1000], 3.0f);
  scaled_by_the_table<<<n / 256, 256>>>(a.get(), out.get(), n, 100);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (3,0,0), thread (32,0,0), at " + at("LINE_FROM_THE_TABLE")))
      << diagnostic();
  EXPECT_TRUE(says("element 8 of the 8-element array")) << diagnostic();
}

// That p is the product of the width x width matrices m and n: each element the float nearest the
// product's double sum.
void expect_product(const std::vector<float>& p, const std::vector<float>& m,
                    const std::vector<float>& n, int width) {
  for (int row = 0; row < width; ++row)
    for (int col = 0; col < width; ++col) {
      double want = 0;
      for (int k = 0; k < width; ++k) want += double(m[row * width + k]) * n[k * width + col];
      ASSERT_EQ(p[row * width + col], static_cast<float>(want)) << row << "," << col;
    }
}

// The PMPP book's matrix product: each thread reads a row of M and a column of N in a loop. The
// blocks check the rows and columns they read once (a segment per row of M, one per k of N) and
// run without per-access checks; a block whose rows or columns reach past an array's end runs
// checked, and the first thread to read there is named, at its line.
__global__ void row_times_column(const float* M, const float* N, float* P, int Width) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < Width && Col < Width) {
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) Pvalue += M[Row * Width + k] * N[k * Width + Col];  // LINE_RXC
    P[Row * Width + Col] = Pvalue;
  }
}

TEST_F(Emu, ProvenBlocksOfAMatrixProductReadRowsAndColumnsInBulk) {
  const int width = 40;  // 3 x 3 blocks of 16 x 16 threads, the last ones partly outside
  std::vector<float> m(width * width), n(width * width);
  for (int i = 0; i < width * width; ++i) m[i] = static_cast<float>(i % 7), n[i] = (i % 5) - 2.0f;
  const dim3 block(16, 16), grid(3, 3);
  {  // (the arrays go before the device is reset)
    cudalab::DeviceArray<float> dm(m), dn(n), dp(width * width, 0.0f);
    const unsigned long long before = cudalab::emu::proven_blocks_run();
    row_times_column<<<grid, block>>>(dm.get(), dn.get(), dp.get(), width);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
    EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 8u) << "all but block (0,0)";
    const std::vector<float> p = dp.to_host();
    expect_product(p, m, n, width);
    const auto stored = cudalab::emu::element_store(&p[37 * width + 20], sizeof(float));
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->block_index.x, 1u);
    EXPECT_EQ(stored->block_index.y, 2u);
  }
  Reset();
  // M one element short: the threads of the last row read past its end in their last step, in
  // each of the three blocks that hold that row (block (x,2)'s thread (0,7) first, whichever x).
  const std::vector<float> m_short(m.begin(), m.end() - 1);
  cudalab::DeviceArray<float> short_m(m_short), whole_n(n), out(width * width, 0.0f);
  row_times_column<<<grid, block>>>(short_m.get(), whole_n.get(), out.get(), width);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says(",2,0), thread (0,7,0), at " + at("LINE_RXC"))) << diagnostic();
  EXPECT_TRUE(says("element 1599 of the 1599-element array")) << diagnostic();
}

// A product without a guard, its grid covering the matrices exactly (Packt's sgemm): every thread
// of the grid has its element, and the launch checks the whole grid's ranges. With an output one
// element short, only the last block's last thread stores past its end, and is named.
__global__ void product_without_guard(const float* A, const float* B, float* C, int M, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  float sum = 0.f;
  for (int i = 0; i < K; ++i) sum += A[row * K + i] * B[i * M + col];
  C[row * M + col] = sum;  // LINE_UNGUARDED_STORE
}

TEST_F(Emu, ProvenBlocksOfAKernelWithoutAGuardCoverTheGrid) {
  const int width = 32;  // 2 x 2 blocks of 16 x 16 threads
  std::vector<float> a(width * width), b(width * width);
  for (int i = 0; i < width * width; ++i) a[i] = static_cast<float>(i % 9), b[i] = (i % 4) - 1.5f;
  const dim3 block(16, 16), grid(2, 2);
  {
    cudalab::DeviceArray<float> da(a), db(b), dc(width * width, 0.0f);
    const unsigned long long before = cudalab::emu::proven_blocks_run();
    product_without_guard<<<grid, block>>>(da.get(), db.get(), dc.get(), width, width);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
    EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 3u) << "all but block (0,0)";
    expect_product(dc.to_host(), a, b, width);
  }
  Reset();
  cudalab::DeviceArray<float> da(a), db(b), short_c(width * width - 1, 0.0f);
  product_without_guard<<<grid, block>>>(da.get(), db.get(), short_c.get(), width, width);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (1,1,0), thread (15,15,0), at " + at("LINE_UNGUARDED_STORE")))
      << diagnostic();
  EXPECT_TRUE(says("element 1023 of the 1023-element array")) << diagnostic();
}

// A store in a loop at the thread's own element, and a load through `*P` (simpleStreams'
// `g_data[idx] += *factor` in a loop): the blocks are proven where the loop runs; where it runs no
// time the store is not made, so the blocks run checked and the elements stay unwritten (a later
// read of them is named).
__global__ void store_repeatedly(int* data, const int* factor, int times) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < times; k++) {
    data[idx] = (k + 1) * *factor;
  }
}

__global__ void copy_ints(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];  // LINE_COPY_INTS
}

TEST_F(Emu, ProvenBlocksOfAStoreInALoopAreThoseWhoseLoopRuns) {
  const int n = 4 * 256;
  {
    cudalab::DeviceArray<int> data(n, 5), factor(1, 2);
    const unsigned long long before = cudalab::emu::proven_blocks_run();
    store_repeatedly<<<4, 256>>>(data.get(), factor.get(), 3);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
    EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 3u) << "all but block 0";
    const std::vector<int> back = data.to_host();
    for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], 3 * 2) << "element " << i;
  }
  Reset();
  int *unwritten, *out;
  CUDA_CHECK(cudaMalloc(&unwritten, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(int)));
  cudalab::DeviceArray<int> factor(1, 2);
  const unsigned long long before = cudalab::emu::proven_blocks_run();
  store_repeatedly<<<4, 256>>>(unwritten, factor.get(), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  EXPECT_EQ(cudalab::emu::proven_blocks_run() - before, 0u) << "a loop that runs no time";
  copy_ints<<<4, 256>>>(unwritten, out);
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(says("which nobody wrote since cudaMalloc")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_COPY_INTS"))) << diagnostic();
}

// An output that overlaps an input one element further on: thread t stores what thread t + 1
// loads. No block of such a launch runs without per-access checks, and the race is named.
TEST_F(Emu, OverlappingParametersKeepTheirPerAccessChecks) {
  const ScaledSum shifted = run_scaled_sum({.n = 1000, .shift = 1});
  EXPECT_EQ(shifted.proven_blocks, 0u);
  EXPECT_NE(shifted.status, cudaSuccess);
  EXPECT_TRUE(says(at("LINE_SCALED_SUM"))) << diagnostic();
}

// c = a * b, n x n, one thread per element, with a mistake: `mistake` 0 none, 1 reads the row of
// a that is the column's number, 2 leaves out the last k, 3 adds one to the sum.
__global__ void product_with(const int* a, const int* b, int* c, int n, int mistake) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y,
            col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  int sum = mistake == 3 ? 1 : 0;
  for (int k = 0; k < n - (mistake == 2); ++k)
    sum += a[(mistake == 1 ? col : row) * n + k] * b[k * n + col];  // LINE_PRODUCT_LOOP
  c[row * n + col] = sum;
}

// Runs product_with on 1..n*n and 1..n*n; the host's c, and where a and b lay.
std::vector<int> run_product(int n, int mistake, cudalab::testing::Operands* operands) {
  std::vector<int> host(n * n);
  for (int i = 0; i < n * n; ++i) host[i] = i + 1;
  int *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, n * n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&b, n * n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&c, n * n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(a, host.data(), n * n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b, host.data(), n * n * sizeof(int), cudaMemcpyHostToDevice));
  product_with<<<dim3(1, 1), dim3(n, n)>>>(a, b, c, n, mistake);
  CUDA_CHECK(cudaMemcpy(host.data(), c, n * n * sizeof(int), cudaMemcpyDeviceToHost));
  *operands = {{"a", a, size_t(n), size_t(n), sizeof(int)},
               {"b", b, size_t(n), size_t(n), sizeof(int)}};
  cudaFree(a), cudaFree(b), cudaFree(c);
  return host;
}

// What the thread that stored an element read, found by running the product again with that
// thread watched; and nothing claimed for an element no thread stored.
TEST_F(Emu, TheReadsOfTheThreadThatStoredAnElementAreSaid) {
  const int n = 6;
  auto said = [&](int mistake, size_t row, size_t col) {
    cudalab::testing::Operands operands;
    std::vector<int> c = run_product(n, mistake, &operands);
    return cudalab::testing::matmul_reads("c", &c[row * n + col], sizeof(int), row, col, [&] {
      cudalab::testing::Operands again;
      run_product(n, mistake, &again);
      return again;
    });
  };
  std::string r = said(1, 0, 1);
  EXPECT_NE(r.find("thread (1,0,0) of block (0,0,0)"), std::string::npos) << r;
  EXPECT_NE(r.find("read (in the same launch run again with that thread watched) row 1 of a and "
                   "column 1 of b at " +
                   at("LINE_PRODUCT_LOOP") + ", where c[0][1] needs row 0 of a and column 1 of b"),
            std::string::npos)
      << r;
  {  // the first warp of the first block: its loads' lines come with who stored the element
    cudalab::testing::Operands operands;
    std::vector<int> c = run_product(n, 1, &operands);
    const auto stored = cudalab::emu::element_store(&c[1], sizeof(int));
    ASSERT_TRUE(stored.has_value());
    ASSERT_EQ(stored->loads.size(), 1u);
    EXPECT_EQ(stored->loads[0].text(), at("LINE_PRODUCT_LOOP"));
  }
  r = said(2, 2, 3);
  EXPECT_NE(r.find("row 2 of a (5 of its 6 elements) and column 3 of b (5 of its 6 elements)"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("It left out the last element of each"), std::string::npos) << r;
  r = said(3, 4, 4);
  EXPECT_NE(r.find("all that c[4][4] needs"), std::string::npos) << r;
  EXPECT_EQ(r.find("loop"), std::string::npos) << r;
  std::vector<int> on_the_host(n * n, 7);  // never copied from the device: no thread stored it
  EXPECT_EQ(cudalab::testing::matmul_reads("c", &on_the_host[3], sizeof(int), 0, 3,
                                           [] { return cudalab::testing::Operands(); }),
            "");
}

// out[i] = in[i - 1] + in[i] + in[i + 1] inside, with a mistake: `shift` moves the last term.
__global__ void three_point_sum(const float* in, float* out, int n, int shift) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 2) out[i] = in[i - 1] + in[i] + in[i + 1 + shift];  // LINE_THREE_POINT
}

// The vector form: which elements of each input the thread read, against what the element needs.
TEST_F(Emu, TheElementsAThreadReadAreSaidAgainstWhatItNeeds) {
  const int n = 64;
  std::vector<float> host(n, 1.0f);
  auto said = [&](int shift) {
    std::vector<float> out(n);
    cudalab::testing::VectorOperand in_operand;
    auto run = [&] {
      float *in, *d_out;
      CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
      CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
      CUDA_CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemset(d_out, 0, n * sizeof(float)));
      three_point_sum<<<1, n>>>(in, d_out, n, shift);
      CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
      cudaFree(in), cudaFree(d_out);
      return std::vector<cudalab::testing::VectorOperand>{{"in", in, n, sizeof(float), {4, 5, 6}}};
    };
    run();
    return cudalab::testing::element_reads("out[5]", &out[5], sizeof(float), run);
  };
  std::string r = said(1);
  EXPECT_NE(r.find("thread (5,0,0) of block (0,0,0), read (in the same launch run again with that "
                   "thread watched) in[4, 5, 7] at " +
                   at("LINE_THREE_POINT") + ", where out[5] needs in[4..6]."),
            std::string::npos)
      << r;
  r = said(0);
  EXPECT_NE(r.find("in[4..6] at " + at("LINE_THREE_POINT") + ": all that out[5] needs (in[4..6])"),
            std::string::npos)
      << r;
}

// An array too large for a shadow (over 512 MiB) says nothing of who wrote it: bytes copied from it
// are the host's, never a kernel's work (a host answer passed through it earns nothing).
TEST_F(Emu, BytesFromAnArrayWithoutAShadowAreNotAKernelsWork) {
  const int n = 1024;
  const size_t bytes = n * sizeof(float), large = size_t{600} << 20;
  float *out, *through;
  CUDA_CHECK(cudaMalloc(&out, bytes));
  CUDA_CHECK(cudaMalloc(&through, large));
  std::vector<float> answer(n, 3.0f);
  CUDA_CHECK(cudaMemcpy(through, answer.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(out, through, bytes, cudaMemcpyDeviceToDevice));
  EXPECT_EQ(cudalab::emu::device_work(out, bytes).by_kernels, 0u);
  std::vector<float> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), out, bytes, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudalab::emu::device_work(back.data(), bytes).by_kernels, 0u);
  EXPECT_EQ(back[7], 3.0f);  // and the bytes count as written: no read of unwritten memory
  cudaFree(out), cudaFree(through);
}

// Bytes of one 4-byte word written by different blocks (a char array): no race, each byte's
// writer is kept (shadow.h), and a byte nobody wrote in a word others wrote is still unwritten.
__global__ void byte_per_block(unsigned char* c) {
  if (threadIdx.x == 0) c[blockIdx.x] = static_cast<unsigned char>(blockIdx.x + 1);
}
__global__ void sum_bytes(const unsigned char* c, int n, int* sum) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += c[i];  // LINE_SUM_BYTES
  *sum = s;
}

TEST_F(Emu, BytesOfOneWordKeepTheirOwnWriters) {
  unsigned char *c, *copy;
  int* sum;
  CUDA_CHECK(cudaMalloc(&c, 16));
  CUDA_CHECK(cudaMalloc(&copy, 16));
  CUDA_CHECK(cudaMalloc(&sum, sizeof(int)));
  byte_per_block<<<6, 32>>>(c);  // bytes 0-5: words 0 and 1, six writers
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  sum_bytes<<<1, 1>>>(c, 6, sum);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  int h = 0;
  CUDA_CHECK(cudaMemcpy(&h, sum, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ(h, 1 + 2 + 3 + 4 + 5 + 6);
  // A copy shifted by one byte carries each byte's writer: copy[0..4] written, copy[5] not.
  CUDA_CHECK(cudaMemcpy(copy, c + 1, 5, cudaMemcpyDeviceToDevice));
  sum_bytes<<<1, 1>>>(copy, 5, sum);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  sum_bytes<<<1, 1>>>(copy, 6, sum);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("element 5 of the array")) << diagnostic();
  EXPECT_TRUE(says("which nobody wrote since cudaMalloc")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_SUM_BYTES"))) << diagnostic();
}

// Every thread of a block sets one flag to the same value, then each writes its own element:
// the same value written twice is no race (the order cannot matter).
__global__ void set_flag_and_own(int* flag, int* own) {
  *flag = 1;
  own[threadIdx.x] = static_cast<int>(threadIdx.x);
}
// Two threads write different values to one element (an index halved by mistake).
__global__ void two_writers(const int* in, int* out) {
  out[threadIdx.x / 2] = in[threadIdx.x];  // LINE_TWO_WRITERS
}

TEST_F(Emu, TheSameValueWrittenByManyThreadsIsNoRaceButAnotherValueIs) {
  int *flag, *own, *in;
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  CUDA_CHECK(cudaMalloc(&own, 64 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&in, 64 * sizeof(int)));
  const std::vector<int> values = {5, 7};
  CUDA_CHECK(cudaMemcpy(in, values.data(), 2 * sizeof(int), cudaMemcpyHostToDevice));
  set_flag_and_own<<<1, 64>>>(flag, own);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  two_writers<<<1, 2>>>(in, own);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("element 0 of the array")) << diagnostic();
  EXPECT_TRUE(says("which thread (0,0,0) of this block wrote at")) << diagnostic();
  EXPECT_TRUE(says("with another value")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_TWO_WRITERS"))) << diagnostic();
}

// A compare-and-swap in place, as a sorting network's step over global memory: each thread reads
// the two elements of its pair and writes both back. No thread touches another's pair: no race,
// and each pair ends in order (the odd size leaves the last element alone).
__global__ void order_pairs_in_place(int* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    const int x = a[2 * i], y = a[2 * i + 1];
    a[2 * i] = min(x, y);
    a[2 * i + 1] = max(x, y);
  }
}

TEST_F(Emu, ACompareAndSwapInPlaceIsNoRace) {
  const int n = 1001;
  std::vector<int> in(n);
  for (int k = 0; k < n; ++k) in[k] = (k * 7919) % 1009;
  cudalab::DeviceArray<int> d_a(in);
  order_pairs_in_place<<<4, 128>>>(d_a.get(), n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  std::vector<int> want = in;
  for (int k = 0; 2 * k + 1 < n; ++k)
    if (want[2 * k] > want[2 * k + 1]) std::swap(want[2 * k], want[2 * k + 1]);
  EXPECT_EQ(d_a.to_host(), want);
}

// Thread i reads an odd element nobody writes, then the next pair's first element, then its own,
// and writes its own: the read of the next pair's element, the second of its reads that wait
// outside the race table, is thread i + 1's to write (the sum depends on which runs first, so the
// launch run again in the other order names a writer and the reader of that line).
__global__ void add_next_pair_in_place(float* a, int n) {
  const int i = threadIdx.x;
  if (2 * i + 2 < n) {
    const float odd = a[2 * i + 1];
    const float next = a[2 * i + 2];  // LINE_READ_NEXT_PAIR
    const float mine = a[2 * i];
    a[2 * i] = mine + next + odd;
  }
}

TEST_F(Emu, AReadThatWaitsBehindAnotherIsStillSeenByTheNextWriter) {
  std::vector<float> in(9);
  for (int k = 0; k < 9; ++k) in[k] = static_cast<float>(k + 1);
  cudalab::DeviceArray<float> d_a(in);
  add_next_pair_in_place<<<1, 4>>>(d_a.get(), 9);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("of this block read at " + at("LINE_READ_NEXT_PAIR"))) << diagnostic();
}

// The threads of a block push their nodes onto one list, taking turns through a lock as CUDA by
// Example's hash table does: atomicCAS then __threadfence() to take it, __threadfence() then
// atomicExch to give it back. What a thread wrote before giving the lock back happens before what
// the next thread reads after taking it: no race. Without the fence before the release (a relaxed
// atomicExch publishes nothing), the next thread's read of the head is a race.
__global__ void push_under_lock(int* mutex, int* head, int* next, bool fence_to_release) {
  const int me = static_cast<int>(threadIdx.x);
  while (atomicCAS(mutex, 0, 1) != 0) {
  }
  __threadfence();
  next[me] = *head;  // LINE_READ_HEAD
  *head = me;
  if (fence_to_release) __threadfence();
  atomicExch(mutex, 0);
}

TEST_F(Emu, ThreadsThatTakeTurnsThroughALockAreOrderedAndWithoutAFenceAreNot) {
  for (const bool fence : {true, false}) {
    Reset();
    int *mutex, *head, *next;
    CUDA_CHECK(cudaMalloc(&mutex, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&head, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&next, 64 * sizeof(int)));
    CUDA_CHECK(cudaMemset(mutex, 0, sizeof(int)));
    CUDA_CHECK(cudaMemset(head, 0xFF, sizeof(int)));  // -1: the empty list
    push_under_lock<<<1, 64>>>(mutex, head, next, fence);
    if (!fence) {
      EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
      // (the read of the head, then its write back: named as a lost update)
      EXPECT_TRUE(says("thread (0,0,0) of this block wrote it at")) << diagnostic();
      EXPECT_TRUE(says("read at " + at("LINE_READ_HEAD"))) << diagnostic();
      break;
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
    int first = 0;
    std::vector<int> links(64);
    CUDA_CHECK(cudaMemcpy(&first, head, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(links.data(), next, 64 * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<bool> seen(64, false);
    int length = 0;
    for (int node = first; node >= 0 && length <= 64; node = links[node], ++length)
      seen[node] = true;
    EXPECT_EQ(length, 64);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 64);
  }
}

// Threads of many blocks set one flag, each where its data says (Rodinia's bfs): the same value
// from every block is no race. Thread 3 of blocks 0 and 1 reach one node, and thread 0 of blocks 2
// and 3 another: the same thread of two blocks at one line by chance is no missing blockIdx either.
__global__ void visit(const int* reach, bool* over, int* cost) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (reach[i] >= 0) {
    *over = true;
    cost[reach[i]] = 1;
  }
}
// Thread 0 of each block stores its block's number in one word: another value from each block.
__global__ void last_block_wins(int* word) {
  if (threadIdx.x == 0) *word = static_cast<int>(blockIdx.x);  // LINE_LAST_BLOCK_WINS
}

TEST_F(Emu, TheSameValueFromManyBlocksIsNoRaceButAnotherValueIs) {
  std::vector<int> reach(4 * 32, -1);
  reach[3] = reach[32 + 3] = 9;
  reach[32 + 10] = 5;
  reach[64] = reach[96] = 7;
  int *d_reach, *cost, *word;
  bool* over;
  CUDA_CHECK(cudaMalloc(&d_reach, reach.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&cost, 16 * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&over, sizeof(bool)));
  CUDA_CHECK(cudaMalloc(&word, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_reach, reach.data(), reach.size() * sizeof(int), cudaMemcpyHostToDevice));
  visit<<<4, 32>>>(d_reach, over, cost);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  int h_cost[16];
  CUDA_CHECK(cudaMemcpy(h_cost, cost, sizeof h_cost, cudaMemcpyDeviceToHost));
  EXPECT_EQ(h_cost[9], 1);
  EXPECT_EQ(h_cost[7], 1);
  last_block_wins<<<4, 32>>>(word);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
  EXPECT_TRUE(says("with another value")) << diagnostic();
  EXPECT_TRUE(says(at("LINE_LAST_BLOCK_WINS"))) << diagnostic();
}

// Every block fills one table, each thread a window of it that overlaps the next thread's by one
// element, all with the same values (the form of a softmax whose every thread writes its whole
// row): the same thread of two blocks writes the same elements at one line, as where an index
// leaves out blockIdx, but its block's threads also write over each other's, so the blocks' writes
// are judged by their values, which agree. With another value per block, the write is named.
__global__ void fill_table(float* table, int offset) {
  const int first = 4 * static_cast<int>(threadIdx.x);
  for (int e = first; e <= first + 4; ++e)
    table[e] = static_cast<float>(e) + (offset ? static_cast<float>(blockIdx.x) : 0.0f);
}

TEST_F(Emu, BlocksWhoseThreadsAllWriteTheSameTableAgreeByValue) {
  float* table;
  CUDA_CHECK(cudaMalloc(&table, (4 * 32 + 1) * sizeof(float)));
  for (int run = 0; run < 4; ++run) {
    fill_table<<<16, 32>>>(table, 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "run " << run << ": " << diagnostic();
  }
  float h[4 * 32 + 1];
  CUDA_CHECK(cudaMemcpy(h, table, sizeof h, cudaMemcpyDeviceToHost));
  for (int e = 0; e < 4 * 32 + 1; ++e) EXPECT_EQ(h[e], static_cast<float>(e)) << "element " << e;
  fill_table<<<16, 32>>>(table, 1);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_TRUE(says("also wrote in this launch")) << diagnostic();
  EXPECT_TRUE(says("with another value")) << diagnostic();
}

}  // namespace

// A kernel given a null pointer for its output (Packt's cuda_error lesson passes NULL): the first
// thread's write is named, whether the launch writes NULL itself (which the compiler knows) or
// passes a variable that holds it.
__global__ void doubled_into(const float* in, float* out) {
  out[threadIdx.x] = 2 * in[threadIdx.x];  // LINE_NULL_OUTPUT
}

TEST_F(Emu, AWriteThroughANullPointerIsNamed) {
  float* in;
  CUDA_CHECK(cudaMalloc(&in, 32 * sizeof(float)));
  CUDA_CHECK(cudaMemset(in, 0, 32 * sizeof(float)));
  doubled_into<<<1, 32>>>(in, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("thread (0,0,0), at " + at("LINE_NULL_OUTPUT") + ": a write to address 0, " +
                   "through a null pointer"))
      << diagnostic();
  Reset();
  CUDA_CHECK(cudaMalloc(&in, 32 * sizeof(float)));
  CUDA_CHECK(cudaMemset(in, 0, 32 * sizeof(float)));
  float* volatile out = nullptr;
  doubled_into<<<1, 32>>>(in, out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_TRUE(says("through a null pointer")) << diagnostic();
}

// cudaDeviceSynchronize() in a kernel, which CUDA 12 removed (nvcc 13 refuses it): every thread
// that calls it gets cudaErrorNotSupported, and the program is told once, with the replacement.
__global__ void waits_for_children(int* status) {
  status[threadIdx.x] = static_cast<int>(cudaDeviceSynchronize());
}

TEST_F(Emu, DeviceSideSynchronizeIsRefusedAndToldOnce) {
  cudalab::DeviceArray<int> status(4, -1);
  testing::internal::CaptureStderr();
  waits_for_children<<<1, 4>>>(status.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::string told = testing::internal::GetCapturedStderr();
  for (const int s : status.to_host()) EXPECT_EQ(s, static_cast<int>(cudaErrorNotSupported));
  const std::string message = "cudaDeviceSynchronize() in a kernel: CUDA 12 removed";
  ASSERT_NE(told.find(message), std::string::npos) << told;
  EXPECT_EQ(told.find(message, told.find(message) + 1), std::string::npos)
      << "told twice: " << told;
  EXPECT_NE(told.find("cudaStreamTailLaunch"), std::string::npos) << told;
}

// A launch's kernels may allocate 4096 arrays with the device runtime's cudaMalloc (the records
// of the arrays stay put while other workers' checks read them); the next fail as on a GPU whose
// device heap is full, told once. (A GPU's default 8 MB heap holds more 4-byte arrays: an emu
// limit, not a conformance test.)
__global__ void allocate_many(int count, int* failed) {
  for (int i = 0; i < count; ++i) {
    int* p = nullptr;
    if (cudaMalloc(&p, sizeof(int)) != cudaSuccess) ++*failed;
  }
}

TEST_F(Emu, ALaunchsKernelsAllocateAtMost4096Arrays) {
  cudalab::DeviceArray<int> failed(1, 0);
  allocate_many<<<1, 1>>>(10, failed.get());  // (the next launch has room for more than 4096)
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(failed.to_host()[0], 0);
  allocate_many<<<1, 1>>>(4096, failed.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(failed.to_host()[0], 0);
  testing::internal::CaptureStderr();
  allocate_many<<<1, 1>>>(4098, failed.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::string told = testing::internal::GetCapturedStderr();
  EXPECT_EQ(failed.to_host()[0], 2) << "the 4097th and 4098th of the second launch";
  EXPECT_NE(told.find("more than 4096 arrays with cudaMalloc"), std::string::npos) << told;
}

// What the cuBLAS and cuBLASLt subsets do not model is refused with NOT_SUPPORTED and a message
// naming it (a GPU runs these): a row-major layout, a backward epilogue, an integer product.
TEST_F(Emu, LibraryCallsTheEmuDoesNotModelAreRefusedByName) {
  testing::internal::CaptureStderr();
  cublasLtMatrixLayout_t layout;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, 4, 4, 4), CUBLAS_STATUS_SUCCESS);
  const int32_t row_major = CUBLASLT_ORDER_ROW;
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &row_major,
                                             sizeof(row_major)),
            CUBLAS_STATUS_NOT_SUPPORTED);
  cublasLtMatmulDesc_t desc;
  ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const cublasLtEpilogue_t bias_gradient = CUBLASLT_EPILOGUE_BGRADB;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &bias_gradient,
                                           sizeof(bias_gradient)),
            CUBLAS_STATUS_NOT_SUPPORTED);
  cublasHandle_t h;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  int8_t* d;
  CUDA_CHECK(cudaMalloc(&d, 64));
  const int one = 1;
  EXPECT_EQ(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_8I, 4, d, CUDA_R_8I,
                         4, &one, d, CUDA_R_32I, 4, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);
  const std::string told = testing::internal::GetCapturedStderr();
  EXPECT_NE(told.find("cublasLtMatrixLayoutSetAttribute: order 1"), std::string::npos) << told;
  EXPECT_NE(told.find("cublasLtMatmulDescSetAttribute: epilogue 512"), std::string::npos) << told;
  EXPECT_NE(told.find("cublasGemmEx: compute type 72 is not supported"), std::string::npos) << told;
  cublasDestroy(h);
  cublasLtMatmulDescDestroy(desc);
  cublasLtMatrixLayoutDestroy(layout);
  cudaFree(d);
}

// A library call that reads memory nobody wrote (llm.c's attention forward multiplies the whole
// of a matrix whose upper triangle its softmax never writes) is told with the array's line: its
// result holds the poison where a GPU's holds whatever the memory held.
TEST_F(Emu, LibraryReadsOfUnwrittenMemoryAreTold) {
  const int n = 4;
  float *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, n * n * sizeof(float)));
  const int b_line = __LINE__ + 1;
  CUDA_CHECK(cudaMalloc(&b, n * n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&c, n * n * sizeof(float)));
  const std::vector<float> ones(n * n, 1.0f);
  CUDA_CHECK(cudaMemcpy(a, ones.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));  // column 0
  cublasHandle_t h;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  testing::internal::CaptureStderr();
  for (int twice = 0; twice < 2; ++twice)
    EXPECT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n),
              CUBLAS_STATUS_SUCCESS);
  const std::string told = testing::internal::GetCapturedStderr();
  const std::string want =
      "cublasSgemm reads B, part of the array allocated at test_emu.cu:" + std::to_string(b_line) +
      " (b), whose element (0, 1) nobody wrote";
  EXPECT_NE(told.find(want), std::string::npos) << told;
  EXPECT_EQ(told.find("reads A"), std::string::npos) << told;
  EXPECT_EQ(told.find("told once", told.find("told once") + 1), std::string::npos) << told;
  cublasDestroy(h);
  cudaFree(a), cudaFree(b), cudaFree(c);
}

// CUDA 12's cudaThread* calls, which CUDA 13 removed, run as their replacements; the first call of
// each names its line and what to call instead, once.
TEST_F(Emu, RemovedCallsRunAsTheirReplacementsAndAreToldOnce) {
  auto count = [](const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  testing::internal::CaptureStderr();
  const int line = __LINE__ + 1;
  EXPECT_EQ(cudaThreadSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaThreadSynchronize(), cudaSuccess);
  size_t stack = 0, device_stack = 1;
  EXPECT_EQ(cudaThreadGetLimit(&stack, cudaLimitStackSize), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetLimit(&device_stack, cudaLimitStackSize), cudaSuccess);
  EXPECT_EQ(stack, device_stack);
  const std::string told = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(told, "warning: test_emu.cu:" + std::to_string(line) +
                            ": cudaThreadSynchronize() was removed in CUDA 13"),
            1u)
      << told;
  EXPECT_EQ(count(told, "cudaThreadSynchronize()"), 1u) << told;
  EXPECT_EQ(count(told, "runs it as cudaDeviceSynchronize()"), 1u) << told;
  EXPECT_EQ(count(told, "cudaThreadGetLimit() was removed"), 1u) << told;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // CUDA 12's fields of cudaDeviceProp (the compiler warns where a program reads one) hold what the
  // attributes that replace them answer.
  cudaDeviceProp p;
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  int clock = 0, memory_clock = 0, overlap = 0;
  cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&memory_clock, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(p.clockRate, clock);
  EXPECT_GT(p.clockRate, 0);
  EXPECT_EQ(p.memoryClockRate, memory_clock);
  EXPECT_EQ(p.deviceOverlap, overlap);
#pragma GCC diagnostic pop
}

// A warp's 16 x 16 tile of halves through tensor-core fragments: out = tile * identity. The checks
// see each lane's run of a load or store of a tile as that lane's accesses at the call's line.
// Planted bugs: a tile or an output one element short (the last lane's run ends past it), a tile
// whose last element nobody wrote.
__global__ void tile_times_identity(float* out, const __half* tile, const __half* identity) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> product;
  wmma::load_matrix_sync(a, tile, 16);  // LINE_FRAGMENT_LOAD
  wmma::load_matrix_sync(b, identity, 16);
  wmma::fill_fragment(product, 0.0f);
  wmma::mma_sync(product, a, b, product);
  wmma::store_matrix_sync(out, product, 16, wmma::mem_row_major);  // LINE_FRAGMENT_STORE
}

struct TileRun {
  cudaError_t status;
  std::vector<float> out;
};
TileRun run_tile_times_identity(int tile_elements, int written, int out_elements) {
  std::vector<__half> tile(tile_elements), identity(256, __float2half(0.0f));
  for (int i = 0; i < tile_elements; ++i) tile[i] = __float2half(static_cast<float>(i % 64));
  for (int i = 0; i < 16; ++i) identity[i * 16 + i] = __float2half(1.0f);
  __half* d_tile = nullptr;
  EXPECT_EQ(cudaMalloc(&d_tile, tile_elements * sizeof(__half)), cudaSuccess);
  cudaMemcpy(d_tile, tile.data(), written * sizeof(__half), cudaMemcpyHostToDevice);
  cudalab::DeviceArray<__half> d_identity(identity);
  cudalab::DeviceArray<float> d_out(out_elements, -1.0f);  // (poisoned)
  tile_times_identity<<<1, 32>>>(d_out.get(), d_tile, d_identity.get());
  TileRun r{cudaDeviceSynchronize(), {}};
  if (r.status == cudaSuccess) r.out = d_out.to_host();
  cudaFree(d_tile);
  return r;
}

TEST_F(Emu, ATileThroughFragmentsIsCheckedAndComputed) {
  const TileRun r = run_tile_times_identity(256, 256, 256);
  ASSERT_EQ(r.status, cudaSuccess) << diagnostic();
  for (int i = 0; i < 256; ++i) ASSERT_EQ(r.out[i], static_cast<float>(i % 64)) << "element " << i;
}

TEST_F(Emu, AFragmentLoadPastItsTileNamesTheLastLane) {
  const TileRun r = run_tile_times_identity(255, 255, 256);
  EXPECT_EQ(r.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (0,0,0), thread (31,0,0), at " + at("LINE_FRAGMENT_LOAD")))
      << diagnostic();
}

TEST_F(Emu, AFragmentStorePastItsArrayNamesTheLastLane) {
  const TileRun r = run_tile_times_identity(256, 256, 255);
  EXPECT_EQ(r.status, cudaErrorIllegalAddress);
  EXPECT_TRUE(says("block (0,0,0), thread (31,0,0), at " + at("LINE_FRAGMENT_STORE")))
      << diagnostic();
}

TEST_F(Emu, AFragmentLoadOfAnElementNobodyWroteNamesTheLastLane) {
  const TileRun r = run_tile_times_identity(256, 255, 256);
  EXPECT_NE(r.status, cudaSuccess);
  EXPECT_TRUE(says("thread (31,0,0), at " + at("LINE_FRAGMENT_LOAD"))) << diagnostic();
}

// A kernel that waits for the host to write page-locked memory after its launch: a GPU runs the
// host code meanwhile, emu runs the launch to its end first. The time limit stops it and says why,
// naming the memory; a spin on device memory keeps the plain advice.
__global__ void wait_for_the_host(volatile unsigned* latch) {
  while (latch[0] < 1) {  // LINE_WAIT_FOR_THE_HOST
  }
}

TEST_F(Emu, AKernelThatWaitsForTheHostIsStoppedWithWhy) {
  cudalab::emu::set_time_limit(1);
  unsigned* latch;
  ASSERT_EQ(cudaMallocHost(&latch, sizeof(unsigned)), cudaSuccess);
  *latch = 0;
  wait_for_the_host<<<1, 1>>>(latch);
  *latch = 1;  // (on a GPU, this ends the kernel's wait)
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchTimeout);
  EXPECT_TRUE(says("at " + at("LINE_WAIT_FOR_THE_HOST"))) << diagnostic();
  EXPECT_TRUE(says("It reads element 0 of the array allocated at")) << diagnostic();
  EXPECT_TRUE(says("page-locked host memory")) << diagnostic();
  EXPECT_TRUE(says("a kernel that waits for the host cannot finish on emu")) << diagnostic();
  cudaFreeHost(latch);

  cudaDeviceReset();
  cudalab::emu::clear_diagnostic();
  cudalab::emu::set_time_limit(1);
  unsigned* on_the_device;
  ASSERT_EQ(cudaMalloc(&on_the_device, sizeof(unsigned)), cudaSuccess);
  cudaMemset(on_the_device, 0, sizeof(unsigned));
  wait_for_the_host<<<1, 1>>>(on_the_device);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchTimeout);
  EXPECT_TRUE(says("Look for a loop whose condition never changes")) << diagnostic();
  EXPECT_FALSE(says("waits for the host")) << diagnostic();
  cudaDeviceReset();
  cudalab::emu::set_time_limit(20);
}

// A template kernel whose threads keep registers in an array sized by one of its `const` values
// (an SGEMM's `float ldg_reg[4 * ldg_num]`, `const int ldg_num = BK * BM / threads / 4`), across a
// barrier: its loop form's stretches capture that value by name, which GCC 12 needs to compile
// them at all (with `[&]` alone it stops with an internal error).
template <int BM, int BK>
__global__ void registers_sized_by_a_constant(const float* in, float* out) {
  __shared__ float tile[BM * BK];
  const int threads = BM * BK / 4;
  const int per_thread = BM * BK / threads;
  float registers[per_thread];
  for (int k = 0; k < per_thread; ++k)
    registers[k] = in[blockIdx.x * BM * BK + threadIdx.x * per_thread + k];
  for (int k = 0; k < per_thread; ++k) tile[threadIdx.x * per_thread + k] = 2.0f * registers[k];
  __syncthreads();
  float sum = 0.0f;
  for (int k = 0; k < per_thread; ++k)
    sum += tile[(threadIdx.x * per_thread + k + per_thread) % (BM * BK)];
  out[blockIdx.x * threads + threadIdx.x] = sum;
}

TEST_F(Emu, AKernelsRegistersSizedByItsConstantsRunAsLoops) {
  constexpr int BM = 8, BK = 4, threads = BM * BK / 4, blocks = 3;
  std::vector<float> in(blocks * BM * BK);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  cudalab::DeviceArray<float> d_in(in), d_out(blocks * threads, -1.0f);  // (poisoned)
  registers_sized_by_a_constant<BM, BK><<<blocks, threads>>>(d_in.get(), d_out.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << diagnostic();
  const std::vector<float> out = d_out.to_host();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {  // each thread sums its right neighbour's four, doubled
      double want = 0;
      for (int k = 0; k < 4; ++k) want += 2.0 * (b * BM * BK + (t * 4 + k + 4) % (BM * BK));
      ASSERT_EQ(out[b * threads + t], want) << "block " << b << ", thread " << t;
    }
}
