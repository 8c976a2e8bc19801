// A file with a byte-order mark and a comment in Windows-1252 (café): read as its bytes.
// expect: encoded: 6
#include <cuda_runtime.h>

#include <cstdio>

__global__ void triple(int* x) { *x *= 3; }

int main() {
  int* x = nullptr;
  cudaMallocManaged(&x, sizeof(int));
  *x = 2;
  triple<<<1, 1>>>(x);
  cudaDeviceSynchronize();
  std::printf("encoded: %d\n", *x);
  cudaFree(x);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
