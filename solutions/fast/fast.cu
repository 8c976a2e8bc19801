// Fast kernels (see fast.h), each formula as llm.c's dev/cuda writes it: numbered versions from
// the lab's kernel to the fastest here, each with what changed, why, and its rate measured by
// make bench on an H100 (docs/runs/2026-11-24-h100-run40-tests-bench.log and its JSON,
// 2026-11-24-h100-run40-bench.json), as a share of the ceilings of the same run: a
// device-to-device copy (2915 GB/s) and cuBLAS SGEMM (51.4 TFLOP/s at 4096^3). Versions 1 live in
// the labs' solutions, later ones here; a version that was only a step on the way is kept as its
// measured rate.

// ---- matrix multiplication: C (M x N) = A (M x K) * B (K x N) -------------------------------
// Rates at 4096^3:
//   1. lab 04's naive kernel, one thread per element of C              5.3 TFLOP/s (10.2%)
//      Every product reads two floats from global memory; the caches catch most of them.
//   2. lab 04's tiledMatMul32: 32 x 32 tiles of A and B in shared memory  9.0 TFLOP/s (17.5%)
//      Each float loaded serves 32 products, but each product still costs two shared loads.
//   3. matmulColumnPerThread: a thread computes 8 outputs down a column   17.5 TFLOP/s (34.0%)
//      One shared load of B feeds 8 multiply-adds (the A value is a broadcast to the warp).
//   4. matmulFast: a thread computes an 8 x 8 block of outputs             28.4 TFLOP/s (55.3%)
//      16 shared loads feed 64 multiply-adds; 128 x 128 tiles halve the global loads again.

// Version 3. A block of 512 threads computes a 64 x 64 tile of C, staging per phase a 64 x 8
// slice of A and an 8 x 64 slice of B (one float per thread each). Thread t owns column t % 64
// and rows 8 (t / 64) .. 8 (t / 64) + 7: a warp shares its rows (As reads are broadcasts) and
// reads 32 neighbouring words of Bs.
constexpr int COL_BM = 64, COL_BN = 64, COL_BK = 8, COL_TM = 8;
constexpr int COL_THREADS = COL_BM * COL_BN / COL_TM;  // 512

__global__ void __launch_bounds__(COL_THREADS)
    matmulColumnPerThreadKernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[COL_BM][COL_BK];
  __shared__ float Bs[COL_BK][COL_BN];
  const int tid = threadIdx.x, col = tid % COL_BN, row = tid / COL_BN * COL_TM;
  const int row0 = blockIdx.y * COL_BM, col0 = blockIdx.x * COL_BN;
  const int a_row = tid / COL_BK, a_col = tid % COL_BK;  // the float of A this thread stages
  const int b_row = tid / COL_BN, b_col = tid % COL_BN;  // and of B
  float acc[COL_TM] = {};
  for (int k0 = 0; k0 < K; k0 += COL_BK) {
    As[a_row][a_col] =
        (row0 + a_row < M && k0 + a_col < K) ? A[(row0 + a_row) * K + k0 + a_col] : 0.0f;
    Bs[b_row][b_col] =
        (k0 + b_row < K && col0 + b_col < N) ? B[(k0 + b_row) * N + col0 + b_col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < COL_BK; ++k) {
      const float b = Bs[k][col];
#pragma unroll
      for (int m = 0; m < COL_TM; ++m) acc[m] += As[row + m][k] * b;
    }
    __syncthreads();
  }
  for (int m = 0; m < COL_TM; ++m)
    if (row0 + row + m < M && col0 + col < N) C[(row0 + row + m) * N + col0 + col] = acc[m];
}

cudaError_t matmulColumnPerThread(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M == 0 || N == 0) return cudaSuccess;
  dim3 grid((N + COL_BN - 1) / COL_BN, (M + COL_BM - 1) / COL_BM);
  matmulColumnPerThreadKernel<<<grid, COL_THREADS>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

// Version 4. A block computes a BM x BN tile of C. Per phase it stages a BM x BK slice of A
// (transposed, so that a thread's 8 values of a column are a row of As) and a BK x BN slice of B in
// shared memory; each thread then does BK outer products of an 8-vector of A and an 8-vector of B.
// Thread (tr, tc) owns rows tr + 16 m and columns tc + 16 n (m, n < 8): neighbouring threads read
// neighbouring words of Bs (no bank conflicts) and write neighbouring words of C (coalesced).
constexpr int BM = 128, BN = 128, BK = 16, TM = 8, TN = 8, MM_THREADS = 256;

__global__ void __launch_bounds__(MM_THREADS)
    matmulFastKernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[BK][BM + 1];  // + 1: the transposing stores of a warp hit 32 banks
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x, tr = tid / 16, tc = tid % 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += MM_THREADS) {  // BK consecutive floats of a row of A
      int r = i / BK, c = i % BK;
      As[c][r] = (row0 + r < M && k0 + c < K) ? A[(row0 + r) * K + k0 + c] : 0.0f;
    }
    for (int i = tid; i < BK * BN; i += MM_THREADS) {  // 128 consecutive floats of a row of B
      int r = i / BN, c = i % BN;
      Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(k0 + r) * N + col0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int m = 0; m < TM; ++m) a[m] = As[k][tr + 16 * m];
#pragma unroll
      for (int n = 0; n < TN; ++n) b[n] = Bs[k][tc + 16 * n];
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
    }
    __syncthreads();
  }
  for (int m = 0; m < TM; ++m)
    for (int n = 0; n < TN; ++n) {
      int r = row0 + tr + 16 * m, c = col0 + tc + 16 * n;
      if (r < M && c < N) C[r * N + c] = acc[m][n];
    }
}

cudaError_t matmulFast(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M == 0 || N == 0) return cudaSuccess;
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  matmulFastKernel<<<grid, MM_THREADS>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

// ---- SpMV: y = A x, A in CSR -----------------------------------------------------------------
// Rates on 2^20 rows of 32 entries (columns near the diagonal), as a share of the bytes that must
// move, at the copy's speed:
//   1. lab 06's spmvCsrVector: a warp per row                                41.8% of copy
//      Coalesced reads of a row's entries, but a 32-entry row leaves 5 shuffle steps per entry.
//   2. spmvCsrFast: 2 to 32 lanes per row, about four entries per lane       76.1% of copy
//      A warp serves several short rows at once and spends few shuffles on each.
// (Lab 06's ELL kernel reaches 94.2% on this matrix, whose rows are all the same length.)

// Version 2. LANES threads per row: each adds every LANES-th entry, then the group adds its partial
// sums with shuffles inside the group (width LANES).
template <int LANES>
__global__ void spmvCsrFastKernel(int num_rows, const int* row_ptr, const int* col_index,
                                  const float* data, const float* x, float* y) {
  int thread = blockIdx.x * blockDim.x + threadIdx.x;
  int row = thread / LANES, lane = thread % LANES;
  // Rows past the end still join the shuffles (with 0) so that every lane of the warp is there.
  float sum = 0;
  if (row < num_rows)
    for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += LANES)
      sum += data[k] * __ldg(&x[col_index[k]]);
  for (int offset = LANES / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffff, sum, offset, LANES);
  if (row < num_rows && lane == 0) y[row] = sum;
}

template <int LANES>
cudaError_t spmvLaunch(int num_rows, const int* row_ptr, const int* col_index, const float* data,
                       const float* x, float* y) {
  const int threads = 256;
  long long total = 1ll * num_rows * LANES;
  spmvCsrFastKernel<LANES>
      <<<int((total + threads - 1) / threads), threads>>>(num_rows, row_ptr, col_index, data, x, y);
  return cudaGetLastError();
}

cudaError_t spmvCsrFast(int num_rows, int nnz, const int* row_ptr, const int* col_index,
                        const float* data, const float* x, float* y) {
  if (num_rows == 0) return cudaSuccess;
  // About four entries per lane: fewer lanes per row means fewer shuffle steps per entry.
  int mean = nnz / num_rows;
  if (mean < 16) return spmvLaunch<2>(num_rows, row_ptr, col_index, data, x, y);
  if (mean < 32) return spmvLaunch<4>(num_rows, row_ptr, col_index, data, x, y);
  if (mean < 64) return spmvLaunch<8>(num_rows, row_ptr, col_index, data, x, y);
  if (mean < 128) return spmvLaunch<16>(num_rows, row_ptr, col_index, data, x, y);
  return spmvLaunch<32>(num_rows, row_ptr, col_index, data, x, y);
}

// ---- 2D convolution: P = N * M, a Mask_Width^2 mask, zero outside the image -------------------
// Rates on an 8192^2 image with a 5 x 5 mask, of the copy's speed (versions 2 and 3 were steps on
// the way to version 4, measured when they were tried with make bench on an H100):
//   1. lab 05's convolution2DTiled: an input tile with its halo in shared memory  19.2% of copy
//      Halo threads load and then idle; each output still does 25 shared loads.
//   2. every input read from global memory through L1, no shared memory         18%
//      The loads are cached, but each output still issues 25 of them.
//   3. a thread computes 8 outputs down a column, each input row read once        65-66%
//      5 loads per input row serve up to 5 outputs: 60 loads for 8 outputs instead of 200.
//   4. convolution2DFast: version 3, without bounds checks in inner blocks        78.6% of copy
//      All but the border blocks read only inside the image.

// Versions 3 and 4. A thread computes CONV_COLUMN outputs down a column. It reads each of the
// CONV_COLUMN + MW - 1 input rows it needs once (MW values, into registers) and adds that row into
// every output whose mask covers it: MW (CONV_COLUMN + MW - 1) loads for CONV_COLUMN outputs
// instead of MW^2 each. MW is a template parameter so that the loops unroll and acc[] stays in
// registers. Blocks whose inputs all lie inside the image (all but the border ones) skip the bounds
// checks.
constexpr int CONV_MAX_MASK = 9, COLUMN = 8, CONV_COLUMN = 8;
__constant__ float kFastMask[CONV_MAX_MASK * CONV_MAX_MASK];

template <int MW, bool CHECKED>
__device__ void convolveColumn(const float* N, float* P, int height, int width, int row0, int col) {
  constexpr int R = MW / 2;
  float acc[CONV_COLUMN] = {};
#pragma unroll
  for (int t = 0; t < CONV_COLUMN + MW - 1; ++t) {  // input row row0 - R + t
    int r = row0 - R + t;
    float v[MW];
#pragma unroll
    for (int j = 0; j < MW; ++j) {
      int c = col - R + j;
      v[j] = (!CHECKED || (r >= 0 && r < height && c >= 0 && c < width)) ? __ldg(&N[r * width + c])
                                                                         : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < MW; ++i) {  // mask row i puts input row t into output t - i
      int o = t - i;
      if (o >= 0 && o < CONV_COLUMN)
#pragma unroll
        for (int j = 0; j < MW; ++j) acc[o] += v[j] * kFastMask[i * MW + j];
    }
  }
#pragma unroll
  for (int o = 0; o < CONV_COLUMN; ++o)
    if (!CHECKED || row0 + o < height) P[(row0 + o) * width + col] = acc[o];
}

template <int MW>
__global__ void convolution2DFastKernel(const float* N, float* P, int height, int width) {
  constexpr int R = MW / 2;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * CONV_COLUMN;
  int block_col = blockIdx.x * blockDim.x, block_row = blockIdx.y * blockDim.y * CONV_COLUMN;
  bool interior = block_col >= R && block_col + int(blockDim.x) + R <= width && block_row >= R &&
                  block_row + int(blockDim.y) * CONV_COLUMN + R <= height;
  if (interior) {
    convolveColumn<MW, false>(N, P, height, width, row0, col);
  } else if (col < width && row0 < height) {
    convolveColumn<MW, true>(N, P, height, width, row0, col);
  }
}

cudaError_t convolution2DFast(const float* N, const float* h_M, float* P, int Mask_Width,
                              int height, int width) {
  if (Mask_Width % 2 == 0 || Mask_Width < 1 || Mask_Width > CONV_MAX_MASK)
    return cudaErrorInvalidValue;
  if (cudaError_t e = cudaMemcpyToSymbol(kFastMask, h_M, sizeof(float) * Mask_Width * Mask_Width))
    return e;
  if (height == 0 || width == 0) return cudaSuccess;
  dim3 block(32, 8);
  dim3 grid((width + 31) / 32, (height + 8 * CONV_COLUMN - 1) / (8 * CONV_COLUMN));
  switch (Mask_Width) {
    case 1:
      convolution2DFastKernel<1><<<grid, block>>>(N, P, height, width);
      break;
    case 3:
      convolution2DFastKernel<3><<<grid, block>>>(N, P, height, width);
      break;
    case 5:
      convolution2DFastKernel<5><<<grid, block>>>(N, P, height, width);
      break;
    case 7:
      convolution2DFastKernel<7><<<grid, block>>>(N, P, height, width);
      break;
    default:
      convolution2DFastKernel<9><<<grid, block>>>(N, P, height, width);
      break;
  }
  return cudaGetLastError();
}

// ---- Jacobi: one sweep of the 5-point average ---------------------------------------------------
// Rates on an 8192^2 grid, of the copy's speed:
//   1. lab 09's jacobiSweep: a thread per point, four neighbour loads each   67.8% of copy
//      (lab 09's tiled sweep: 41.4%: the caches already serve the neighbours, and the halo
//      threads idle.)
//   2. jacobiSweepFast: a thread walks down a column of 8 points              82.1% of copy
//      The points above and below are carried down the column: one new load of them per point.

// Version 2. Walking down a column, the point above and the point itself are the previous step's
// centre and below: one new load per point from above and below instead of three.
__global__ void jacobiSweepFastKernel(const float* u, float* v, int ny, int nx) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i0 = (blockIdx.y * blockDim.y + threadIdx.y) * COLUMN;
  if (j >= nx || i0 >= ny) return;
  float above = i0 > 0 ? u[(i0 - 1) * nx + j] : 0.0f, centre = u[i0 * nx + j];
  for (int i = i0; i < i0 + COLUMN && i < ny; ++i) {
    float below = i + 1 < ny ? u[(i + 1) * nx + j] : 0.0f;
    bool boundary = i == 0 || j == 0 || i == ny - 1 || j == nx - 1;
    v[i * nx + j] =
        boundary ? centre : 0.25f * (above + below + u[i * nx + j - 1] + u[i * nx + j + 1]);
    above = centre;
    centre = below;
  }
}

cudaError_t jacobiSweepFast(const float* u, float* v, int ny, int nx) {
  if (ny == 0 || nx == 0) return cudaSuccess;
  dim3 block(32, 8);
  dim3 grid((nx + 31) / 32, (ny + 8 * COLUMN - 1) / (8 * COLUMN));
  jacobiSweepFastKernel<<<grid, block>>>(u, v, ny, nx);
  return cudaGetLastError();
}
