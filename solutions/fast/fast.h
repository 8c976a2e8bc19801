// Fast versions of the labs' kernels, written as plainly as the labs: what it takes to come close
// to the GPU's limits once the teaching version is understood. Same conventions as the labs (device
// arrays, any sizes, cudaGetLastError()). make bench times them against the ceilings measured in
// the same run; test_fast.cu checks them against the teaching versions' references.
#pragma once

#include <cuda_runtime.h>

// C (M x N) = A (M x K) * B (K x N), row-major: 64 x 64 tiles per block of 512 threads, each
// thread 8 elements of a column of C (version 3 of fast.cu's list).
cudaError_t matmulColumnPerThread(const float* A, const float* B, float* C, int M, int N, int K);

// The same product: 128 x 128 tiles per block of 256 threads, each thread an 8 x 8 block of C in
// registers (version 4; lab 04 computes one element per thread).
cudaError_t matmulFast(const float* A, const float* B, float* C, int M, int N, int K);

// CSR SpMV with 2 to 32 lanes per row, about four entries per lane on average, so that a warp
// stays busy on short rows and spends few shuffles on long ones (lab 06's vector kernel gives
// every row 32 lanes). nnz is row_ptr[num_rows], passed so that no copy to the host is needed.
cudaError_t spmvCsrFast(int num_rows, int nnz, const int* row_ptr, const int* col_index,
                        const float* data, const float* x, float* y);

// 2D convolution with a Mask_Width^2 mask (odd, at most 9) in constant memory: each thread walks
// down a column of 8 outputs, reading each input row it needs once into registers.
cudaError_t convolution2DFast(const float* N, const float* h_M, float* P, int Mask_Width,
                              int height, int width);

// One Jacobi sweep (lab 09's definition): each thread walks down a column of 8 points keeping the
// point above, its own and the one below in registers.
cudaError_t jacobiSweepFast(const float* u, float* v, int ny, int nx);
