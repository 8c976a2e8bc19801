// Lab 05: convolution with halo cells, reference solution.
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
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= Width) return;  // no barrier in this kernel: leaving early is safe
  float Pvalue = 0;
  int N_start_point = i - (Mask_Width / 2);
  for (int j = 0; j < Mask_Width; j++) {
    if (N_start_point + j >= 0 && N_start_point + j < Width) {  // skip ghost cells
      Pvalue += N[N_start_point + j] * M[j];
    }
  }
  P[i] = Pvalue;
}

cudaError_t convolution1DBasic(const float* N, const float* M, float* P, int Mask_Width,
                               int Width) {
  if (!validMask(Mask_Width)) return cudaErrorInvalidValue;
  if (Width == 0) return cudaSuccess;
  convolution_1D_basic_kernel<<<(Width + TILE_SIZE - 1) / TILE_SIZE, TILE_SIZE>>>(
      N, M, P, Mask_Width, Width);
  return cudaGetLastError();
}

// ---- 1D, mask in constant memory --------------------------------------------------------------

__global__ void convolution_1D_constant_kernel(const float* N, float* P, int Mask_Width,
                                               int Width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= Width) return;
  float Pvalue = 0;
  int N_start_point = i - (Mask_Width / 2);
  for (int j = 0; j < Mask_Width; j++) {
    if (N_start_point + j >= 0 && N_start_point + j < Width) {
      Pvalue += N[N_start_point + j] * M_c[j];
    }
  }
  P[i] = Pvalue;
}

// Copies the 1D mask into constant memory.
cudaError_t setMask1D(const float* h_M, int Mask_Width) {
  return cudaMemcpyToSymbol(M_c, h_M, Mask_Width * sizeof(float));
}

cudaError_t convolution1DConstant(const float* N, const float* h_M, float* P, int Mask_Width,
                                  int Width) {
  if (!validMask(Mask_Width)) return cudaErrorInvalidValue;
  if (Width == 0) return cudaSuccess;
  cudaError_t err = setMask1D(h_M, Mask_Width);
  if (err != cudaSuccess) return err;
  convolution_1D_constant_kernel<<<(Width + TILE_SIZE - 1) / TILE_SIZE, TILE_SIZE>>>(
      N, P, Mask_Width, Width);
  return cudaGetLastError();
}

// ---- 1D, tiled with halo cells ----------------------------------------------------------------

__global__ void convolution_1D_tiled_kernel(const float* N, float* P, int Mask_Width, int Width) {
  __shared__ float N_ds[TILE_SIZE + MAX_MASK_WIDTH - 1];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int n = Mask_Width / 2;

  // The last n threads load the left halo: the end of the previous tile (0 left of N).
  int halo_index_left = (blockIdx.x - 1) * blockDim.x + threadIdx.x;
  if (threadIdx.x >= blockDim.x - n) {
    N_ds[threadIdx.x - (blockDim.x - n)] = (halo_index_left < 0) ? 0 : N[halo_index_left];
  }
  // Every thread loads its own element (0 past the end of N, in the last, partial tile).
  N_ds[n + threadIdx.x] = (i < Width) ? N[i] : 0;
  // The first n threads load the right halo: the start of the next tile (0 right of N).
  int halo_index_right = (blockIdx.x + 1) * blockDim.x + threadIdx.x;
  if (threadIdx.x < n) {
    N_ds[n + blockDim.x + threadIdx.x] = (halo_index_right >= Width) ? 0 : N[halo_index_right];
  }
  __syncthreads();  // the whole input tile is in shared memory

  if (i < Width) {
    float Pvalue = 0;
    for (int j = 0; j < Mask_Width; j++) Pvalue += N_ds[threadIdx.x + j] * M_c[j];
    P[i] = Pvalue;
  }
}

cudaError_t convolution1DTiled(const float* N, const float* h_M, float* P, int Mask_Width,
                               int Width) {
  if (!validMask(Mask_Width)) return cudaErrorInvalidValue;
  if (Width == 0) return cudaSuccess;
  cudaError_t err = setMask1D(h_M, Mask_Width);
  if (err != cudaSuccess) return err;
  convolution_1D_tiled_kernel<<<(Width + TILE_SIZE - 1) / TILE_SIZE, TILE_SIZE>>>(N, P, Mask_Width,
                                                                                  Width);
  return cudaGetLastError();
}

// ---- 1D, tiled, halo cells through the cache --------------------------------------------------

__global__ void convolution_1D_tiled_caching_kernel(const float* N, float* P, int Mask_Width,
                                                    int Width) {
  __shared__ float N_ds[TILE_SIZE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  N_ds[threadIdx.x] = (i < Width) ? N[i] : 0;
  __syncthreads();

  int This_tile_start_point = blockIdx.x * blockDim.x;
  int Next_tile_start_point = (blockIdx.x + 1) * blockDim.x;
  int N_start_point = i - (Mask_Width / 2);
  if (i < Width) {
    float Pvalue = 0;
    for (int j = 0; j < Mask_Width; j++) {
      int N_index = N_start_point + j;
      if (N_index >= 0 && N_index < Width) {
        if (N_index >= This_tile_start_point && N_index < Next_tile_start_point) {
          Pvalue += N_ds[threadIdx.x + j - (Mask_Width / 2)] * M_c[j];  // inside the tile
        } else {
          Pvalue += N[N_index] * M_c[j];  // a halo cell: another block's element, likely cached
        }
      }
    }
    P[i] = Pvalue;
  }
}

cudaError_t convolution1DTiledCached(const float* N, const float* h_M, float* P, int Mask_Width,
                                     int Width) {
  if (!validMask(Mask_Width)) return cudaErrorInvalidValue;
  if (Width == 0) return cudaSuccess;
  cudaError_t err = setMask1D(h_M, Mask_Width);
  if (err != cudaSuccess) return err;
  convolution_1D_tiled_caching_kernel<<<(Width + TILE_SIZE - 1) / TILE_SIZE, TILE_SIZE>>>(
      N, P, Mask_Width, Width);
  return cudaGetLastError();
}

// ---- 2D, tiled with halo cells ----------------------------------------------------------------

__global__ void convolution_2D_tiled_kernel(const float* N, float* P, int Mask_Width, int height,
                                            int width) {
  __shared__ float N_ds[O_TILE_WIDTH + MAX_MASK_WIDTH - 1][O_TILE_WIDTH + MAX_MASK_WIDTH - 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row_o = blockIdx.y * O_TILE_WIDTH + ty;  // the output pixel of this thread (if it has one)
  int col_o = blockIdx.x * O_TILE_WIDTH + tx;
  int row_i = row_o - Mask_Width / 2;  // the input pixel it loads: shifted up and left by n
  int col_i = col_o - Mask_Width / 2;

  // Every thread loads one element of the input tile; ghost cells load as 0.
  if (row_i >= 0 && row_i < height && col_i >= 0 && col_i < width) {
    N_ds[ty][tx] = N[row_i * width + col_i];
  } else {
    N_ds[ty][tx] = 0.0f;
  }
  __syncthreads();

  // Only the first O_TILE_WIDTH x O_TILE_WIDTH threads compute an output pixel.
  if (ty < O_TILE_WIDTH && tx < O_TILE_WIDTH && row_o < height && col_o < width) {
    float output = 0.0f;
    for (int i = 0; i < Mask_Width; i++)
      for (int j = 0; j < Mask_Width; j++)
        output += M2_c[i * Mask_Width + j] * N_ds[i + ty][j + tx];
    P[row_o * width + col_o] = output;
  }
}

cudaError_t convolution2DTiled(const float* N, const float* h_M, float* P, int Mask_Width,
                               int height, int width) {
  if (!validMask(Mask_Width)) return cudaErrorInvalidValue;
  if (height == 0 || width == 0) return cudaSuccess;
  cudaError_t err = cudaMemcpyToSymbol(M2_c, h_M, Mask_Width * Mask_Width * sizeof(float));
  if (err != cudaSuccess) return err;
  int BLOCK_WIDTH = O_TILE_WIDTH + Mask_Width - 1;  // the input tile: output tile plus halo
  dim3 block(BLOCK_WIDTH, BLOCK_WIDTH);
  dim3 grid((width + O_TILE_WIDTH - 1) / O_TILE_WIDTH, (height + O_TILE_WIDTH - 1) / O_TILE_WIDTH);
  convolution_2D_tiled_kernel<<<grid, block>>>(N, P, Mask_Width, height, width);
  return cudaGetLastError();
}
