// Forms of CUDA that nvcc accepts and that a reader of the text alone gets wrong: a reference
// parameter, chevrons with spaces, a launch in `#if 0` and in a raw string, comments in a kernel's
// parameters, a launch through a pointer and in a macro, a file-scope __shared__ variable.
// expect: reference: 11
// expect: values: 9 8 7 7
// expect: text: fill<<<1, 1>>>(out, 1, 0)
// expect: totals: 6 46 86
#include <cuda_runtime.h>

#include <cstdio>

struct Counter {
  int value;
};

// A reference parameter: the kernel changes the caller's object (managed memory), not a copy.
__global__ void increment(Counter& counter) { counter.value += 1; }

__global__ void fill(int* out,  // where the values go
                     int n,     // how many (a ")" in a comment)
                     int value /* what each gets */) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

// A __shared__ variable at file scope: each block has its own.
__shared__ int block_total;

__global__ void sum_per_block(int* totals) {
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  atomicAdd(&block_total, static_cast<int>(blockIdx.x * 10 + threadIdx.x));
  __syncthreads();
  if (threadIdx.x == 0) totals[blockIdx.x] = block_total;
}

#define LAUNCH_FILL(grid, block, ...) fill<<<grid, block>>>(__VA_ARGS__)

int main() {
  Counter* counter = nullptr;
  cudaMallocManaged(&counter, sizeof(Counter));
  counter->value = 10;
  increment<<<1, 1>>>(*counter);
  cudaDeviceSynchronize();
  printf("reference: %d\n", counter->value);

  int* out = nullptr;
  cudaMallocManaged(&out, 4 * sizeof(int));
  // clang-format off
  fill<< <1, 4 >> >(out, 4, 7);
  // clang-format on
#if 0
  this line is not C++, and its launch is not compiled: fill<<<1, 1>>>(out, 1, 0);
#endif
  const char* text = R"(fill<<<1, 1>>>(out, 1, 0))";
  void (*pointer)(int*, int, int) = fill;
  pointer<<<1, 2>>>(out, 2, 8);
  LAUNCH_FILL(1, 1, out, 1, 9);
  cudaDeviceSynchronize();
  printf("values: %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  printf("text: %s\n", text);
  int* totals = nullptr;
  cudaMallocManaged(&totals, 3 * sizeof(int));
  sum_per_block<<<3, 4>>>(totals);
  cudaDeviceSynchronize();
  printf("totals: %d %d %d\n", totals[0], totals[1], totals[2]);
  cudaFree(totals);
  cudaFree(out);
  cudaFree(counter);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
