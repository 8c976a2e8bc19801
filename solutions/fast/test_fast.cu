// The fast kernels against double-precision references, at sizes that are not multiples of their
// tiles (make test runs these on both backends; make bench times them).
#include <cmath>
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/reference.h"
#include "cudalab/sparse.h"
#include "cudalab/testing.h"
#include "fast.h"

namespace {

using cudalab::DeviceArray;

using Matmul = cudaError_t (*)(const float*, const float*, float*, int, int, int);

void check_matmul(Matmul matmul, const char* name) {
  for (auto [M, N, K] : {std::tuple{1, 1, 1}, {130, 70, 200}, {256, 256, 256}, {5, 300, 0}}) {
    uint64_t seed = cudalab::testing::test_seed();
    std::vector<float> A = cudalab::random_floats(size_t(M) * K, seed),
                       B = cudalab::random_floats(size_t(K) * N, seed + 1);
    std::vector<double> expected = cudalab::reference::matmul(A, B, M, K, N);
    DeviceArray<float> d_A(A), d_B(B),
        d_C(std::vector<float>(expected.size(), cudalab::poison_float()));
    ASSERT_EQ(matmul(d_A.get(), d_B.get(), d_C.get(), M, N, K), cudaSuccess) << name;
    std::vector<float> C = d_C.to_host();
    EXPECT_MATCHES("C", C.data(), expected.data(), expected.size(), {1e-5, 2e-6 * K + 1e-7})
        << name << " " << M << "x" << N << "x" << K;
  }
}

TEST(MatmulColumnPerThread, AnySizes) {
  check_matmul(matmulColumnPerThread, "matmulColumnPerThread");
}
TEST(MatmulFast, AnySizes) { check_matmul(matmulFast, "matmulFast"); }

TEST(SpmvFast, EveryGroupSize) {
  for (int mean : {1, 4, 10, 20, 64}) {
    cudalab::Csr A;
    A.num_rows = 1000;
    A.num_cols = 700;
    for (int r = 0; r < A.num_rows; ++r) {
      int length = (r * 37) % (2 * mean + 1);
      for (int k = 0; k < length; ++k) A.col_index.push_back((r + k * 11) % A.num_cols);
      std::sort(A.col_index.end() - length, A.col_index.end());
      A.col_index.erase(std::unique(A.col_index.end() - length, A.col_index.end()),
                        A.col_index.end());
      A.row_ptr.push_back(int(A.col_index.size()));
    }
    A.data = cudalab::random_floats(A.col_index.size(), 3);
    std::vector<float> x = cudalab::random_floats(A.num_cols, 4);
    std::vector<double> expected = cudalab::multiply(A, x);
    DeviceArray<int> row_ptr(A.row_ptr), col_index(A.col_index);
    DeviceArray<float> data(A.data), d_x(x),
        d_y(std::vector<float>(A.num_rows, cudalab::poison_float()));
    ASSERT_EQ(spmvCsrFast(A.num_rows, A.nnz(), row_ptr.get(), col_index.get(), data.get(),
                          d_x.get(), d_y.get()),
              cudaSuccess);
    std::vector<float> y = d_y.to_host();
    EXPECT_MATCHES("y", y.data(), expected.data(), expected.size(), {1e-4, 1e-4})
        << "mean row length " << mean;
  }
}

TEST(Convolution2DFast, Sizes) {
  for (int Mask_Width : {1, 3, 5, 7, 9})
    for (auto [height, width] : {std::pair{1, 1}, {70, 33}, {129, 257}, {300, 300}}) {
      std::vector<float> N = cudalab::random_floats(size_t(height) * width, 1),
                         M = cudalab::random_floats(Mask_Width * Mask_Width, 2);
      std::vector<double> expected =
          cudalab::reference::convolution_2d(N, M, Mask_Width, height, width);
      DeviceArray<float> d_N(N), d_P(std::vector<float>(N.size(), cudalab::poison_float()));
      ASSERT_EQ(convolution2DFast(d_N.get(), M.data(), d_P.get(), Mask_Width, height, width),
                cudaSuccess);
      std::vector<float> P = d_P.to_host();
      EXPECT_MATCHES("P", P.data(), expected.data(), expected.size(), {1e-5, 1e-5})
          << height << "x" << width;
    }
}

TEST(JacobiSweepFast, Sizes) {
  for (auto [ny, nx] : {std::pair{1, 1}, {3, 3}, {70, 33}, {513, 257}}) {
    std::vector<float> u = cudalab::random_floats(size_t(ny) * nx, 5);
    std::vector<double> expected = cudalab::reference::jacobi_sweep(u, ny, nx);
    DeviceArray<float> d_u(u), d_v(std::vector<float>(u.size(), cudalab::poison_float()));
    ASSERT_EQ(jacobiSweepFast(d_u.get(), d_v.get(), ny, nx), cudaSuccess);
    std::vector<float> v = d_v.to_host();
    EXPECT_MATCHES("v", v.data(), expected.data(), expected.size(), {1e-6, 1e-6})
        << ny << "x" << nx;
  }
}

}  // namespace
