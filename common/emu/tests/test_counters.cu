// The counters against the course's arithmetic: coalescing (32-byte sectors per warp request),
// the global loads that tiling saves (a factor of TILE_WIDTH), shared-memory bank conflicts
// (stride s: gcd(s, 32)-way; a padded tile or stride 33: none; one address: a broadcast), and
// lanes that branch (each visit of a line is a request of the lanes that make it).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/emu/inspect.h"

namespace {

using cudalab::LaunchCounters;

constexpr int TILE_WIDTH = 16;

#include "cudalab/textbook_kernels.cuh"  // copyCoalesced, rowSums, naiveMatMul, tiledMatMul

// Each thread of one warp writes and reads word threadIdx.x * stride of a shared array.
__global__ void strided_shared(float* out, int stride) {
  __shared__ float words[32 * 33];
  words[threadIdx.x * stride] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = words[threadIdx.x * stride];
}

// Thread t uses word perm[t]: any permutation of 32 words of one row touches each bank once.
__global__ void permuted_shared(const int* perm, float* out) {
  __shared__ float words[32];
  words[perm[threadIdx.x]] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = words[perm[threadIdx.x]];
}

__global__ void broadcast_shared(float* out) {
  __shared__ float word;
  if (threadIdx.x == 0) word = 1.0f;
  __syncthreads();
  out[threadIdx.x] = word;
}

// A 32x32 tile written by rows and read by columns, as in a transpose; PAD 1 shifts each row by a
// bank.
template <int PAD>
__global__ void tile_columns(float* out) {
  __shared__ float tile[32][32 + PAD];
  tile[threadIdx.y][threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

// Lanes that take different paths: even lanes load in[i] once at one line; lane t loads
// 1 + t % 4 times at another (in[i], in[i + 32], ...): that line's first visit is made by the 32
// lanes of a warp, its second by 24, its third by 16, its fourth by 8, each a request of its own.
__global__ void branching_lanes(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = 0;
  if (threadIdx.x % 2 == 0) v = in[i];
  for (unsigned k = 0; k <= threadIdx.x % 4; ++k) v += in[i + 32 * k];
  out[i] = v;
}

template <class Launch>
LaunchCounters count(Launch launch) {
  cudalab::emu::start_counting();
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  auto counted = cudalab::emu::stop_counting();
  EXPECT_EQ(counted.size(), 1u);
  return counted.empty() ? LaunchCounters{} : counted.front();
}

struct Buffers {
  float *in = nullptr, *out = nullptr, *more = nullptr;
  explicit Buffers(int n) {
    std::vector<float> h(n);
    std::iota(h.begin(), h.end(), 0.0f);
    CUDA_CHECK(cudaMalloc(&in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&more, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(more, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~Buffers() {
    cudaFree(in);
    cudaFree(more);
    cudaFree(out);
  }
};

TEST(Counters, ConsecutiveThreadsReadConsecutiveWordsCoalesced) {
  const int n = 4096;
  Buffers b(n);
  LaunchCounters c = count([&] { copyCoalesced<<<n / 256, 256>>>(b.in, b.out, n); });
  EXPECT_EQ(c.global_load_requests, n / 32u);
  EXPECT_EQ(c.global_load_sectors, n / 8u) << "4 sectors of 32 bytes per warp";
  EXPECT_DOUBLE_EQ(c.load_efficiency(), 1.0);
  EXPECT_DOUBLE_EQ(c.store_efficiency(), 1.0);
}

TEST(Counters, RowPerThreadIsUncoalesced) {
  const int rows = 256, width = 64;
  Buffers b(rows * width);
  LaunchCounters c = count([&] { rowSums<<<rows / 128, 128>>>(b.in, b.out, width, rows); });
  EXPECT_EQ(c.global_load_requests, rows / 32u * width);
  EXPECT_EQ(c.global_load_sectors, 32u * c.global_load_requests) << "one sector per thread";
  EXPECT_DOUBLE_EQ(c.load_efficiency(), 4.0 / 32.0);
}

TEST(Counters, TilingDividesGlobalLoadsByTileWidth) {
  const int Width = 64;
  Buffers b(Width * Width);
  dim3 block(TILE_WIDTH, TILE_WIDTH), grid(Width / TILE_WIDTH, Width / TILE_WIDTH);
  LaunchCounters naive = count([&] { naiveMatMul<<<grid, block>>>(b.in, b.more, b.out, Width); });
  LaunchCounters tiled =
      count([&] { tiledMatMul<TILE_WIDTH><<<grid, block>>>(b.in, b.more, b.out, Width); });
  EXPECT_EQ(naive.global_load_requests, tiled.global_load_requests * TILE_WIDTH);
  EXPECT_EQ(naive.global_load_bytes, tiled.global_load_bytes * TILE_WIDTH);
  // Sectors fall by less: the naive kernel's M loads are half broadcasts (a warp spans 2 rows).
  EXPECT_EQ(naive.global_load_sectors, tiled.global_load_sectors * TILE_WIDTH / 2);
  EXPECT_EQ(tiled.barriers, 2u * (Width / TILE_WIDTH) * grid.x * grid.y);
  EXPECT_DOUBLE_EQ(tiled.bank_conflict_degree(), 1.0)
      << "Mds[ty][k] is a broadcast, Nds[k][tx] a row";
}

TEST(Counters, SharedStrideGivesGcdWayConflicts) {
  Buffers b(32);
  for (int stride : {1, 2, 4, 8, 16, 32, 3, 33}) {
    LaunchCounters c = count([&] { strided_shared<<<1, 32>>>(b.out, stride); });
    const int expected = std::gcd(stride, 32);
    EXPECT_DOUBLE_EQ(c.bank_conflict_degree(), expected) << "stride " << stride;
    EXPECT_EQ(c.shared_wavefronts, 2u * expected) << "stride " << stride << ": a store and a load";
  }
}

TEST(Counters, RandomPermutationIsConflictFree) {
  Buffers b(32);
  std::vector<int> perm(32);
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = 31; i > 0; --i) std::swap(perm[i], perm[(i * 7919 + 13) % (i + 1)]);
  int* d_perm;
  CUDA_CHECK(cudaMalloc(&d_perm, 32 * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_perm, perm.data(), 32 * sizeof(int), cudaMemcpyHostToDevice));
  LaunchCounters c = count([&] { permuted_shared<<<1, 32>>>(d_perm, b.out); });
  EXPECT_DOUBLE_EQ(c.bank_conflict_degree(), 1.0);
  CUDA_CHECK(cudaFree(d_perm));
}

TEST(Counters, LanesThatBranchMakeARequestPerVisit) {
  const int n = 4096;
  Buffers b(n + 96);  // the fourth visit reads up to in[n + 95]
  LaunchCounters c = count([&] { branching_lanes<<<n / 256, 256>>>(b.in, b.out, n); });
  const unsigned warps = n / 32;
  // Per warp: one request of the 16 even lanes and four of the loop's visits, each spanning 128
  // bytes of in (4 sectors); one coalesced store.
  EXPECT_EQ(c.global_load_requests, 5 * warps);
  EXPECT_EQ(c.global_load_sectors, 20 * warps);
  EXPECT_EQ(c.global_load_bytes, 4u * (16 + 32 + 24 + 16 + 8) * warps);
  EXPECT_EQ(c.global_store_requests, warps);
  EXPECT_EQ(c.global_store_sectors, 4 * warps);
}

TEST(Counters, OneAddressIsABroadcast) {
  Buffers b(32);
  LaunchCounters c = count([&] { broadcast_shared<<<1, 32>>>(b.out); });
  EXPECT_DOUBLE_EQ(c.bank_conflict_degree(), 1.0);
}

TEST(Counters, PaddingTheTileRemovesColumnConflicts) {
  Buffers b(32 * 32);
  dim3 block(32, 32);
  LaunchCounters plain = count([&] { tile_columns<0><<<1, block>>>(b.out); });
  LaunchCounters padded = count([&] { tile_columns<1><<<1, block>>>(b.out); });
  // 32 row stores (1 wavefront each) and 32 column loads (32 each, or 1 with padding).
  EXPECT_EQ(plain.shared_wavefronts, 32u + 32u * 32u);
  EXPECT_EQ(padded.shared_wavefronts, 32u + 32u);
}

}  // namespace
