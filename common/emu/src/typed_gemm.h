// Internal header: the product that the typed cuBLAS calls (cublasGemmEx and its batched forms)
// and cuBLASLt's cublasLtMatmul all are,
//     D = activation(alpha op(A) op(B) + beta C + bias),
// with each matrix column-major in its own element type (half, bfloat16, float, double).
#pragma once

#include <cstdint>

#include "cudalab/emu/cublas.h"

namespace cudalab::emu::blas {

// A column-major matrix in device memory; its rows and columns follow from the product's shape.
struct TypedMatrix {
  const void* data = nullptr;
  cudaDataType_t type = CUDA_R_32F;
  int64_t ld = 0;
};

struct GemmShape {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;  // D is m x n, op(A) m x k, op(B) k x n
  // A and B as stored (before op).
  int64_t a_rows() const { return transa == CUBLAS_OP_N ? m : k; }
  int64_t a_cols() const { return transa == CUBLAS_OP_N ? k : m; }
  int64_t b_rows() const { return transb == CUBLAS_OP_N ? k : n; }
  int64_t b_cols() const { return transb == CUBLAS_OP_N ? n : k; }
};

// What cuBLASLt's epilogues add after the product: a bias per row of D, the values before the
// activation kept in `aux` (the *_AUX epilogues), then ReLU or GELU (tanh form, as cuBLASLt's).
struct GemmEpilogue {
  const void* bias = nullptr;
  cudaDataType_t bias_type = CUDA_R_32F;
  void* aux = nullptr;
  cudaDataType_t aux_type = CUDA_R_32F;
  int64_t aux_ld = 0;
  bool relu = false, gelu = false;
};

// Bytes of one element of a type the products read, 0 for one they do not (integers, complex,
// FP8: the caller's status is then CUBLAS_STATUS_NOT_SUPPORTED).
size_t element_bytes(cudaDataType_t type);
// The address `elements` elements of `type` after `base` (a batch's matrix); nullptr stays nullptr.
inline const void* element_at(const void* base, cudaDataType_t type, int64_t elements) {
  return base == nullptr ? nullptr
                         : static_cast<const char*>(base) +
                               elements * static_cast<int64_t>(element_bytes(type));
}

// Computes D (D may be C) after checking every matrix lies in device memory; `scale_type` is the
// type alpha and beta point to (host memory, or device memory: one address space here).
cublasStatus_t typed_gemm(const char* call, cublasComputeType_t compute, cudaDataType_t scale_type,
                          const GemmShape& shape, const void* alpha, TypedMatrix A, TypedMatrix B,
                          const void* beta, TypedMatrix C, TypedMatrix D,
                          const GemmEpilogue& epilogue = {});

}  // namespace cudalab::emu::blas
