// Lab 07: the averaging filter, reference solution.
#include "averaging_filter.h"

// The new value of element i of `v` (an array or a shared tile): the ends of the array stay.
__device__ float averaged(const float* v, int i, bool end) {
  return end ? v[i] : (v[i - 1] + v[i] + v[i + 1]) / 3.0f;
}

// Case 5: one step from `in` into `out`. A step needs the neighbours' old values, so every step
// is its own launch: the end of a launch is the only barrier between all blocks.
__global__ void averageStep(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = averaged(in, i, i == 0 || i == n - 1);
}

cudaError_t averageGlobal(float* A, float* B, int n, int iterations) {
  if (n == 0 || iterations == 0) return cudaSuccess;
  int blocks = (n + AVG_BLOCK_SIZE - 1) / AVG_BLOCK_SIZE;
  float *in = A, *out = B;
  for (int step = 0; step < iterations; ++step) {
    averageStep<<<blocks, AVG_BLOCK_SIZE>>>(in, out, n);
    float* t = in;
    in = out;
    out = t;
  }
  if (cudaError_t e = cudaGetLastError()) return e;
  return in == A ? cudaSuccess : cudaMemcpy(A, B, n * sizeof(float), cudaMemcpyDeviceToDevice);
}

// Case 3: one array, one block. Reading and writing the same array is safe only because the whole
// block waits between the reads and the writes of a step.
__global__ void averageGlobalOneBlockKernel(float* A, int n, int iterations) {
  int i = threadIdx.x;
  for (int step = 0; step < iterations; ++step) {
    float v = i < n ? averaged(A, i, i == 0 || i == n - 1) : 0;
    __syncthreads();  // every thread has read its neighbours
    if (i < n) A[i] = v;
    __syncthreads();  // every thread has written
  }
}

cudaError_t averageGlobalOneBlock(float* A, int n, int iterations) {
  if (n > AVG_MAX_ONE_BLOCK) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  averageGlobalOneBlockKernel<<<1, n>>>(A, n, iterations);
  return cudaGetLastError();
}

// Case 10: one block, two shared arrays: global memory is read once and written once.
__global__ void averageSharedOneBlockKernel(float* A, int n, int iterations) {
  __shared__ float Ads[AVG_MAX_ONE_BLOCK];
  __shared__ float Bds[AVG_MAX_ONE_BLOCK];
  int i = threadIdx.x;
  bool end = i == 0 || i == n - 1;
  Ads[i] = A[i];
  __syncthreads();
  float *from = Ads, *to = Bds;
  for (int step = 0; step < iterations; ++step) {
    to[i] = averaged(from, i, end);
    __syncthreads();  // the step is complete before the next one reads it
    float* t = from;
    from = to;
    to = t;
  }
  A[i] = from[i];
}

cudaError_t averageSharedOneBlock(float* A, int n, int iterations) {
  if (n > AVG_MAX_ONE_BLOCK) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  averageSharedOneBlockKernel<<<1, n>>>(A, n, iterations);
  return cudaGetLastError();
}

// Case 14: many blocks, `steps` steps per launch. The block loads `steps` extra elements on each
// side of its own part; after s steps the outer s elements of the tile are stale, so after
// `steps` steps exactly its own part is right. The extra elements are computed twice (by this
// block and its neighbour): the price of skipping steps - 1 launches.
__global__ void averageSharedManyBlocksKernel(const float* in, float* out, int n, int steps) {
  __shared__ float tile[AVG_BLOCK_SIZE];
  int own = AVG_BLOCK_SIZE - 2 * steps;  // elements this block writes
  int t = threadIdx.x;
  int g = blockIdx.x * own - steps + t;  // the element this thread holds
  tile[t] = (g >= 0 && g < n) ? in[g] : 0.0f;
  bool fixed = g <= 0 || g >= n - 1 || t == 0 || t == AVG_BLOCK_SIZE - 1;
  __syncthreads();
  for (int step = 0; step < steps; ++step) {
    float v = averaged(tile, t, fixed);
    __syncthreads();  // everyone has read the old tile
    tile[t] = v;
    __syncthreads();  // everyone has written the new one
  }
  if (t >= steps && t < AVG_BLOCK_SIZE - steps && g < n) out[g] = tile[t];
}

cudaError_t averageSharedManyBlocks(float* A, float* B, int n, int iterations) {
  if (n == 0) return cudaSuccess;
  float *in = A, *out = B;
  for (int done = 0; done < iterations;) {
    int steps = iterations - done < AVG_STEPS_PER_LAUNCH ? iterations - done : AVG_STEPS_PER_LAUNCH;
    int own = AVG_BLOCK_SIZE - 2 * steps;
    averageSharedManyBlocksKernel<<<(n + own - 1) / own, AVG_BLOCK_SIZE>>>(in, out, n, steps);
    done += steps;
    float* t = in;
    in = out;
    out = t;
  }
  if (cudaError_t e = cudaGetLastError()) return e;
  return in == A ? cudaSuccess : cudaMemcpy(A, B, n * sizeof(float), cudaMemcpyDeviceToDevice);
}
