// Lab 09: Jacobi iteration. Fill in the TODOs; README.md explains the steps.
#include "jacobi.h"

__global__ void jacobiSweepKernel(const float* u, float* v, int ny, int nx) {
  // TODO: i = row, j = column of this thread; inside the grid: boundary points copy u, interior
  // points get the average of their four neighbours.
}

cudaError_t jacobiSweep(const float* u, float* v, int ny, int nx) {
  // TODO: blocks of JACOBI_BLOCK_X x JACOBI_BLOCK_Y threads covering nx x ny points.
  return cudaErrorNotYetImplemented;
}

__global__ void jacobiSweepTiledKernel(const float* u, float* v, int ny, int nx) {
  // TODO:
  // - __shared__ float tile[JACOBI_TILE + 2][JACOBI_TILE + 2];
  // - thread (tx, ty) loads point (blockIdx.y * JACOBI_TILE + ty - 1, blockIdx.x * JACOBI_TILE +
  //   tx - 1) of u, if it is inside the grid;
  // - __syncthreads();
  // - the inner threads (1 <= tx, ty <= JACOBI_TILE) compute their point from the tile, as
  //   jacobiSweepKernel does from u.
}

cudaError_t jacobiSweepTiled(const float* u, float* v, int ny, int nx) {
  // TODO: blocks of (JACOBI_TILE + 2) x (JACOBI_TILE + 2) threads, one per JACOBI_TILE x
  // JACOBI_TILE tile of points.
  return cudaErrorNotYetImplemented;
}

__global__ void squaredDifferenceKernel(const float* u, const float* v, int points, float* result) {
  // TODO: each thread adds (v[k] - u[k])^2 for k = its global index, + the grid's thread count,
  // ...; a __shared__ array of JACOBI_REDUCE_BLOCK partial sums, added in halving steps with a
  // __syncthreads() after each; thread 0 does atomicAdd(result, the block's sum).
}

cudaError_t squaredDifference(const float* u, const float* v, int ny, int nx, float* result) {
  // TODO: set *result to 0 (cudaMemset); launch enough blocks of JACOBI_REDUCE_BLOCK threads (at
  // most 1024 blocks: each thread may take several points).
  return cudaErrorNotYetImplemented;
}

cudaError_t jacobiSolve(float* u, float* scratch, int ny, int nx, float tolerance, int max_sweeps,
                        int check_every, int* sweeps) {
  // TODO: sweep (tiled) from the current grid into the other and swap; after every check_every
  // sweeps, squaredDifference of the last two grids into a device float, copy it to the host and
  // stop when it is <= tolerance. Leave the final grid in u; *sweeps = the sweeps done.
  return cudaErrorNotYetImplemented;
}
