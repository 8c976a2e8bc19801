// Lab 05 tests: 1D and 2D convolution against a double-precision CPU reference, for mask widths
// 3, 5 and 7 and sizes with partial tiles at every edge. Points per test: rubric.toml.
#include <functional>
#include <string>
#include <vector>

#include "convolution.h"
#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/reference.h"
#include "cudalab/testing.h"

namespace {

using cudalab::DeviceArray;

constexpr int kSlack = 32;  // poisoned elements behind P

// The 1D variants behind one signature: the mask comes as a host vector.
using Conv1D = std::function<cudaError_t(const float* N, const std::vector<float>& M, float* P,
                                         int Mask_Width, int Width)>;

const Conv1D kBasic = [](const float* N, const std::vector<float>& M, float* P, int w, int n) {
  DeviceArray<float> d_M(M);  // the basic kernel reads the mask from global memory
  return convolution1DBasic(N, d_M.get(), P, w, n);
};
const Conv1D kConstant = [](const float* N, const std::vector<float>& M, float* P, int w, int n) {
  return convolution1DConstant(N, M.data(), P, w, n);
};
const Conv1D kTiled = [](const float* N, const std::vector<float>& M, float* P, int w, int n) {
  return convolution1DTiled(N, M.data(), P, w, n);
};
const Conv1D kTiledCached = [](const float* N, const std::vector<float>& M, float* P, int w,
                               int n) { return convolution1DTiledCached(N, M.data(), P, w, n); };

// What the thread that stored P[i] read of N and M, against what P[i] needs (emu; testing.h):
// the basic kernel reads both from global memory, so its launch runs again with that thread
// watched.
std::string basic_reads(const std::vector<float>& N, const std::vector<float>& M,
                        const std::vector<float>& P, size_t i) {
  const int width = N.size(), mask_width = M.size(), r = mask_width / 2;
  std::vector<size_t> n_needed, m_needed;  // the ghost elements outside N count as 0
  for (int j = 0; j < mask_width; ++j)
    if (int k = int(i) - r + j; k >= 0 && k < width) {
      n_needed.push_back(k);
      m_needed.push_back(j);
    }
  return cudalab::testing::element_reads("P[" + std::to_string(i) + "]", &P[i], sizeof(float), [&] {
    DeviceArray<float> d_N(N), d_M(M), d_P{std::vector<float>(width)};
    convolution1DBasic(d_N.get(), d_M.get(), d_P.get(), mask_width, width);
    cudaDeviceSynchronize();
    return std::vector<cudalab::testing::VectorOperand>{
        {"N", d_N.get(), N.size(), sizeof(float), n_needed},
        {"M", d_M.get(), M.size(), sizeof(float), m_needed}};
  });
}

void check_1d(const Conv1D& conv, const std::vector<float>& N, const std::vector<float>& M,
              const std::vector<double>& expected, const char* hint) {
  int width = N.size(), mask_width = M.size();
  DeviceArray<float> d_N(N);
  DeviceArray<float> d_P(std::vector<float>(width, cudalab::poison_float()), kSlack,
                         cudalab::poison_float());
  cudaError_t err = conv(d_N.get(), M, d_P.get(), mask_width, width);
  if (err != cudaSuccess)
    FAIL() << "Width " << width << ", Mask_Width " << mask_width << ": returned "
           << cudalab::error_text(err);
  std::vector<float> P = d_P.to_host();
  EXPECT_COMPUTED_ON_DEVICE("P", P.data(), width);
  const cudalab::Tolerance tolerance{1e-5, 1e-6 * mask_width};
  const size_t first_wrong = cudalab::first_wrong(P.data(), expected.data(), width, tolerance);
  EXPECT_MATCHES("P", P.data(), expected.data(), width, tolerance)
      << (&conv == &kBasic ? basic_reads(N, M, P, first_wrong) : "") << "(Width " << width
      << ", Mask_Width " << mask_width << ") " << hint;
  for (int i = width; i < width + kSlack; ++i)
    ASSERT_TRUE(cudalab::is_poison(P[i])) << "P[" << i << "] written although Width = " << width
                                          << ": only threads with i < Width store";
}

// Sizes: smaller than the mask, one element, around one tile, partial last tiles.
void check_1d_sizes(const Conv1D& conv, int mask_width, const char* hint) {
  uint64_t seed = cudalab::testing::test_seed();
  std::vector<float> M = cudalab::random_floats(mask_width, seed);
  for (int width : {1, 2, 7, 255, 256, 257, 1000, 4099}) {
    std::vector<float> N = cudalab::random_floats(width, seed + width);
    check_1d(conv, N, M, cudalab::reference::convolution_1d(N, M), hint);
    if (::testing::Test::HasFailure()) return;  // one size's report is enough
  }
}

// The textbook's exercise: N = {4, 1, 3, 2, 3} with M = {2, 1, 4} gives {8, 21, 13, 20, 7}.
void check_book_example(const Conv1D& conv, const char* hint) {
  check_1d(conv, {4, 1, 3, 2, 3}, {2, 1, 4}, {8, 21, 13, 20, 7}, hint);
}

constexpr const char* kBasicHint =
    "P[i] adds N[i - Mask_Width/2 + j] * M[j] for j = 0 .. Mask_Width-1, skipping indices outside "
    "N.";
constexpr const char* kConstantHint =
    "The mask must be copied into M_c with cudaMemcpyToSymbol before the launch.";
constexpr const char* kTiledHint =
    "N_ds holds n left halo cells, the block's TILE_SIZE elements, then n right halo cells; ghost "
    "cells and elements past the end of N load as 0; __syncthreads() before reading N_ds.";
constexpr const char* kCachedHint =
    "Indices inside [this tile start, next tile start) come from N_ds, other indices inside N from "
    "N.";

TEST(Convolution1DBasic, BookExample) { check_book_example(kBasic, kBasicHint); }
TEST(Convolution1DBasic, Mask3) { check_1d_sizes(kBasic, 3, kBasicHint); }
TEST(Convolution1DBasic, Mask5) { check_1d_sizes(kBasic, 5, kBasicHint); }
TEST(Convolution1DBasic, Mask7) { check_1d_sizes(kBasic, 7, kBasicHint); }

TEST(Convolution1DConstant, BookExample) { check_book_example(kConstant, kConstantHint); }
TEST(Convolution1DConstant, Mask3) { check_1d_sizes(kConstant, 3, kConstantHint); }
TEST(Convolution1DConstant, Mask5) { check_1d_sizes(kConstant, 5, kConstantHint); }
TEST(Convolution1DConstant, Mask7) { check_1d_sizes(kConstant, 7, kConstantHint); }

TEST(Convolution1DTiled, BookExample) { check_book_example(kTiled, kTiledHint); }
TEST(Convolution1DTiled, Mask3) { check_1d_sizes(kTiled, 3, kTiledHint); }
TEST(Convolution1DTiled, Mask5) { check_1d_sizes(kTiled, 5, kTiledHint); }
TEST(Convolution1DTiled, Mask7) { check_1d_sizes(kTiled, 7, kTiledHint); }

TEST(Convolution1DTiledCached, BookExample) { check_book_example(kTiledCached, kCachedHint); }
TEST(Convolution1DTiledCached, Mask3) { check_1d_sizes(kTiledCached, 3, kCachedHint); }
TEST(Convolution1DTiledCached, Mask5) { check_1d_sizes(kTiledCached, 5, kCachedHint); }
TEST(Convolution1DTiledCached, Mask7) { check_1d_sizes(kTiledCached, 7, kCachedHint); }

// ---- 2D ---------------------------------------------------------------------------------------

void check_2d(int mask_width, int height, int width, const std::vector<float>& M, uint64_t seed) {
  std::vector<float> N = cudalab::random_floats(size_t(height) * width, seed);
  std::vector<double> expected =
      cudalab::reference::convolution_2d(N, M, mask_width, height, width);
  DeviceArray<float> d_N(N);
  DeviceArray<float> d_P(std::vector<float>(N.size(), cudalab::poison_float()), kSlack,
                         cudalab::poison_float());
  cudaError_t err = convolution2DTiled(d_N.get(), M.data(), d_P.get(), mask_width, height, width);
  if (err != cudaSuccess)
    FAIL() << height << " x " << width << " image, Mask_Width " << mask_width << ": returned "
           << cudalab::error_text(err);
  std::vector<float> P = d_P.to_host();
  EXPECT_COMPUTED_ON_DEVICE("P", P.data(), N.size());
  EXPECT_MATCHES("P", P.data(), expected.data(), N.size(), {1e-5, 1e-6 * mask_width * mask_width},
                 {size_t(height), size_t(width)})
      << "(" << height << " x " << width << " image, Mask_Width " << mask_width << ") Each block "
      << "loads an input tile of (O_TILE_WIDTH + Mask_Width - 1)^2 pixels starting Mask_Width/2 up "
         "and left of its output tile, ghost pixels as 0; only threads with ty, tx < O_TILE_WIDTH "
         "compute, and only inside the image.";
  for (size_t i = N.size(); i < P.size(); ++i)
    ASSERT_TRUE(cudalab::is_poison(P[i])) << "the kernel wrote past the end of P";
}

void check_2d_sizes(int mask_width) {
  uint64_t seed = cudalab::testing::test_seed();
  std::vector<float> M = cudalab::random_floats(mask_width * mask_width, seed);
  const int sizes[][2] = {{1, 1}, {37, 53}, {64, 64}, {100, 17}, {3, 200}};
  for (const auto& s : sizes) {
    check_2d(mask_width, s[0], s[1], M, seed + s[0] * 1000 + s[1]);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Convolution2DTiled, Mask3) { check_2d_sizes(3); }
TEST(Convolution2DTiled, Mask5) { check_2d_sizes(5); }
TEST(Convolution2DTiled, Mask7) { check_2d_sizes(7); }
TEST(Convolution2DTiled, IdentityMask) {
  std::vector<float> M(25, 0.0f);
  M[12] = 1.0f;  // the centre of a 5 x 5 mask: P must equal N
  check_2d(5, 45, 70, M, cudalab::testing::test_seed());
}

// ---- bad masks --------------------------------------------------------------------------------

TEST(Convolution, RejectsBadMaskWidths) {
  DeviceArray<float> d_N(16, 1.0f), d_P(16, 0.0f);
  std::vector<float> M(MAX_MASK_WIDTH * MAX_MASK_WIDTH + 4, 1.0f);
  for (int w : {0, 4, MAX_MASK_WIDTH + 2}) {
    const std::pair<const char*, cudaError_t> results[] = {
        {"convolution1DBasic", convolution1DBasic(d_N.get(), d_N.get(), d_P.get(), w, 16)},
        {"convolution1DConstant", convolution1DConstant(d_N.get(), M.data(), d_P.get(), w, 16)},
        {"convolution1DTiled", convolution1DTiled(d_N.get(), M.data(), d_P.get(), w, 16)},
        {"convolution1DTiledCached",
         convolution1DTiledCached(d_N.get(), M.data(), d_P.get(), w, 16)},
        {"convolution2DTiled", convolution2DTiled(d_N.get(), M.data(), d_P.get(), w, 4, 4)},
    };
    for (const auto& [name, err] : results)
      EXPECT_EQ(err, cudaErrorInvalidValue)
          << name << " with Mask_Width " << w << " returned " << cudalab::error_text(err)
          << "; a width that is even or larger than MAX_MASK_WIDTH must give cudaErrorInvalidValue";
  }
}

// Performance. On emu: the tiled 1D kernel reads each element of N once, plus the halo of each
// block (Mask_Width - 1 elements), where the basic kernel reads it Mask_Width times.
TEST(ConvolutionPerformance, TiledReadsEachInputOnce) {
  CUDALAB_COUNTING_TEST();
  const int Width = 5000, Mask_Width = 7, blocks = (Width + TILE_SIZE - 1) / TILE_SIZE;
  DeviceArray<float> d_N(cudalab::random_floats(Width, 1)), d_P(std::vector<float>(Width, 0.0f));
  std::vector<float> M = cudalab::random_floats(Mask_Width, 2);
  auto launches = cudalab::performance::count(
      [&] { ASSERT_EQ(kTiled(d_N.get(), M, d_P.get(), Mask_Width, Width), cudaSuccess); },
      {"convolution1DTiled", cudalab::performance::flops::convolution(Width, Mask_Width)});
  ASSERT_EQ(launches.size(), 1u) << "convolution1DTiled should launch one kernel";
  const unsigned long long most = sizeof(float) * (Width + 1ull * blocks * (Mask_Width - 1));
  EXPECT_LE(launches[0].global_load_bytes, most)
      << "convolution1DTiled read " << launches[0].global_load_bytes
      << " bytes from global memory; the tile "
      << "and its halo are " << most
      << " bytes. Compute from N_ds (and M in constant memory) only.";
  EXPECT_GT(launches[0].global_load_bytes, 0u);
}

// The harness's basic 2D kernel (constant-memory mask, every input read from global memory).
__constant__ float kMask2D[MAX_MASK_WIDTH * MAX_MASK_WIDTH];
__global__ void basic2D(const float* N, float* P, int Mask_Width, int height, int width) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= height || col >= width) return;
  int n = Mask_Width / 2;
  float sum = 0;
  for (int i = 0; i < Mask_Width; ++i)
    for (int j = 0; j < Mask_Width; ++j) {
      int r = row - n + i, c = col - n + j;
      if (r >= 0 && r < height && c >= 0 && c < width)
        sum += N[r * width + c] * kMask2D[i * Mask_Width + j];
    }
  P[row * width + col] = sum;
}

// On a GPU: the 2D tiled kernel against the basic one, on a 4096 x 4096 image with a 5 x 5 mask.
// On an H100 the caches serve the basic kernel's repeated reads so well that the tiled kernel,
// with its idle halo threads, ran at 0.93x of it (docs/benchmarks.md): the test asks for 0.75x, so
// that a tiled kernel with a slow mistake (uncoalesced loads, bank conflicts, extra barriers)
// fails.
TEST(ConvolutionPerformance, Tiled2DKeepsUpWithBasic) {
  CUDALAB_TIMING_TEST();
  const int height = 4096, width = 4096, Mask_Width = 5;
  std::vector<float> M = cudalab::random_floats(Mask_Width * Mask_Width, 2);
  CUDA_CHECK(cudaMemcpyToSymbol(kMask2D, M.data(), M.size() * sizeof(float)));
  DeviceArray<float> d_N(cudalab::random_floats(height * width, 1));
  DeviceArray<float> d_P(std::vector<float>(height * width, 0.0f)),
      d_Q(std::vector<float>(height * width, 0.0f));
  dim3 block(16, 16), grid(width / 16, height / 16);
  auto basic = [&] { basic2D<<<grid, block>>>(d_N.get(), d_Q.get(), Mask_Width, height, width); };
  auto tiled = [&] {
    convolution2DTiled(d_N.get(), M.data(), d_P.get(), Mask_Width, height, width);
  };
  basic();
  ASSERT_EQ(convolution2DTiled(d_N.get(), M.data(), d_P.get(), Mask_Width, height, width),
            cudaSuccess);
  std::vector<float> P = d_P.to_host(), Q = d_Q.to_host();
  ASSERT_EQ(cudalab::performance::disagreements(P, Q, 1e-4f), 0u)
      << "not timed: convolution2DTiled disagrees with the basic kernel";
  cudalab::performance::expect_speed(
      "convolution2DTiled vs the basic 2D kernel", tiled, basic, 0.75,
      {.bytes = 2.0 * height * width * sizeof(float),
       .flops = 2.0 * Mask_Width * Mask_Width * height * width},
      cudalab::performance::Output<float>{d_P.get(), size_t(height) * width});
}

}  // namespace
