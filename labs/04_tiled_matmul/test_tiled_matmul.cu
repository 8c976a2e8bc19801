// Lab 04 tests: the tiled product for TILE_WIDTH 16 and 32 against a double-precision CPU product,
// at sizes that are and are not multiples of the tile. Points per test: rubric.toml.
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/reference.h"
#include "cudalab/testing.h"
#include "tiled_matmul.h"

namespace {

using cudalab::DeviceArray;

using TiledMatMul = cudaError_t (*)(const float*, const float*, float*, int, int, int);

void check(TiledMatMul tiled, int tile, int I, int J, int K) {
  uint64_t seed = cudalab::testing::test_seed();
  std::vector<float> M = cudalab::random_floats(size_t(I) * J, seed);
  std::vector<float> N = cudalab::random_floats(size_t(J) * K, seed + 1);
  std::vector<double> expected = cudalab::reference::matmul(M, N, I, J, K);

  const int slack = 32;
  DeviceArray<float> d_M(M), d_N(N);
  DeviceArray<float> d_P(std::vector<float>(expected.size(), cudalab::poison_float()), slack,
                         cudalab::poison_float());
  cudaError_t err = tiled(d_M.get(), d_N.get(), d_P.get(), I, J, K);
  if (err != cudaSuccess)
    FAIL() << "tiledMatMul" << tile << "(I = " << I << ", J = " << J << ", K = " << K
           << ") returned " << cudalab::error_text(err);
  std::vector<float> P = d_P.to_host();
  // J products of numbers below 1, summed in float: off by at most about J * 6e-8 each.
  EXPECT_COMPUTED_ON_DEVICE("P", P.data(), expected.size());
  EXPECT_MATCHES("P", P.data(), expected.data(), expected.size(), {1e-5, 2e-6 * J + 1e-7},
                 {size_t(I), size_t(K)})
      << "With TILE_WIDTH " << tile << ": are there ceil(J / TILE_WIDTH) phases, does every thread "
      << "load 0 where a tile sticks out of M or N, and are there two __syncthreads() per phase?";
  int stray = 0;
  for (size_t i = expected.size(); i < P.size(); ++i) stray += cudalab::is_poison(P[i]) ? 0 : 1;
  EXPECT_EQ(stray, 0) << "the kernel wrote " << stray
                      << " elements past the end of P: only threads with Row < I and Col < K store";
}

TEST(Tiled16, SquareMultipleOfTile) { check(tiledMatMul16, 16, 64, 64, 64); }
TEST(Tiled16, OneByOne) { check(tiledMatMul16, 16, 1, 1, 1); }
TEST(Tiled16, NotMultiplesOfTile) { check(tiledMatMul16, 16, 33, 47, 29); }
TEST(Tiled16, InnerSmallerThanTile) { check(tiledMatMul16, 16, 100, 7, 130); }
TEST(Tiled16, EmptyInnerDimension) { check(tiledMatMul16, 16, 5, 0, 9); }  // P is all zeros
TEST(Tiled16, Large) { check(tiledMatMul16, 16, 257, 300, 129); }

TEST(Tiled32, SquareMultipleOfTile) { check(tiledMatMul32, 32, 64, 64, 64); }
TEST(Tiled32, OneByOne) { check(tiledMatMul32, 32, 1, 1, 1); }
TEST(Tiled32, NotMultiplesOfTile) { check(tiledMatMul32, 32, 33, 47, 29); }
TEST(Tiled32, InnerSmallerThanTile) { check(tiledMatMul32, 32, 100, 7, 130); }
TEST(Tiled32, EmptyInnerDimension) { check(tiledMatMul32, 32, 5, 0, 9); }
TEST(Tiled32, Large) { check(tiledMatMul32, 32, 257, 300, 129); }

// Performance. On emu: tiling loads each element of M once per tile column of P and each element
// of N once per tile row of P, TILE_WIDTH times fewer loads than one thread per element needs.
void check_loads(TiledMatMul tiled, int tile) {
  const int I = 64, J = 96, K = 80;
  DeviceArray<float> d_M(cudalab::random_floats(I * J, 1)), d_N(cudalab::random_floats(J * K, 2));
  DeviceArray<float> d_P(std::vector<float>(I * K, 0.0f));
  const std::string name = "tiledMatMul" + std::to_string(tile);
  auto launches = cudalab::performance::count(
      [&] { ASSERT_EQ(tiled(d_M.get(), d_N.get(), d_P.get(), I, J, K), cudaSuccess); },
      {name.c_str(), cudalab::performance::flops::matmul(I, J, K)});
  ASSERT_EQ(launches.size(), 1u) << "tiledMatMul" << tile << " should launch one kernel";
  const unsigned long long tiles_across = (K + tile - 1) / tile, tiles_down = (I + tile - 1) / tile;
  const unsigned long long most =
      sizeof(float) * (1ull * I * J * tiles_across + 1ull * J * K * tiles_down);
  EXPECT_LE(launches[0].global_load_bytes, most)
      << "tiledMatMul" << tile << " read " << launches[0].global_load_bytes
      << " bytes of M and N; tiles of " << tile << " need at most " << most
      << " (each element of M once per tile column of P, each of N once "
      << "per tile row). Does every thread load one element of each tile, and compute from Mds and "
         "Nds only?";
  EXPECT_GT(launches[0].shared_load_requests, 0u)
      << "the products should read the tiles in shared memory";
}

TEST(TiledPerformance, LoadsEachInputOncePerTile) {
  CUDALAB_COUNTING_TEST();
  check_loads(tiledMatMul16, 16);
  check_loads(tiledMatMul32, 32);
}

// The harness's own one-thread-per-element kernel: the baseline of the timing test.
__global__ void naiveMatMul(const float* M, const float* N, float* P, int Width) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < Width && Col < Width) {
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) Pvalue += M[Row * Width + k] * N[k * Width + Col];
    P[Row * Width + Col] = Pvalue;
  }
}

// On a GPU: the tiled kernel against the naive one, both 2048 x 2048, timed in the same run. On an
// H100 TILE_WIDTH 16 ran 1.50x and 32 ran 1.70x the naive kernel (the naive one's repeated loads
// hit the L1 and L2 caches); the test asks for 1.3x.
TEST(TiledPerformance, FasterThanNaive) {
  CUDALAB_TIMING_TEST();
  const int Width = 2048;
  DeviceArray<float> d_M(cudalab::random_floats(Width * Width, 1)),
      d_N(cudalab::random_floats(Width * Width, 2));
  DeviceArray<float> d_P(std::vector<float>(Width * Width, 0.0f)),
      d_Q(std::vector<float>(Width * Width, 0.0f));
  dim3 block(16, 16), grid(Width / 16, Width / 16);
  auto naive = [&] { naiveMatMul<<<grid, block>>>(d_M.get(), d_N.get(), d_Q.get(), Width); };
  naive();
  ASSERT_EQ(tiledMatMul16(d_M.get(), d_N.get(), d_P.get(), Width, Width, Width), cudaSuccess);
  std::vector<float> P = d_P.to_host(), Q = d_Q.to_host();
  ASSERT_EQ(cudalab::performance::disagreements(P, Q, 1e-3f), 0u)
      << "not timed: tiledMatMul16 disagrees with the naive kernel";
  for (auto [tiled, tile] : {std::pair<TiledMatMul, int>{tiledMatMul16, 16}, {tiledMatMul32, 32}})
    cudalab::performance::expect_speed(
        "tiledMatMul" + std::to_string(tile) + " vs the naive kernel at 2048",
        [&, tiled = tiled] { tiled(d_M.get(), d_N.get(), d_P.get(), Width, Width, Width); }, naive,
        1.3, {.flops = 2.0 * Width * Width * Width},
        cudalab::performance::Output<float>{d_P.get(), size_t(Width) * Width});
}

}  // namespace
