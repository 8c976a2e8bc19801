// The counters against the course's arithmetic: coalescing (32-byte sectors per warp request),
// the global loads that tiling saves (a factor of TILE_WIDTH), shared-memory bank conflicts
// (stride s: gcd(s, 32)-way; a padded tile or stride 33: none; one address: a broadcast), and
// lanes that branch (each visit of a line is a request of the lanes that make it); and the
// requests of stretches that their code proves, counted in bulk, equal to those of the same
// stretches counted access by access.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/emu/inspect.h"

namespace {

using cudalab::AccessSite;
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

// A tree reduction of each block's elements: a barrier per step, whose stores and loads are those
// of the threads below the step (`if (tid < s)`).
__global__ void tree_sums(const float* in, float* sums) {
  __shared__ float partial[128];
  const unsigned tid = threadIdx.x;
  partial[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = partial[0];
}

// A 1D stencil with its halo in shared memory: the halo's loads and stores are the first RADIUS
// threads'.
constexpr int RADIUS = 3;
__global__ void stencil_sums(const float* in, float* out) {
  __shared__ float window[64 + 2 * RADIUS];
  const int g = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
  window[threadIdx.x + RADIUS] = in[g];
  if (threadIdx.x < RADIUS) {
    window[threadIdx.x] = in[g - RADIUS];
    window[threadIdx.x + blockDim.x + RADIUS] = in[g + blockDim.x];
  }
  __syncthreads();
  float sum = 0;
  for (int k = -RADIUS; k <= RADIUS; ++k) sum += window[threadIdx.x + RADIUS + k];
  out[g - RADIUS] = sum;
}

// A transpose through a padded tile, its loops stepping by the block's rows (8 rows of 32 threads
// for a 32 x 32 tile), and a warp of 8 x 4 threads over a row of 8 (blockDim.x 8).
template <int TILE, int ROWS>
__global__ void stepped_transpose(const float* in, float* out, int width) {
  __shared__ float tile[TILE][TILE + 1];
  const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  const int tx = blockIdx.y * TILE + threadIdx.x, ty = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    out[(ty + j) * width + tx] = tile[threadIdx.x][threadIdx.y + j];
}

// A line that loads shared and global memory at the same lanes' offsets, at every place of a
// 128-byte period: each is priced as its own memory.
__global__ void mixed_line(const float* in, float* out) {
  __shared__ float row[96];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  row[threadIdx.x] = in[g];
  if (threadIdx.x < 32) row[threadIdx.x + 64] = in[g + 64];
  __syncthreads();
  float sum = 0;
  for (int k = 0; k < 32; ++k) sum += row[threadIdx.x + k] * in[g + k];
  out[g] = sum;
}

// Loads that the compiler may merge (a load that does not move in its loop; the same element
// twice): their stretch is counted access by access, as compiled.
__global__ void invariant_loads(const float* in, float* out) {
  __shared__ float values[64];
  values[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  float sum = 0;
  for (int k = 0; k < 4; ++k) sum += values[threadIdx.x] * values[k];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
__global__ void twice_loaded(const float* in, float* out) {
  __shared__ float values[64];
  values[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  const float square = values[threadIdx.x] * values[threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = square;
}

// A load under `?:` whose condition is the guard of the global index: the threads below it make
// it, and its stretch is counted in bulk.
__global__ void bounded_loads(const float* in, float* out, int n) {
  __shared__ float values[64];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  values[threadIdx.x] = g < n ? in[g] : 0.0f;
  __syncthreads();
  if (g < n) out[g] = values[63 - threadIdx.x];
}

// A load under `?:`, which only some threads make: its stretch is counted access by access.
__global__ void chosen_loads(const float* in, float* out) {
  __shared__ float values[64];
  values[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  const float v = threadIdx.x % 3 == 0 ? values[threadIdx.x] : values[63 - threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// A grid-stride loop whose last pass some threads of a block make.
__global__ void strided_scale(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = 0.5f * in[i];
}

// An accumulation in a loop at the thread's own element: the compiler keeps the element in a
// register between the loop's steps (it loads it once, and in[i] after each store), so the
// kernel is counted access by access, as compiled.
__global__ void accumulated(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < 3; ++k) out[i] += 0.5f * in[i];
}

// A 2D kernel with its guard, whose block's warps span rows (blockDim.x 12), loading its
// neighbour and other elements (`*in`: element 0).
__global__ void neighbour_sums(const float* in, float* out, int width, int height) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height)
    out[row * width + col] = in[row * width + col] + in[row * width + col + 1] + in[col] * *in;
}

// A load that some threads skip: the kernel is proven, but counted access by access.
__global__ void chosen_copy(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i % 3 == 0 ? in[i] : 0.0f;
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

// The launches' counters with every access counted one by one: while a thread is watched (here
// one of no launch: watch_thread's block lies past every grid), no stretch runs proven.
template <class Launch>
LaunchCounters count_access_by_access(Launch launch) {
  cudalab::emu::watch_thread({1u << 30, 0, 0}, {0, 0, 0});
  LaunchCounters c = count(launch);
  cudalab::emu::watched_loads();
  return c;
}

std::vector<AccessSite> sorted_sites(std::vector<AccessSite> sites) {
  const auto key = [](const AccessSite& s) { return std::tie(s.where, s.shared, s.store); };
  std::sort(sites.begin(), sites.end(),
            [&](const AccessSite& a, const AccessSite& b) { return key(a) < key(b); });
  return sites;
}

// Whether two launches' counters are the same, line by line.
void expect_same(const LaunchCounters& bulk, const LaunchCounters& one_by_one) {
  EXPECT_EQ(bulk.global_load_requests, one_by_one.global_load_requests);
  EXPECT_EQ(bulk.global_store_requests, one_by_one.global_store_requests);
  EXPECT_EQ(bulk.global_load_sectors, one_by_one.global_load_sectors);
  EXPECT_EQ(bulk.global_store_sectors, one_by_one.global_store_sectors);
  EXPECT_EQ(bulk.global_load_bytes, one_by_one.global_load_bytes);
  EXPECT_EQ(bulk.global_store_bytes, one_by_one.global_store_bytes);
  EXPECT_EQ(bulk.shared_load_requests, one_by_one.shared_load_requests);
  EXPECT_EQ(bulk.shared_store_requests, one_by_one.shared_store_requests);
  EXPECT_EQ(bulk.shared_wavefronts, one_by_one.shared_wavefronts);
  EXPECT_EQ(bulk.shared_ideal_wavefronts, one_by_one.shared_ideal_wavefronts);
  EXPECT_EQ(bulk.barriers, one_by_one.barriers);
  const std::vector<AccessSite> p = sorted_sites(bulk.sites), q = sorted_sites(one_by_one.sites);
  ASSERT_EQ(p.size(), q.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const std::string at = p[i].where.text() + (p[i].store ? " store" : " load");
    EXPECT_EQ(p[i].where, q[i].where) << at;
    EXPECT_EQ(p[i].shared, q[i].shared) << at;
    EXPECT_EQ(p[i].store, q[i].store) << at;
    EXPECT_EQ(p[i].requests, q[i].requests) << at;
    EXPECT_EQ(p[i].transactions, q[i].transactions) << at;
    EXPECT_EQ(p[i].ideal_transactions, q[i].ideal_transactions) << at;
    EXPECT_EQ(p[i].bytes, q[i].bytes) << at;
    EXPECT_EQ(p[i].max_degree, q[i].max_degree) << at;
  }
}

// Counts a launch in bulk and access by access, expects the same counters, and says how many
// stretches (or blocks: proven_runs) ran without a check per access in the first.
template <class Launch>
unsigned long long counted_alike(
    Launch launch, unsigned long long (*proven_runs)() = cudalab::emu::proven_stretches_run) {
  const unsigned long long before = proven_runs();
  const LaunchCounters bulk = count(launch);
  const unsigned long long between = proven_runs();
  const LaunchCounters one_by_one = count_access_by_access(launch);
  EXPECT_EQ(proven_runs(), between);
  expect_same(bulk, one_by_one);
  return between - before;
}

TEST(Counters, ProvenStretchesCountAsEachAccessDoes) {
  const int Width = 64;
  Buffers b(Width * Width + 2 * RADIUS);
  const dim3 tile(TILE_WIDTH, TILE_WIDTH), tiles(Width / TILE_WIDTH, Width / TILE_WIDTH);
  {
    SCOPED_TRACE("tiledMatMul");
    EXPECT_GT(counted_alike(
                  [&] { tiledMatMul<TILE_WIDTH><<<tiles, tile>>>(b.in, b.more, b.out, Width); }),
              0u);
  }
  for (unsigned threads : {128u, 80u, 8u}) {
    SCOPED_TRACE("tree_sums, blockDim.x " + std::to_string(threads));
    EXPECT_GT(counted_alike([&] { tree_sums<<<16, threads>>>(b.in, b.out); }), 0u);
  }
  {
    SCOPED_TRACE("stencil_sums");
    EXPECT_GT(counted_alike([&] { stencil_sums<<<Width, 64>>>(b.in, b.out); }), 0u);
  }
  {
    SCOPED_TRACE("stepped_transpose<32, 8>");
    EXPECT_GT(counted_alike([&] {
                stepped_transpose<32, 8><<<dim3(2, 2), dim3(32, 8)>>>(b.in, b.out, Width);
              }),
              0u);
  }
  {
    SCOPED_TRACE("stepped_transpose<8, 4>");
    EXPECT_GT(counted_alike(
                  [&] { stepped_transpose<8, 4><<<dim3(8, 8), dim3(8, 4)>>>(b.in, b.out, Width); }),
              0u);
  }
  {
    SCOPED_TRACE("mixed_line");
    EXPECT_EQ(counted_alike([&] { mixed_line<<<8, 64>>>(b.in, b.out); }), 14u);
  }
  {
    SCOPED_TRACE("invariant_loads, twice_loaded");
    // As chosen_loads below: the middle stretch runs checked.
    EXPECT_EQ(counted_alike([&] { invariant_loads<<<8, 64>>>(b.in, b.out); }), 7u + 7u);
    EXPECT_EQ(counted_alike([&] { twice_loaded<<<8, 64>>>(b.in, b.out); }), 7u + 7u);
  }
  {
    SCOPED_TRACE("bounded_loads");
    EXPECT_EQ(counted_alike([&] { bounded_loads<<<8, 64>>>(b.in, b.out, 8 * 64 - 20); }), 7u + 7u);
  }
  {
    SCOPED_TRACE("chosen_loads");
    // Its three stretches: the tile's loads and the output's stores are proven in the blocks
    // after the first (which runs the stretches that touch global memory checked), the `?:`
    // loads in none.
    EXPECT_EQ(counted_alike([&] { chosen_loads<<<8, 64>>>(b.in, b.out); }), 7u + 7u);
  }
}

TEST(Counters, ProvenBlocksCountAsEachAccessDoes) {
  const int Width = 48, n = 1000;  // (neither a multiple of a block)
  Buffers b(Width * Width + 1);
  const auto blocks = cudalab::emu::proven_blocks_run;
  {
    SCOPED_TRACE("copyCoalesced");
    EXPECT_EQ(
        counted_alike([&] { copyCoalesced<<<(n + 127) / 128, 128>>>(b.in, b.out, n); }, blocks),
        7u);  // (every block but the launch's first)
  }
  {
    SCOPED_TRACE("rowSums");
    EXPECT_GT(counted_alike([&] { rowSums<<<4, 16>>>(b.in, b.out, Width, Width); }, blocks), 0u);
  }
  {
    SCOPED_TRACE("naiveMatMul");
    const dim3 block(16, 8), grid(3, 6);
    EXPECT_GT(
        counted_alike([&] { naiveMatMul<<<grid, block>>>(b.in, b.more, b.out, Width); }, blocks),
        0u);
  }
  {
    SCOPED_TRACE("strided_scale");
    EXPECT_GT(counted_alike([&] { strided_scale<<<3, 96>>>(b.in, b.out, n); }, blocks), 0u);
  }
  {
    SCOPED_TRACE("neighbour_sums");
    const dim3 block(12, 4), grid(4, 12);
    EXPECT_GT(counted_alike([&] { neighbour_sums<<<grid, block>>>(b.in, b.out, Width - 1, Width); },
                            blocks),
              0u);
  }
  {
    // (three full warps a block, each over its rows from another column: lanes that lie apart)
    SCOPED_TRACE("neighbour_sums, 12 x 8 blocks");
    const dim3 block(12, 8), grid(4, 6);
    EXPECT_GT(counted_alike([&] { neighbour_sums<<<grid, block>>>(b.in, b.out, Width - 1, Width); },
                            blocks),
              0u);
  }
  {
    SCOPED_TRACE("chosen_copy");
    EXPECT_EQ(counted_alike([&] { chosen_copy<<<8, 128>>>(b.in, b.out, n); }, blocks), 0u);
  }
  {
    SCOPED_TRACE("accumulated");
    EXPECT_EQ(counted_alike([&] { accumulated<<<8, 128>>>(b.in, b.out, n); }, blocks), 0u);
  }
}

}  // namespace
