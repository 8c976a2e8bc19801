// Lab 06: sparse matrix-vector multiplication y = A x. The interface the tests call; do not edit
// this file.
//
// CSR (compressed sparse row): row r holds entries row_ptr[r] .. row_ptr[r+1]-1, values data[k]
// in columns col_index[k]. ELL: every row padded with zeros to max_row_length entries and stored
// column-major: entry k of row r is at k * num_rows + r. All arrays of the kernels are in device
// memory; x has num_cols elements, y has num_rows. Each function launches its kernel (none when
// num_rows is 0) and returns cudaGetLastError().
#pragma once

#include <cuda_runtime.h>

struct CsrMatrix {
  int num_rows, num_cols;
  const int* row_ptr;    // num_rows + 1 offsets
  const int* col_index;  // one per entry
  const float* data;     // one per entry
};

struct EllMatrix {
  int num_rows, num_cols, max_row_length;
  const int* col_index;  // max_row_length * num_rows, column-major
  const float* data;     // max_row_length * num_rows, column-major; padding is 0
};

#define SPMV_BLOCK_SIZE 256  // threads per block of every kernel

// The sequential reference on the host (the course's loop): all arrays in host memory.
void spmvCsrHost(int num_rows, const int* row_ptr, const int* col_index, const float* data,
                 const float* x, float* y);
// One thread per row (the "scalar" kernel).
cudaError_t spmvCsrScalar(CsrMatrix A, const float* x, float* y);
// One warp (32 threads) per row: the lanes share the row's entries, then add their partial sums
// with a warp reduction (the "vector" kernel).
cudaError_t spmvCsrVector(CsrMatrix A, const float* x, float* y);
// One thread per row of the ELL form.
cudaError_t spmvEll(EllMatrix A, const float* x, float* y);
