// Lab 03: matrix multiplication variants. Fill in the TODOs; README.md explains the steps.
// Each kernel is a template, so that one text serves int and float.
#include "matmul_variants.h"

#define BLOCK_SIZE 256  // threads per block of the 1D launches
#define BLOCK_WIDTH 16  // edge of the 2D blocks of variant 3b

// 1. One thread per row of C.
template <class T>
__global__ void rowPerThreadKernel(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: row = this thread's global index; if row < ha, compute every element c[row][col]
  // as the sum over k of a[row][k] * b[k][col] (two loops).
}

template <class T>
cudaError_t rowPerThread(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: enough blocks of BLOCK_SIZE threads for ha rows (no launch if C is empty);
  // launch rowPerThreadKernel; return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

// 2. One thread per column of C.
template <class T>
__global__ void colPerThreadKernel(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: col = this thread's global index; if col < wb, compute every element of column col.
}

template <class T>
cudaError_t colPerThread(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: enough blocks of BLOCK_SIZE threads for wb columns; launch; return the launch's error.
  return cudaErrorNotYetImplemented;
}

// 3a. One thread per element of C, in a single 2D block.
template <class T>
__global__ void elementOneBlockKernel(const T* a, const T* b, T* c, int wa) {
  // TODO: row from threadIdx.y, col from threadIdx.x, wb from blockDim.x; one loop over k.
}

template <class T>
cudaError_t elementOneBlock(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: launch one block of dim3(wb, ha) threads; return the launch's error.
  return cudaErrorNotYetImplemented;
}

// 3b. One thread per element of C, on a 2D grid.
template <class T>
__global__ void elementPerThreadKernel(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: Row and Col from the block and thread coordinates; if both are inside C, one loop
  // over k.
}

template <class T>
cudaError_t elementPerThread(const T* a, const T* b, T* c, int ha, int wa, int wb) {
  // TODO: a grid of BLOCK_WIDTH x BLOCK_WIDTH blocks covering wb columns and ha rows; launch;
  // return the launch's error.
  return cudaErrorNotYetImplemented;
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
