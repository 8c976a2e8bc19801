// Local headers: a header that launches a kernel and declares dynamic shared memory (translated,
// and included from there), a header's file-scope __shared__ variable used in this file (each
// block's own), and the workbook's textbook kernels (common/include/cudalab/textbook_kernels.cuh).
// expect: launched in a header: 0 1 2 3
// expect: header's shared: 6 22
// expect: textbook tiled matmul: 64 64 64 64
#include <cstdio>

#include "cudalab/textbook_kernels.cuh"
#include "forms_header.cuh"
#include "forms_shared.cuh"

__global__ void sum_into_header_variable(int* totals) {
  if (threadIdx.x == 0) header_total = 0;
  __syncthreads();
  atomicAdd(&header_total, static_cast<int>(blockIdx.x * 4 + threadIdx.x));
  __syncthreads();
  if (threadIdx.x == 0) totals[blockIdx.x] = header_total;
}

int main() {
  int* out = nullptr;
  cudaMallocManaged(&out, 4 * sizeof(int));
  run_copy_through_shared(out, 4);
  cudaDeviceSynchronize();
  std::printf("launched in a header: %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  sum_into_header_variable<<<2, 4>>>(out);
  cudaDeviceSynchronize();
  std::printf("header's shared: %d %d\n", out[0], out[1]);

  const int width = 32;
  float *M = nullptr, *N = nullptr, *P = nullptr;
  cudaMallocManaged(&M, width * width * sizeof(float));
  cudaMallocManaged(&N, width * width * sizeof(float));
  cudaMallocManaged(&P, width * width * sizeof(float));
  for (int i = 0; i < width * width; ++i) M[i] = 1.0f, N[i] = 2.0f;
  tiledMatMul<16><<<dim3(2, 2), dim3(16, 16)>>>(M, N, P, width);
  cudaDeviceSynchronize();
  std::printf("textbook tiled matmul: %g %g %g %g\n", P[0], P[31], P[32 * 31],
              P[width * width - 1]);
  cudaFree(P);
  cudaFree(N);
  cudaFree(M);
  cudaFree(out);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
