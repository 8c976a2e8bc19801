// Kernels that wait: a block reduction with a barrier per step, the barrier's counting forms,
// warp shuffles, votes, matches and reductions, __syncwarp, a __device__ function that waits, a
// template kernel with an explicit specialisation, a struct made in a kernel that waits, a kernel
// defined by a macro, a launch before the kernel's definition, and cooperative groups (the block's
// group, a tile of a warp with its shuffles and cg::reduce, a thread_group of 16 threads).
// expect: block sum: 2016 2016
// expect: barrier counts: 32 0 1
// expect: shuffles: 496 31 30 5
// expect: votes: ffffffff 1 0 aaaaaaaa
// expect: match and reduce: 55555555 496
// expect: device function: 120
// expect: specialisations: 28 56
// expect: struct: 36
// expect: macro kernel: 28
// expect: defined later: 120
// expect: groups: 496 496 120 8
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <cstdio>

namespace cg = cooperative_groups;

constexpr int THREADS = 64;

__global__ void block_sum(const int* in, int* out) {
  __shared__ int partial[THREADS];
  const int t = threadIdx.x;
  partial[t] = in[blockIdx.x * THREADS + t];
  __syncthreads();
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

__global__ void barrier_counts(int* out) {
  const int t = threadIdx.x;
  const int count = __syncthreads_count(t < 32);
  const int all = __syncthreads_and(t < 32);
  const int any = __syncthreads_or(t == 5);
  if (t == 0) out[0] = count, out[1] = all, out[2] = any;
}

__global__ void shuffles(int* out) {
  int v = threadIdx.x;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  int x = threadIdx.x;
  x = __shfl_xor_sync(0xffffffffu, x, 31);
  const int up = __shfl_up_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
  const int from5 = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x), 5);
  __syncwarp();
  if (threadIdx.x == 0) out[0] = v, out[1] = x;
  if (threadIdx.x == 31) out[2] = up, out[3] = from5;
}

__global__ void votes(unsigned* out) {
  const unsigned everyone = __ballot_sync(0xffffffffu, 1);
  const int any = __any_sync(0xffffffffu, threadIdx.x == 7);
  const int all = __all_sync(0xffffffffu, threadIdx.x < 31);
  const unsigned odd = __ballot_sync(0xffffffffu, threadIdx.x % 2);
  if (threadIdx.x == 0) out[0] = everyone, out[1] = any, out[2] = all, out[3] = odd;
}

__global__ void match_and_reduce(unsigned* out) {
  const unsigned same = __match_any_sync(0xffffffffu, threadIdx.x % 2);
  const unsigned sum = __reduce_add_sync(0xffffffffu, threadIdx.x);
  if (threadIdx.x == 0) out[0] = same, out[1] = sum;
}

// Waits inside: called from a kernel (its block's 16 threads add 0..15).
__device__ int block_total(int value) {
  __shared__ int total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  atomicAdd(&total, value);
  __syncthreads();
  return total;
}
__global__ void through_a_function(int* out) {
  const int total = block_total(static_cast<int>(threadIdx.x));
  if (threadIdx.x == 0) *out = total;
}

template <class T>
__global__ void sum_of_ranks(T* out) {
  __shared__ T ranks[8];
  ranks[threadIdx.x] = static_cast<T>(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    T s = 0;
    for (int i = 0; i < 8; ++i) s += ranks[i];
    *out = s;
  }
}
template <>
__global__ void sum_of_ranks<long long>(long long* out) {
  __shared__ long long ranks[8];
  ranks[threadIdx.x] = 2 * threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long s = 0;
    for (int i = 0; i < 8; ++i) s += ranks[i];
    *out = s;
  }
}

// The CUDA samples' SharedMemory<T>: a struct whose conversion gives the dynamic array.
template <class T>
struct SharedMemory {
  __device__ operator T*() {
    extern __shared__ int memory[];
    return reinterpret_cast<T*>(memory);
  }
};
__global__ void with_a_struct(int* out) {
  int* s = SharedMemory<int>();
  s[threadIdx.x] = threadIdx.x + 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
    for (int i = 0; i < 8; ++i) total += s[i];
    *out = total;
  }
}

#define RANK_SUM_KERNEL(name, n)                 \
  __global__ void name(int* out) {               \
    __shared__ int ranks[n];                     \
    ranks[threadIdx.x] = threadIdx.x;            \
    __syncthreads();                             \
    if (threadIdx.x == 0) {                      \
      int s = 0;                                 \
      for (int i = 0; i < n; ++i) s += ranks[i]; \
      *out = s;                                  \
    }                                            \
  }
RANK_SUM_KERNEL(from_a_macro, 8)

__global__ void defined_later(int* out);

__global__ void groups(int* out) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ int total;
  if (block.thread_rank() == 0) total = 0;
  block.sync();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int v = static_cast<int>(warp.thread_rank());
  for (int offset = 16; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  const int reduced = cg::reduce(warp, static_cast<int>(warp.thread_rank()), cg::plus<int>());
  if (warp.thread_rank() == 0) atomicAdd(&total, 1);
  cg::sync(block);
  cg::thread_group sixteen = cg::tiled_partition(block, 16);
  __shared__ int halves[THREADS];
  halves[threadIdx.x] = static_cast<int>(sixteen.thread_rank());
  sixteen.sync();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += halves[i];
    out[0] = v, out[1] = reduced, out[2] = s;
  }
  block.sync();
  if (threadIdx.x == 0) out[3] = total * 4;
}

int main() {
  int* in = nullptr;
  int* out = nullptr;
  unsigned* u = nullptr;
  cudaMallocManaged(&in, 2 * THREADS * sizeof(int));
  cudaMallocManaged(&out, 8 * sizeof(int));
  cudaMallocManaged(&u, 4 * sizeof(unsigned));
  for (int i = 0; i < 2 * THREADS; ++i) in[i] = i % THREADS;
  block_sum<<<2, THREADS>>>(in, out);
  cudaDeviceSynchronize();
  std::printf("block sum: %d %d\n", out[0], out[1]);

  barrier_counts<<<1, THREADS>>>(out);
  cudaDeviceSynchronize();
  std::printf("barrier counts: %d %d %d\n", out[0], out[1], out[2]);

  shuffles<<<1, 32>>>(out);
  cudaDeviceSynchronize();
  std::printf("shuffles: %d %d %d %d\n", out[0], out[1], out[2], out[3]);

  votes<<<1, 32>>>(u);
  cudaDeviceSynchronize();
  std::printf("votes: %x %u %u %x\n", u[0], u[1], u[2], u[3]);

  match_and_reduce<<<1, 32>>>(u);
  cudaDeviceSynchronize();
  std::printf("match and reduce: %x %u\n", u[0], u[1]);

  through_a_function<<<1, 16>>>(out);
  cudaDeviceSynchronize();
  std::printf("device function: %d\n", out[0]);

  long long* wide = nullptr;
  cudaMallocManaged(&wide, sizeof(long long));
  sum_of_ranks<int><<<1, 8>>>(out);
  sum_of_ranks<long long><<<1, 8>>>(wide);
  cudaDeviceSynchronize();
  std::printf("specialisations: %d %lld\n", out[0], *wide);

  with_a_struct<<<1, 8, 8 * sizeof(int)>>>(out);
  cudaDeviceSynchronize();
  std::printf("struct: %d\n", out[0]);

  from_a_macro<<<1, 8>>>(out);
  cudaDeviceSynchronize();
  std::printf("macro kernel: %d\n", out[0]);

  defined_later<<<1, 16>>>(out);
  cudaDeviceSynchronize();
  std::printf("defined later: %d\n", out[0]);

  groups<<<1, THREADS>>>(out);
  cudaDeviceSynchronize();
  std::printf("groups: %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  cudaFree(wide);
  cudaFree(u);
  cudaFree(out);
  cudaFree(in);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

__global__ void defined_later(int* out) {
  __shared__ int ranks[16];
  ranks[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += ranks[i];
    *out = s;
  }
}
