// The cuBLAS subset of the emu backend (cudalab/emu/cublas.h) on OpenBLAS's CBLAS. cuBLAS is
// column-major, as CBLAS with CblasColMajor is, so each routine is one CBLAS call after the checks
// a GPU cannot make: every pointer must be device memory large enough for the vector or matrix
// its sizes describe. Results count as written by the device (the unwritten-read check).
#include "cudalab/emu/cublas.h"

#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cublas_checks.h"
#include "diagnostic.h"

namespace cudalab::emu::blas {

void warn_if_unwritten(const void* p, int64_t rows, int64_t cols, int64_t ld, size_t element,
                       const char* call, const char* role) {
  if (p == nullptr || rows <= 0 || cols <= 0) return;
  std::lock_guard<std::recursive_mutex> device(device_mutex());
  const Allocation* r = containing(p, false);
  if (r == nullptr || !r->shadow) return;
  const size_t start = static_cast<const char*>(p) - r->base;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const size_t offset = start + (static_cast<size_t>(j) * ld + i) * element;
      if (offset + element > r->bytes) return;  // (check_range said so already)
      if (r->shadow.writer(offset) != 0) continue;
      static std::mutex mutex;
      static std::set<std::pair<std::string, const void*>> told;
      std::lock_guard<std::mutex> lock(mutex);
      if (!told.insert({call, r->base}).second) return;
      const std::string element_name =
          cols == 1 ? "element " + std::to_string(i)
                    : "element (" + std::to_string(i) + ", " + std::to_string(j) + ")";
      Diagnostic found("unwritten_read",
                       std::string(call) + " reads " + role + ", part of the array allocated at " +
                           r->where + ", whose " + element_name +
                           " nobody wrote since cudaMalloc: the emu's unwritten memory holds a "
                           "poison (NaN as a float), a GPU's whatever was there");
      records::write(found.record(cudaSuccess).text("severity", "warning"));
      std::fprintf(stderr, "cudalab emu: warning: %s (told once)\n", found.problem.c_str());
      return;
    }
}

}  // namespace cudalab::emu::blas

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
};

using namespace cudalab::emu;

namespace {
using namespace cudalab::emu::blas;

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
  warn_if_unwritten(A, a_rows, a_cols, lda, sizeof(T), call, "A");
  warn_if_unwritten(B, b_rows, b_cols, ldb, sizeof(T), call, "B");
  if (*beta != T(0)) warn_if_unwritten(C, m, n, ldc, sizeof(T), call, "C");
  Blas<T>::gemm(CblasColMajor, op(ta), op(tb), m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  written(C, matrix_bytes(m, n, ldc, sizeof(T)));
  return CUBLAS_STATUS_SUCCESS;
}
// C = alpha op(A) + beta op(B), all m x n; an operand whose scalar is zero is not read (cuBLAS's
// transpose idiom passes beta = 0 and any B). C may be A or B (the sum is formed first).
template <class T>
cublasStatus_t geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C,
                    int ldc, const char* call) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid(ta) || !valid(tb) || m < 0 || n < 0 || alpha == nullptr || beta == nullptr ||
      ldc < std::max(1, m) || lda < std::max(1, ta == CUBLAS_OP_N ? m : n) ||
      ldb < std::max(1, tb == CUBLAS_OP_N ? m : n))
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool read_a = *alpha != T(0), read_b = *beta != T(0);
  const auto rows = [m, n](cublasOperation_t t) { return t == CUBLAS_OP_N ? m : n; };
  const auto cols = [m, n](cublasOperation_t t) { return t == CUBLAS_OP_N ? n : m; };
  if ((read_a && !device(A, matrix_bytes(rows(ta), cols(ta), lda, sizeof(T)), call, "A")) ||
      (read_b && !device(B, matrix_bytes(rows(tb), cols(tb), ldb, sizeof(T)), call, "B")) ||
      !device(C, matrix_bytes(m, n, ldc, sizeof(T)), call, "C"))
    return CUBLAS_STATUS_INVALID_VALUE;
  const auto at = [](const T* X, int ld, cublasOperation_t t, int i, int j) {
    return t == CUBLAS_OP_N ? X[i + static_cast<size_t>(j) * ld]
                            : X[j + static_cast<size_t>(i) * ld];
  };
  std::vector<T> sum(static_cast<size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      sum[i + static_cast<size_t>(j) * m] = (read_a ? *alpha * at(A, lda, ta, i, j) : T(0)) +
                                            (read_b ? *beta * at(B, ldb, tb, i, j) : T(0));
  for (int j = 0; j < n; ++j)
    std::copy_n(sum.data() + static_cast<size_t>(j) * m, m, C + static_cast<size_t>(j) * ldc);
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
  }                                                                                                \
  cublasStatus_t cublas##P##geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,     \
                                 int m, int n, const T* alpha, const T* A, int lda, const T* beta, \
                                 const T* B, int ldb, T* C, int ldc) {                             \
    return geam(h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc, "cublas" #P "geam");         \
  }
CUDALAB_CUBLAS_LEVEL1(S, s, float)
CUDALAB_CUBLAS_LEVEL1(D, d, double)
#undef CUDALAB_CUBLAS_LEVEL1
