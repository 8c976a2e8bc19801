// A kernel's parameter of a class whose copies run code (a copy constructor and a destructor that
// count): the launch copies the argument once, on the host, and each thread gets the bytes of that
// copy; no constructor or destructor runs on the device, and a thread that changes its parameter
// changes its own copy. cudaLaunchKernel copies the bytes its pointers point at (no constructor).
// The kernels: one declared before its definition, one with a barrier, one that changes its
// parameter, and one launched by address.
// expect: by value: 1 copies, 1 destroyed, 7 7 7 7 7 7 7 7
// expect: with a barrier: 1 copies, 1 destroyed, 8 8 8 8 8 8 8 8
// expect: changed per thread: 1 copies, 1 destroyed, 7 8 9 10 7 8 9 10
// expect: by address: 0 copies, 0 destroyed, 7 7 7 7 7 7 7 7
#include <cuda_runtime.h>

#include <cstdio>

__managed__ int copies = 0, destroyed = 0;

__host__ __device__ void count(int* counter) {
#ifdef __CUDA_ARCH__
  atomicAdd(counter, 1);
#else
  ++*counter;
#endif
}

struct Counted {
  int value;
  __host__ __device__ Counted(int v) : value(v) {}
  __host__ __device__ Counted(const Counted& other) : value(other.value) { count(&copies); }
  __host__ __device__ ~Counted() { count(&destroyed); }
};

__global__ void read(Counted c, int* out);

__global__ void read(Counted c, int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = c.value; }

__global__ void read_after_barrier(const Counted c, int* out) {
  __shared__ int first[4];
  first[threadIdx.x] = c.value + 1;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = first[(threadIdx.x + 1) % 4];
}

__global__ void change(Counted c, int* out) {
  c.value += threadIdx.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = c.value;
}

void print(const char* what, const int* out) {
  cudaDeviceSynchronize();
  printf("%s: %d copies, %d destroyed,", what, copies, destroyed);
  for (int i = 0; i < 8; ++i) printf(" %d", out[i]);
  printf("\n");
  copies = destroyed = 0;
}

int main() {
  int* out = nullptr;
  cudaMallocManaged(&out, 8 * sizeof(int));
  {
    Counted c(7);
    read<<<2, 4>>>(c, out);
    print("by value", out);
    read_after_barrier<<<2, 4>>>(c, out);
    print("with a barrier", out);
    change<<<2, 4>>>(c, out);
    print("changed per thread", out);
    void* args[] = {&c, &out};
    cudaLaunchKernel((const void*)read, dim3(2), dim3(4), args, 0, nullptr);
    print("by address", out);
  }
  cudaFree(out);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
