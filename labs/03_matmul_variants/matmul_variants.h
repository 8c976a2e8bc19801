// Lab 03: three ways to share a matrix product among threads. The interface the tests call; do
// not edit this file.
//
// C = A * B with A of ha x wa, B of hb x wb (hb == wa) and C of ha x wb, all row-major and in
// device memory. Each function launches its variant's kernel and returns cudaGetLastError()
// (cudaSuccess without a launch when C is empty). Each comes for int and for float.
#pragma once

#include <cuda_runtime.h>

// 1. One thread per row of C: thread `row` computes all wb elements of its row.
cudaError_t matmulRowPerThread(const int* a, const int* b, int* c, int ha, int wa, int wb);
cudaError_t matmulRowPerThread(const float* a, const float* b, float* c, int ha, int wa, int wb);

// 2. One thread per column of C: thread `col` computes all ha elements of its column.
cudaError_t matmulColPerThread(const int* a, const int* b, int* c, int ha, int wa, int wb);
cudaError_t matmulColPerThread(const float* a, const float* b, float* c, int ha, int wa, int wb);

// 3a. One thread per element of C, all in one 2D block of wb x ha threads (so ha * wb <= 1024;
//     a larger C gives the error the GPU gives for the launch).
cudaError_t matmulElementOneBlock(const int* a, const int* b, int* c, int ha, int wa, int wb);
cudaError_t matmulElementOneBlock(const float* a, const float* b, float* c, int ha, int wa, int wb);

// 3b. One thread per element of C on a 2D grid of 16 x 16 blocks: any size.
cudaError_t matmulElementPerThread(const int* a, const int* b, int* c, int ha, int wa, int wb);
cudaError_t matmulElementPerThread(const float* a, const float* b, float* c, int ha, int wa,
                                   int wb);
