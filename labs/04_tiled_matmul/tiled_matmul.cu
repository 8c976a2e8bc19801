// Lab 04: tiled matrix multiplication. Fill in the TODOs; README.md explains the steps.
// TILE_WIDTH is a template parameter: a compile-time constant, as shared array sizes must be.
#include "tiled_matmul.h"

template <int TILE_WIDTH>
__global__ void tiledMatMulKernel(const float* M, const float* N, float* P, int I, int J, int K) {
  // TODO:
  // - declare two TILE_WIDTH x TILE_WIDTH __shared__ tiles, Mds and Nds;
  // - Row = blockIdx.y * TILE_WIDTH + threadIdx.y, Col = blockIdx.x * TILE_WIDTH + threadIdx.x;
  // - for each phase ph (ceil(J / TILE_WIDTH) of them): each thread loads one element of M's tile
  //   and one of N's tile (0 where the tile sticks out of the matrix); barrier; add up the tile's
  //   TILE_WIDTH products; barrier;
  // - if (Row, Col) lies inside P, store the sum.
}

template <int TILE_WIDTH>
cudaError_t tiledMatMul(const float* M, const float* N, float* P, int I, int J, int K) {
  // TODO: blocks of TILE_WIDTH x TILE_WIDTH threads, a grid that covers K columns and I rows of P
  // (no launch if P is empty); launch tiledMatMulKernel<TILE_WIDTH>; return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

// The functions the tests call: nothing to do here.
cudaError_t tiledMatMul16(const float* M, const float* N, float* P, int I, int J, int K) {
  return tiledMatMul<16>(M, N, P, I, J, K);
}
cudaError_t tiledMatMul32(const float* M, const float* N, float* P, int I, int J, int K) {
  return tiledMatMul<32>(M, N, P, I, J, K);
}
