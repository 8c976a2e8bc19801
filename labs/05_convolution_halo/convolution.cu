// Lab 05: convolution with halo cells. Fill in the TODOs; README.md explains the steps.
#include "convolution.h"

// The masks in constant memory: small, read-only during a kernel, and read by all threads in the
// same order, so the constant cache serves them without touching DRAM.
__constant__ float M_c[MAX_MASK_WIDTH];
__constant__ float M2_c[MAX_MASK_WIDTH * MAX_MASK_WIDTH];  // row-major, Mask_Width per row

bool validMask(int Mask_Width) {
  return Mask_Width > 0 && Mask_Width % 2 == 1 && Mask_Width <= MAX_MASK_WIDTH;
}

// ---- 1D, basic ------------------------------------------------------------------------------

__global__ void convolution_1D_basic_kernel(const float* N, const float* M, float* P,
                                            int Mask_Width, int Width) {
  // TODO: i = this thread's output element; if i < Width, add N[i - Mask_Width/2 + j] * M[j] for
  // every j whose N index lies inside N (ghost cells count as 0), and store the sum in P[i].
}

cudaError_t convolution1DBasic(const float* N, const float* M, float* P, int Mask_Width,
                               int Width) {
  // TODO: return cudaErrorInvalidValue unless validMask(Mask_Width); launch nothing for an empty
  // array; otherwise ceil(Width / TILE_SIZE) blocks of TILE_SIZE threads; return the launch's
  // error.
  return cudaErrorNotYetImplemented;
}

// ---- 1D, mask in constant memory --------------------------------------------------------------

__global__ void convolution_1D_constant_kernel(const float* N, float* P, int Mask_Width,
                                               int Width) {
  // TODO: as the basic kernel, with the mask read from M_c.
}

// Copies the 1D mask into constant memory.
cudaError_t setMask1D(const float* h_M, int Mask_Width) {
  // TODO: copy Mask_Width floats from h_M into M_c with cudaMemcpyToSymbol.
  return cudaErrorNotYetImplemented;
}

cudaError_t convolution1DConstant(const float* N, const float* h_M, float* P, int Mask_Width,
                                  int Width) {
  // TODO: check the mask width, copy the mask (setMask1D), launch, return the first error.
  return cudaErrorNotYetImplemented;
}

// ---- 1D, tiled with halo cells ----------------------------------------------------------------

__global__ void convolution_1D_tiled_kernel(const float* N, float* P, int Mask_Width, int Width) {
  // TODO: with n = Mask_Width / 2 and a shared N_ds[TILE_SIZE + MAX_MASK_WIDTH - 1]:
  // - the last n threads load the left halo (the end of the previous tile; 0 left of N) into
  //   N_ds[0 .. n-1];
  // - every thread loads its own element into N_ds[n + threadIdx.x] (0 past the end of N);
  // - the first n threads load the right halo (the start of the next tile; 0 past the end of N)
  //   into N_ds[n + blockDim.x ..];
  // - __syncthreads();
  // - threads with i < Width add N_ds[threadIdx.x + j] * M_c[j] and store P[i].
}

cudaError_t convolution1DTiled(const float* N, const float* h_M, float* P, int Mask_Width,
                               int Width) {
  // TODO: as convolution1DConstant, launching convolution_1D_tiled_kernel.
  return cudaErrorNotYetImplemented;
}

// ---- 1D, tiled, halo cells through the cache --------------------------------------------------

__global__ void convolution_1D_tiled_caching_kernel(const float* N, float* P, int Mask_Width,
                                                    int Width) {
  // TODO: a shared N_ds[TILE_SIZE] holds this block's tile only (0 past the end of N);
  // __syncthreads(); then, for i < Width, each N index inside this tile is read from N_ds and
  // every other one inside N (a halo cell) directly from N; ghost cells count as 0.
}

cudaError_t convolution1DTiledCached(const float* N, const float* h_M, float* P, int Mask_Width,
                                     int Width) {
  // TODO: as convolution1DConstant, launching convolution_1D_tiled_caching_kernel.
  return cudaErrorNotYetImplemented;
}

// ---- 2D, tiled with halo cells ----------------------------------------------------------------

__global__ void convolution_2D_tiled_kernel(const float* N, float* P, int Mask_Width, int height,
                                            int width) {
  // TODO: with a shared N_ds[O_TILE_WIDTH + MAX_MASK_WIDTH - 1][O_TILE_WIDTH + MAX_MASK_WIDTH - 1]:
  // - row_o, col_o: the output pixel of this thread (blockIdx * O_TILE_WIDTH + threadIdx);
  //   row_i, col_i: the input pixel it loads (row_o and col_o minus Mask_Width / 2);
  // - every thread loads N[row_i][col_i] into N_ds[ty][tx], or 0 for a ghost cell;
  // - __syncthreads();
  // - threads with ty and tx below O_TILE_WIDTH whose output pixel lies inside the image add
  //   M2_c[i * Mask_Width + j] * N_ds[i + ty][j + tx] over the mask and store P[row_o][col_o].
}

cudaError_t convolution2DTiled(const float* N, const float* h_M, float* P, int Mask_Width,
                               int height, int width) {
  // TODO: check the mask width; nothing to do for an empty image; copy the Mask_Width^2 mask into
  // M2_c; launch blocks of (O_TILE_WIDTH + Mask_Width - 1)^2 threads on a grid of
  // ceil(width / O_TILE_WIDTH) x ceil(height / O_TILE_WIDTH) blocks; return the first error.
  return cudaErrorNotYetImplemented;
}
