// A header found through -I (include_path.cu): a kernel with __shared__ memory, and its launch.
#pragma once
#include <cuda_runtime.h>

__global__ void double_through_shared(int* x) {
  __shared__ int staged;
  staged = *x;
  __syncthreads();
  *x = staged * 2;
}

inline void run_double(int* x) { double_through_shared<<<1, 1>>>(x); }
