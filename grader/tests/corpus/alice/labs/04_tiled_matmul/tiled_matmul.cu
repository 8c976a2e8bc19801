// Lab 04: tiled matrix multiplication, reference solution.
// TILE_WIDTH is a template parameter: a compile-time constant, as shared array sizes must be.
#include "tiled_matmul.h"

template <int TILE_WIDTH>
__global__ void tiledMatMulKernel(const float* M, const float* N, float* P, int I, int J, int K) {
  __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
  __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
  int tx = threadIdx.x, ty = threadIdx.y;
  int Row = blockIdx.y * TILE_WIDTH + ty;
  int Col = blockIdx.x * TILE_WIDTH + tx;

  float Pvalue = 0;
  for (int ph = 0; ph < (J + TILE_WIDTH - 1) / TILE_WIDTH; ++ph) {
    // Each thread loads one element of each tile. Where a tile sticks out of its matrix, it
    // loads 0, which adds nothing to the products.
    int mCol = ph * TILE_WIDTH + tx;
    int nRow = ph * TILE_WIDTH + ty;
    Mds[ty][tx] = (Row < I && mCol < J) ? M[Row * J + mCol] : 0.0f;
    Nds[ty][tx] = (nRow < J && Col < K) ? N[nRow * K + Col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int k = 0; k < TILE_WIDTH; ++k) Pvalue += Mds[ty][k] * Nds[k][tx];
    __syncthreads();  // everyone is done with the tiles before the next phase overwrites them
  }
  if (Row < I && Col < K) P[Row * K + Col] = Pvalue;
}

template <int TILE_WIDTH>
cudaError_t tiledMatMul(const float* M, const float* N, float* P, int I, int J, int K) {
  if (I == 0 || K == 0) return cudaSuccess;
  dim3 block(TILE_WIDTH, TILE_WIDTH);
  dim3 grid((K + TILE_WIDTH - 1) / TILE_WIDTH, (I + TILE_WIDTH - 1) / TILE_WIDTH);
  tiledMatMulKernel<TILE_WIDTH><<<grid, block>>>(M, N, P, I, J, K);
  return cudaGetLastError();
}

// The functions the tests call.
cudaError_t tiledMatMul16(const float* M, const float* N, float* P, int I, int J, int K) {
  return tiledMatMul<16>(M, N, P, I, J, K);
}
cudaError_t tiledMatMul32(const float* M, const float* N, float* P, int I, int J, int K) {
  return tiledMatMul<32>(M, N, P, I, J, K);
}
