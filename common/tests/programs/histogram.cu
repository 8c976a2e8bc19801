// A histogram of n bytes into BINS bins, as PMPP builds it: each block counts its bytes in shared
// memory (atomics there), then adds its counts to the global bins (atomics there). A program for
// `cudalab run --report`'s test: its page shows each barrier's passes and each atomic's operations.
#include <cstdio>
#include <vector>

constexpr int BINS = 8;

__global__ void histogram(const unsigned char* in, int n, unsigned* bins) {
  __shared__ unsigned local[BINS];
  if (threadIdx.x < BINS) local[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&local[in[i] % BINS], 1u);
  __syncthreads();
  if (threadIdx.x < BINS) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);  // ends the kernel
}

int main() {
  const int n = 1000, threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<unsigned char> h_in(n);
  std::vector<unsigned> expected(BINS, 0), h_bins(BINS);
  for (int i = 0; i < n; ++i) {
    h_in[i] = static_cast<unsigned char>(i * 7);
    ++expected[h_in[i] % BINS];
  }
  unsigned char* in;
  unsigned* bins;
  cudaMalloc(&in, n);
  cudaMalloc(&bins, BINS * sizeof(unsigned));
  cudaMemcpy(in, h_in.data(), n, cudaMemcpyHostToDevice);
  cudaMemset(bins, 0, BINS * sizeof(unsigned));
  histogram<<<blocks, threads>>>(in, n, bins);
  cudaMemcpy(h_bins.data(), bins, BINS * sizeof(unsigned), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int b = 0; b < BINS; ++b) wrong += h_bins[b] != expected[b];
  std::printf("%d of %d bins wrong\n", wrong, BINS);
  cudaFree(in);
  cudaFree(bins);
  return wrong == 0 ? 0 : 1;
}
