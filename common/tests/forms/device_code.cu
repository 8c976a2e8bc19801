// Device code forms: clock() in a kernel (the device's clock) beside the host's clock(), inline PTX
// that reads a special register or runs one instruction, assert() that holds, a kernel whose
// parameters carry comments, and a kernel with __launch_bounds__ registered by its address.
// expect: clock advances: yes
// expect: lanes: 0 1 2 31
// expect: bfind: 4 31
// expect: asserted: 3
// expect: commented: 5 5 5
// expect: bounded: 64
#include <cuda_runtime.h>

#include <cassert>
#include <cstdio>
#include <ctime>

__global__ void ticks(long long* t) {
  const clock_t start = clock();
  float x = 1.0f;
  for (int i = 0; i < 1000; ++i) x = x * 1.0001f + 0.5f;
  t[0] = static_cast<unsigned>(clock() - start);
  t[1] = static_cast<long long>(x > 0.0f);
}

__global__ void lanes(unsigned* out) {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[threadIdx.x] = lane;
}

__device__ unsigned highest_bit(unsigned w) {
  unsigned r;
  asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(w));
  return r;
}
__global__ void bfind(unsigned* out) {
  out[0] = highest_bit(16u);
  out[1] = highest_bit(0x80000000u);
}

__global__ void asserted(int* out, int v) {
  assert(v > 0);
  static_assert(sizeof(int) == 4, "");
  *out = v;
}

__global__ void fill(int* out,  // where the values go
                     int n,     // how many (a ")" in a comment)
                     int value /* what each gets */) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void __launch_bounds__(256) bounded(int* c) { atomicAdd(c, 1); }

int main() {
  long long* t = nullptr;
  cudaMallocManaged(&t, 2 * sizeof(long long));
  const clock_t host_start = clock();
  ticks<<<1, 1>>>(t);
  cudaDeviceSynchronize();
  std::printf("clock advances: %s\n",
              t[0] > 0 && t[1] == 1 && clock() >= host_start ? "yes" : "no");

  unsigned* u = nullptr;
  cudaMallocManaged(&u, 64 * sizeof(unsigned));
  lanes<<<1, 64>>>(u);
  cudaDeviceSynchronize();
  std::printf("lanes: %u %u %u %u\n", u[32], u[33], u[2], u[63]);

  bfind<<<1, 1>>>(u);
  cudaDeviceSynchronize();
  std::printf("bfind: %u %u\n", u[0], u[1]);

  int* v = nullptr;
  cudaMallocManaged(&v, 4 * sizeof(int));
  asserted<<<1, 1>>>(v, 3);
  cudaDeviceSynchronize();
  std::printf("asserted: %d\n", v[0]);

  fill<<<1, 3>>>(v, 3, 5);
  cudaDeviceSynchronize();
  std::printf("commented: %d %d %d\n", v[0], v[1], v[2]);

  v[0] = 0;
  void* args[] = {&v};
  cudaLaunchKernel((const void*)bounded, dim3(2), dim3(32), args, 0, nullptr);
  cudaDeviceSynchronize();
  std::printf("bounded: %d\n", v[0]);
  cudaFree(v);
  cudaFree(u);
  cudaFree(t);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
