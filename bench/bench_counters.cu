// The memory counters against a GPU's: the same launches on both backends, counted by the emu
// (CUDALAB_REPORT=1) and by Nsight Compute on a GPU (ncu), then compared by counters_vs_gpu.py.
// Each launch is a kernel of its own name (a template per case), so that both tools report it
// apart: a coalesced copy, a row per thread (uncoalesced), the textbook matrix products, and
// shared-memory reads at strides 1 to 33 (bank conflicts of degree gcd(stride, 32)).
#include <cstdio>
#include <vector>

#include "cudalab/cuda_check.h"
#include "cudalab/device_array.h"

namespace {

#include "cudalab/textbook_kernels.cuh"  // copyCoalesced, rowSums, naiveMatMul, tiledMatMul

constexpr int kWidth = 256;  // matrices are kWidth x kWidth floats

// One warp per block writes its lane into shared word lane * STRIDE and reads it back.
template <int STRIDE>
__global__ void sharedStride(float* out) {
  __shared__ float words[32 * 33];
  words[threadIdx.x * STRIDE] = float(threadIdx.x);
  __syncwarp();
  out[blockIdx.x * 32 + threadIdx.x] = words[threadIdx.x * STRIDE];
}

}  // namespace

int main() {
  using cudalab::DeviceArray;
  const int n = kWidth * kWidth;
  DeviceArray<float> a(std::vector<float>(n, 1.0f)), b(std::vector<float>(n, 2.0f)),
      c(std::vector<float>(n, 0.0f));
  copyCoalesced<<<n / 256, 256>>>(a.get(), c.get(), n);
  rowSums<<<kWidth / 128, 128>>>(a.get(), c.get(), kWidth, kWidth);
  const dim3 block(16, 16), grid(kWidth / 16, kWidth / 16);
  naiveMatMul<<<grid, block>>>(a.get(), b.get(), c.get(), kWidth);
  tiledMatMul<16><<<grid, block>>>(a.get(), b.get(), c.get(), kWidth);
  sharedStride<1><<<64, 32>>>(c.get());  // each launch written out: its name says its stride
  sharedStride<2><<<64, 32>>>(c.get());
  sharedStride<4><<<64, 32>>>(c.get());
  sharedStride<8><<<64, 32>>>(c.get());
  sharedStride<16><<<64, 32>>>(c.get());
  sharedStride<32><<<64, 32>>>(c.get());
  sharedStride<33><<<64, 32>>>(c.get());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("bench_counters: 11 launches\n");
  return 0;
}
