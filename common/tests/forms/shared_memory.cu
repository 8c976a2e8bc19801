// __shared__ forms: the dynamic array declared in a kernel (aligned, with the qualifier after the
// type, as rows of a 2D array, at file scope, inside a macro's body), several arrays in one
// declaration of a template kernel, a static volatile variable declared across lines, an array
// of a template's type, an explicitly aligned array, file-scope variables (each block's own), a
// union that its declaration defines (CUB's `__shared__ union TempStorage {...} temp;`) and the
// dynamic array reinterpreted as an object (`reinterpret_cast<T&>(smem)`), and a class template
// whose static member function keeps an object of its own class in shared memory and calls its
// member template (Rodinia's dwt2d: `__shared__ FDWT53<X, Y> fdwt53; fdwt53.transform<true>(...)`).
// expect: reversed: 7 6 5 4 3 2 1 0
// expect: rows: 0 17 34 51
// expect: file scope dynamic: 3 2 1 0
// expect: macro: 10 11 12 13
// expect: double after type: 1.5 2.5
// expect: two arrays: 12 12 12 12
// expect: volatile count: 4
// expect: pairs: 3 4.5
// expect: aligned: 30
// expect: per block: 6 66 126
// expect: defined in the declaration: 9 6 3 0
// expect: reinterpreted: 104 103 102 101
// expect: own class: 3 4 5 6
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>

#define CHUNK 4
#define K 2

__global__ void reverse(int* data, int n) {
  extern __shared__ __align__(16) float tile[];
  int i = threadIdx.x;
  tile[i] = static_cast<float>(data[i]);
  __syncthreads();
  data[i] = static_cast<int>(tile[n - 1 - i]);
}

// Each thread a row of CHUNK * K + 8 halves: its row number times 17 in its first column.
__global__ void rows(int* out) {
  extern __shared__ half shmem[][CHUNK * K + 8];
  int r = threadIdx.x;
  for (int c = 0; c < CHUNK * K + 8; ++c) shmem[r][c] = __int2half_rn(r * 17 + c);
  __syncthreads();
  out[r] = __half2int_rn(shmem[r][0]);
}

extern __shared__ int everywhere[];
__global__ void reverse_through_file_scope(int* data) {
  everywhere[threadIdx.x] = data[threadIdx.x];
  __syncthreads();
  data[threadIdx.x] = everywhere[blockDim.x - 1 - threadIdx.x];
}

// The CUDA samples' way to reach the dynamic array of a type.
#define SHARED_ARRAY(t, n)                \
  __device__ t* n##_start() {             \
    extern __shared__ __align__(8) t n[]; \
    return n;                             \
  }
SHARED_ARRAY(int, ints)

__global__ void through_a_macro(int* out) {
  int* s = ints_start();
  s[threadIdx.x] = 10 + threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}

__global__ void doubles(double* out) {
  extern double __shared__ sdata[];
  sdata[threadIdx.x] = threadIdx.x + 1.5;
  __syncthreads();
  out[threadIdx.x] = sdata[threadIdx.x];
}

template <int T>
__global__ void two_arrays(int* out) {
  __shared__ float As[T][T], Bs[T][T];
  As[threadIdx.y][threadIdx.x] = 5;
  Bs[threadIdx.y][threadIdx.x] = 7;
  __syncthreads();
  out[threadIdx.y * T + threadIdx.x] =
      static_cast<int>(As[threadIdx.y][threadIdx.x] + Bs[threadIdx.x][threadIdx.y]);
}

__global__ void volatile_count(int* out) {
  // a comment; with a semicolon
  static __shared__ volatile int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  atomicAdd(const_cast<int*>(&count), 1);
  __syncthreads();
  if (threadIdx.x == 0) *out = count;
}

template <class A, class B>
struct Pair {
  A a;
  B b;
};
__global__ void pairs(float* out) {
  __shared__ Pair<int, float> p[2];
  if (threadIdx.x < 2) p[threadIdx.x] = {static_cast<int>(threadIdx.x) + 3, threadIdx.x + 3.5f};
  __syncthreads();
  if (threadIdx.x == 0) {
    out[0] = static_cast<float>(p[0].a);
    out[1] = p[1].b;
  }
}

__global__ void aligned(int* out) {
  __shared__ alignas(alignof(float4)) float As[2][16];
  As[threadIdx.x / 16][threadIdx.x % 16] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0;
    for (int i = 0; i < 30; ++i) sum += As[i / 16][i % 16];
    *out = static_cast<int>(sum);
  }
}

__shared__ int block_total, last[2];
__global__ void per_block(int* totals) {
  if (threadIdx.x == 0) block_total = 0;
  if (threadIdx.x < 2) last[threadIdx.x] = static_cast<int>(blockIdx.x);
  __syncthreads();
  atomicAdd(&block_total, static_cast<int>(blockIdx.x * 16 + threadIdx.x));
  __syncthreads();
  if (threadIdx.x == 0) totals[blockIdx.x] = block_total - 4 * last[1];
}

template <int N>
__global__ void defined_in_declaration(int* out) {
  __shared__ union Storage {
    int ints[N];
    float floats[N];
  } storage;
  storage.ints[threadIdx.x] = static_cast<int>(threadIdx.x) * 3;
  __syncthreads();
  out[threadIdx.x] = storage.ints[N - 1 - threadIdx.x];
}

struct Quad {
  int v[4];
};
__global__ void reinterpreted(int* out) {
  extern __shared__ __align__(alignof(Quad)) char bytes[];
  auto& quad = reinterpret_cast<Quad&>(bytes);
  quad.v[threadIdx.x] = 100 + static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = reinterpret_cast<int*>(bytes)[3 - threadIdx.x] + 1;
}

template <int N>
class Window {
  int values[N];

 public:
  template <bool SHIFTED>
  __device__ void fill(int* out) {
    values[threadIdx.x] = threadIdx.x + (SHIFTED ? N - 1 : 0);
    __syncthreads();
    out[threadIdx.x] = values[threadIdx.x];
  }
  __device__ static void run(int* out) {
    __shared__ Window<N> window;
    window.fill<true>(out);
  }
};

__global__ void own_class(int* out) { Window<4>::run(out); }

int main() {
  int* ints = nullptr;
  cudaMallocManaged(&ints, 16 * sizeof(int));
  for (int i = 0; i < 8; ++i) ints[i] = i;
  reverse<<<1, 8, 8 * sizeof(float)>>>(ints, 8);
  cudaDeviceSynchronize();
  std::printf("reversed:");
  for (int i = 0; i < 8; ++i) std::printf(" %d", ints[i]);
  std::printf("\n");

  rows<<<1, 4, 4 * (CHUNK * K + 8) * sizeof(half)>>>(ints);
  cudaDeviceSynchronize();
  std::printf("rows: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);

  for (int i = 0; i < 4; ++i) ints[i] = i;
  reverse_through_file_scope<<<1, 4, 4 * sizeof(int)>>>(ints);
  cudaDeviceSynchronize();
  std::printf("file scope dynamic: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);

  through_a_macro<<<1, 4, 4 * sizeof(int)>>>(ints);
  cudaDeviceSynchronize();
  std::printf("macro: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);

  double* ds = nullptr;
  cudaMallocManaged(&ds, 2 * sizeof(double));
  doubles<<<1, 2, 2 * sizeof(double)>>>(ds);
  cudaDeviceSynchronize();
  std::printf("double after type: %.1f %.1f\n", ds[0], ds[1]);

  two_arrays<2><<<1, dim3(2, 2)>>>(ints);
  cudaDeviceSynchronize();
  std::printf("two arrays: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);

  volatile_count<<<1, 4>>>(ints);
  cudaDeviceSynchronize();
  std::printf("volatile count: %d\n", ints[0]);

  float* fs = nullptr;
  cudaMallocManaged(&fs, 2 * sizeof(float));
  pairs<<<1, 4>>>(fs);
  cudaDeviceSynchronize();
  std::printf("pairs: %g %g\n", fs[0], fs[1]);

  aligned<<<1, 32>>>(ints);
  cudaDeviceSynchronize();
  std::printf("aligned: %d\n", ints[0]);

  per_block<<<3, 4>>>(ints);
  cudaDeviceSynchronize();
  std::printf("per block: %d %d %d\n", ints[0], ints[1], ints[2]);

  defined_in_declaration<4><<<1, 4>>>(ints);
  cudaDeviceSynchronize();
  std::printf("defined in the declaration: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);

  reinterpreted<<<1, 4, sizeof(Quad)>>>(ints);
  cudaDeviceSynchronize();
  std::printf("reinterpreted: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);

  own_class<<<1, 4>>>(ints);
  cudaDeviceSynchronize();
  std::printf("own class: %d %d %d %d\n", ints[0], ints[1], ints[2], ints[3]);
  cudaFree(fs);
  cudaFree(ds);
  cudaFree(ints);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
