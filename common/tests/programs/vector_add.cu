// The course's first program (CUDA C basics): add two vectors on the device, check on the host.
// A standalone program with its own main(), as a student writes it: `cudalab run vector_add.cu`.
#include <cstdio>
#include <cstdlib>

#include "vector_add_kernel.cuh"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : N;
  const size_t bytes = n * sizeof(float);
  float *h_a = (float*)malloc(bytes), *h_b = (float*)malloc(bytes), *h_c = (float*)malloc(bytes);
  for (int i = 0; i < n; ++i) h_a[i] = i, h_b[i] = 2.0f * i;
  float *d_a, *d_b, *d_c;
  cudaMalloc(&d_a, bytes);
  cudaMalloc(&d_b, bytes);
  cudaMalloc(&d_c, bytes);
  cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice);
#ifndef FORGET_B  // the planted bug: b never reaches the device
  cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice);
#endif
  launch_add(d_a, d_b, d_c, n);
  cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += h_c[i] != 3.0f * i;
  printf("%d of %d elements wrong\n", wrong, n);
  cudaFree(d_a), cudaFree(d_b), cudaFree(d_c);
  free(h_a), free(h_b), free(h_c);
  return wrong != 0;
}
