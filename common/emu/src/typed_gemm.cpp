// The typed product (typed_gemm.h) and the cuBLAS calls that are one: cublasGemmEx,
// cublasGemmStridedBatchedEx, cublasGemmBatchedEx.
//
// Algorithm: each operand's region is read into a dense column-major buffer of the compute type
// (float, or double for the 64F compute types), converting from its element type; OpenBLAS forms
// alpha op(A) op(B) + beta C in that buffer; the epilogue adds the bias, keeps the values before
// the activation when asked and applies it; the result is rounded to D's type (round to nearest
// even, as a GPU's conversions) and marked as written by the device.
//
// Limitations: integer, complex and FP8 matrices are refused (CUBLAS_STATUS_NOT_SUPPORTED, with a
// message); a half or TF32 compute type computes in float, as CUBLAS_COMPUTE_32F does, so the
// result can be closer to the exact one than a GPU's.
#include "typed_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cublas_checks.h"
#include "errors.h"

namespace cudalab::emu::blas {
namespace {

template <class T>
T load(const void* p, cudaDataType_t type, size_t i) {
  switch (type) {
    case CUDA_R_16F:
      return static_cast<T>(float(static_cast<const __half*>(p)[i]));
    case CUDA_R_16BF:
      return static_cast<T>(float(static_cast<const __nv_bfloat16*>(p)[i]));
    case CUDA_R_32F:
      return static_cast<T>(static_cast<const float*>(p)[i]);
    default:
      return static_cast<T>(static_cast<const double*>(p)[i]);
  }
}

template <class T>
void store(void* p, cudaDataType_t type, size_t i, T value) {
  switch (type) {
    case CUDA_R_16F:
      static_cast<__half*>(p)[i] = __half(static_cast<float>(value));
      break;
    case CUDA_R_16BF:
      static_cast<__nv_bfloat16*>(p)[i] = __nv_bfloat16(static_cast<float>(value));
      break;
    case CUDA_R_32F:
      static_cast<float*>(p)[i] = static_cast<float>(value);
      break;
    default:
      static_cast<double*>(p)[i] = static_cast<double>(value);
  }
}

// The rows x cols region of a column-major matrix as a dense one (leading dimension `rows`).
template <class T>
std::vector<T> dense(TypedMatrix M, int64_t rows, int64_t cols) {
  std::vector<T> out(static_cast<size_t>(rows) * cols);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) out[i + j * rows] = load<T>(M.data, M.type, i + j * M.ld);
  return out;
}

template <class T>
T gelu(T x) {  // the tanh form
  const T k = std::sqrt(T(2) / T(M_PI));
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}

void cblas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                float* C) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, m);
}
void cblas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                double alpha, const double* A, int64_t lda, const double* B, int64_t ldb,
                double beta, double* C) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, m);
}

template <class T>
void compute(const GemmShape& s, T alpha, TypedMatrix A, TypedMatrix B, T beta, TypedMatrix C,
             TypedMatrix D, const GemmEpilogue& e) {
  const int64_t a_rows = s.a_rows(), b_rows = s.b_rows();
  const std::vector<T> a = dense<T>(A, a_rows, s.a_cols()), b = dense<T>(B, b_rows, s.b_cols());
  std::vector<T> d =
      beta == T(0) ? std::vector<T>(static_cast<size_t>(s.m) * s.n) : dense<T>(C, s.m, s.n);
  cblas_gemm(op(s.transa), op(s.transb), s.m, s.n, s.k, alpha, a.data(),
             std::max<int64_t>(1, a_rows), b.data(), std::max<int64_t>(1, b_rows), beta, d.data());
  void* out = const_cast<void*>(D.data);
  for (int64_t j = 0; j < s.n; ++j)
    for (int64_t i = 0; i < s.m; ++i) {
      T x = d[i + j * s.m];
      if (e.bias != nullptr) x += load<T>(e.bias, e.bias_type, i);
      if (e.aux != nullptr) store(e.aux, e.aux_type, i + j * e.aux_ld, x);
      if (e.relu) x = std::max(x, T(0));
      if (e.gelu) x = gelu(x);
      store(out, D.type, i + j * D.ld, x);
    }
}

bool supported(const char* call, cudaDataType_t type, const char* role) {
  if (element_bytes(type) != 0) return true;
  diagnose(std::string(call) + ": " + role + "'s element type (cudaDataType_t " +
           std::to_string(static_cast<int>(type)) +
           ") is not supported by the emu backend (half, bfloat16, float and double are)");
  return false;
}

}  // namespace

size_t element_bytes(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_32F:
      return 4;
    case CUDA_R_64F:
      return 8;
    default:
      return 0;
  }
}

cublasStatus_t typed_gemm(const char* call, cublasComputeType_t compute_type,
                          cudaDataType_t scale_type, const GemmShape& s, const void* alpha,
                          TypedMatrix A, TypedMatrix B, const void* beta, TypedMatrix C,
                          TypedMatrix D, const GemmEpilogue& e) {
  const int64_t a_rows = s.a_rows(), a_cols = s.a_cols(), b_rows = s.b_rows(), b_cols = s.b_cols();
  if (!valid(s.transa) || !valid(s.transb) || s.m < 0 || s.n < 0 || s.k < 0 ||
      A.ld < std::max<int64_t>(1, a_rows) || B.ld < std::max<int64_t>(1, b_rows) ||
      C.ld < std::max<int64_t>(1, s.m) || D.ld < std::max<int64_t>(1, s.m) || alpha == nullptr ||
      beta == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool in_double =
      compute_type == CUBLAS_COMPUTE_64F || compute_type == CUBLAS_COMPUTE_64F_PEDANTIC;
  const bool in_float =
      compute_type == CUBLAS_COMPUTE_32F || compute_type == CUBLAS_COMPUTE_32F_PEDANTIC ||
      compute_type == CUBLAS_COMPUTE_32F_FAST_16F || compute_type == CUBLAS_COMPUTE_32F_FAST_16BF ||
      compute_type == CUBLAS_COMPUTE_32F_FAST_TF32 || compute_type == CUBLAS_COMPUTE_16F ||
      compute_type == CUBLAS_COMPUTE_16F_PEDANTIC;
  if (!in_double && !in_float) {
    diagnose(std::string(call) + ": compute type " +
             std::to_string(static_cast<int>(compute_type)) +
             " is not supported by the emu backend (the 16F, 32F and 64F compute types are)");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (!supported(call, A.type, "A") || !supported(call, B.type, "B") ||
      !supported(call, C.type, "C") || !supported(call, D.type, "D") ||
      !supported(call, scale_type, "alpha") ||
      (e.bias != nullptr && !supported(call, e.bias_type, "the bias")) ||
      (e.aux != nullptr && !supported(call, e.aux_type, "the epilogue's aux")))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const double beta_value = load<double>(beta, scale_type, 0);
  if (!device(A.data, matrix_bytes(a_rows, a_cols, A.ld, element_bytes(A.type)), call, "A") ||
      !device(B.data, matrix_bytes(b_rows, b_cols, B.ld, element_bytes(B.type)), call, "B") ||
      (beta_value != 0 &&
       !device(C.data, matrix_bytes(s.m, s.n, C.ld, element_bytes(C.type)), call, "C")) ||
      !device(D.data, matrix_bytes(s.m, s.n, D.ld, element_bytes(D.type)), call, "D") ||
      (e.bias != nullptr &&
       !device(e.bias, vector_bytes(s.m, 1, element_bytes(e.bias_type)), call, "bias")) ||
      (e.aux != nullptr &&
       !device(e.aux, matrix_bytes(s.m, s.n, e.aux_ld, element_bytes(e.aux_type)), call, "aux")))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (s.m == 0 || s.n == 0) return CUBLAS_STATUS_SUCCESS;
  warn_if_unwritten(A.data, a_rows, a_cols, A.ld, element_bytes(A.type), call, "A");
  warn_if_unwritten(B.data, b_rows, b_cols, B.ld, element_bytes(B.type), call, "B");
  if (beta_value != 0) warn_if_unwritten(C.data, s.m, s.n, C.ld, element_bytes(C.type), call, "C");
  if (e.bias != nullptr)
    warn_if_unwritten(e.bias, s.m, 1, s.m, element_bytes(e.bias_type), call, "the bias");
  if (in_double)
    compute<double>(s, load<double>(alpha, scale_type, 0), A, B, beta_value, C, D, e);
  else
    compute<float>(s, load<float>(alpha, scale_type, 0), A, B, static_cast<float>(beta_value), C, D,
                   e);
  written(const_cast<void*>(D.data), matrix_bytes(s.m, s.n, D.ld, element_bytes(D.type)));
  if (e.aux != nullptr) written(e.aux, matrix_bytes(s.m, s.n, e.aux_ld, element_bytes(e.aux_type)));
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace cudalab::emu::blas

using namespace cudalab::emu::blas;

namespace {
// The type alpha and beta point to for a cuBLAS compute type.
cudaDataType_t scale_type_of(cublasComputeType_t compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return CUDA_R_16F;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return CUDA_R_64F;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      return CUDA_R_32I;
    default:
      return CUDA_R_32F;
  }
}
}  // namespace

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType_t Atype, int lda, const void* B,
                            cudaDataType_t Btype, int ldb, const void* beta, void* C,
                            cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return typed_gemm("cublasGemmEx", computeType, scale_type_of(computeType),
                    {transa, transb, m, n, k}, alpha, {A, Atype, lda}, {B, Btype, ldb}, beta,
                    {C, Ctype, ldc}, {C, Ctype, ldc});
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType_t Atype,
                                          int lda, long long strideA, const void* B,
                                          cudaDataType_t Btype, int ldb, long long strideB,
                                          const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batchCount; ++i) {
    const TypedMatrix Ci{element_at(C, Ctype, i * strideC), Ctype, ldc};
    if (cublasStatus_t status = typed_gemm(
            "cublasGemmStridedBatchedEx", computeType, scale_type_of(computeType),
            {transa, transb, m, n, k}, alpha, {element_at(A, Atype, i * strideA), Atype, lda},
            {element_at(B, Btype, i * strideB), Btype, ldb}, beta, Ci, Ci))
      return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                   const void* const Aarray[], cudaDataType_t Atype, int lda,
                                   const void* const Barray[], cudaDataType_t Btype, int ldb,
                                   const void* beta, void* const Carray[], cudaDataType_t Ctype,
                                   int ldc, int batchCount, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (batchCount < 0 ||
      (batchCount > 0 && (Aarray == nullptr || Barray == nullptr || Carray == nullptr)))
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batchCount; ++i)
    if (cublasStatus_t status = typed_gemm("cublasGemmBatchedEx", computeType,
                                           scale_type_of(computeType), {transa, transb, m, n, k},
                                           alpha, {Aarray[i], Atype, lda}, {Barray[i], Btype, ldb},
                                           beta, {Carray[i], Ctype, ldc}, {Carray[i], Ctype, ldc}))
      return status;
  return CUBLAS_STATUS_SUCCESS;
}
