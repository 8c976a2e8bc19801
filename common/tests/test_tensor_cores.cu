// Warp matrix functions (mma.h): every shape and element type CUDA has for wmma, both layouts of A
// and B and of the accumulator, element-wise work on fragment.x[], and tf32's rounding. The same
// expectations on both backends. Inputs are small integers, so every sum is exact and a tensor
// core, the emu and the double-precision reference agree bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mma.h>

#include <random>
#include <type_traits>
#include <vector>

#include "cudalab/cuda_check.h"

using namespace nvcuda;

namespace {

// One warp per M x N tile of D = 2 * (A * B + C). A (m x k) and B (k x n) are stored in the
// layouts of their fragments, C row-major, D column-major.
template <int M, int N, int K, class In, class Mem, class Acc, class LayoutA, class LayoutB>
__global__ void warp_gemm(const Mem* A, const Mem* B, const Acc* C, Acc* D, int m, int n, int k) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / warpSize);
  const int Row = warp / (n / N) * M, Col = warp % (n / N) * N;
  if (Row >= m) return;
  constexpr bool a_col = std::is_same_v<LayoutA, wmma::col_major>;
  constexpr bool b_col = std::is_same_v<LayoutB, wmma::col_major>;
  wmma::fragment<wmma::matrix_a, M, N, K, In, LayoutA> a;
  wmma::fragment<wmma::matrix_b, M, N, K, In, LayoutB> b;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> acc;
  wmma::load_matrix_sync(acc, C + Row * n + Col, n, wmma::mem_row_major);
  for (int i = 0; i < k; i += K) {
    wmma::load_matrix_sync(a, a_col ? A + i * m + Row : A + Row * k + i, a_col ? m : k);
    wmma::load_matrix_sync(b, b_col ? B + Col * k + i : B + i * n + Col, b_col ? k : n);
    wmma::mma_sync(acc, a, b, acc);
  }
  for (int e = 0; e < acc.num_elements; ++e) acc.x[e] = acc.x[e] + acc.x[e];
  wmma::store_matrix_sync(D + Col * m + Row, acc, m, wmma::mem_col_major);
}

template <int M, int N, int K, class In, class Mem, class Acc, class LayoutA, class LayoutB>
void check_gemm(int lo, int hi) {
  const int m = 2 * M, n = 3 * N, k = 2 * K;  // six tiles, two steps along k
  const unsigned seed = 2026;
  SCOPED_TRACE("m" + std::to_string(M) + "n" + std::to_string(N) + "k" + std::to_string(K) +
               ", seed " + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> value(lo, hi);
  Mem *A, *B;
  Acc *C, *D;
  CUDA_CHECK(cudaMallocManaged(&A, sizeof(Mem) * m * k));
  CUDA_CHECK(cudaMallocManaged(&B, sizeof(Mem) * k * n));
  CUDA_CHECK(cudaMallocManaged(&C, sizeof(Acc) * m * n));
  CUDA_CHECK(cudaMallocManaged(&D, sizeof(Acc) * m * n));
  std::vector<double> a(m * k), b(k * n), c(m * n);  // logical, row-major
  constexpr bool a_col = std::is_same_v<LayoutA, wmma::col_major>;
  constexpr bool b_col = std::is_same_v<LayoutB, wmma::col_major>;
  for (int r = 0; r < m; ++r)
    for (int i = 0; i < k; ++i) {
      a[r * k + i] = value(random);
      A[a_col ? i * m + r : r * k + i] = static_cast<Mem>(a[r * k + i]);
    }
  for (int i = 0; i < k; ++i)
    for (int col = 0; col < n; ++col) {
      b[i * n + col] = value(random);
      B[b_col ? col * k + i : i * n + col] = static_cast<Mem>(b[i * n + col]);
    }
  for (int i = 0; i < m * n; ++i) C[i] = static_cast<Acc>(c[i] = value(random));
  for (int i = 0; i < m * n; ++i) D[i] = static_cast<Acc>(-1);  // poison
  const int warps = (m / M) * (n / N);
  warp_gemm<M, N, K, In, Mem, Acc, LayoutA, LayoutB>
      <<<(warps + 1) / 2, 64>>>(A, B, C, D, m, n, k);  // two warps a block, one idle at the end
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      double want = c[r * n + col];
      for (int i = 0; i < k; ++i) want += a[r * k + i] * b[i * n + col];
      ASSERT_EQ(static_cast<double>(D[col * m + r]), 2 * want) << "row " << r << ", col " << col;
    }
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  CUDA_CHECK(cudaFree(D));
}

using wmma::col_major;
using wmma::row_major;

TEST(TensorCores, HalfIntoFloat16x16x16) {
  check_gemm<16, 16, 16, half, half, float, row_major, col_major>(-3, 3);
}
TEST(TensorCores, HalfIntoHalf32x8x16) {
  check_gemm<32, 8, 16, half, half, half, col_major, row_major>(-3, 3);
}
TEST(TensorCores, HalfIntoFloat8x32x16) {
  check_gemm<8, 32, 16, half, half, float, row_major, row_major>(-3, 3);
}
TEST(TensorCores, Bfloat16IntoFloat16x16x16) {
  check_gemm<16, 16, 16, __nv_bfloat16, __nv_bfloat16, float, col_major, row_major>(-3, 3);
}
TEST(TensorCores, Bfloat16IntoFloat32x8x16) {
  check_gemm<32, 8, 16, __nv_bfloat16, __nv_bfloat16, float, row_major, col_major>(-3, 3);
}
TEST(TensorCores, Bfloat16IntoFloat8x32x16) {
  check_gemm<8, 32, 16, __nv_bfloat16, __nv_bfloat16, float, col_major, col_major>(-3, 3);
}
TEST(TensorCores, Tf32IntoFloat16x16x8) {
  check_gemm<16, 16, 8, wmma::precision::tf32, float, float, col_major, col_major>(-3, 3);
}
TEST(TensorCores, DoubleIntoDouble8x8x4) {
  check_gemm<8, 8, 4, double, double, double, row_major, col_major>(-3, 3);
}
TEST(TensorCores, SignedCharIntoInt16x16x16) {
  check_gemm<16, 16, 16, signed char, signed char, int, row_major, col_major>(-100, 100);
}
TEST(TensorCores, UnsignedCharIntoInt32x8x16) {
  check_gemm<32, 8, 16, unsigned char, unsigned char, int, row_major, col_major>(0, 200);
}

// A tensor core reads 10 of a float's mantissa bits: 1 + 2^-11 counts as 1 unless
// __float_to_tf32 rounded it (to nearest, ties away from zero) to 1 + 2^-10 first. With B's only
// 1 at (0,0), D's first column is A's first column as the tensor core read it.
__global__ void tf32_first_column(const float* A, const float* B, float* D, bool convert) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::load_matrix_sync(a, A, 8);
  if (convert)
    for (int e = 0; e < a.num_elements; ++e) a.x[e] = wmma::__float_to_tf32(a.x[e]);
  wmma::load_matrix_sync(b, B, 16);
  wmma::fill_fragment(acc, 0.0f);
  wmma::mma_sync(acc, a, b, acc);
  wmma::store_matrix_sync(D, acc, 16, wmma::mem_row_major);
}

TEST(TensorCores, Tf32ReadsTenMantissaBits) {
  float *A, *B, *D;
  CUDA_CHECK(cudaMallocManaged(&A, sizeof(float) * 16 * 8));
  CUDA_CHECK(cudaMallocManaged(&B, sizeof(float) * 8 * 16));
  CUDA_CHECK(cudaMallocManaged(&D, sizeof(float) * 16 * 16));
  for (int i = 0; i < 16 * 8; ++i) A[i] = 1.0f + 1.0f / 2048;  // half a tf32 ulp above 1
  for (int i = 0; i < 8 * 16; ++i) B[i] = i == 0 ? 1.0f : 0.0f;
  for (const bool convert : {false, true}) {
    tf32_first_column<<<1, 32>>>(A, B, D, convert);
    CUDA_CHECK(cudaDeviceSynchronize());
    const float want = convert ? 1.0f + 1.0f / 1024 : 1.0f;
    for (int r = 0; r < 16; ++r) {
      EXPECT_EQ(D[r * 16], want) << "row " << r << (convert ? ", converted" : ", as stored");
      EXPECT_EQ(D[r * 16 + 1], 0.0f) << "row " << r;
    }
  }
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(D));
}

}  // namespace
