// The foundation benchmark's kernels (bench_foundation.cu), written once and compiled twice on
// emu: as plain C++ (foundation_unchecked.cu) and with the checks (foundation_checked.cu), each
// in its namespace (FOUNDATION_VARIANT). Each kernel is the textbook form a course teaches, with
// the block size of the issue that set the benchmark's targets.
#pragma once

#include "foundation.h"

#ifndef FOUNDATION_VARIANT
#error "define FOUNDATION_VARIANT (checked or unchecked) before including foundation_kernels.cuh"
#endif

namespace FOUNDATION_VARIANT {

constexpr int TILE_WIDTH = 16;
constexpr int BLOCK_SIZE = 256;
constexpr int RADIUS = 3;

#include "cudalab/textbook_kernels.cuh"  // vectorAdd, naiveMatMul, tiledMatMul<TILE_WIDTH>

// out[i] = sum of in[i - RADIUS .. i + RADIUS] (zero outside), the block's inputs and halo staged
// in shared memory.
__global__ void stencil1D(const float* in, float* out, int n) {
  __shared__ float temp[BLOCK_SIZE + 2 * RADIUS];
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  int l = threadIdx.x + RADIUS;
  temp[l] = g < n ? in[g] : 0.0f;
  if (threadIdx.x < RADIUS) {
    int left = g - RADIUS, right = g + BLOCK_SIZE;
    temp[l - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
    temp[l + BLOCK_SIZE] = right < n ? in[right] : 0.0f;
  }
  __syncthreads();
  float sum = 0;
  for (int k = -RADIUS; k <= RADIUS; ++k) sum += temp[l + k];
  if (g < n) out[g] = sum;
}

// One partial sum per block: a tree in shared memory, a barrier per step.
__global__ void blockReduce(const float* in, float* partial, int n) {
  __shared__ float sdata[BLOCK_SIZE];
  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

// One partial sum per warp, by shuffles.
__global__ void warpReduce(const float* in, float* partial, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x % 32 == 0 && i < n) partial[i / 32] = v;
}

// The launchers, each waiting for its kernel.
cudaError_t vector_add(const float* A, const float* B, float* C, int n) {
  vectorAdd<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(A, B, C, n);
  return cudaDeviceSynchronize();
}
cudaError_t naive_matmul(const float* M, const float* N, float* P, int Width) {
  dim3 block(TILE_WIDTH, TILE_WIDTH),
      grid((Width + TILE_WIDTH - 1) / TILE_WIDTH, (Width + TILE_WIDTH - 1) / TILE_WIDTH);
  naiveMatMul<<<grid, block>>>(M, N, P, Width);
  return cudaDeviceSynchronize();
}
cudaError_t tiled_matmul(const float* M, const float* N, float* P, int Width) {
  dim3 block(TILE_WIDTH, TILE_WIDTH), grid(Width / TILE_WIDTH, Width / TILE_WIDTH);
  tiledMatMul<TILE_WIDTH><<<grid, block>>>(M, N, P, Width);
  return cudaDeviceSynchronize();
}
cudaError_t stencil_1d(const float* in, float* out, int n) {
  stencil1D<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(in, out, n);
  return cudaDeviceSynchronize();
}
cudaError_t block_reduce(const float* in, float* partial, int n) {
  blockReduce<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(in, partial, n);
  return cudaDeviceSynchronize();
}
cudaError_t warp_reduce(const float* in, float* partial, int n) {
  warpReduce<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(in, partial, n);
  return cudaDeviceSynchronize();
}

extern const FoundationKernels kernels = {vector_add, naive_matmul, tiled_matmul,
                                          stencil_1d, block_reduce, warp_reduce};

}  // namespace FOUNDATION_VARIANT
