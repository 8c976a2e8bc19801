// cub::DeviceSpmv for the emu backend: CUB 1.17's interface, y = A x for a CSR matrix A, each row
// summed in order in one launch on the stream (emu_algorithm.cuh says how).
#pragma once

#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceSpmv {
  template <typename ValueT>
  static cudaError_t CsrMV(void* d_temp_storage, size_t& temp_storage_bytes, const ValueT* d_values,
                           const int* d_row_offsets, const int* d_column_indices,
                           const ValueT* d_vector_x, ValueT* d_vector_y, int num_rows, int num_cols,
                           int num_nonzeros, cudaStream_t stream = 0, bool = false,
                           emu_detail::Where where = emu_detail::Where::current()) {
    (void)num_cols;
    (void)num_nonzeros;
    return emu_detail::run(
        "cub::DeviceSpmv::CsrMV", d_temp_storage, temp_storage_bytes, stream, where,
        [](const ValueT* values, const int* row_offsets, const int* columns, const ValueT* x,
           ValueT* y, int rows) {
          for (int row = 0; row < rows; ++row) {
            ValueT sum = ValueT();
            for (int k = row_offsets[row]; k < row_offsets[row + 1]; ++k)
              sum += values[k] * x[columns[k]];
            y[row] = sum;
          }
        },
        d_values, d_row_offsets, d_column_indices, d_vector_x, d_vector_y, num_rows);
  }
};

CUB_NAMESPACE_END
