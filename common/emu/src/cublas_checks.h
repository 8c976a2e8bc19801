// Internal header of the cuBLAS and cuBLASLt subsets: the sizes a call's vectors and matrices
// span and the checks a GPU cannot make (every pointer is device memory as large as its sizes
// say); what a call computes counts as written by the device; a transpose as CBLAS names it.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdlib>

#include "cudalab/emu/cublas.h"
#include "memory.h"

namespace cudalab::emu::blas {

// Bytes spanned by n elements `inc` apart, or by a rows x cols column-major matrix.
inline size_t vector_bytes(int64_t n, int64_t inc, size_t element) {
  return n <= 0 ? 0 : (1 + static_cast<size_t>(n - 1) * std::abs(inc)) * element;
}
inline size_t matrix_bytes(int64_t rows, int64_t cols, int64_t ld, size_t element) {
  return rows <= 0 || cols <= 0 ? 0 : (static_cast<size_t>(ld) * (cols - 1) + rows) * element;
}

inline bool device(const void* p, size_t bytes, const char* call, const char* role) {
  return bytes == 0 || check_range(p, bytes, call, role) == cudaSuccess;
}

// Device memory a call wrote: copied from the host (kHostStamp), or computed (the device's work on
// a GPU: kEarlierKernelStamp).
inline void written(void* p, size_t bytes, uint32_t writer = kEarlierKernelStamp) {
  if (bytes > 0) mark_written(p, bytes, writer);
}

// A call reads a rows x cols column-major matrix (a vector: cols 1) at `p` with leading dimension
// `ld`: if an element of it was never written (its bytes hold the emu's poison; on a GPU, whatever
// the memory held), a warning names the call, the operand and the array, once per call and array,
// on stderr and as a record (check "unwritten_read", severity "warning"). The call goes on.
void warn_if_unwritten(const void* p, int64_t rows, int64_t cols, int64_t ld, size_t element,
                       const char* call, const char* role);

inline CBLAS_TRANSPOSE op(cublasOperation_t t) {
  return t == CUBLAS_OP_N ? CblasNoTrans : t == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}
inline bool valid(cublasOperation_t t) {
  return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C;
}

}  // namespace cudalab::emu::blas
