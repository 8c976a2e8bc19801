// Lab 08: shared-memory bank conflicts. Fill in the TODOs; README.md explains the banks.
#include "bank_conflicts.h"

// Where logical word i is stored with one word of padding after every 32.
__device__ int paddedIndex(int i) {
  // TODO: i + i / 32.
  return i;
}

__global__ void stridedCopyKernel(const float* in, float* out, int stride, bool padded) {
  // TODO: a __shared__ float buffer[SHARED_WORDS]; thread t: i = t * stride, the word is i or
  // paddedIndex(i); store in[t] there; __syncthreads(); read it back into out[t].
}

cudaError_t stridedCopy(const float* in, float* out, int stride, bool padded) {
  // TODO: one block of 32 threads; return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

__global__ void permutedCopyKernel(const float* in, float* out, const int* perm) {
  // TODO: a __shared__ float buffer[32]; thread t stores in[t] at word perm[t]; __syncthreads();
  // reads word perm[t] back into out[t].
}

cudaError_t permutedCopy(const float* in, float* out, const int* perm) {
  // TODO: one block of 32 threads; return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

__global__ void broadcastCopyKernel(const float* in, float* out) {
  // TODO: a __shared__ float word; thread 0 stores in[0] there; __syncthreads(); every thread
  // reads it into out[t].
}

cudaError_t broadcastCopy(const float* in, float* out) {
  // TODO: one block of 32 threads; return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

// PAD is 0 or 1: the tile's rows are TILE_DIM + PAD words long.
template <int PAD>
__global__ void transposeKernel(const float* in, float* out, int rows, int cols) {
  // TODO:
  // - __shared__ float tile[TILE_DIM][TILE_DIM + PAD];
  // - read: the block's tile starts at row blockIdx.y * TILE_DIM, column blockIdx.x * TILE_DIM of
  //   `in`; thread (tx, ty) reads in[(row0 + ty) * cols + col0 + tx] into tile[ty][tx] (if inside);
  // - __syncthreads();
  // - write: the same tile of `out` starts at row col0, column row0; thread (tx, ty) writes
  //   tile[tx][ty] to out[(col0 + ty) * rows + row0 + tx] (if inside). Neighbouring threads (tx)
  //   write neighbouring words of out (coalesced) and read a column of the tile.
}

template <int PAD>
cudaError_t transpose(const float* in, float* out, int rows, int cols) {
  // TODO: blocks of TILE_DIM x TILE_DIM threads, a grid of ceil(cols / TILE_DIM) x
  // ceil(rows / TILE_DIM) (no launch if either is 0); launch transposeKernel<PAD>.
  return cudaErrorNotYetImplemented;
}

// The functions the tests call: nothing to do here.
cudaError_t transposeUnpadded(const float* in, float* out, int rows, int cols) {
  return transpose<0>(in, out, rows, cols);
}
cudaError_t transposePadded(const float* in, float* out, int rows, int cols) {
  return transpose<1>(in, out, rows, cols);
}
