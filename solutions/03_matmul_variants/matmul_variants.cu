// Lab 03: matrix multiplication variants, reference solution.
// Each kernel is a template, so that one text serves int and float.
#include "matmul_variants.h"

#define BLOCK_SIZE 256  // threads per block of the 1D launches
#define BLOCK_WIDTH 16  // edge of the 2D blocks of variant 3b

// 1. One thread per row of C.
template <class T>
__global__ void rowPerThreadKernel(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < ha) {
    for (int col = 0; col < wb; ++col) {
      T sum = 0;
      for (int k = 0; k < wa; ++k) sum += a[row * wa + k] * b[k * wb + col];
      c[row * wb + col] = sum;
    }
  }
}

template <class T>
cudaError_t rowPerThread(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  if (ha == 0 || wb == 0) return cudaSuccess;
  rowPerThreadKernel<<<(ha + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(a, b, c, ha, wa, wb);
  return cudaGetLastError();
}

// 2. One thread per column of C.
template <class T>
__global__ void colPerThreadKernel(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < wb) {
    for (int row = 0; row < ha; ++row) {
      T sum = 0;
      for (int k = 0; k < wa; ++k) sum += a[row * wa + k] * b[k * wb + col];
      c[row * wb + col] = sum;
    }
  }
}

template <class T>
cudaError_t colPerThread(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  if (ha == 0 || wb == 0) return cudaSuccess;
  colPerThreadKernel<<<(wb + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(a, b, c, ha, wa, wb);
  return cudaGetLastError();
}

// 3a. One thread per element of C, in a single 2D block.
template <class T>
__global__ void elementOneBlockKernel(const T* a, const T* b, T* c, int wa) {
  int row = threadIdx.y, col = threadIdx.x, wb = blockDim.x;
  T sum = 0;
  for (int k = 0; k < wa; ++k) sum += a[row * wa + k] * b[k * wb + col];
  c[row * wb + col] = sum;
}

template <class T>
cudaError_t elementOneBlock(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  if (ha == 0 || wb == 0) return cudaSuccess;
  elementOneBlockKernel<<<1, dim3(wb, ha)>>>(a, b, c, wa);  // refused if wb * ha > 1024
  return cudaGetLastError();
}

// 3b. One thread per element of C, on a 2D grid.
template <class T>
__global__ void elementPerThreadKernel(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < ha && Col < wb) {
    T sum = 0;
    for (int k = 0; k < wa; ++k) sum += a[Row * wa + k] * b[k * wb + Col];
    c[Row * wb + Col] = sum;
  }
}

template <class T>
cudaError_t elementPerThread(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  if (ha == 0 || wb == 0) return cudaSuccess;
  dim3 block(BLOCK_WIDTH, BLOCK_WIDTH);
  dim3 grid((wb + BLOCK_WIDTH - 1) / BLOCK_WIDTH, (ha + BLOCK_WIDTH - 1) / BLOCK_WIDTH);
  elementPerThreadKernel<<<grid, block>>>(a, b, c, ha, wa, wb);
  return cudaGetLastError();
}

// The int and float versions the tests call: nothing to do below this line.
#define CUDALAB_MATMUL_VARIANT(name, impl)                                             \
  cudaError_t name(const int* a, const int* b, int* c, int ha, int wa, int wb) {       \
    return impl(a, b, c, ha, wa, wb);                                                  \
  }                                                                                    \
  cudaError_t name(const float* a, const float* b, float* c, int ha, int wa, int wb) { \
    return impl(a, b, c, ha, wa, wb);                                                  \
  }
CUDALAB_MATMUL_VARIANT(matmulRowPerThread, rowPerThread)
CUDALAB_MATMUL_VARIANT(matmulColPerThread, colPerThread)
CUDALAB_MATMUL_VARIANT(matmulElementOneBlock, elementOneBlock)
CUDALAB_MATMUL_VARIANT(matmulElementPerThread, elementPerThread)
