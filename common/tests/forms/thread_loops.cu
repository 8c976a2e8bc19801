// Kernels whose threads the emu runs as loops between their waits when unchecked
// (thread_loops.py): threads that return after the last barrier, variables that live across
// barriers (a scalar, an array, a reference, a struct), a barrier in a loop, in an `if` and in a
// do-while whose heads are the block's, nested loops that wait, a `const` of the block's values
// used as an array's size, a 2D block, a template kernel, a variable changed in one stretch and
// read in the next, the four warp shuffles at a kernel's own level (in a loop, in a declaration,
// with a width), a tree reduction's `if (x < s)` in each row of a 2D block, and a whole warp that
// returns before the others' shuffles.
//
// expect: early return: 2016 64 1891 62
// expect: kept: 3 8 13 18 | 7 7 | 10 11
// expect: heads: 144 96 3
// expect: nested: 3 0 1 2
// expect: 2D: 120 376 632 888
// expect: row sums: 28 92 156 220
// expect: template: 15 1
// expect: shuffles: 496 1520 | 496 1520 | 0 0 1 32 | 1 0 3 32
// expect: a warp returns: 496 -1
#include <cuda_runtime.h>

#include <cstdio>

constexpr int THREADS = 64;

// Sums the block's first n elements and counts the threads that go on; the threads past n return
// after the last barrier, before a __shared__ declaration that the block makes once.
__global__ void sum_of_first(const int* in, int* out, int* going_on, int n) {
  __shared__ int partial[THREADS];
  const int t = threadIdx.x;
  partial[t] = t < n ? in[t] : 0;
  __syncthreads();
  if (t >= n) return;
  __shared__ int unused[1];
  atomicAdd(going_on, 1);
  if (t == 0) {
    int sum = 0;
    for (int k = 0; k < n; ++k) sum += partial[k];
    out[0] = sum;
  }
}

struct Pair {
  int a, b;
};

__global__ void kept(int* out) {
  __shared__ int s[THREADS];
  int t = threadIdx.x;
  int acc[2] = {t, 2 * t};
  Pair p{t, 7};
  int& mine = s[t];
  mine = t + 1;
  __syncthreads();
  acc[0] += s[(t + 1) % THREADS];  // the next thread's, written before the barrier
  p.a += 1;
  __syncthreads();
  mine = acc[0] + acc[1] + p.a;
  if (t < 4) out[t] = mine;
  if (t == 0) out[4] = p.b, out[5] = sizeof acc / sizeof acc[0] + 5;
  if (t == 1) out[6] = 10, out[7] = p.a + 9;
}

__global__ void heads(int* out, int rounds) {
  __shared__ int s[THREADS];
  const int t = threadIdx.x;
  s[t] = 1;
  __syncthreads();
  if (blockDim.x == THREADS) {
    s[t] += 1;
    __syncthreads();
  } else {
    __syncthreads();
  }
  do {
    if (t == 0) s[0] += 16;
    __syncthreads();
  } while (rounds < 0);
  int done = 0;
  for (int r = 0; r < rounds; ++r) {
    if (t == r) done = r + 1;
    __syncthreads();
  }
  if (t == 0) {
    int sum = 0;
    for (int i = 0; i < THREADS; ++i) sum += s[i];
    out[0] = sum;
    out[1] = s[0] + 78;
  }
  if (t == 2) out[2] = done;
}

__global__ void nested(int* out) {
  __shared__ int s[4];
  const int width = 4;
  int order[width];
  const int t = threadIdx.x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      if (t == 0) s[i * 2 + j] = 3 - (i * 2 + j);
      __syncthreads();
      order[i * 2 + j] = s[i * 2 + j];
      __syncthreads();
    }
  if (t == 3) {
    for (int k = 0; k < width; ++k) out[k] = order[k] == 3 - k ? (k == 0 ? 3 : k - 1) : -1;
  }
}

__global__ void two_d(int* out) {
  __shared__ int tile[4][16];
  const int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = y * 16 + x;
  __syncthreads();
  if (x == 0) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += tile[y][i];
    out[y] = sum;
  }
}

template <int N>
__global__ void template_sum(int* out) {
  __shared__ int s[N];
  const int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  if (t == 0) {
    int sum = 0;
    for (int i = 0; i < N; ++i) sum += s[i];
    out[0] = sum;
    out[1] = N == 6;
  }
}

__global__ void warp_sums(const int* in, int* out) {
  const int t = threadIdx.x;
  int v = in[t];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  const int first = __shfl_sync(0xffffffff, v, 0);
  int up = __shfl_up_sync(0xffffffff, t, 1);
  int across = __shfl_xor_sync(0xffffffff, t, 1, 16);
  if (t % 32 == 0) out[t / 32] = v;
  if (t % 32 == 0) out[2 + t / 32] = first;
  if (t < 3) out[4 + t] = up, out[8 + t] = across;
  if (t == 32) out[7] = up;
  if (t == 33) out[11] = across;
}

// A tree reduction over each row of a 2D block: each step's stretch is `if (x < s)`, which holds
// for the first s threads of every row (the emu visits only those), and so is the last's.
__global__ void row_sums(const int* in, int* out) {
  __shared__ int row[4][8];
  const int x = threadIdx.x;
  row[threadIdx.y][x] = in[threadIdx.y * 8 + x];
  __syncthreads();
  for (int s = 4; s > 0; s >>= 1) {
    if (x < s) row[threadIdx.y][x] += row[threadIdx.y][x + s];
    __syncthreads();
  }
  if (threadIdx.x < 1u) out[threadIdx.y] = row[threadIdx.y][0];
}

// Warp 1 returns; warp 0 sums its lanes by shuffles (its lanes all reach them).
__global__ void first_warp_sums(const int* in, int* out) {
  if (threadIdx.x >= 32) return;
  int v = in[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x == 0) out[0] = v;
}

int main() {
  int h[THREADS];
  for (int i = 0; i < THREADS; ++i) h[i] = i;
  int *in, *out;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&out, 8 * sizeof(int));
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  int r[8];

  cudaMemset(out, 0, 8 * sizeof(int));
  sum_of_first<<<1, THREADS>>>(in, out, out + 1, THREADS);
  sum_of_first<<<1, THREADS>>>(in, out + 2, out + 3, 62);
  cudaMemcpy(r, out, 4 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("early return: %d %d %d %d\n", r[0], r[1], r[2], r[3]);

  kept<<<1, THREADS>>>(out);
  cudaMemcpy(r, out, 8 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("kept: %d %d %d %d | %d %d | %d %d\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);

  heads<<<1, THREADS>>>(out, 3);
  cudaMemcpy(r, out, 3 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("heads: %d %d %d\n", r[0], r[1], r[2]);

  nested<<<1, 8>>>(out);
  cudaMemcpy(r, out, 4 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("nested: %d %d %d %d\n", r[0], r[1], r[2], r[3]);

  two_d<<<1, dim3(16, 4)>>>(out);
  cudaMemcpy(r, out, 4 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("2D: %d %d %d %d\n", r[0], r[1], r[2], r[3]);

  row_sums<<<1, dim3(8, 4)>>>(in, out);
  cudaMemcpy(r, out, 4 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("row sums: %d %d %d %d\n", r[0], r[1], r[2], r[3]);

  template_sum<6><<<1, 6>>>(out);
  cudaMemcpy(r, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("template: %d %d\n", r[0], r[1]);

  int* wide;
  cudaMalloc(&wide, 12 * sizeof(int));
  warp_sums<<<1, THREADS>>>(in, wide);
  int w[12];
  cudaMemcpy(w, wide, sizeof w, cudaMemcpyDeviceToHost);
  printf("shuffles: %d %d | %d %d | %d %d %d %d | %d %d %d %d\n", w[0], w[1], w[2], w[3], w[4],
         w[5], w[6], w[7], w[8], w[9], w[10], w[11]);
  cudaMemset(wide, 0xff, 2 * sizeof(int));
  first_warp_sums<<<1, THREADS>>>(in, wide);
  cudaMemcpy(w, wide, 2 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("a warp returns: %d %d\n", w[0], w[1]);
  cudaFree(wide);

  cudaFree(in);
  cudaFree(out);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
