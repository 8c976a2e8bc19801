// Headers found through the include path (-I common/tests/forms/include), as nvcc finds them: one
// included with quotes, one with angle brackets; each launches a kernel. An #include in `#if 0`
// names a header that does not exist.
// expect: through -I: 42 45
#include <angled.cuh>
#include <cstdio>

#include "launching.cuh"
#if 0
#include "not_there.cuh"
#endif

int main() {
  int* x = nullptr;
  cudaMallocManaged(&x, sizeof(int));
  *x = 21;
  run_double(x);
  cudaDeviceSynchronize();
  const int doubled = *x;
  run_add_three(x);
  cudaDeviceSynchronize();
  std::printf("through -I: %d %d\n", doubled, *x);
  cudaFree(x);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
