// Lab 09: Jacobi iteration for Laplace's equation. The interface the tests call; do not edit this
// file.
//
// A grid of ny rows and nx columns, row-major, in device memory. The boundary (first and last row
// and column) holds fixed values; a sweep replaces every interior point with the average of its
// four neighbours:
//     v[i][j] = 0.25f * (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1])
// and copies the boundary. Each function returns the first error of its CUDA calls, or
// cudaSuccess (without a launch for an empty grid).
#pragma once

#include <cuda_runtime.h>

#define JACOBI_BLOCK_X 32  // jacobiSweep: blocks of 32 x 8 threads, one per point
#define JACOBI_BLOCK_Y 8
#define JACOBI_TILE 16           // jacobiSweepTiled: each block computes a 16 x 16 tile ...
#define JACOBI_REDUCE_BLOCK 256  // squaredDifference: threads per block

// One sweep from u into v, one thread per point, every neighbour read from global memory.
cudaError_t jacobiSweep(const float* u, float* v, int ny, int nx);
// ... from a (JACOBI_TILE + 2)^2 tile in shared memory that blocks of that many threads load
// (the tile with a halo of one point on each side); the inner threads compute.
cudaError_t jacobiSweepTiled(const float* u, float* v, int ny, int nx);
// *result = the sum over all points of (v - u)^2, on the GPU: each block adds its points' terms
// in shared memory, then one atomicAdd per block into *result (a device float the function sets
// to 0 first).
cudaError_t squaredDifference(const float* u, const float* v, int ny, int nx, float* result);
// Tiled sweeps between u and scratch until the squared difference between two successive grids,
// checked after every `check_every` sweeps, is at most `tolerance`, or max_sweeps were done. The
// final grid is in u and the number of sweeps in *sweeps (host memory).
cudaError_t jacobiSolve(float* u, float* scratch, int ny, int nx, float tolerance, int max_sweeps,
                        int check_every, int* sweeps);
