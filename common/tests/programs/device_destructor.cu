// A kernel with a local object whose destructor runs on the device (a scope that counts the threads
// leaving it), and a barrier. Built with -DPAST_THE_END, one thread writes past the array's end:
// the check stops that thread while the others wait at the barrier. A GPU that stops a kernel runs
// no destructors; emu neither, and it names the line instead of ending the program.
#include <cstdio>

struct CountOnExit {
  int* leaving;
  __device__ ~CountOnExit() { atomicAdd(leaving, 1); }
};

__global__ void fill(int* out, int n, int* leaving) {
  CountOnExit scope{leaving};
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef PAST_THE_END
  if (threadIdx.x == 5) i += n;  // the planted bug
#endif
  if (i < 2 * n) out[i] = i;
  __syncthreads();
}

int main() {
  const int n = 64;
  int *out, *leaving;
  cudaMalloc(&out, n * sizeof(int));
  cudaMalloc(&leaving, sizeof(int));
  cudaMemset(leaving, 0, sizeof(int));
  fill<<<1, n>>>(out, n, leaving);
  cudaError_t status = cudaDeviceSynchronize();
  int left = 0;
  cudaMemcpy(&left, leaving, sizeof(int), cudaMemcpyDeviceToHost);
  printf("%s; %d of %d threads left the scope\n", cudaGetErrorString(status), left, n);
  return status != cudaSuccess;
}
