// Lab 06: sparse matrix-vector multiplication. Fill in the TODOs; README.md explains the steps.
#include "spmv.h"

void spmvCsrHost(int num_rows, const int* row_ptr, const int* col_index, const float* data,
                 const float* x, float* y) {
  // TODO: for each row, add data[elem] * x[col_index[elem]] over the row's entries into y[row].
}

__global__ void spmvCsrScalarKernel(CsrMatrix A, const float* x, float* y) {
  // TODO: row = blockIdx.x * blockDim.x + threadIdx.x; if it is a row of A, this thread computes
  // the row's dot product, as the host loop does for one row.
}

cudaError_t spmvCsrScalar(CsrMatrix A, const float* x, float* y) {
  // TODO: ceil(num_rows / SPMV_BLOCK_SIZE) blocks of SPMV_BLOCK_SIZE threads (no launch for an
  // empty matrix); return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

__global__ void spmvCsrVectorKernel(CsrMatrix A, const float* x, float* y) {
  // TODO:
  // - row = global thread index / 32 (one warp per row), lane = threadIdx.x % 32; whole warps
  //   past the last row return;
  // - lane l adds the entries row_start + l, row_start + l + 32, ... (neighbouring lanes read
  //   neighbouring entries: coalesced);
  // - add the 32 partial sums with __shfl_down_sync(0xffffffff, sum, offset) for offset 16, 8,
  //   4, 2, 1; lane 0 writes y[row].
}

cudaError_t spmvCsrVector(CsrMatrix A, const float* x, float* y) {
  // TODO: SPMV_BLOCK_SIZE / 32 rows per block; enough blocks for every row; launch; return
  // cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

__global__ void spmvEllKernel(EllMatrix A, const float* x, float* y) {
  // TODO: one thread per row: add data[k * num_rows + row] * x[col_index[k * num_rows + row]] for
  // k < max_row_length (padding adds 0).
}

cudaError_t spmvEll(EllMatrix A, const float* x, float* y) {
  // TODO: as spmvCsrScalar.
  return cudaErrorNotYetImplemented;
}
