// The foundation benchmark's kernels, as launchers that run on device arrays and wait: one set
// compiled as plain C++ on emu (unchecked), one with the checks (checked); on cuda both are the
// same GPU code. The kernels: foundation_kernels.cuh.
#pragma once

#include <cuda_runtime.h>

struct FoundationKernels {
  cudaError_t (*vector_add)(const float* A, const float* B, float* C, int n);
  cudaError_t (*naive_matmul)(const float* M, const float* N, float* P, int Width);  // 16 x 16
  cudaError_t (*tiled_matmul)(const float* M, const float* N, float* P, int Width);  // TILE 16
  cudaError_t (*stencil_1d)(const float* in, float* out, int n);                     // radius 3
  cudaError_t (*block_reduce)(const float* in, float* partial, int n);  // a sum per 256
  cudaError_t (*warp_reduce)(const float* in, float* partial, int n);   // a sum per 32
};

namespace checked {
extern const FoundationKernels kernels;
}
namespace unchecked {
extern const FoundationKernels kernels;
}
