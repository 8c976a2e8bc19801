// A cuBLAS subset (cublas_v2.h) on the emu backend: handles and streams, the level-1 routines a
// course meets (axpy, dot, nrm2, scal, copy, swap, asum, iamax), gemv, gemm (plain, batched and
// strided batched) and geam in single and double precision, column-major as cuBLAS is, the vector
// and matrix copies, and the typed products (cublasGemmEx and its batched forms, cublasHgemm and
// its) on half, bfloat16, float and double matrices. The arithmetic is OpenBLAS's (src/cublas.cpp,
// src/typed_gemm.cpp); the pointers are device memory, checked. As NVIDIA's cublas_api.h, this
// brings in cuda_fp16.h, cuda_bf16.h and library_types.h.
#pragma once

#include <cstdint>

#include "cudalab/emu/bf16.h"
#include "cudalab/emu/half.h"
#include "cudalab/emu/library_types.h"
#include "cudalab/emu/types.h"

#define CUBLAS_API_H_
#define CUBLAS_V2_H_
#define CUBLAS_VER_MAJOR 13
#define CUBLAS_VER_MINOR 0
#define CUBLAS_VERSION 130000

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum cublasPointerMode_t { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 };
enum cublasMath_t {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
};
// How a typed product computes (cublasGemmEx, cublasLtMatmul). On the emu every floating-point
// type computes in float (double for the 64F types): the products are exact to float's rounding,
// where a GPU's tensor cores may round inputs (TF32, half) or accumulate in half.
enum cublasComputeType_t {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_16F_PEDANTIC = 65,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_64F_PEDANTIC = 71,
  CUBLAS_COMPUTE_32I = 72,
  CUBLAS_COMPUTE_32I_PEDANTIC = 73,
};
enum cublasGemmAlgo_t {
  CUBLAS_GEMM_DEFAULT = -1,
  CUBLAS_GEMM_DFALT = -1,
  CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
  CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
};
struct cublasContext;
typedef cublasContext* cublasHandle_t;

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasGetVersion(cublasHandle_t handle, int* version);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream);
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode);
cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
const char* cublasGetStatusName(cublasStatus_t status);
const char* cublasGetStatusString(cublasStatus_t status);

cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx, void* y, int incy);
cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy);
cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B,
                               int ldb);
cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B,
                               int ldb);
cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* x, int incx, void* y, int incy,
                                    cudaStream_t stream);
cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* x, int incx, void* y, int incy,
                                    cudaStream_t stream);

#define CUDALAB_CUBLAS_LEVEL1(P, p, T)                                                           \
  cublasStatus_t cublas##P##axpy(cublasHandle_t h, int n, const T* alpha, const T* x, int incx,  \
                                 T* y, int incy);                                                \
  cublasStatus_t cublas##P##dot(cublasHandle_t h, int n, const T* x, int incx, const T* y,       \
                                int incy, T* result);                                            \
  cublasStatus_t cublas##P##nrm2(cublasHandle_t h, int n, const T* x, int incx, T* result);      \
  cublasStatus_t cublas##P##asum(cublasHandle_t h, int n, const T* x, int incx, T* result);      \
  cublasStatus_t cublas##P##scal(cublasHandle_t h, int n, const T* alpha, T* x, int incx);       \
  cublasStatus_t cublas##P##copy(cublasHandle_t h, int n, const T* x, int incx, T* y, int incy); \
  cublasStatus_t cublas##P##swap(cublasHandle_t h, int n, T* x, int incx, T* y, int incy);       \
  cublasStatus_t cublasI##p##amax(cublasHandle_t h, int n, const T* x, int incx, int* result);   \
  cublasStatus_t cublas##P##gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n,        \
                                 const T* alpha, const T* A, int lda, const T* x, int incx,      \
                                 const T* beta, T* y, int incy);                                 \
  cublasStatus_t cublas##P##gemm(                                                                \
      cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, \
      const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta, T* C, int ldc);   \
  cublasStatus_t cublas##P##gemmStridedBatched(                                                  \
      cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, \
      const T* alpha, const T* A, int lda, long long strideA, const T* B, int ldb,               \
      long long strideB, const T* beta, T* C, int ldc, long long strideC, int batchCount);       \
  cublasStatus_t cublas##P##gemmBatched(                                                         \
      cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, \
      const T* alpha, const T* const A[], int lda, const T* const B[], int ldb, const T* beta,   \
      T* const C[], int ldc, int batchCount);                                                    \
  cublasStatus_t cublas##P##geam(                                                                \
      cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n,        \
      const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C, int ldc);
CUDALAB_CUBLAS_LEVEL1(S, s, float)
CUDALAB_CUBLAS_LEVEL1(D, d, double)
#undef CUDALAB_CUBLAS_LEVEL1

// C = alpha op(A) op(B) + beta C with each matrix of its own type (half, bfloat16, float, double).
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType_t Atype, int lda, const void* B,
                            cudaDataType_t Btype, int ldb, const void* beta, void* C,
                            cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType_t Atype,
                                          int lda, long long strideA, const void* B,
                                          cudaDataType_t Btype, int ldb, long long strideB,
                                          const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                   const void* const Aarray[], cudaDataType_t Atype, int lda,
                                   const void* const Barray[], cudaDataType_t Btype, int ldb,
                                   const void* beta, void* const Carray[], cudaDataType_t Ctype,
                                   int ldc, int batchCount, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t algo);
// The half-precision products (cuBLAS's cublasHgemm and its batched forms): the typed product of
// half matrices that computes in half, alpha and beta halves.
inline cublasStatus_t cublasHgemm(cublasHandle_t h, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k,
                                  const __half* alpha, const __half* A, int lda, const __half* B,
                                  int ldb, const __half* beta, __half* C, int ldc) {
  return cublasGemmEx(h, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb,
                      beta, C, CUDA_R_16F, ldc, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}
inline cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t h, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k,
                                                const __half* alpha, const __half* A, int lda,
                                                long long strideA, const __half* B, int ldb,
                                                long long strideB, const __half* beta, __half* C,
                                                int ldc, long long strideC, int batchCount) {
  return cublasGemmStridedBatchedEx(h, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda, strideA,
                                    B, CUDA_R_16F, ldb, strideB, beta, C, CUDA_R_16F, ldc, strideC,
                                    batchCount, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}
inline cublasStatus_t cublasHgemmBatched(cublasHandle_t h, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const __half* alpha, const __half* const A[], int lda,
                                         const __half* const B[], int ldb, const __half* beta,
                                         __half* const C[], int ldc, int batchCount) {
  return cublasGemmBatchedEx(h, transa, transb, m, n, k, alpha,
                             reinterpret_cast<const void* const*>(A), CUDA_R_16F, lda,
                             reinterpret_cast<const void* const*>(B), CUDA_R_16F, ldb, beta,
                             reinterpret_cast<void* const*>(C), CUDA_R_16F, ldc, batchCount,
                             CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}
namespace cudalab::emu {
// CUDA 10's typed products took their compute type as a cudaDataType_t (cuBLAS keeps that form
// for C++ callers); the compute type it stands for, or none (a value no product accepts).
inline cublasComputeType_t compute_type_of(cudaDataType_t legacy) {
  switch (legacy) {
    case CUDA_R_16F:
      return CUBLAS_COMPUTE_16F;
    case CUDA_R_32F:
      return CUBLAS_COMPUTE_32F;
    case CUDA_R_64F:
      return CUBLAS_COMPUTE_64F;
    case CUDA_R_32I:
      return CUBLAS_COMPUTE_32I;
    default:
      return cublasComputeType_t(-1);
  }
}
}  // namespace cudalab::emu
inline cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                   const void* A, cudaDataType_t Atype, int lda, const void* B,
                                   cudaDataType_t Btype, int ldb, const void* beta, void* C,
                                   cudaDataType_t Ctype, int ldc, cudaDataType_t computeType,
                                   cublasGemmAlgo_t algo) {
  return cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                      Ctype, ldc, cudalab::emu::compute_type_of(computeType), algo);
}
