// Launch forms: a template kernel in a namespace, a kernel without arguments, a shift inside the
// configuration, `<< <` spacing, a kernel chosen by an expression (evaluated once), launches in a
// macro's body (across a continuation; a template in a namespace, with spaces in its chevrons; an
// element of an array of kernels, after an `if`) and in a macro's argument, a launch before the
// kernel's definition, and kernels launched by address (cudaLaunchKernel with a cast to void*).
// expect: template: 4 4 4 4 4 4 4 4
// expect: no arguments: 1
// expect: shift: 16
// expect: chosen: 32, the choice made 1 time(s)
// expect: in macros: 2024
// expect: defined later: 42
// expect: by address: 200 8
#include <cuda_runtime.h>

#include <cstdio>

namespace ns {
template <class T, int N>
__global__ void scale(T* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * N;
}
}  // namespace ns

__device__ int flag;
__global__ void set_flag() { flag = 1; }
__global__ void count(int* c) { atomicAdd(c, 1); }
__global__ void add(int* c, int v) { atomicAdd(c, v); }
__global__ void defined_later(int* out);

int choices = 0;
int choose() { return choices++ % 2; }

// clang-format off
#define RUN_ADD(c, v) add<<<1, \
                          1>>>(c, v)
#define RUN_CHOSEN(table, i, c) if (i >= 0) (table)[i]<<<1, 1>>>(c, 1000)
#define DOUBLE(p) ns::scale<int, 2><< <1, 1>> >(p, 1)
// clang-format on
#define CHECK(call)                                                            \
  do {                                                                         \
    call;                                                                      \
    if (cudaGetLastError() != cudaSuccess) std::printf("the launch failed\n"); \
  } while (0)

int main() {
  int* data = nullptr;
  cudaMallocManaged(&data, 8 * sizeof(int));
  for (int i = 0; i < 8; ++i) data[i] = 1;
  ns::scale<int, 4><<<2, 4>>>(data, 8);
  cudaDeviceSynchronize();
  std::printf("template:");
  for (int i = 0; i < 8; ++i) std::printf(" %d", data[i]);
  std::printf("\n");

  set_flag<<<1, 1>>>();
  int seen = 0;
  cudaMemcpyFromSymbol(&seen, flag, sizeof(int));
  std::printf("no arguments: %d\n", seen);

  int* c = nullptr;
  cudaMallocManaged(&c, sizeof(int));
  *c = 0;
  const int n = 32;
  // clang-format off
  count<< <(n >> 4) - 1, n >> 1>> >(c);
  // clang-format on
  cudaDeviceSynchronize();
  std::printf("shift: %d\n", *c);

  *c = 0;
  void (*kernels[2])(int*, int) = {add, add};
  kernels[choose()]<<<1, 2>>>(c, 1);
  cudaDeviceSynchronize();
  const int before = choices;
  (*kernels[0])<<<1, 3>>>(c, 10);
  cudaDeviceSynchronize();
  std::printf("chosen: %d, the choice made %d time(s)\n", *c, before);

  *c = 0;
  RUN_ADD(c, 5);
  CHECK((add<<<1, 1>>>(c, 7)));
  RUN_CHOSEN(kernels, 0, c);
  cudaDeviceSynchronize();
  DOUBLE(c);
  cudaDeviceSynchronize();
  std::printf("in macros: %d\n", *c);

  defined_later<<<1, 1>>>(c);
  cudaDeviceSynchronize();
  std::printf("defined later: %d\n", *c);

  *c = 0;
  int* target = c;
  int value = 100;
  void* add_args[] = {&target, &value};
  cudaLaunchKernel((void*)add, dim3(1), dim3(2), add_args, 0, nullptr);
  int size = 8;
  void* scale_args[] = {&data, &size};
  cudaLaunchKernel(reinterpret_cast<void*>(ns::scale<int, 2>), dim3(1), dim3(8), scale_args, 0,
                   nullptr);
  cudaDeviceSynchronize();
  std::printf("by address: %d %d\n", *c, data[7]);
  cudaFree(c);
  cudaFree(data);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

__global__ void defined_later(int* out) { *out = 42; }
