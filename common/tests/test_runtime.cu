// The runtime's behaviour that labs rely on, checked on both backends with the same expectations:
// on a GPU this test documents CUDA; on emu it proves the emulator matches it.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "cudalab/cuda_check.h"

namespace {

namespace cg = cooperative_groups;

__constant__ float kWeights[4];
__device__ int gCounter;

__global__ void write_one(int* flag) { *flag = 1; }

__global__ void global_ids(int* out, int width, int height, int depth) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < width && y < height && z < depth)
    out[(z * height + y) * width + x] = (z * height + y) * width + x;
}

// Each block counts its runs, at its number in the grid (x first, then y, then z).
__global__ void count_block_runs(int* runs) {
  if (threadIdx.x == 0)
    atomicAdd(&runs[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x], 1);
}

// Each block reverses its part of `data` through shared memory: needs a working barrier.
template <int BLOCK>
__global__ void reverse_in_block(int* data) {
  __shared__ int tile[BLOCK];
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  int base = blockIdx.x * BLOCK;
  tile[t] = data[base + t];
  __syncthreads();
  data[base + t] = tile[BLOCK - 1 - t];
}

// In a block 16 threads wide a warp spans two rows: each lane swaps its number with the lane 16
// away (the same x in the other row) by a shuffle, then with its row neighbour through shared
// memory after a barrier; the output says which thread wrote it and what it got.
__global__ void swap_across_rows(int* out) {
  __shared__ int swapped[256];
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  const int other_row = __shfl_xor_sync(0xffffffff, t, 16);
  swapped[t] = other_row;
  __syncthreads();
  out[blockIdx.x * 256 + t] = swapped[t ^ 1] * 1000 + threadIdx.y * 100 + threadIdx.x;
}

// Barriers that vote: how many threads of the block have threadIdx.x % 3 == 0, whether any thread
// is `chosen`, whether all threads are below `limit`; after a shuffle first in some blocks, so that
// the threads reach the barrier at different times.
__global__ void barrier_votes(int* out, int chosen, int limit) {
  int t = threadIdx.x;
  if (blockIdx.x % 2 == 1) t = __shfl_down_sync(0xffffffff, t, 0);
  const int count = __syncthreads_count(t % 3 == 0);
  const int any = __syncthreads_or(t == chosen);
  const int all = __syncthreads_and(t < limit);
  out[blockIdx.x * blockDim.x + t] = count * 100 + (any != 0) * 10 + (all != 0);
}

// The same with dynamic shared memory, and barriers in a loop: each round shifts by one.
__global__ void rotate_rounds(int* data, int rounds) {
  extern __shared__ int ring[];
  int t = threadIdx.x, n = blockDim.x;
  ring[t] = data[blockIdx.x * n + t];
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();
    int next = ring[(t + 1) % n];
    __syncthreads();
    ring[t] = next;
  }
  data[blockIdx.x * n + t] = ring[t];
}

__global__ void weighted(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = kWeights[i % 4] * in[i];
}

// Variables that live across barriers (on emu, kept per thread in a loop form: thread_loops.h): an
// array, a pointer into it, a loop whose trip count the block shares, a 3D block; the threads of
// the second z-slice return after the last barrier. Each round, every thread adds its neighbour's
// entry.
__global__ void locals_across_barriers(int* out, int rounds) {
  __shared__ int entry[64];
  const int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int mine[4] = {t, 2 * t, 3 * t, 4 * t + static_cast<int>(blockIdx.x)};
  const int* last = &mine[3];
  for (int r = 0; r < rounds; ++r) {
    entry[t] = mine[r % 4];
    __syncthreads();
    mine[r % 4] += entry[(t + 1) % 64];
    __syncthreads();
  }
  if (threadIdx.z == 1) return;
  out[blockIdx.x * 64 + t] = mine[0] + mine[1] + mine[2] + *last;
}

// A block of 1024 threads, each keeping an array of 300 ints across barriers (on emu, frames of
// over a megabyte per block: more than one of the worker's chunks of frames, scheduler.cpp).
constexpr int kLargeLocals = 300;
__global__ void large_locals_across_barriers(int* out) {
  __shared__ int entry[1024];
  int mine[kLargeLocals];
  for (int j = 0; j < kLargeLocals; ++j) mine[j] = 7 * threadIdx.x + j + blockIdx.x;
  entry[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int sum = entry[(threadIdx.x + 1) % blockDim.x];
  __syncthreads();
  for (int j = 0; j < kLargeLocals; ++j) sum += mine[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// The four shuffles in segments narrower than a warp (on emu, in a loop form: thread_loops.h):
// a lane whose source lies outside its segment keeps its own value.
__global__ void shuffles_in_segments(int* out) {
  const int t = threadIdx.x, v = 7 * t + 1;
  int* mine = out + 5 * (blockIdx.x * blockDim.x + t);
  mine[0] = __shfl_down_sync(0xffffffff, v, 3, 8);
  mine[1] = __shfl_up_sync(0xffffffff, v, 5, 16);
  mine[2] = __shfl_xor_sync(0xffffffff, v, 9);
  mine[3] = __shfl_sync(0xffffffff, v, 21, 16);
  mine[4] = __shfl_sync(0xffffffff, v, -3, 8);  // the source lane's low bits: 5 of its segment
}

// Votes, a match and reductions of a warp, with __syncwarp() between (on emu, on fibers). The
// full mask names lanes that do not exist where a block's last warp is short: only the lanes that
// exist take part.
constexpr int kWarpResults = 10;
__global__ void warp_votes(unsigned* out, int limit) {
  const unsigned t = threadIdx.x, lane = t % 32;
  unsigned* mine = out + kWarpResults * (blockIdx.x * blockDim.x + t);
  mine[0] = __ballot_sync(0xffffffff, lane % 3 == 0);
  mine[1] = __any_sync(0xffffffff, t == 70);
  mine[2] = __all_sync(0xffffffff, static_cast<int>(t) < limit);
  __syncwarp();
  mine[3] = __match_any_sync(0xffffffff, lane % 4);
  mine[4] = __reduce_add_sync(0xffffffff, t);
  mine[5] = __reduce_min_sync(0xffffffff, 100 - static_cast<int>(t));
  mine[6] = __reduce_max_sync(0xffffffff, t);
  mine[7] = __reduce_or_sync(0xffffffff, 1u << lane % 8);
  mine[7] |= __reduce_and_sync(0xffffffff, ~lane) << 8;
  mine[8] = __reduce_xor_sync(0xffffffff, t);
  mine[9] = __activemask();
}

// The same for a tile's votes (on emu, on fibers too): the tile's all() holds only if its
// predicate holds in all of its lanes, and a lane that does not exist has none.
__global__ void tile_votes(unsigned* out, int limit) {
  const auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  const unsigned t = threadIdx.x;
  const int all = tile.all(static_cast<int>(t) < limit);
  out[blockIdx.x * blockDim.x + t] = all * 10 + tile.any(t == 70);
}

// A tile's waits and collectives (on emu, on fibers): a warp's sum by the
// tile's shuffles in a function, then in each half-warp tile a reduction, a scan, a maximum, a
// shuffle of a 16-byte value, a ballot (in the tile's ranks) and its place in its parent.
struct Pair {
  long long a;
  double b;
};
__device__ int tile_sum(const cg::thread_block_tile<32>& tile, int v) {
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  return v;
}
constexpr int kTileResults = 9;
__global__ void tile_collectives(int* out) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  auto half = cg::tiled_partition<16>(tile);
  const int t = cta.thread_rank();
  int* mine = out + kTileResults * (blockIdx.x * blockDim.x + t);
  mine[0] = tile_sum(tile, t);  // the tile's sum in its lane 0
  tile.sync();
  mine[1] = cg::reduce(half, t, cg::plus<int>());
  mine[2] = cg::inclusive_scan(half, t);
  mine[3] = cg::reduce(half, t * 7 % 23, cg::greater<int>());
  const Pair p = half.shfl(Pair{t, 0.5 * t}, 3);
  mine[4] = static_cast<int>(p.a);
  mine[5] = static_cast<int>(2 * p.b);
  mine[6] = half.ballot(t % 3 == 0);
  mine[7] = half.meta_group_rank();
  mine[8] = tile.meta_group_rank() * 100 + tile.meta_group_size();
}

// Two shuffles in one statement, then a third (on emu such a kernel keeps its fibers: a loop form
// makes one shuffle per statement).
__global__ void shuffles_in_a_statement(int* out) {
  const int t = threadIdx.x;
  const int v = __shfl_xor_sync(0xffffffff, t, 1) + 1000 * __shfl_xor_sync(0xffffffff, t, 2);
  out[2 * t] = v;
  out[2 * t + 1] = __shfl_xor_sync(0xffffffff, v, 4);
}

// Functions that wait, called from a kernel (on emu, on fibers): a warp's sum by shuffles, a
// block's sum through shared memory, and a rotation of a tile between two barriers, called in a
// loop.
template <class T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
__device__ int block_sum(int v) {  // thread 0 gets the block's sum
  __shared__ int partial[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum<int>(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? partial[lane] : 0;
  if (warp == 0) v = warp_sum(v);
  return v;
}
__device__ void rotate_once(int* tile, int n) {
  const int next = tile[(threadIdx.x + 1) % n];
  __syncthreads();
  tile[threadIdx.x] = next;
  __syncthreads();
}
__global__ void sums_through_functions(const int* in, int* out, int rounds) {
  __shared__ int tile[256];
  const int t = threadIdx.x, n = blockDim.x;
  tile[t] = in[blockIdx.x * n + t];
  __syncthreads();
  for (int r = 0; r < rounds; ++r) rotate_once(tile, n);
  const int total = block_sum(tile[t]);
  out[blockIdx.x * (n + 1) + t] = tile[t];
  if (t == 0) out[blockIdx.x * (n + 1) + n] = total;
}

// A function that waits, and its explicit specialisation that waits otherwise (as the reduction
// sample's warpReduceSum<int>).
template <class T>
__device__ T neighbour_or_most(T v) {
  return __shfl_xor_sync(0xffffffff, v, 1);
}
template <>
__device__ unsigned neighbour_or_most<unsigned>(unsigned v) {
  return __reduce_max_sync(0xffffffff, v);
}
__global__ void specialised_functions(int* neighbours, unsigned* most) {
  const int t = threadIdx.x;
  neighbours[t] = neighbour_or_most<int>(t);
  most[t] = neighbour_or_most<unsigned>(7u * t % 64);
}

// Two rotations of a block's elements through shared memory, the barriers written with cooperative
// groups, one in a function the block's group is given to, as NVIDIA's mergeSort gives it to
// merge().
__device__ int neighbour_before_sync(const int* tile, cg::thread_block cta) {
  const int next = tile[(cta.thread_rank() + 1) % cta.size()];
  cta.sync();
  return next;
}
__global__ void rotate_with_groups(int* data) {
  __shared__ int tile[256];
  cg::thread_block cta = cg::this_thread_block();
  const unsigned t = cta.thread_rank(), n = cta.size();
  tile[t] = data[blockIdx.x * n + t];
  cg::sync(cta);
  const int next = neighbour_before_sync(tile, cta);
  tile[t] = next;
  cta.sync();
  data[blockIdx.x * n + t] = tile[(t + 1) % n];
}

// A product of width x width matrices in tiles of 8 x 8, as NVIDIA's matrixMul and
// convolutionSeparable write one: the pointers moved to the thread's element first, the tile loop's
// bounds in variables of the block's values, the barriers written with cooperative groups (on emu,
// the kernel's threads run as loops between its barriers, each thread with its own pointers).
__global__ void tiled_product_with_groups(const float* A, const float* B, float* C, int width) {
  __shared__ float As[8][8];
  __shared__ float Bs[8][8];
  cg::thread_block cta = cg::this_thread_block();
  const int tx = threadIdx.x, ty = threadIdx.y;
  int first = blockIdx.y * 8 * width;
  int last = first + width - 1;
  A += ty * width + tx;
  B += blockIdx.x * 8 + ty * width + tx;
  float sum = 0;
  for (int a = first, b = 0; a <= last; a += 8, b += 8 * width) {
    As[ty][tx] = A[a];
    Bs[ty][tx] = B[b];
    cg::sync(cta);
    for (int k = 0; k < 8; ++k) sum += As[ty][k] * Bs[k][tx];
    cta.sync();
  }
  C[(blockIdx.y * 8 + ty) * width + blockIdx.x * 8 + tx] = sum;
}

// A rotation within each tile of TILE threads through shared memory, between the tile's syncs (on
// emu, a warp's meeting or, for a tile of several warps, the block's barrier).
template <unsigned TILE>
__global__ void rotate_in_tiles(int* data) {
  __shared__ int ring[128];
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<TILE> tile = cg::tiled_partition<TILE>(cta);
  const unsigned t = cta.thread_rank(), first = t - tile.thread_rank();
  ring[t] = data[blockIdx.x * 128 + t];
  tile.sync();
  const int next = ring[first + (tile.thread_rank() + 1) % TILE];
  cg::sync(tile);
  data[blockIdx.x * 128 + t] = next;
}

// A reduction through a thread_group, as NVIDIA's simpleCooperativeGroups writes it (on emu, the
// group's sync is the block's barrier or its lanes' meeting, as the group is): over
// the block, over tiles of 16, and over groups of 8 made at run time.
__device__ int group_sum(cg::thread_group g, int* x, int val) {
  const int rank = g.thread_rank();
  for (int i = g.size() / 2; i > 0; i /= 2) {
    x[rank] = val;
    g.sync();
    if (rank < i) val += x[rank + i];
    g.sync();
  }
  return val;  // the group's sum in its rank 0
}
__global__ void group_sums(int* out) {
  __shared__ int work[128];
  cg::thread_block cta = cg::this_thread_block();
  const int t = cta.thread_rank();
  out[3 * t] = group_sum(cta, work, t);
  cta.sync();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cta);
  out[3 * t + 1] = group_sum(tile, work + t - tile.thread_rank(), t);
  cta.sync();
  cg::thread_group eight = cg::tiled_partition(cta, 8);
  out[3 * t + 2] = group_sum(eight, work + t - eight.thread_rank(), t);
}

struct Counters {
  float fsum;
  double dsum;
  unsigned long long usum;
  int imax, imin, isub, exch, cas;
};

__global__ void count(Counters* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&gCounter, 1);
  atomicAdd(&c->fsum, 1.0f);
  atomicAdd(&c->dsum, 0.5);
  atomicAdd(&c->usum, 2ull);
  atomicMax(&c->imax, i);
  atomicMin(&c->imin, -i);
  atomicSub(&c->isub, 3);
  atomicExch(&c->exch, 7);
  atomicCAS(&c->cas, 0, i + 1);  // only the first thread to get there succeeds
}

__global__ void hello() { printf("hello from block %d thread %d\n", blockIdx.x, threadIdx.x); }

template <class T>
__global__ void fill(T* out, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

template <class T>
void launch_fill(T* out, T value, int n) {
  fill<<<(n + 127) / 128, 128>>>(out, value, n);  // template argument deduced from the call
}

cudaError_t launch_error() {
  cudaError_t e = cudaGetLastError();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "cudaGetLastError must reset the error";
  return e;
}

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override { (void)cudaGetLastError(); }
};

TEST_F(Runtime, MallocOfZeroBytesSucceeds) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 0), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
}

TEST_F(Runtime, MallocIntoAPointerToConst) {  // as NVIDIA's HSOpticalFlow sample does
  const float* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, 64 * sizeof(float)));
  EXPECT_NE(p, nullptr);
  CUDA_CHECK(cudaFree(const_cast<float*>(p)));
}

TEST_F(Runtime, FreeOfHostPointerIsInvalidValue) {
  int host = 0;
  EXPECT_EQ(cudaFree(&host), cudaErrorInvalidValue);
  EXPECT_EQ(launch_error(), cudaErrorInvalidValue);
}

TEST_F(Runtime, ErrorNamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorIllegalAddress),
               "an illegal memory access was encountered");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorNotYetImplemented), "feature not yet implemented");
}

TEST_F(Runtime, MemcpyWithBadDirection) {
  int* d;
  int h = 0;
  CUDA_CHECK(cudaMalloc(&d, sizeof(int)));
  EXPECT_EQ(cudaMemcpy(d, &h, sizeof(int), static_cast<cudaMemcpyKind>(7)),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(launch_error(), cudaErrorInvalidMemcpyDirection);
  CUDA_CHECK(cudaFree(d));
}

struct BadLaunch {
  dim3 grid, block;
  size_t shared;
  cudaError_t expected;
};

// CUDA 13 answers every refused configuration with cudaErrorInvalidValue (seen on an H100 with
// driver 580); earlier versions said cudaErrorInvalidConfiguration for the thread and grid limits.
TEST_F(Runtime, RefusedLaunchesSetTheErrorAndDoNotRun) {
  const BadLaunch cases[] = {
      {dim3(1), dim3(1025), 0, cudaErrorInvalidValue},        // > 1024 threads
      {dim3(1), dim3(32, 32, 2), 0, cudaErrorInvalidValue},   // 2048 threads
      {dim3(1), dim3(1, 1, 65), 0, cudaErrorInvalidValue},    // z > 64
      {dim3(0), dim3(32), 0, cudaErrorInvalidValue},          // empty grid
      {dim3(1, 65536), dim3(32), 0, cudaErrorInvalidValue},   // grid y > 65535
      {dim3(1), dim3(32), 64 * 1024, cudaErrorInvalidValue},  // > 48 KiB dynamic shared
  };
  int* flag;
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  for (const BadLaunch& c : cases) {
    CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
    write_one<<<c.grid, c.block, c.shared>>>(flag);
    EXPECT_EQ(cudaPeekAtLastError(), c.expected) << "peek must not reset";
    EXPECT_EQ(launch_error(), c.expected)
        << "block (" << c.block.x << "," << c.block.y << "," << c.block.z << ")";
    int h = -1;
    CUDA_CHECK(cudaMemcpy(&h, flag, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT_EQ(h, 0) << "a refused launch must not run";
  }
  CUDA_CHECK(cudaFree(flag));
}

TEST_F(Runtime, ThreeDimensionalGridCoversEveryElement) {
  const int W = 37, H = 19, D = 5;
  int* d;
  std::vector<int> h(W * H * D, -1);
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMemset(d, 0xFF, h.size() * sizeof(int)));
  dim3 block(8, 4, 2), grid((W + 7) / 8, (H + 3) / 4, (D + 1) / 2);
  global_ids<<<grid, block>>>(d, W, H, D);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < W * H * D; ++i) ASSERT_EQ(h[i], i) << "element " << i;
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, LargeGridRunsEveryBlockOnce) {
  const dim3 grid(131, 17, 3);  // 6,681 blocks: emu's workers take them a few dozen at a time
  const unsigned blocks = grid.x * grid.y * grid.z;
  int* runs;
  CUDA_CHECK(cudaMalloc(&runs, blocks * sizeof(int)));
  CUDA_CHECK(cudaMemset(runs, 0, blocks * sizeof(int)));
  count_block_runs<<<grid, 64>>>(runs);
  CUDA_CHECK(cudaGetLastError());
  std::vector<int> h(blocks, -1);
  CUDA_CHECK(cudaMemcpy(h.data(), runs, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (unsigned b = 0; b < blocks; ++b) ASSERT_EQ(h[b], 1) << "block " << b;
  CUDA_CHECK(cudaFree(runs));
}

TEST_F(Runtime, BarrierOrdersSharedMemory) {
  const int BLOCK = 256, BLOCKS = 40;
  std::vector<int> h(BLOCK * BLOCKS);
  std::iota(h.begin(), h.end(), 0);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  reverse_in_block<BLOCK><<<BLOCKS, dim3(16, 16)>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < BLOCKS; ++b)
    for (int t = 0; t < BLOCK; ++t) ASSERT_EQ(h[b * BLOCK + t], b * BLOCK + BLOCK - 1 - t);
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, WarpsSpanTheRowsOfATwoDimensionalBlock) {
  const int BLOCKS = 3;
  std::vector<int> h(256 * BLOCKS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  swap_across_rows<<<BLOCKS, dim3(16, 16)>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < BLOCKS; ++b)
    for (int t = 0; t < 256; ++t)
      ASSERT_EQ(h[b * 256 + t], (t ^ 1 ^ 16) * 1000 + t / 16 * 100 + t % 16) << "thread " << t;
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, BarriersThatVoteCountEveryThreadOfTheBlock) {
  const int THREADS = 160, BLOCKS = 4;  // 5 warps: threads 0, 3, ..., 159 hold, 54 of them
  std::vector<int> h(THREADS * BLOCKS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  barrier_votes<<<BLOCKS, THREADS>>>(d, 77, THREADS);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < THREADS * BLOCKS; ++i) ASSERT_EQ(h[i], 54 * 100 + 10 + 1) << "thread " << i;
  barrier_votes<<<BLOCKS, THREADS>>>(d, THREADS, THREADS - 1);  // nobody chosen, one too high
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < THREADS * BLOCKS; ++i) ASSERT_EQ(h[i], 54 * 100) << "thread " << i;
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, DynamicSharedMemoryAndBarriersInALoop) {
  const int N = 96, BLOCKS = 7, ROUNDS = 10;
  std::vector<int> h(N * BLOCKS);
  std::iota(h.begin(), h.end(), 0);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  rotate_rounds<<<BLOCKS, N, N * sizeof(int)>>>(d, ROUNDS);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < BLOCKS; ++b)
    for (int t = 0; t < N; ++t) ASSERT_EQ(h[b * N + t], b * N + (t + ROUNDS) % N);
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, VariablesLiveAcrossBarriers) {
  const int BLOCKS = 3, ROUNDS = 7;
  std::vector<int> h(64 * BLOCKS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  locals_across_barriers<<<BLOCKS, dim3(4, 4, 4)>>>(d, ROUNDS);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < BLOCKS; ++b) {
    std::vector<std::vector<int>> mine(64);  // the kernel's rounds, on the host
    for (int t = 0; t < 64; ++t) mine[t] = {t, 2 * t, 3 * t, 4 * t + b};
    for (int r = 0; r < ROUNDS; ++r) {
      std::vector<int> entry(64);
      for (int t = 0; t < 64; ++t) entry[t] = mine[t][r % 4];
      for (int t = 0; t < 64; ++t) mine[t][r % 4] += entry[(t + 1) % 64];
    }
    for (int t = 0; t < 64; ++t) {
      const int expected = t / 16 == 1 ? -1 : mine[t][0] + mine[t][1] + mine[t][2] + mine[t][3];
      ASSERT_EQ(h[b * 64 + t], expected) << "block " << b << ", thread " << t;
    }
  }
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, LargeLocalsLiveAcrossBarriers) {
  const int BLOCKS = 3, THREADS = 1024;
  std::vector<int> h(BLOCKS * THREADS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  for (int launch = 0; launch < 2; ++launch) {  // the second reuses the worker's frames
    CUDA_CHECK(cudaMemset(d, 0xFF, h.size() * sizeof(int)));
    large_locals_across_barriers<<<BLOCKS, THREADS>>>(d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < BLOCKS; ++b)
      for (int t = 0; t < THREADS; ++t) {
        long expected = (t + 1) % THREADS;
        for (int j = 0; j < kLargeLocals; ++j) expected += 7 * t + j + b;
        ASSERT_EQ(h[b * THREADS + t], expected)
            << "launch " << launch << ", block " << b << ", thread " << t;
      }
  }
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, ShufflesInSegmentsNarrowerThanAWarp) {
  const int THREADS = 64, BLOCKS = 2;
  std::vector<int> h(5 * THREADS * BLOCKS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  shuffles_in_segments<<<BLOCKS, THREADS>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const auto value = [](int t) { return 7 * t + 1; };
  for (int i = 0; i < THREADS * BLOCKS; ++i) {
    const int t = i % THREADS, lane = t % 32, warp = t - lane;
    const int down = lane % 8 + 3 < 8 ? t + 3 : t, up = lane % 16 >= 5 ? t - 5 : t;
    ASSERT_EQ(h[5 * i], value(down)) << "thread " << i;
    ASSERT_EQ(h[5 * i + 1], value(up)) << "thread " << i;
    ASSERT_EQ(h[5 * i + 2], value(warp + (lane ^ 9))) << "thread " << i;
    ASSERT_EQ(h[5 * i + 3], value(warp + lane / 16 * 16 + 5)) << "thread " << i;
    ASSERT_EQ(h[5 * i + 4], value(warp + lane / 8 * 8 + 5)) << "thread " << i;
  }
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, WarpVotesTakeTheLanesThatExist) {
  const int BLOCKS = 2, LIMIT = 72;
  for (const int THREADS : {96, 72}) {  // whole warps, then a last warp of 8 lanes
    std::vector<unsigned> h(kWarpResults * THREADS * BLOCKS, 7);
    unsigned* d;
    CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(unsigned)));
    warp_votes<<<BLOCKS, THREADS>>>(d, LIMIT);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int i = 0; i < THREADS * BLOCKS; ++i) {
      const unsigned t = i % THREADS, lane = t % 32, first = t - lane;
      const unsigned lanes = std::min(32u, THREADS - first);
      unsigned expected[kWarpResults] = {0, 0, 1, 0, 0, ~0u, 0, 0, 0, 0}, all_of_not_lane = ~0u;
      for (unsigned l = 0; l < lanes; ++l) {
        const unsigned bit = 1u << l;
        expected[0] |= l % 3 == 0 ? bit : 0;
        expected[1] |= first + l == 70;
        expected[2] &= first + l < LIMIT;
        expected[3] |= l % 4 == lane % 4 ? bit : 0;
        expected[4] += first + l;
        expected[5] = std::min(expected[5], 100 - (first + l));
        expected[6] = std::max(expected[6], first + l);
        expected[7] |= 1u << l % 8;
        expected[8] ^= first + l;
        expected[9] |= bit;
        all_of_not_lane &= ~l;
      }
      expected[7] |= all_of_not_lane << 8;
      for (int k = 0; k < kWarpResults; ++k)
        ASSERT_EQ(h[kWarpResults * i + k], expected[k])
            << THREADS << " threads, thread " << i << ", result " << k;
    }
    tile_votes<<<BLOCKS, THREADS>>>(d, LIMIT);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(
        cudaMemcpy(h.data(), d, THREADS * BLOCKS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int i = 0; i < THREADS * BLOCKS; ++i) {
      const unsigned first = i % THREADS / 16 * 16;  // a tile's all(): its 16 lanes (CUDA's)
      ASSERT_EQ(h[i], (first + 15 < LIMIT) * 10u + (first == 64))
          << THREADS << " threads, thread " << i;
    }
    CUDA_CHECK(cudaFree(d));
  }
}

TEST_F(Runtime, TilesOfAWarpShuffleVoteAndReduce) {
  const int BLOCKS = 2, THREADS = 96;
  std::vector<int> h(kTileResults * THREADS * BLOCKS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  tile_collectives<<<BLOCKS, THREADS>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < THREADS * BLOCKS; ++i) {
    const int t = i % THREADS, warp = t / 32 * 32, half = t / 16 * 16;
    int sum = 0, scan = 0, most = 0;
    unsigned ballot = 0;
    for (int r = 0; r < 16; ++r) {
      sum += half + r;
      scan += half + r <= t ? half + r : 0;
      most = std::max(most, (half + r) * 7 % 23);
      ballot |= (half + r) % 3 == 0 ? 1u << r : 0u;
    }
    const int* mine = &h[kTileResults * i];
    if (t == warp) ASSERT_EQ(mine[0], 32 * warp + 31 * 16) << "thread " << i;
    ASSERT_EQ(mine[1], sum) << "thread " << i;
    ASSERT_EQ(mine[2], scan) << "thread " << i;
    ASSERT_EQ(mine[3], most) << "thread " << i;
    ASSERT_EQ(mine[4], half + 3) << "thread " << i;
    ASSERT_EQ(mine[5], half + 3) << "thread " << i;
    ASSERT_EQ(static_cast<unsigned>(mine[6]), ballot) << "thread " << i;
    ASSERT_EQ(mine[7], t % 32 / 16) << "thread " << i << ": the half's place in its warp's tile";
    ASSERT_EQ(mine[8], t / 32 * 100 + THREADS / 32) << "thread " << i;
  }
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, ShufflesInAStatement) {
  const int THREADS = 64;
  std::vector<int> h(2 * THREADS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  shuffles_in_a_statement<<<1, THREADS>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const auto v = [](int t) { return (t ^ 1) + 1000 * (t ^ 2); };
  for (int t = 0; t < THREADS; ++t) {
    ASSERT_EQ(h[2 * t], v(t)) << "thread " << t;
    ASSERT_EQ(h[2 * t + 1], v(t ^ 4)) << "thread " << t;
  }
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, FunctionsThatWait) {
  const int BLOCKS = 3, N = 96, ROUNDS = 5;
  std::vector<int> in(N * BLOCKS), h((N + 1) * BLOCKS, -1);
  for (int i = 0; i < N * BLOCKS; ++i) in[i] = i * 7 % 101;
  int *d_in, *d_out;
  CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_out, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  sums_through_functions<<<BLOCKS, N>>>(d_in, d_out, ROUNDS);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d_out, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < BLOCKS; ++b) {
    int total = 0;
    for (int t = 0; t < N; ++t) {
      total += in[b * N + t];
      ASSERT_EQ(h[b * (N + 1) + t], in[b * N + (t + ROUNDS) % N])
          << "block " << b << ", thread " << t;
    }
    ASSERT_EQ(h[b * (N + 1) + N], total) << "block " << b;
  }
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
}

TEST_F(Runtime, SpecialisedFunctionsThatWait) {
  const int THREADS = 64;
  std::vector<int> neighbours(THREADS, -1);
  std::vector<unsigned> most(THREADS, 1);
  int* d_neighbours;
  unsigned* d_most;
  CUDA_CHECK(cudaMalloc(&d_neighbours, THREADS * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_most, THREADS * sizeof(unsigned)));
  specialised_functions<<<1, THREADS>>>(d_neighbours, d_most);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(
      cudaMemcpy(neighbours.data(), d_neighbours, THREADS * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(most.data(), d_most, THREADS * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int t = 0; t < THREADS; ++t) {
    unsigned warp_most = 0;
    for (int l = t / 32 * 32; l < t / 32 * 32 + 32; ++l)
      warp_most = std::max(warp_most, 7u * l % 64);
    ASSERT_EQ(neighbours[t], t ^ 1) << "thread " << t;
    ASSERT_EQ(most[t], warp_most) << "thread " << t;
  }
  CUDA_CHECK(cudaFree(d_neighbours));
  CUDA_CHECK(cudaFree(d_most));
}

TEST_F(Runtime, CooperativeGroupsSyncTheBlock) {
  const int BLOCKS = 5, N = 96;
  std::vector<int> h(N * BLOCKS);
  std::iota(h.begin(), h.end(), 0);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  rotate_with_groups<<<BLOCKS, dim3(32, 3)>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < BLOCKS; ++b)
    for (int t = 0; t < N; ++t) ASSERT_EQ(h[b * N + t], b * N + (t + 2) % N) << "thread " << t;
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, ATiledProductWithGroupsBarriersAndMovedPointersIsExact) {
  const int width = 40;  // 5 x 5 tiles
  std::vector<float> a(width * width), b(width * width), c(width * width, -1.0f);
  for (int i = 0; i < width * width; ++i)
    a[i] = static_cast<float>(i % 7), b[i] = static_cast<float>(i % 5) - 2;
  float *d_a, *d_b, *d_c;
  CUDA_CHECK(cudaMalloc(&d_a, a.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_b, b.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_c, c.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_c, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  tiled_product_with_groups<<<dim3(5, 5), dim3(8, 8)>>>(d_a, d_b, d_c, width);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(c.data(), d_c, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int row = 0; row < width; ++row)
    for (int col = 0; col < width; ++col) {
      double expected = 0;  // (small integers: every partial sum is exact in float)
      for (int k = 0; k < width; ++k) expected += double(a[row * width + k]) * b[k * width + col];
      ASSERT_EQ(c[row * width + col], expected) << "row " << row << ", column " << col;
    }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));
}

TEST_F(Runtime, ThreadGroupsSyncAsTheirParents) {
  const int THREADS = 128;
  std::vector<int> h(3 * THREADS, -1);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  group_sums<<<1, THREADS>>>(d);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const auto sum = [](int first, int n) { return n * first + n * (n - 1) / 2; };
  ASSERT_EQ(h[0], sum(0, THREADS)) << "the block's sum";
  for (int t = 0; t < THREADS; t += 16) ASSERT_EQ(h[3 * t + 1], sum(t, 16)) << "thread " << t;
  for (int t = 0; t < THREADS; t += 8) ASSERT_EQ(h[3 * t + 2], sum(t, 8)) << "thread " << t;
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, TilesSyncTheirThreads) {
  const int BLOCKS = 3, N = 128;
  std::vector<int> h(N * BLOCKS);
  int* d;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(int)));
  for (const int TILE : {16, 64}) {
    std::iota(h.begin(), h.end(), 0);
    CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
    if (TILE == 16) rotate_in_tiles<16><<<BLOCKS, N>>>(d);
    if (TILE == 64) rotate_in_tiles<64><<<BLOCKS, N>>>(d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N * BLOCKS; ++i) {
      const int first = i / TILE * TILE;
      ASSERT_EQ(h[i], first + (i - first + 1) % TILE) << "tiles of " << TILE << ", thread " << i;
    }
  }
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, ConstantMemoryThroughSymbols) {
  const float w[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  CUDA_CHECK(cudaMemcpyToSymbol(kWeights, w, sizeof w));
  float back[4] = {};
  CUDA_CHECK(cudaMemcpyFromSymbol(back, kWeights, sizeof back));
  EXPECT_EQ(back[3], 4.0f);
  EXPECT_EQ(cudaMemcpyToSymbol(kWeights, w, sizeof w, sizeof(float)), cudaErrorInvalidValue)
      << "16 bytes at offset 4 do not fit in a 16-byte symbol";
  (void)cudaGetLastError();

  const int n = 10;
  float *in, *out, h[n];
  std::vector<float> ones(n, 1.0f);
  CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(in, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  weighted<<<1, 32>>>(in, out, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h, out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT_EQ(h[i], w[i % 4]);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
}

// The address of a __device__ variable from cudaGetSymbolAddress is device memory: cudaMemcpy and
// cudaMemset take it (the book "CUDA Programming" by Fan Zheyong reads its reduction's result so).
__device__ int gSymbolCells[8];
TEST_F(Runtime, ASymbolsAddressIsDeviceMemory) {
  int* cells = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&cells), gSymbolCells));
  CUDA_CHECK(cudaMemset(cells, 0, sizeof gSymbolCells));
  const int seven = 7;
  CUDA_CHECK(cudaMemcpy(cells + 3, &seven, sizeof seven, cudaMemcpyHostToDevice));
  int back[8];
  CUDA_CHECK(cudaMemcpy(back, cells, sizeof back, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(back[i], i == 3 ? 7 : 0) << i;
  CUDA_CHECK(cudaMemcpyFromSymbol(back, gSymbolCells, sizeof back));
  EXPECT_EQ(back[3], 7);
}

TEST_F(Runtime, AtomicsFromManyBlocks) {
  const int BLOCKS = 300, THREADS = 128, N = BLOCKS * THREADS;
  int zero = 0;
  CUDA_CHECK(cudaMemcpyToSymbol(gCounter, &zero, sizeof zero));
  Counters* d;
  CUDA_CHECK(cudaMalloc(&d, sizeof(Counters)));
  CUDA_CHECK(cudaMemset(d, 0, sizeof(Counters)));
  count<<<BLOCKS, THREADS>>>(d);
  CUDA_CHECK(cudaGetLastError());
  int counter = 0;
  Counters c;
  CUDA_CHECK(cudaMemcpyFromSymbol(&counter, gCounter, sizeof counter));
  CUDA_CHECK(cudaMemcpy(&c, d, sizeof c, cudaMemcpyDeviceToHost));
  EXPECT_EQ(counter, N);
  EXPECT_EQ(c.fsum, float(N));  // exact: every partial sum is an integer below 2^24
  EXPECT_EQ(c.dsum, 0.5 * N);
  EXPECT_EQ(c.usum, 2ull * N);
  EXPECT_EQ(c.imax, N - 1);
  EXPECT_EQ(c.imin, -(N - 1));
  EXPECT_EQ(c.isub, -3 * N);
  EXPECT_EQ(c.exch, 7);
  EXPECT_TRUE(c.cas >= 1 && c.cas <= N) << c.cas;
  CUDA_CHECK(cudaFree(d));
}

TEST_F(Runtime, DevicePrintf) {
  ::testing::internal::CaptureStdout();
  hello<<<2, 3>>>();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::fflush(stdout);
  std::string out = ::testing::internal::GetCapturedStdout();
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t) {
      std::string line = "hello from block " + std::to_string(b) + " thread " + std::to_string(t);
      EXPECT_NE(out.find(line), std::string::npos) << out;
    }
}

TEST_F(Runtime, TemplatedKernelsStreamsAndEvents) {
  const int n = 1000;
  double* d;
  std::vector<double> h(n);
  cudaStream_t stream;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaMalloc(&d, n * sizeof(double)));
  CUDA_CHECK(cudaEventRecord(start));
  launch_fill(d, 2.5, n);
  fill<double><<<(n + 255) / 256, 256, 0, stream>>>(d + 10, -1.0, 5);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = -1;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 0.0f);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], (i >= 10 && i < 15) ? -1.0 : 2.5) << i;
  CUDA_CHECK(cudaFree(d));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
}

TEST_F(Runtime, DeviceProperties) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  ASSERT_GE(count, 1);
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  EXPECT_EQ(p.warpSize, 32);
  EXPECT_EQ(p.maxThreadsPerBlock, 1024);
  EXPECT_EQ(p.maxThreadsDim[2], 64);
  EXPECT_EQ(p.sharedMemPerBlock, 48u * 1024);
  EXPECT_EQ(cudaSetDevice(count), cudaErrorInvalidDevice);
  (void)cudaGetLastError();
}

}  // namespace
