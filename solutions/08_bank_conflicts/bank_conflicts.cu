// Lab 08: shared-memory bank conflicts, reference solution.
#include "bank_conflicts.h"

// One word of padding after every 32: rows of a [32][32] layout start one bank later each.
__device__ int paddedIndex(int i) { return i + i / 32; }

// Thread t uses word t * stride: with stride s, gcd(s, 32) threads share each bank used, so the
// access takes gcd(s, 32) passes. With padding, the words of a column fall in 32 different banks.
__global__ void stridedCopyKernel(const float* in, float* out, int stride, bool padded) {
  __shared__ float buffer[SHARED_WORDS];
  int t = threadIdx.x;
  int word = padded ? paddedIndex(t * stride) : t * stride;
  buffer[word] = in[t];
  __syncthreads();
  out[t] = buffer[word];
}

cudaError_t stridedCopy(const float* in, float* out, int stride, bool padded) {
  stridedCopyKernel<<<1, 32>>>(in, out, stride, padded);
  return cudaGetLastError();
}

// A permutation of one row's 32 words puts one thread in each bank: conflict-free in any order.
__global__ void permutedCopyKernel(const float* in, float* out, const int* perm) {
  __shared__ float buffer[32];
  int t = threadIdx.x;
  buffer[perm[t]] = in[t];
  __syncthreads();
  out[t] = buffer[perm[t]];
}

cudaError_t permutedCopy(const float* in, float* out, const int* perm) {
  permutedCopyKernel<<<1, 32>>>(in, out, perm);
  return cudaGetLastError();
}

// 32 threads reading one word: one pass (a broadcast), not 32.
__global__ void broadcastCopyKernel(const float* in, float* out) {
  __shared__ float word;
  if (threadIdx.x == 0) word = in[0];
  __syncthreads();
  out[threadIdx.x] = word;
}

cudaError_t broadcastCopy(const float* in, float* out) {
  broadcastCopyKernel<<<1, 32>>>(in, out);
  return cudaGetLastError();
}

// The tile turns the transpose's strided global accesses into strided shared ones. Writing
// tile[ty][tx] is a row (conflict-free); reading tile[tx][ty] is a column: words TILE_DIM + PAD
// apart, all in one bank when PAD is 0 (32-way), in 32 banks when PAD is 1.
template <int PAD>
__global__ void transposeKernel(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + PAD];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row0 = blockIdx.y * TILE_DIM, col0 = blockIdx.x * TILE_DIM;
  if (row0 + ty < rows && col0 + tx < cols) tile[ty][tx] = in[(row0 + ty) * cols + col0 + tx];
  __syncthreads();
  if (col0 + ty < cols && row0 + tx < rows) out[(col0 + ty) * rows + row0 + tx] = tile[tx][ty];
}

template <int PAD>
cudaError_t transpose(const float* in, float* out, int rows, int cols) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  dim3 block(TILE_DIM, TILE_DIM);
  dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transposeKernel<PAD><<<grid, block>>>(in, out, rows, cols);
  return cudaGetLastError();
}

cudaError_t transposeUnpadded(const float* in, float* out, int rows, int cols) {
  return transpose<0>(in, out, rows, cols);
}
cudaError_t transposePadded(const float* in, float* out, int rows, int cols) {
  return transpose<1>(in, out, rows, cols);
}
