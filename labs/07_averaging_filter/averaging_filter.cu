// Lab 07: the averaging filter. Fill in the TODOs; README.md explains each case.
#include "averaging_filter.h"

// One step from `in` into `out`: thread i computes element i.
__global__ void averageStep(const float* in, float* out, int n) {
  // TODO: i = blockIdx.x * blockDim.x + threadIdx.x; the ends (0 and n-1) are copied, every other
  // element of the array gets (in[i-1] + in[i] + in[i+1]) / 3.0f.
}

cudaError_t averageGlobal(float* A, float* B, int n, int iterations) {
  // TODO: for each step, launch averageStep over ceil(n / AVG_BLOCK_SIZE) blocks, from A into B,
  // then swap the roles of A and B; if the last step wrote B, copy B into A (cudaMemcpy,
  // cudaMemcpyDeviceToDevice). No launch for n == 0.
  return cudaErrorNotYetImplemented;
}

__global__ void averageGlobalOneBlockKernel(float* A, int n, int iterations) {
  // TODO: thread i: each step, compute the new value of A[i] into a register (ends unchanged),
  // __syncthreads() (everyone has read), write it, __syncthreads() (everyone has written). Threads
  // past n still reach every barrier.
}

cudaError_t averageGlobalOneBlock(float* A, int n, int iterations) {
  // TODO: refuse n > AVG_MAX_ONE_BLOCK; one block of n threads (none for n == 0).
  return cudaErrorNotYetImplemented;
}

__global__ void averageSharedOneBlockKernel(float* A, int n, int iterations) {
  // TODO: two __shared__ float arrays of AVG_MAX_ONE_BLOCK; copy A into the first; each step goes
  // from one into the other, with a __syncthreads() after it; copy the last one back into A.
}

cudaError_t averageSharedOneBlock(float* A, int n, int iterations) {
  // TODO: as averageGlobalOneBlock.
  return cudaErrorNotYetImplemented;
}

__global__ void averageSharedManyBlocksKernel(const float* in, float* out, int n, int steps) {
  // TODO: the block's own part is AVG_BLOCK_SIZE - 2 * steps elements, starting at
  // blockIdx.x * (AVG_BLOCK_SIZE - 2 * steps); thread t loads element g = start - steps + t into a
  // __shared__ tile (0 where g is outside the array); then `steps` steps in the tile (threads 1 to
  // AVG_BLOCK_SIZE - 2 update interior elements, with barriers as in the one-block case); threads
  // steps .. AVG_BLOCK_SIZE - steps - 1 write their element if g < n.
}

cudaError_t averageSharedManyBlocks(float* A, float* B, int n, int iterations) {
  // TODO: while steps remain: steps = min(remaining, AVG_STEPS_PER_LAUNCH); enough blocks of
  // AVG_BLOCK_SIZE threads for n elements at AVG_BLOCK_SIZE - 2 * steps per block; launch from the
  // current array into the other; swap. Copy into A if the result ended in B.
  return cudaErrorNotYetImplemented;
}
