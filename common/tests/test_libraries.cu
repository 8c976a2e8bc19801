// The CUDA libraries a course uses, on both backends with the same expectations: a cuBLAS subset
// (column-major, as cuBLAS is), checked against a double-precision reference on the host.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cudalab/cuda_check.h"

#define CUBLAS_CHECK(call) ASSERT_EQ((call), CUBLAS_STATUS_SUCCESS) << #call

namespace {

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

float* to_device(const std::vector<float>& h) {
  float* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cublasSetVector(static_cast<int>(h.size()), sizeof(float), h.data(), 1, d, 1),
            CUBLAS_STATUS_SUCCESS);
  return d;
}

// C = alpha op(A) op(B) + beta C, column-major, with leading dimensions larger than the rows.
TEST(Cublas, GemmWithTransposesAndLeadingDimensions) {
  const int m = 37, n = 19, k = 23, lda = 41, ldb = 29, ldc = 40;
  const float alpha = 1.5f, beta = -0.5f;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const int a_cols = ta ? m : k, b_cols = tb ? k : n;
      auto A = random_floats(static_cast<size_t>(lda) * a_cols, 1 + ta);
      auto B = random_floats(static_cast<size_t>(ldb) * b_cols, 3 + tb);
      auto C = random_floats(static_cast<size_t>(ldc) * n, 5);
      float *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
      cublasHandle_t h;
      CUBLAS_CHECK(cublasCreate(&h));
      CUBLAS_CHECK(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m,
                               n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
      std::vector<float> out(C.size());
      CUDA_CHECK(cudaMemcpy(out.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          double sum = 0;
          for (int p = 0; p < k; ++p) {
            const double a = ta ? A[i * lda + p] : A[p * lda + i];
            const double b = tb ? B[p * ldb + j] : B[j * ldb + p];
            sum += a * b;
          }
          const double want = alpha * sum + beta * C[j * ldc + i];
          ASSERT_NEAR(out[j * ldc + i], want, 1e-4)
              << i << "," << j << " ta " << ta << " tb " << tb;
        }
      for (int i = m; i < ldc; ++i) EXPECT_EQ(out[i], C[i]) << "padding row " << i << " changed";
      cublasDestroy(h);
      cudaFree(dA), cudaFree(dB), cudaFree(dC);
    }
  }
}

TEST(Cublas, LevelOneAndGemv) {
  const int n = 1001;
  auto x = random_floats(n, 7), y = random_floats(n, 8);
  float *dx = to_device(x), *dy = to_device(y);
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  float dot = 0, norm = 0;
  CUBLAS_CHECK(cublasSdot(h, n, dx, 1, dy, 1, &dot));
  CUBLAS_CHECK(cublasSnrm2(h, n, dx, 1, &norm));
  double want_dot = 0, want_norm = 0;
  for (int i = 0; i < n; ++i) want_dot += double(x[i]) * y[i], want_norm += double(x[i]) * x[i];
  EXPECT_NEAR(dot, want_dot, 1e-3);
  EXPECT_NEAR(norm, std::sqrt(want_norm), 1e-3);
  const float alpha = 2.0f;
  CUBLAS_CHECK(cublasSaxpy(h, n, &alpha, dx, 1, dy, 1));  // y = 2x + y
  const float half = 0.5f;
  CUBLAS_CHECK(cublasSscal(h, n, &half, dy, 1));
  int at = 0;
  CUBLAS_CHECK(cublasIsamax(h, n, dy, 1, &at));
  std::vector<float> out(n);
  CUBLAS_CHECK(cublasGetVector(n, sizeof(float), dy, 1, out.data(), 1));
  int biggest = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_NEAR(out[i], 0.5 * (2.0 * x[i] + y[i]), 1e-6) << i;
    if (std::fabs(out[i]) > std::fabs(out[biggest])) biggest = i;
  }
  EXPECT_EQ(at, biggest + 1);  // cuBLAS counts from 1

  // y = A^T x for a 31 x 17 matrix with lda 32.
  const int rows = 31, cols = 17, lda = 32;
  auto A = random_floats(static_cast<size_t>(lda) * cols, 9);
  float* dA = to_device(A);
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemv(h, CUBLAS_OP_T, rows, cols, &one, dA, lda, dx, 1, &zero, dy, 1));
  CUBLAS_CHECK(cublasGetVector(cols, sizeof(float), dy, 1, out.data(), 1));
  for (int j = 0; j < cols; ++j) {
    double want = 0;
    for (int i = 0; i < rows; ++i) want += double(A[j * lda + i]) * x[i];
    EXPECT_NEAR(out[j], want, 1e-4) << j;
  }
  cublasDestroy(h);
  cudaFree(dx), cudaFree(dy), cudaFree(dA);
}

TEST(Cublas, BadArgumentsAreInvalidValue) {
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  float* d;
  CUDA_CHECK(cudaMalloc(&d, 16 * sizeof(float)));
  const float one = 1.0f;
  EXPECT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 2, d, 4, &one, d, 4),
            CUBLAS_STATUS_INVALID_VALUE);  // lda < m
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  cublasDestroy(h);
  cudaFree(d);
}

}  // namespace

// ---- typed products (cublasGemmEx, cublasSgeam) and cuBLASLt --------------------------------
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

// Device copies of host values converted to T (half, bfloat16, float).
template <class T>
T* to_device_as(const std::vector<float>& h) {
  std::vector<T> converted(h.begin(), h.end());
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, converted.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return d;
}

// Small multiples of 1/4: exact in half and bfloat16, and every product below sums them exactly
// in float, so a GPU's tensor cores and the emu's OpenBLAS give the same bits.
std::vector<float> quarters(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen) / 4.0f;
  return v;
}

// op(A) op(B) for column-major A (rows x cols as stored) and B, in double.
double product(const std::vector<float>& A, int lda, bool ta, const std::vector<float>& B, int ldb,
               bool tb, int k, int i, int j) {
  double sum = 0;
  for (int p = 0; p < k; ++p)
    sum += double(ta ? A[i * lda + p] : A[p * lda + i]) * (tb ? B[p * ldb + j] : B[j * ldb + p]);
  return sum;
}

// Batch b of a strided batch of matrices of `size` elements each.
std::vector<float> batch(const std::vector<float>& all, int b, int size) {
  return {all.begin() + b * size, all.begin() + (b + 1) * size};
}

// Half inputs with a float result, bfloat16 inputs with a bfloat16 result (rounded once from the
// float sum, as a GPU rounds it), each batch of a strided product at its own offset.
TEST(CublasTyped, GemmExOnHalfAndBfloat16) {
  const int m = 24, n = 17, k = 40, batches = 3;
  const float alpha = 0.5f, beta = 2.0f;
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  auto A = quarters(static_cast<size_t>(k) * m, 11), B = quarters(static_cast<size_t>(k) * n, 12);
  auto C = quarters(static_cast<size_t>(m) * n, 13);
  __half *dA = to_device_as<__half>(A), *dB = to_device_as<__half>(B);
  float* dC = to_device_as<float>(C);
  // C = alpha A^T B + beta C: A stored k x m (lda k), B k x n.
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_16F, k, dB,
                            CUDA_R_16F, k, &beta, dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
  std::vector<float> out(C.size());
  CUDA_CHECK(cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      ASSERT_EQ(out[j * m + i],
                alpha * product(A, k, true, B, k, false, k, i, j) + beta * C[j * m + i])
          << i << "," << j;

  auto X = quarters(static_cast<size_t>(m) * k * batches, 14);
  auto Y = quarters(static_cast<size_t>(k) * n * batches, 15);
  __nv_bfloat16 *dX = to_device_as<__nv_bfloat16>(X), *dY = to_device_as<__nv_bfloat16>(Y);
  __nv_bfloat16* dZ = to_device_as<__nv_bfloat16>(std::vector<float>(size_t(m) * n * batches));
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dX, CUDA_R_16BF, m, static_cast<long long>(m) * k,
      dY, CUDA_R_16BF, k, static_cast<long long>(k) * n, &zero, dZ, CUDA_R_16BF, m,
      static_cast<long long>(m) * n, batches, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  std::vector<__nv_bfloat16> z(size_t(m) * n * batches);
  CUDA_CHECK(cudaMemcpy(z.data(), dZ, z.size() * sizeof(z[0]), cudaMemcpyDeviceToHost));
  for (int b = 0; b < batches; ++b) {
    const std::vector<float> Xb = batch(X, b, m * k), Yb = batch(Y, b, k * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const float want = __float2bfloat16(float(product(Xb, m, false, Yb, k, false, k, i, j)));
        ASSERT_EQ(__bfloat162float(z[b * m * n + j * m + i]), want) << b << ":" << i << "," << j;
      }
  }
  cublasDestroy(h);
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dX), cudaFree(dY), cudaFree(dZ);
}

// cublasHgemm: half matrices, half scalars, a half result. Every partial sum is a multiple of 1/16
// below 64 in magnitude, exact in half, so any order of the additions gives the same bits.
TEST(CublasTyped, HgemmOnHalves) {
  const int m = 9, n = 7, k = 16, batches = 2;
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  auto A = quarters(static_cast<size_t>(m) * k * batches, 21);
  auto B = quarters(static_cast<size_t>(k) * n * batches, 22);
  __half *dA = to_device_as<__half>(A), *dB = to_device_as<__half>(B);
  __half* dC = to_device_as<__half>(std::vector<float>(size_t(m) * n * batches, 1.0f));
  const __half one = __float2half(1.0f), zero = __float2half(0.0f);
  CUBLAS_CHECK(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m));
  std::vector<__half> c(size_t(m) * n * batches);
  CUDA_CHECK(cudaMemcpy(c.data(), dC, c.size() * sizeof(c[0]), cudaMemcpyDeviceToHost));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      ASSERT_EQ(__half2float(c[j * m + i]), product(A, m, false, B, k, false, k, i, j))
          << i << "," << j;
  CUBLAS_CHECK(cublasHgemmStridedBatched(
      h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, static_cast<long long>(m) * k, dB, k,
      static_cast<long long>(k) * n, &one, dC, m, static_cast<long long>(m) * n, batches));
  CUDA_CHECK(cudaMemcpy(c.data(), dC, c.size() * sizeof(c[0]), cudaMemcpyDeviceToHost));
  for (int b = 0; b < batches; ++b) {
    const std::vector<float> Ab = batch(A, b, m * k), Bb = batch(B, b, k * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        // (batch 0's C holds the first product, which beta = 1 adds again; batch 1's holds 1)
        const double before = b == 0 ? product(Ab, m, false, Bb, k, false, k, i, j) : 1.0;
        ASSERT_EQ(__half2float(c[b * m * n + j * m + i]),
                  product(Ab, m, false, Bb, k, false, k, i, j) + before)
            << b << ":" << i << "," << j;
      }
  }
  cublasDestroy(h);
  cudaFree(dA), cudaFree(dB), cudaFree(dC);
}

// C = alpha A^T + beta B (a transpose with a sum), A n x m, B and C m x n.
TEST(CublasTyped, GeamAddsAndTransposes) {
  const int m = 13, n = 7;
  auto A = random_floats(static_cast<size_t>(n) * m, 21), B = random_floats(size_t(m) * n, 22);
  float *dA = to_device(A), *dB = to_device(B), *dC = to_device(std::vector<float>(m * n, 0.f));
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  const float alpha = 2.0f, beta = -1.0f;
  CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &alpha, dA, n, &beta, dB, m, dC, m));
  std::vector<float> out(size_t(m) * n);
  CUBLAS_CHECK(cublasGetVector(m * n, sizeof(float), dC, 1, out.data(), 1));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      ASSERT_FLOAT_EQ(out[j * m + i], alpha * A[i * n + j] + beta * B[j * m + i]) << i << "," << j;
  cublasDestroy(h);
  cudaFree(dA), cudaFree(dB), cudaFree(dC);
}

double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

// llm.c's fused layer: out = GELU(weight^T inp + bias), weight C x OC, inp C x BT (column-major),
// through descriptors, layouts, a preference and the heuristic query, as its matmul_forward does.
TEST(CublasLt, MatmulWithBiasAndGeluAsLlmcCallsIt) {
  const int C = 48, OC = 32, BT = 20;
  auto weight = random_floats(size_t(C) * OC, 31), inp = random_floats(size_t(C) * BT, 32);
  auto bias = random_floats(OC, 33);
  float *d_weight = to_device(weight), *d_inp = to_device(inp), *d_bias = to_device(bias);
  float* d_out = to_device(std::vector<float>(size_t(OC) * BT, 0.f));
  cublasLtHandle_t lt;
  CUBLAS_CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                              sizeof(transpose)));
  CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof(plain)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof(epilogue)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &d_bias,
                                              sizeof(d_bias)));
  cublasLtMatrixLayout_t w_layout, in_layout, out_layout;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&w_layout, CUDA_R_32F, C, OC, C));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&in_layout, CUDA_R_32F, C, BT, C));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&out_layout, CUDA_R_32F, OC, BT, OC));
  cublasLtMatmulPreference_t preference;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const size_t workspace_size = 32 << 20;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference,
                                                    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_size, sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, w_layout, in_layout, out_layout, out_layout,
                                              preference, 1, &heuristic, &found));
  ASSERT_EQ(found, 1);
  void* workspace;
  CUDA_CHECK(cudaMalloc(&workspace, workspace_size));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(lt, desc, &alpha, d_weight, w_layout, d_inp, in_layout, &beta, d_out,
                              out_layout, d_out, out_layout, &heuristic.algo, workspace,
                              workspace_size, 0));
  std::vector<float> out(size_t(OC) * BT);
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int j = 0; j < BT; ++j)
    for (int i = 0; i < OC; ++i) {
      const double want = gelu_tanh(product(weight, C, true, inp, C, false, C, i, j) + bias[i]);
      ASSERT_NEAR(out[j * OC + i], want, 1e-4) << i << "," << j;
    }
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(w_layout), cublasLtMatrixLayoutDestroy(in_layout);
  cublasLtMatrixLayoutDestroy(out_layout);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cudaFree(d_weight), cudaFree(d_inp), cudaFree(d_bias), cudaFree(d_out), cudaFree(workspace);
}

// Strided batches (a batch count and offset on every layout), C apart from D, and the values
// before the activation kept in the aux matrix (GELU_AUX_BIAS).
TEST(CublasLt, BatchedLayoutsKeepThePreActivation) {
  const int m = 16, n = 8, k = 24, batches = 2;
  const int64_t a_stride = int64_t(m) * k, b_stride = int64_t(k) * n, c_stride = int64_t(m) * n;
  auto A = random_floats(a_stride * batches, 41), B = random_floats(b_stride * batches, 42);
  auto Cin = random_floats(c_stride * batches, 43), bias = random_floats(m, 44);
  float *dA = to_device(A), *dB = to_device(B), *dC = to_device(Cin), *d_bias = to_device(bias);
  float* dD = to_device(std::vector<float>(c_stride * batches, 0.f));
  float* d_aux = to_device(std::vector<float>(c_stride * batches, 0.f));
  cublasLtHandle_t lt;
  CUBLAS_CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  const int64_t aux_ld = m, bias_stride = 0;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof(epilogue)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &d_bias,
                                              sizeof(d_bias)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                                              &bias_stride, sizeof(bias_stride)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                              &d_aux, sizeof(d_aux)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld,
                                              sizeof(aux_ld)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                                              &c_stride, sizeof(c_stride)));
  cublasLtMatrixLayout_t a_layout, b_layout, c_layout;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout, CUDA_R_32F, m, k, m));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout, CUDA_R_32F, k, n, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout, CUDA_R_32F, m, n, m));
  const int32_t count = batches;
  for (auto [layout, stride] : {std::pair{a_layout, a_stride}, std::pair{b_layout, b_stride},
                                std::pair{c_layout, c_stride}}) {
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &count, sizeof(count)));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  const float alpha = 1.0f, beta = 0.5f;
  CUBLAS_CHECK(cublasLtMatmul(lt, desc, &alpha, dA, a_layout, dB, b_layout, &beta, dC, c_layout, dD,
                              c_layout, nullptr, nullptr, 0, 0));
  std::vector<float> D(c_stride * batches), aux(c_stride * batches);
  CUDA_CHECK(cudaMemcpy(D.data(), dD, D.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(aux.data(), d_aux, aux.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int b = 0; b < batches; ++b) {
    const std::vector<float> Ab(A.begin() + b * a_stride, A.begin() + (b + 1) * a_stride);
    const std::vector<float> Bb(B.begin() + b * b_stride, B.begin() + (b + 1) * b_stride);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const size_t at = b * c_stride + j * m + i;
        const double pre = product(Ab, m, false, Bb, k, false, k, i, j) + beta * Cin[at] + bias[i];
        ASSERT_NEAR(aux[at], pre, 1e-4) << b << ":" << i << "," << j;
        ASSERT_NEAR(D[at], gelu_tanh(pre), 1e-4) << b << ":" << i << "," << j;
      }
  }
  cublasLtMatrixLayoutDestroy(a_layout), cublasLtMatrixLayoutDestroy(b_layout);
  cublasLtMatrixLayoutDestroy(c_layout);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dD), cudaFree(d_aux), cudaFree(d_bias);
}

}  // namespace

// ---- cuRAND ---------------------------------------------------------------------------------
#include <curand.h>
#include <curand_kernel.h>

namespace {

__global__ void draw(unsigned long long seed, unsigned* raw, float* uniform, float* normal,
                     double* uniform_double) {
  const int i = threadIdx.x;
  curandState state;
  curand_init(seed, i, 3, &state);  // thread i: subsequence i, after 3 draws
  raw[i] = curand(&state);
  uniform[i] = curand_uniform(&state);
  normal[i] = curand_normal(&state);
  uniform_double[i] = curand_uniform_double(&state);
}

// The device API's numbers, for seed 1234, subsequences 0..3, offset 3: printed on both backends
// and compared by the test with those a GPU drew (docs/runs/2026-11-23-h100-libraries.log).
TEST(Curand, DeviceApiDrawsAGpusNumbers) {
  unsigned* raw;
  float *uniform, *normal;
  double* uniform_double;
  CUDA_CHECK(cudaMallocManaged(&raw, 4 * sizeof(unsigned)));
  CUDA_CHECK(cudaMallocManaged(&uniform, 4 * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&normal, 4 * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&uniform_double, 4 * sizeof(double)));
  draw<<<1, 4>>>(1234, raw, uniform, normal, uniform_double);
  CUDA_CHECK(cudaDeviceSynchronize());
  // Drawn on an H100 (CUDA 13.0): the normals there use the GPU's fast sine and cosine, so they
  // agree to about 1e-7, the rest exactly.
  const unsigned gpu_raw[4] = {1954919316u, 2308946676u, 3189179224u, 2300410836u};
  const float gpu_uniform[4] = {0.857092559f, 0.809246421f, 0.541353583f, 0.49721244f};
  const float gpu_normal[4] = {0.991680861f, 0.890098631f, 0.0686570108f, 0.119978219f};
  const double gpu_uniform_double[4] = {0.30077175010334462, 0.13630766399847177,
                                        0.64801798993940074, 0.97003621955737529};
  for (int i = 0; i < 4; ++i) {
    std::printf("subsequence %d: %u %.9g %.9g %.17g\n", i, raw[i], uniform[i], normal[i],
                uniform_double[i]);
    EXPECT_EQ(raw[i], gpu_raw[i]) << i;
    EXPECT_EQ(uniform[i], gpu_uniform[i]) << i;
    EXPECT_NEAR(normal[i], gpu_normal[i], 1e-6) << i;
    EXPECT_EQ(uniform_double[i], gpu_uniform_double[i]) << i;
  }
  cudaFree(raw), cudaFree(uniform), cudaFree(normal), cudaFree(uniform_double);
}

TEST(Curand, HostApiDistributions) {
  const size_t n = 1 << 16;
  float* d;
  CUDA_CHECK(cudaMalloc(&d, n * sizeof(float)));
  curandGenerator_t g;
  ASSERT_EQ(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandSetPseudoRandomGeneratorSeed(g, 42), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerateUniform(g, d, n), CURAND_STATUS_SUCCESS);
  std::vector<float> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double mean = 0;
  for (float x : h) {
    ASSERT_GT(x, 0.0f);
    ASSERT_LE(x, 1.0f);
    mean += x / n;
  }
  EXPECT_NEAR(mean, 0.5, 0.01);
  ASSERT_EQ(curandGenerateNormal(g, d, n, 2.0f, 3.0f), CURAND_STATUS_SUCCESS);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double m = 0, var = 0;
  for (float x : h) m += x / n;
  for (float x : h) var += (x - m) * (x - m) / n;
  EXPECT_NEAR(m, 2.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 3.0, 0.05);
  EXPECT_EQ(curandGenerateNormal(g, d, 3, 0.0f, 1.0f), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
  curandDestroyGenerator(g);
  cudaFree(d);
}

template <class Word>
Word reverse_bits(Word w) {
  Word r = 0;
  for (size_t b = 0; b < 8 * sizeof(Word); ++b, w >>= 1) r = (r << 1) | (w & 1);
  return r;
}

// Sobol: thread j of dimension d draws point offset + j, from the host table of direction vectors.
__global__ void sobol_points(curandDirectionVectors32_t* vectors, unsigned offset, unsigned* raw,
                             float* uniform, int points) {
  const int d = blockIdx.x, j = threadIdx.x;
  curandStateSobol32_t state;
  curand_init(vectors[d], offset + j, &state);
  raw[d * points + j] = curand(&state);
  skipahead(points - 1u, &state);  // to point offset + j + points: the one after the host's
  uniform[d * points + j] = curand_uniform(&state);
}

// The host API lays points out by dimension (all of dimension 0, then 1, ...); the device API
// draws the same points from the same direction vectors; dimension 0 is van der Corput's
// sequence in gray-code order (point i: the bits of i ^ (i >> 1) reversed); the first values of
// the other dimensions are compared with those an H100 drew.
TEST(Curand, SobolHostAndDeviceApisDrawTheSamePoints) {
  constexpr int dimensions = 3, points = 8;
  constexpr unsigned offset = 5;
  unsigned *host_raw, *device_raw;
  float *host_uniform, *device_uniform;
  CUDA_CHECK(cudaMallocManaged(&host_raw, dimensions * points * sizeof(unsigned)));
  CUDA_CHECK(cudaMallocManaged(&device_raw, dimensions * points * sizeof(unsigned)));
  CUDA_CHECK(cudaMallocManaged(&host_uniform, dimensions * points * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&device_uniform, dimensions * points * sizeof(float)));
  curandGenerator_t g;
  ASSERT_EQ(curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL32), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandSetQuasiRandomGeneratorDimensions(g, dimensions), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandSetGeneratorOffset(g, offset), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerate(g, host_raw, dimensions * points), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerateUniform(g, host_uniform, dimensions * points), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandGenerate(g, host_raw, dimensions * points - 1),
            CURAND_STATUS_LENGTH_NOT_MULTIPLE);
  curandDestroyGenerator(g);

  curandDirectionVectors32_t* host_vectors;
  ASSERT_EQ(curandGetDirectionVectors32(&host_vectors, CURAND_DIRECTION_VECTORS_32_JOEKUO6),
            CURAND_STATUS_SUCCESS);
  curandDirectionVectors32_t* vectors;
  CUDA_CHECK(cudaMalloc(&vectors, dimensions * sizeof(curandDirectionVectors32_t)));
  CUDA_CHECK(cudaMemcpy(vectors, host_vectors, dimensions * sizeof(curandDirectionVectors32_t),
                        cudaMemcpyHostToDevice));
  sobol_points<<<dimensions, points>>>(vectors, offset, device_raw, device_uniform, points);
  CUDA_CHECK(cudaDeviceSynchronize());
  // Read off an H100 (CUDA 13.0): points 5..7 of dimensions 1 and 2.
  const unsigned gpu_raw[2][3] = {{3758096384u, 536870912u, 2684354560u},
                                  {536870912u, 3758096384u, 1610612736u}};
  for (int d = 0; d < dimensions; ++d)
    for (int j = 0; j < points; ++j) {
      const int k = d * points + j;
      std::printf("dimension %d point %u: %u %.9g\n", d, offset + j, host_raw[k], host_uniform[k]);
      EXPECT_EQ(device_raw[k], host_raw[k]) << "dimension " << d << " point " << offset + j;
      EXPECT_EQ(device_uniform[k], host_uniform[k]) << "dimension " << d << " point " << j;
      const unsigned i = offset + j;
      if (d == 0) EXPECT_EQ(host_raw[k], reverse_bits(i ^ (i >> 1))) << i;
      if (d > 0 && j < 3) EXPECT_EQ(host_raw[k], gpu_raw[d - 1][j]) << d << " " << i;
    }
  cudaFree(vectors), cudaFree(host_raw), cudaFree(device_raw), cudaFree(host_uniform),
      cudaFree(device_uniform);
}

TEST(Curand, Sobol64AndItsRefusals) {
  const int n = 2 * 16;
  double* uniform;
  unsigned long long* raw;
  CUDA_CHECK(cudaMallocManaged(&uniform, n * sizeof(double)));
  CUDA_CHECK(cudaMallocManaged(&raw, n * sizeof(unsigned long long)));
  curandGenerator_t g;
  ASSERT_EQ(curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL64), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandSetQuasiRandomGeneratorDimensions(g, 2), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerateLongLong(g, raw, n), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandSetGeneratorOffset(g, 0), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerateUniformDouble(g, uniform, n), CURAND_STATUS_SUCCESS);
  CUDA_CHECK(cudaDeviceSynchronize());  // (the generator runs on the device, asynchronously)
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(uniform[k], (raw[k] >> 11) * 0x1p-53 + 0x1p-54) << k;
    const unsigned long long i = k % 16;
    if (k < 16) EXPECT_EQ(raw[k], reverse_bits(i ^ (i >> 1))) << k;
  }
  curandDestroyGenerator(g);
  cudaFree(uniform), cudaFree(raw);
}

}  // namespace

// ---- Thrust ---------------------------------------------------------------------------------
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_free.h>
#include <thrust/device_malloc.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/find.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/remove.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

namespace {

__global__ void square(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= data[i];
}

// A device vector's storage is device memory that kernels use (raw_pointer_cast), and Thrust's
// algorithms sort, reduce and remove on it; the results come back in a host vector.
TEST(Thrust, DeviceVectorsAlgorithmsAndKernels) {
  const int n = 1000;
  thrust::host_vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7919) % n - n / 2;  // every value once, shuffled
  thrust::device_vector<int> d = h;
  thrust::sort(d.begin(), d.end());
  thrust::host_vector<int> sorted = d;
  for (int i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i - n / 2) << i;
  square<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(d.data()), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  long long expected = 0;
  for (int i = 0; i < n; ++i) expected += static_cast<long long>(i - n / 2) * (i - n / 2);
  EXPECT_EQ(thrust::reduce(d.begin(), d.end(), 0LL), expected);
  thrust::device_vector<int> keys(n), values(n);
  thrust::sequence(keys.begin(), keys.end(), n, -1);  // n, n-1, ..., 1
  thrust::sequence(values.begin(), values.end());
  thrust::sort_by_key(keys.begin(), keys.end(), values.begin());
  EXPECT_EQ(values[0], n - 1);
  EXPECT_EQ(values[n - 1], 0);
  const auto end = thrust::remove(values.begin(), values.end(), 5);
  EXPECT_EQ(end - values.begin(), n - 1);
  // device_malloc gives device memory too: copies and kernels take its raw pointer.
  thrust::device_ptr<int> raw = thrust::device_malloc<int>(n);
  CUDA_CHECK(cudaMemcpy(raw.get(), h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  square<<<(n + 255) / 256, 256>>>(raw.get(), n);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(thrust::reduce(raw, raw + n, 0LL), expected);
  thrust::device_free(raw);
}

struct is_negative {
  __host__ __device__ bool operator()(int v) const { return v < 0; }
};

// Thrust's algorithms called with thrust::device run on the device: over memory from cudaMalloc
// (raw pointers) they scan, reduce, count, sort, find and transform, and give the host their
// results; the arrays come back with cudaMemcpy.
TEST(Thrust, DeviceAlgorithmsOnCudaMallocMemory) {
  const int n = 1001;  // (not a multiple of a block)
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7919) % n - n / 2;  // -500..500, each once, shuffled
  int *x = nullptr, *y = nullptr;
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&y, n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<int> back(n);

  thrust::inclusive_scan(thrust::device, x, x + n, y);
  CUDA_CHECK(cudaMemcpy(back.data(), y, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += h[i];
    ASSERT_EQ(back[i], sum) << i;
  }
  EXPECT_EQ(thrust::reduce(thrust::device, x, x + n, 0LL), sum);
  EXPECT_EQ(thrust::count_if(thrust::device, x, x + n, is_negative()), n / 2);

  thrust::sort(thrust::device, x, x + n);
  CUDA_CHECK(cudaMemcpy(back.data(), x, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], i - n / 2) << i;
  EXPECT_EQ(thrust::find(thrust::device, x, x + n, 0) - x, n / 2);

  thrust::transform(thrust::device, x, x + n, y, thrust::negate<int>());
  CUDA_CHECK(cudaMemcpy(back.data(), y, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], n / 2 - i) << i;
  cudaFree(x), cudaFree(y);
}

struct square_of {
  __host__ __device__ long long operator()(int v) const { return static_cast<long long>(v) * v; }
};

// With no policy, Thrust runs where the iterators point: over a device_ptr that wraps cudaMalloc
// memory (Thrust's way with raw pointers), on the device, and host code reads and writes its
// elements through the pointer.
TEST(Thrust, DevicePointersToCudaMallocMemoryWithNoPolicy) {
  const int n = 1001;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7919) % n - n / 2;  // -500..500, each once, shuffled
  int* x = nullptr;
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  const thrust::device_ptr<int> begin(x), end = begin + n;
  thrust::sort(begin, end);
  std::vector<int> back(n);
  CUDA_CHECK(cudaMemcpy(back.data(), x, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], i - n / 2) << i;
  EXPECT_EQ(thrust::reduce(begin, end, 0LL), 0);
  long long squares = 0;
  for (int v : h) squares += static_cast<long long>(v) * v;
  EXPECT_EQ(thrust::reduce(thrust::make_transform_iterator(begin, square_of()),
                           thrust::make_transform_iterator(end, square_of()), 0LL),
            squares);
  const int first = begin[0];
  begin[1] = 42;
  EXPECT_EQ(first, -n / 2);
  EXPECT_EQ(static_cast<int>(begin[1]), 42);
  // Copies between the host's memory and the device's.
  thrust::copy(h.begin(), h.end(), begin);
  const thrust::host_vector<int> copied(begin, end);
  std::vector<int> again(n);
  thrust::copy(begin, end, again.begin());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(copied[i], h[i]) << i;
    ASSERT_EQ(again[i], h[i]) << i;
  }
  cudaFree(x);
}

}  // namespace
