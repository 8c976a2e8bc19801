// The cuBLAS subset of the emu backend (cudalab/emu/cublas.h) on OpenBLAS's CBLAS. cuBLAS is
// column-major, as CBLAS with CblasColMajor is, so each routine is one CBLAS call after the checks
// a GPU cannot make: every pointer must be device memory large enough for the vector or matrix
// its sizes describe. Results count as written by the device (the unwritten-read check).
#include "cudalab/emu/cublas.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "memory.h"
#include "symbolize.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

using namespace cudalab::emu;

namespace {
// Bytes spanned by n elements `inc` apart, or by a rows x cols column-major matrix.
size_t vector_bytes(int n, int inc, size_t element) {
  return n <= 0 ? 0 : (1 + static_cast<size_t>(n - 1) * std::abs(inc)) * element;
}
size_t matrix_bytes(int rows, int cols, int ld, size_t element) {
  return rows <= 0 || cols <= 0 ? 0 : (static_cast<size_t>(ld) * (cols - 1) + rows) * element;
}

bool device(const void* p, size_t bytes, const char* call, const char* role) {
  return bytes == 0 || check_range(p, bytes, call, role) == cudaSuccess;
}

// Device memory a call wrote: copied from the host (kHostStamp), or computed (the device's work on
// a GPU: kEarlierKernelStamp).
void written(void* p, size_t bytes, uint32_t writer = kEarlierKernelStamp) {
  if (bytes > 0) mark_written(p, bytes, writer);
}

CBLAS_TRANSPOSE op(cublasOperation_t t) {
  return t == CUBLAS_OP_N ? CblasNoTrans : t == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}
bool valid(cublasOperation_t t) { return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C; }

cublasStatus_t copy_strided(int n, int size, const void* x, int incx, void* y, int incy,
                            const char* call) {
  if (n < 0 || size <= 0 || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
  const bool to_device = std::strstr(call, "Set") != nullptr;
  const void* device_side = to_device ? y : x;
  const int device_inc = to_device ? incy : incx;
  if (!device(device_side, vector_bytes(n, device_inc, size), call, to_device ? "y" : "x"))
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < n; ++i)
    std::memcpy(static_cast<char*>(y) + static_cast<size_t>(i) * incy * size,
                static_cast<const char*>(x) + static_cast<size_t>(i) * incx * size, size);
  if (to_device) written(y, vector_bytes(n, incy, size), kHostStamp);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t copy_matrix(int rows, int cols, int size, const void* a, int lda, void* b, int ldb,
                           const char* call) {
  if (rows < 0 || cols < 0 || size <= 0 || lda < std::max(1, rows) || ldb < std::max(1, rows))
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool to_device = std::strstr(call, "Set") != nullptr;
  const void* device_side = to_device ? b : a;
  if (!device(device_side, matrix_bytes(rows, cols, to_device ? ldb : lda, size), call,
              to_device ? "B" : "A"))
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int c = 0; c < cols; ++c)
    std::memcpy(static_cast<char*>(b) + static_cast<size_t>(c) * ldb * size,
                static_cast<const char*>(a) + static_cast<size_t>(c) * lda * size,
                static_cast<size_t>(rows) * size);
  if (to_device) written(b, matrix_bytes(rows, cols, ldb, size), kHostStamp);
  return CUBLAS_STATUS_SUCCESS;
}

// The routines, once for float (S) and double (D): BLAS##P is the CBLAS name's letter.
template <class T>
struct Blas;
template <>
struct Blas<float> {
  static constexpr auto axpy = cblas_saxpy;
  static constexpr auto dot = cblas_sdot;
  static constexpr auto nrm2 = cblas_snrm2;
  static constexpr auto asum = cblas_sasum;
  static constexpr auto scal = cblas_sscal;
  static constexpr auto copy = cblas_scopy;
  static constexpr auto swap = cblas_sswap;
  static constexpr auto iamax = cblas_isamax;
  static constexpr auto gemv = cblas_sgemv;
  static constexpr auto gemm = cblas_sgemm;
};
template <>
struct Blas<double> {
  static constexpr auto axpy = cblas_daxpy;
  static constexpr auto dot = cblas_ddot;
  static constexpr auto nrm2 = cblas_dnrm2;
  static constexpr auto asum = cblas_dasum;
  static constexpr auto scal = cblas_dscal;
  static constexpr auto copy = cblas_dcopy;
  static constexpr auto swap = cblas_dswap;
  static constexpr auto iamax = cblas_idamax;
  static constexpr auto gemv = cblas_dgemv;
  static constexpr auto gemm = cblas_dgemm;
};

template <class T>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta,
                    T* C, int ldc, const char* call) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
  const int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
  if (!valid(ta) || !valid(tb) || m < 0 || n < 0 || k < 0 || lda < std::max(1, a_rows) ||
      ldb < std::max(1, b_rows) || ldc < std::max(1, m) || alpha == nullptr || beta == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!device(A, matrix_bytes(a_rows, a_cols, lda, sizeof(T)), call, "A") ||
      !device(B, matrix_bytes(b_rows, b_cols, ldb, sizeof(T)), call, "B") ||
      !device(C, matrix_bytes(m, n, ldc, sizeof(T)), call, "C"))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  Blas<T>::gemm(CblasColMajor, op(ta), op(tb), m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  written(C, matrix_bytes(m, n, ldc, sizeof(T)));
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetVersion(cublasHandle_t handle, int* version) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->pointer_mode = mode;  // one address space: scalars are read where they are
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t) {
  return handle == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}
const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "error detected trying to check the license";
  }
  return "unknown error";
}

cublasStatus_t cublasSetVector(int n, int size, const void* x, int incx, void* y, int incy) {
  return copy_strided(n, size, x, incx, y, incy, "cublasSetVector");
}
cublasStatus_t cublasGetVector(int n, int size, const void* x, int incx, void* y, int incy) {
  return copy_strided(n, size, x, incx, y, incy, "cublasGetVector");
}
cublasStatus_t cublasSetVectorAsync(int n, int size, const void* x, int incx, void* y, int incy,
                                    cudaStream_t) {
  return copy_strided(n, size, x, incx, y, incy, "cublasSetVectorAsync");
}
cublasStatus_t cublasGetVectorAsync(int n, int size, const void* x, int incx, void* y, int incy,
                                    cudaStream_t) {
  return copy_strided(n, size, x, incx, y, incy, "cublasGetVectorAsync");
}
cublasStatus_t cublasSetMatrix(int rows, int cols, int size, const void* A, int lda, void* B,
                               int ldb) {
  return copy_matrix(rows, cols, size, A, lda, B, ldb, "cublasSetMatrix");
}
cublasStatus_t cublasGetMatrix(int rows, int cols, int size, const void* A, int lda, void* B,
                               int ldb) {
  return copy_matrix(rows, cols, size, A, lda, B, ldb, "cublasGetMatrix");
}

#define CUDALAB_CUBLAS_LEVEL1(P, p, T)                                                             \
  cublasStatus_t cublas##P##axpy(cublasHandle_t h, int n, const T* alpha, const T* x, int incx,    \
                                 T* y, int incy) {                                                 \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                      \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "axpy", "x") ||                   \
        !device(y, vector_bytes(n, incy, sizeof(T)), "cublas" #P "axpy", "y"))                     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    if (n > 0) Blas<T>::axpy(n, *alpha, x, incx, y, incy);                                         \
    written(y, vector_bytes(n, incy, sizeof(T)));                                                  \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##dot(cublasHandle_t h, int n, const T* x, int incx, const T* y,         \
                                int incy, T* result) {                                             \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                     \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "dot", "x") ||                    \
        !device(y, vector_bytes(n, incy, sizeof(T)), "cublas" #P "dot", "y"))                      \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    *result = n > 0 ? Blas<T>::dot(n, x, incx, y, incy) : T(0);                                    \
    if (arena().contains(result)) written(result, sizeof(T));                                      \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##nrm2(cublasHandle_t h, int n, const T* x, int incx, T* result) {       \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                     \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "nrm2", "x"))                     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    *result = n > 0 && incx > 0 ? Blas<T>::nrm2(n, x, incx) : T(0);                                \
    if (arena().contains(result)) written(result, sizeof(T));                                      \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##asum(cublasHandle_t h, int n, const T* x, int incx, T* result) {       \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                     \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "asum", "x"))                     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    *result = n > 0 && incx > 0 ? Blas<T>::asum(n, x, incx) : T(0);                                \
    if (arena().contains(result)) written(result, sizeof(T));                                      \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##scal(cublasHandle_t h, int n, const T* alpha, T* x, int incx) {        \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                      \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "scal", "x"))                     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    if (n > 0 && incx > 0) Blas<T>::scal(n, *alpha, x, incx);                                      \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##copy(cublasHandle_t h, int n, const T* x, int incx, T* y, int incy) {  \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "copy", "x") ||                   \
        !device(y, vector_bytes(n, incy, sizeof(T)), "cublas" #P "copy", "y"))                     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    if (n > 0) Blas<T>::copy(n, x, incx, y, incy);                                                 \
    written(y, vector_bytes(n, incy, sizeof(T)));                                                  \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##swap(cublasHandle_t h, int n, T* x, int incx, T* y, int incy) {        \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublas" #P "swap", "x") ||                   \
        !device(y, vector_bytes(n, incy, sizeof(T)), "cublas" #P "swap", "y"))                     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    if (n > 0) Blas<T>::swap(n, x, incx, y, incy);                                                 \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublasI##p##amax(cublasHandle_t h, int n, const T* x, int incx, int* result) {    \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                     \
    if (!device(x, vector_bytes(n, incx, sizeof(T)), "cublasI" #p "amax", "x"))                    \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    *result = n > 0 && incx > 0 ? static_cast<int>(Blas<T>::iamax(n, x, incx)) + 1 : 0;            \
    if (arena().contains(result)) written(result, sizeof(int));                                    \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n,          \
                                 const T* alpha, const T* A, int lda, const T* x, int incx,        \
                                 const T* beta, T* y, int incy) {                                  \
    if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                        \
    const int xn = trans == CUBLAS_OP_N ? n : m, yn = trans == CUBLAS_OP_N ? m : n;                \
    if (!valid(trans) || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0 ||       \
        alpha == nullptr || beta == nullptr)                                                       \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    if (!device(A, matrix_bytes(m, n, lda, sizeof(T)), "cublas" #P "gemv", "A") ||                 \
        !device(x, vector_bytes(xn, incx, sizeof(T)), "cublas" #P "gemv", "x") ||                  \
        !device(y, vector_bytes(yn, incy, sizeof(T)), "cublas" #P "gemv", "y"))                    \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    if (m > 0 && n > 0)                                                                            \
      Blas<T>::gemv(CblasColMajor, op(trans), m, n, *alpha, A, lda, x, incx, *beta, y, incy);      \
    written(y, vector_bytes(yn, incy, sizeof(T)));                                                 \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,     \
                                 int m, int n, int k, const T* alpha, const T* A, int lda,         \
                                 const T* B, int ldb, const T* beta, T* C, int ldc) {              \
    return gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, "cublas" #P "gemm");      \
  }                                                                                                \
  cublasStatus_t cublas##P##gemmStridedBatched(                                                    \
      cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,           \
      const T* alpha, const T* A, int lda, long long sA, const T* B, int ldb, long long sB,        \
      const T* beta, T* C, int ldc, long long sC, int batches) {                                   \
    if (batches < 0) return CUBLAS_STATUS_INVALID_VALUE;                                           \
    for (int i = 0; i < batches; ++i)                                                              \
      if (cublasStatus_t s = gemm(h, ta, tb, m, n, k, alpha, A + i * sA, lda, B + i * sB, ldb,     \
                                  beta, C + i * sC, ldc, "cublas" #P "gemmStridedBatched"))        \
        return s;                                                                                  \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }                                                                                                \
  cublasStatus_t cublas##P##gemmBatched(cublasHandle_t h, cublasOperation_t ta,                    \
                                        cublasOperation_t tb, int m, int n, int k, const T* alpha, \
                                        const T* const A[], int lda, const T* const B[], int ldb,  \
                                        const T* beta, T* const C[], int ldc, int batches) {       \
    if (batches < 0 || (batches > 0 && (A == nullptr || B == nullptr || C == nullptr)))            \
      return CUBLAS_STATUS_INVALID_VALUE;                                                          \
    for (int i = 0; i < batches; ++i)                                                              \
      if (cublasStatus_t s = gemm(h, ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i],     \
                                  ldc, "cublas" #P "gemmBatched"))                                 \
        return s;                                                                                  \
    return CUBLAS_STATUS_SUCCESS;                                                                  \
  }
CUDALAB_CUBLAS_LEVEL1(S, s, float)
CUDALAB_CUBLAS_LEVEL1(D, d, double)
#undef CUDALAB_CUBLAS_LEVEL1
