// A local header with a kernel and its launch (the translator handles it too).
#pragma once
#include <cuda_runtime.h>

#include <cassert>

#ifndef N
#define N 1000
#endif

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef PAST_THE_END
  c[i] = a[i] + b[i];  // the planted bug: no bounds check
#else
  if (i < n) c[i] = a[i] + b[i];
#endif
}

#define THREADS 256
#define LAUNCH_ADD(a, b, c, n) add<<<((n) + THREADS - 1) / THREADS, THREADS>>>(a, b, c, n)

inline void launch_add(const float* a, const float* b, float* c, int n) {
  assert(n > 0);
  LAUNCH_ADD(a, b, c, n);
}
