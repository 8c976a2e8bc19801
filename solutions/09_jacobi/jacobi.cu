// Lab 09: Jacobi iteration, reference solution.
#include "jacobi.h"

// The new value of point (i, j): its old value on the boundary, else the average of the four
// neighbours `at` returns.
template <class At>
__device__ float jacobiPoint(int i, int j, int ny, int nx, At at) {
  if (i == 0 || j == 0 || i == ny - 1 || j == nx - 1) return at(i, j);
  return 0.25f * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1));
}

// One thread per point; each point is read by up to five threads (the caches absorb most of it).
__global__ void jacobiSweepKernel(const float* u, float* v, int ny, int nx) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ny && j < nx)
    v[i * nx + j] = jacobiPoint(i, j, ny, nx, [&](int r, int c) { return u[r * nx + c]; });
}

cudaError_t jacobiSweep(const float* u, float* v, int ny, int nx) {
  if (ny == 0 || nx == 0) return cudaSuccess;
  dim3 block(JACOBI_BLOCK_X, JACOBI_BLOCK_Y);
  dim3 grid((nx + JACOBI_BLOCK_X - 1) / JACOBI_BLOCK_X, (ny + JACOBI_BLOCK_Y - 1) / JACOBI_BLOCK_Y);
  jacobiSweepKernel<<<grid, block>>>(u, v, ny, nx);
  return cudaGetLastError();
}

// Each point is read from global memory once per block (plus the halo); the neighbours come from
// shared memory.
__global__ void jacobiSweepTiledKernel(const float* u, float* v, int ny, int nx) {
  __shared__ float tile[JACOBI_TILE + 2][JACOBI_TILE + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = blockIdx.y * JACOBI_TILE + ty - 1, j = blockIdx.x * JACOBI_TILE + tx - 1;
  bool inside = i >= 0 && i < ny && j >= 0 && j < nx;
  if (inside) tile[ty][tx] = u[i * nx + j];
  __syncthreads();
  bool inner = tx >= 1 && tx <= JACOBI_TILE && ty >= 1 && ty <= JACOBI_TILE;
  if (inner && inside)
    v[i * nx + j] =
        jacobiPoint(i, j, ny, nx, [&](int r, int c) { return tile[ty + r - i][tx + c - j]; });
}

cudaError_t jacobiSweepTiled(const float* u, float* v, int ny, int nx) {
  if (ny == 0 || nx == 0) return cudaSuccess;
  dim3 block(JACOBI_TILE + 2, JACOBI_TILE + 2);
  dim3 grid((nx + JACOBI_TILE - 1) / JACOBI_TILE, (ny + JACOBI_TILE - 1) / JACOBI_TILE);
  jacobiSweepTiledKernel<<<grid, block>>>(u, v, ny, nx);
  return cudaGetLastError();
}

// A grid-stride loop, a tree sum in shared memory, one atomic per block: a few thousand atomics
// instead of one per point.
__global__ void squaredDifferenceKernel(const float* u, const float* v, int points, float* result) {
  __shared__ float partial[JACOBI_REDUCE_BLOCK];
  float sum = 0;
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < points; k += gridDim.x * blockDim.x) {
    float d = v[k] - u[k];
    sum += d * d;
  }
  partial[threadIdx.x] = sum;
  for (int stride = JACOBI_REDUCE_BLOCK / 2; stride > 0; stride /= 2) {
    __syncthreads();
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
  }
  if (threadIdx.x == 0) atomicAdd(result, partial[0]);
}

cudaError_t squaredDifference(const float* u, const float* v, int ny, int nx, float* result) {
  if (cudaError_t e = cudaMemset(result, 0, sizeof(float))) return e;
  const int points = ny * nx;
  if (points == 0) return cudaSuccess;
  int blocks = (points + JACOBI_REDUCE_BLOCK - 1) / JACOBI_REDUCE_BLOCK;
  const int grid = blocks < 1024 ? blocks : 1024;  // a grid-stride loop covers the rest
  squaredDifferenceKernel<<<grid, JACOBI_REDUCE_BLOCK>>>(u, v, points, result);
  return cudaGetLastError();
}

cudaError_t jacobiSolve(float* u, float* scratch, int ny, int nx, float tolerance, int max_sweeps,
                        int check_every, int* sweeps) {
  *sweeps = 0;
  if (ny == 0 || nx == 0) return cudaSuccess;
  float* d_diff;
  if (cudaError_t e = cudaMalloc(&d_diff, sizeof(float))) return e;
  float *from = u, *to = scratch;
  cudaError_t e = cudaSuccess;
  while (e == cudaSuccess && *sweeps < max_sweeps) {
    e = jacobiSweepTiled(from, to, ny, nx);
    ++*sweeps;
    float* t = from;
    from = to;
    to = t;
    if (e == cudaSuccess && *sweeps % check_every == 0) {
      float diff = 0;
      e = squaredDifference(to, from, ny, nx, d_diff);
      if (e == cudaSuccess) e = cudaMemcpy(&diff, d_diff, sizeof(float), cudaMemcpyDeviceToHost);
      if (e == cudaSuccess && diff <= tolerance) break;
    }
  }
  if (e == cudaSuccess && from != u)
    e = cudaMemcpy(u, from, sizeof(float) * ny * nx, cudaMemcpyDeviceToDevice);
  cudaError_t f = cudaFree(d_diff);
  return e != cudaSuccess ? e : f;
}
