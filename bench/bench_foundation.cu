// Foundation benchmark: lab 01's kernel on 2^24 elements and the classic 16x16 tiled matrix
// multiplication on 512x512, each next to a plain C++ loop on one CPU core doing the same work.
// On emu this measures the emulator's overhead; on a GPU, the GPU against one core.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/data.h"
#include "tiled_matmul.h"
#include "vector_add.h"

#define TILE_WIDTH 16

// PMPP's tiled kernel: each block computes a TILE_WIDTH x TILE_WIDTH tile of P = M * N (Width^2).
__global__ void tiledMatMul(const float* M, const float* N, float* P, int Width) {
  __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
  __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
  int tx = threadIdx.x, ty = threadIdx.y;
  int Row = blockIdx.y * TILE_WIDTH + ty;
  int Col = blockIdx.x * TILE_WIDTH + tx;
  float Pvalue = 0;
  for (int ph = 0; ph < Width / TILE_WIDTH; ++ph) {
    Mds[ty][tx] = M[Row * Width + ph * TILE_WIDTH + tx];
    Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + Col];
    __syncthreads();  // the whole tile is loaded
    for (int k = 0; k < TILE_WIDTH; ++k) Pvalue += Mds[ty][k] * Nds[k][tx];
    __syncthreads();  // everyone is done with the tile before it is overwritten
  }
  P[Row * Width + Col] = Pvalue;
}

namespace {

using Clock = std::chrono::steady_clock;

// Median wall time of `reps` runs, in milliseconds.
double median_ms(int reps, const std::function<void()>& run) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const char* what, const char* size, double kernel_ms, double loop_ms, int cores) {
  std::printf("%-22s %-10s %12.2f %12.2f %10.2f %16.2f\n", what, size, kernel_ms, loop_ms,
              kernel_ms / loop_ms, kernel_ms * cores / loop_ms);
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int cores = prop.multiProcessorCount;
#ifdef CUDALAB_EMU
  std::printf("backend: emu, %d worker threads (set CUDALAB_EMU_THREADS to change)\n", cores);
#else
  std::printf("backend: cuda, %s\n", prop.name);
  cores = 1;  // the per-core column compares with one CPU core
#endif
  std::printf("%-22s %-10s %12s %12s %10s %16s\n", "kernel", "size", "kernel ms", "loop ms",
              "ratio", "ratio per core");

  // Vector add, 2^24 elements: the kernel alone (device arrays ready), against a loop.
  {
    const int n = 1 << 24;
    auto A = cudalab::random_floats(n, 1), B = cudalab::random_floats(n, 2);
    std::vector<float> C(n);
    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dC, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    double kernel = median_ms(5, [&] {
      vecAddKernel<<<(n + 255) / 256, 256>>>(dA, dB, dC, n);
      CUDA_CHECK(cudaDeviceSynchronize());
    });
    CUDA_CHECK(cudaMemcpy(C.data(), dC, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
      if (C[i] != A[i] + B[i]) return std::printf("vector add: wrong C[%d]\n", i), 1;
    double loop = median_ms(5, [&] {
      for (int i = 0; i < n; ++i) C[i] = A[i] + B[i];
    });
    row("vecAddKernel", "2^24", kernel, loop, cores);
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
  }

  // Tiled matmul, 512 x 512.
  {
    const int W = 512;
    auto M = cudalab::random_floats(W * W, 3), N = cudalab::random_floats(W * W, 4);
    std::vector<float> P(W * W), Q(W * W);
    float *dM, *dN, *dP;
    CUDA_CHECK(cudaMalloc(&dM, W * W * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dN, W * W * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dP, W * W * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dM, M.data(), W * W * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dN, N.data(), W * W * sizeof(float), cudaMemcpyHostToDevice));
    dim3 block(TILE_WIDTH, TILE_WIDTH), grid(W / TILE_WIDTH, W / TILE_WIDTH);
    double kernel = median_ms(5, [&] {
      tiledMatMul<<<grid, block>>>(dM, dN, dP, W);
      CUDA_CHECK(cudaDeviceSynchronize());
    });
    CUDA_CHECK(cudaMemcpy(P.data(), dP, W * W * sizeof(float), cudaMemcpyDeviceToHost));
    double loop = median_ms(5, [&] {
      for (int i = 0; i < W; ++i)
        for (int j = 0; j < W; ++j) {
          float sum = 0;
          for (int k = 0; k < W; ++k) sum += M[i * W + k] * N[k * W + j];
          Q[i * W + j] = sum;
        }
    });
    for (int i = 0; i < W * W; ++i)
      if (std::fabs(P[i] - Q[i]) > 1e-3f * (1 + std::fabs(Q[i])))
        return std::printf("tiled matmul: wrong P[%d] = %g, loop gives %g\n", i, P[i], Q[i]), 1;
    row("tiledMatMul 16x16", "512x512", kernel, loop, cores);
#ifdef CUDALAB_EMU
    // The same product by lab 04's tiledMatMul16, compiled with the checks as all lab code is:
    // what the checks cost (make check runs lab code this way).
    double checked = median_ms(5, [&] {
      CUDA_CHECK(tiledMatMul16(dM, dN, dP, W, W, W));
      CUDA_CHECK(cudaDeviceSynchronize());
    });
    std::printf("%-22s %-10s %12.1f %12s %9.1fx  (checked lab 04 kernel / plain bench kernel)\n",
                "tiledMatMul16 checked", "512x512", checked, "", checked / kernel);
#endif
    CUDA_CHECK(cudaFree(dM));
    CUDA_CHECK(cudaFree(dN));
    CUDA_CHECK(cudaFree(dP));
  }
  std::printf(
      "ratio = kernel / loop; per core = ratio x worker threads (emu), the CPU work per "
      "element against one core's loop\n");
  return 0;
}
