// The textbook's kernels (PMPP's names), written once for the tests and benchmarks that need a
// known kernel beside the one under study: the emu counters' test, make bench's lab table, the
// foundation benchmark and the counters' comparison with a GPU (bench_counters). A lab's harness
// keeps its own kernels: the remote runner serves only the kernels written in the harness itself.
//
// The file has no namespace of its own: its kernels join the includer's. The foundation benchmark
// compiles them twice on emu (checked and as plain C++, bench/foundation_kernels.cuh), each time
// in its own namespace; one namespace for both would give two different kernels one name.

// C = A + B, one thread per element.
__global__ void vectorAdd(const float* A, const float* B, float* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}

// out = in, one thread per element: a warp reads and writes 32 neighbouring floats (coalesced).
__global__ void copyCoalesced(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// Thread Row adds up row Row of a Height x Width matrix: the 32 threads of a warp read 32
// different rows at each step (uncoalesced).
__global__ void rowSums(const float* in, float* sums, int Width, int Height) {
  int Row = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row >= Height) return;
  float sum = 0;
  for (int k = 0; k < Width; ++k) sum += in[Row * Width + k];
  sums[Row] = sum;
}

// P = M * N (Width x Width), one thread per element of P, every operand read from global memory.
__global__ void naiveMatMul(const float* M, const float* N, float* P, int Width) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < Width && Col < Width) {
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) Pvalue += M[Row * Width + k] * N[k * Width + Col];
    P[Row * Width + Col] = Pvalue;
  }
}

// The same product by TILE_WIDTH x TILE_WIDTH blocks (Width a multiple of TILE_WIDTH): each block
// stages a tile of M and a tile of N in shared memory per phase, so that each element it loads
// serves TILE_WIDTH products.
template <int TILE_WIDTH>
__global__ void tiledMatMul(const float* M, const float* N, float* P, int Width) {
  __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
  __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
  int tx = threadIdx.x, ty = threadIdx.y;
  int Row = blockIdx.y * TILE_WIDTH + ty;
  int Col = blockIdx.x * TILE_WIDTH + tx;
  float Pvalue = 0;
  for (int ph = 0; ph < Width / TILE_WIDTH; ++ph) {
    Mds[ty][tx] = M[Row * Width + ph * TILE_WIDTH + tx];
    Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + Col];
    __syncthreads();  // the whole tile is loaded
    for (int k = 0; k < TILE_WIDTH; ++k) Pvalue += Mds[ty][k] * Nds[k][tx];
    __syncthreads();  // everyone is done with the tile before it is overwritten
  }
  P[Row * Width + Col] = Pvalue;
}
