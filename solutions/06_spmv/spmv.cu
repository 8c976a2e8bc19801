// Lab 06: sparse matrix-vector multiplication, reference solution.
#include "spmv.h"

void spmvCsrHost(int num_rows, const int* row_ptr, const int* col_index, const float* data,
                 const float* x, float* y) {
  for (int row = 0; row < num_rows; ++row) {
    float dot = 0;
    for (int elem = row_ptr[row]; elem < row_ptr[row + 1]; ++elem)
      dot += data[elem] * x[col_index[elem]];
    y[row] = dot;
  }
}

// One thread per row: neighbouring threads walk different rows, so their loads are scattered
// (uncoalesced), and a warp waits for its longest row.
__global__ void spmvCsrScalarKernel(CsrMatrix A, const float* x, float* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < A.num_rows) {
    float dot = 0;
    for (int elem = A.row_ptr[row]; elem < A.row_ptr[row + 1]; ++elem)
      dot += A.data[elem] * x[A.col_index[elem]];
    y[row] = dot;
  }
}

cudaError_t spmvCsrScalar(CsrMatrix A, const float* x, float* y) {
  if (A.num_rows == 0) return cudaSuccess;
  int blocks = (A.num_rows + SPMV_BLOCK_SIZE - 1) / SPMV_BLOCK_SIZE;
  spmvCsrScalarKernel<<<blocks, SPMV_BLOCK_SIZE>>>(A, x, y);
  return cudaGetLastError();
}

// One warp per row: the 32 lanes read 32 consecutive entries at a time (coalesced), then add
// their partial sums in 5 shuffle steps.
__global__ void spmvCsrVectorKernel(CsrMatrix A, const float* x, float* y) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (row >= A.num_rows) return;  // the whole warp leaves: the shuffles below see all 32 lanes
  float sum = 0;
  for (int elem = A.row_ptr[row] + lane; elem < A.row_ptr[row + 1]; elem += 32)
    sum += A.data[elem] * x[A.col_index[elem]];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
  if (lane == 0) y[row] = sum;
}

cudaError_t spmvCsrVector(CsrMatrix A, const float* x, float* y) {
  if (A.num_rows == 0) return cudaSuccess;
  const int rows_per_block = SPMV_BLOCK_SIZE / 32;
  int blocks = (A.num_rows + rows_per_block - 1) / rows_per_block;
  spmvCsrVectorKernel<<<blocks, SPMV_BLOCK_SIZE>>>(A, x, y);
  return cudaGetLastError();
}

// One thread per row of the padded, column-major form: at step k the warp reads entry k of 32
// consecutive rows, 32 consecutive words.
__global__ void spmvEllKernel(EllMatrix A, const float* x, float* y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < A.num_rows) {
    float dot = 0;
    for (int k = 0; k < A.max_row_length; ++k) {
      int slot = k * A.num_rows + row;
      dot += A.data[slot] * x[A.col_index[slot]];
    }
    y[row] = dot;
  }
}

cudaError_t spmvEll(EllMatrix A, const float* x, float* y) {
  if (A.num_rows == 0) return cudaSuccess;
  int blocks = (A.num_rows + SPMV_BLOCK_SIZE - 1) / SPMV_BLOCK_SIZE;
  spmvEllKernel<<<blocks, SPMV_BLOCK_SIZE>>>(A, x, y);
  return cudaGetLastError();
}
