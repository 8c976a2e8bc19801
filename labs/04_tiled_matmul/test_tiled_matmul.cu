// Lab 04 tests: the tiled product for TILE_WIDTH 16 and 32 against a double-precision CPU product,
// at sizes that are and are not multiples of the tile. Points per test: rubric.toml.
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/testing.h"
#include "tiled_matmul.h"

namespace {

using cudalab::DeviceArray;

using TiledMatMul = cudaError_t (*)(const float*, const float*, float*, int, int, int);

void check(TiledMatMul tiled, int tile, int I, int J, int K) {
  uint64_t seed = cudalab::testing::test_seed();
  std::vector<float> M = cudalab::random_floats(size_t(I) * J, seed);
  std::vector<float> N = cudalab::random_floats(size_t(J) * K, seed + 1);
  std::vector<double> expected(size_t(I) * K);
  for (int i = 0; i < I; ++i)
    for (int k = 0; k < J; ++k)
      for (int j = 0; j < K; ++j)
        expected[size_t(i) * K + j] += double(M[size_t(i) * J + k]) * N[size_t(k) * K + j];

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
  EXPECT_MATCHES("P", P.data(), expected.data(), expected.size(), {1e-5, 2e-6 * J + 1e-7})
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

}  // namespace
