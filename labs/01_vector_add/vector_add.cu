// Lab 01: vector add. Fill in the two TODOs; README.md explains the steps.
#include "vector_add.h"

__global__ void vecAddKernel(const float* A, const float* B, float* C, int n) {
  // TODO: compute this thread's global index i from blockIdx.x, blockDim.x and threadIdx.x,
  // and, if i is inside the vector, store A[i] + B[i] into C[i].
}

cudaError_t vecAdd(const float* h_A, const float* h_B, float* h_C, int n) {
  // TODO part 1: allocate d_A, d_B and d_C with cudaMalloc (n * sizeof(float) bytes each) and
  //              copy h_A and h_B to the device with cudaMemcpy.
  // TODO part 2: launch vecAddKernel with ceil(n / 256.0) blocks of 256 threads (none if n == 0),
  //              then read the launch's error with cudaGetLastError().
  // TODO part 3: copy d_C back into h_C; cudaFree all three arrays, also after an error.
  // Check what every call returns, and return the first error (cudaSuccess if there was none).
  return cudaErrorNotYetImplemented;
}
