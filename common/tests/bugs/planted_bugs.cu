// Planted bugs, two or more per diagnostic of the emu backend. Each kernel is what a student might
// write; the faulty line carries the marker `// BUG: <name>` that the tests look for.
#include "cudalab/compare.h"
#include "cudalab/data.h"
#include "planted_bugs.h"

namespace {

constexpr int N = 1000;
constexpr int THREADS = 256;
constexpr int BLOCKS = (N + THREADS - 1) / THREADS;

// ---- out of bounds in global memory ---------------------------------------------------------
__global__ void scale_no_guard(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0f * in[i];  // BUG: read_past_end
}
__global__ void shift_left(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i - 1];  // BUG: negative_index
}
__global__ void write_one_past(const float*, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;  // BUG: write_one_past_end
}
__global__ void copy(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];  // BUG: use_after_free
}
__global__ void add_host(const float* host, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = host[i] + 1.0f;  // BUG: host_pointer
}

// ---- shared memory ---------------------------------------------------------------------------
__global__ void stencil_no_halo(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  float right = tile[threadIdx.x + 1];  // BUG: shared_past_end
  if (i < n) out[i] = tile[threadIdx.x] + right;
}
__global__ void dynamic_too_small(const float* in, float* out, int n) {
  extern __shared__ float buffer[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buffer[threadIdx.x] = i < n ? in[i] : 0.0f;  // BUG: dynamic_shared_too_small
  __syncthreads();
  if (i < n) out[i] = buffer[blockDim.x - 1 - threadIdx.x];
}

// ---- missing barrier -------------------------------------------------------------------------
}  // namespace
namespace planted {  // launched by test_diagnostics.cu too (planted_bugs.h)
__global__ void reverse_no_sync(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  float v = tile[THREADS - 1 - threadIdx.x];  // BUG: read_before_barrier
  if (i < n) out[i] = v;
}
}  // namespace planted
namespace {
using planted::reverse_no_sync;
// A difference of neighbours in a tile of doubles (each element two words of shared memory): thread
// t reads what thread t - 1 wrote, with no barrier between.
__global__ void differences_of_doubles_no_sync(const float* in, float* out, int n) {
  __shared__ double tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0;
  double left = threadIdx.x > 0 ? tile[threadIdx.x - 1] : 0.0;  // BUG: doubles_read_before_barrier
  if (i < n) out[i] = static_cast<float>(tile[threadIdx.x] - left);
}
__global__ void sum_no_second_sync(const float* in, float* out, int n) {
  __shared__ float partial[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    __syncthreads();
    float other = threadIdx.x < stride ? partial[threadIdx.x + stride] : 0.0f;
    partial[threadIdx.x] += other;  // BUG: write_while_others_read
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// ---- barrier divergence ----------------------------------------------------------------------
__global__ void early_exit(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  tile[threadIdx.x] = in[i];
  __syncthreads();  // BUG: barrier_after_return
  out[i] = tile[threadIdx.x];
}
__global__ void barrier_in_branch(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  if (threadIdx.x < 128) {
    __syncthreads();  // BUG: barrier_in_branch
  }
  if (i < n) out[i] = tile[threadIdx.x];
}

// ---- uninitialised memory --------------------------------------------------------------------
__global__ void accumulate(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += in[i];  // BUG: global_never_written
}
__global__ void halo_not_loaded(const float* in, float* out, int n) {
  __shared__ float tile[THREADS + 2];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x + 1] = i < n ? in[i] : 0.0f;  // the halo cells 0 and THREADS+1 stay unloaded
  __syncthreads();
  float left = tile[threadIdx.x];  // BUG: shared_never_written
  if (i < n) out[i] = left + tile[threadIdx.x + 1];
}

// ---- time limit ------------------------------------------------------------------------------
__global__ void stride_not_added(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i + gridDim.x * blockDim.x)
    out[i] = in[i];  // BUG: loop_without_increment
}
__device__ float load(const float* p, int i) { return p[i]; }
__global__ void running_sum_without_step(const float* in, float* out, int n) {
  float sum = 0.0f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  while (i < n) {  // i never changes
    sum += load(in, i);
    out[i] = sum;  // BUG: loop_through_helper
  }
}
__global__ void wait_for_flag(const volatile int* flag, float* out) {
  while (flag[0] == 0) {  // BUG: spin_on_flag
  }
  out[threadIdx.x] = 1.0f;
}

// ---- races between blocks --------------------------------------------------------------------
__global__ void sum_without_atomics(const float* in, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0 && i < n) total[0] = total[0] + in[i];  // BUG: blocks_write_same_word
}
__global__ void histogram_without_atomics(const int* in, int* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) bins[in[i] % 4] = bins[in[i] % 4] + 1;  // BUG: histogram_without_atomics
}
__global__ void shift_in_place(float* a, int n) {  // a[i] = a[i - 1], in one array
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n) {
    float left = a[i - 1];  // BUG: read_other_blocks_write
    a[i] = left;
  }
}

// ---- more typical mistakes ---------------------------------------------------------------------
__global__ void grid_stride_by_block(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)  // not * gridDim.x
    out[i] = 2.0f * in[i];  // BUG: grid_stride_by_block
}
__global__ void index_without_block(const float* in, float* out, int n) {
  int i = threadIdx.x;  // blockIdx.x * blockDim.x forgotten: every block does elements 0..255
  if (i < n) out[i] = in[i] + 1.0f;  // BUG: index_without_block
}
constexpr int ROWS = 24, COLS = 40;  // a matrix that is not square
__global__ void scale_rows_cols_swapped(const float* in, float* out, int rows, int cols) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y, Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < rows && Col < cols)
    out[Row * cols + Col] = 2.0f * in[Col * cols + Row];  // BUG: row_col_swapped
}
__global__ void shuffle_in_branch(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(0xffffffff, v, 16);  // BUG: shuffle_in_branch
  if (i < n) out[i] = v;
}
__global__ void copy_kernel(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3.0f * in[i];  // BUG: memcpy_elements_not_bytes
}
__global__ void fill_kernel(const float*, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;  // BUG: malloc_without_sizeof
}

__global__ void tile_load_without_guard(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];  // BUG: tile_load_without_guard
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] + tile[(threadIdx.x + 1) % THREADS];
}
__global__ void reduction_without_guard(const float* in, float* out, int n) {
  __shared__ float partial[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {  // the `if (threadIdx.x < s)` is missing
    float other = partial[threadIdx.x + s];           // BUG: reduction_without_guard
    __syncthreads();
    partial[threadIdx.x] += other;
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
__global__ void shared_counter_not_cleared(const float* in, float* out, int n) {
  __shared__ int positive;  // nobody sets it to 0
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0.0f) atomicAdd(&positive, 1);  // BUG: shared_counter_not_cleared
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = float(positive);
}
__global__ void barrier_in_divergent_loop(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned k = 0; k < threadIdx.x % 4; ++k) __syncthreads();  // BUG: barrier_in_divergent_loop
  if (i < n) out[i] = in[i];
}
__global__ void write_host_output(const float* in, float* host_out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) host_out[i] = in[i] - 1.0f;  // BUG: write_through_host_pointer
}

// ---- ten more, from the labs' own tasks ------------------------------------------------------
// Lab 02: a blur that forgets the picture's left border.
__global__ void blur_without_border_check(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.5f * (in[i - 1] + in[i]);  // BUG: blur_without_border_check
}
// Lab 02: `Row <= rows`, one row too many.
__global__ void scale_row_guard_off_by_one(const float* in, float* out, int rows, int cols) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y, Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row <= rows && Col < cols)
    out[Row * cols + Col] = 2.0f * in[Row * cols + Col];  // BUG: row_guard_off_by_one
}
// Lab 03: a dot product of 8 elements per thread whose loop runs to k <= 8.
__global__ void inner_loop_one_too_far(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 8) {
    float sum = 0.0f;
    for (int k = 0; k <= 8; ++k) sum += in[i * 8 + k];  // BUG: inner_loop_one_too_far
    out[i] = sum;
  }
}
// Lab 04: the phases of a tiled loop without the barrier after the tile is used.
__global__ void tile_second_barrier_missing(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float sum = 0.0f;
  for (int phase = 0; phase < 2; ++phase) {
    tile[threadIdx.x] = i < n ? in[i] * float(phase + 1) : 0.0f;
    __syncthreads();
    sum += tile[(threadIdx.x + 1) % THREADS];  // BUG: tile_second_barrier_missing
  }
  if (i < n) out[i] = sum;
}
// Lab 05: a convolution that reads its left neighbours without the ghost check.
__global__ void convolution_without_ghost_check(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float sum = 0.0f;
    for (int j = -2; j <= 0; ++j) sum += in[i + j];  // BUG: convolution_without_ghost_check
    out[i] = sum / 3.0f;
  }
}
// Lab 05: a shared tile with no room for the halo.
__global__ void tile_without_halo_room(const float* in, float* out, int n) {
  __shared__ float tile[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x + 2] = i < n ? in[i] : 0.0f;  // BUG: tile_without_halo_room
  if (threadIdx.x < 2) tile[threadIdx.x] = 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2];
}
// Lab 06: a CSR row loop that runs to k <= row_ptr[row + 1].
__global__ void csr_row_end_included(const int* row_ptr, const float* data, float* y, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float sum = 0.0f;
    for (int k = row_ptr[row]; k <= row_ptr[row + 1]; ++k)
      sum += data[k];  // BUG: csr_row_end_included
    y[row] = sum;
  }
}
// Lab 07: the averaging filter in place, over many blocks.
__global__ void average_in_place(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) {
    float average = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;  // BUG: average_in_place
    a[i] = average;
  }
}
// Lab 08: a transpose through a shared tile without the barrier between writing and reading it.
__global__ void transpose_without_barrier(const float* in, float* out, int n) {
  __shared__ float tile[8][33];
  int x = threadIdx.x % 32, y = threadIdx.x / 32, base = blockIdx.x * blockDim.x;
  tile[y][x] = base + int(threadIdx.x) < n ? in[base + threadIdx.x] : 0.0f;
  float v = tile[x % 8][y * 4];  // BUG: transpose_without_barrier
  if (base + int(threadIdx.x) < n) out[base + threadIdx.x] = v;
}
// Lab 09: a block's sum of squared differences read before the others wrote their part.
__global__ void sum_before_partials_written(const float* in, float* out, int n) {
  __shared__ float partial[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float d = i < n ? in[i] - 1.0f : 0.0f;
  partial[threadIdx.x] = d * d;
  if (threadIdx.x == 0) {  // no __syncthreads() first
    float sum = 0.0f;
    for (int t = 0; t < THREADS; ++t) sum += partial[t];  // BUG: sum_before_partials_written
    out[blockIdx.x] = sum;
  }
}

}  // namespace
namespace planted {  // launched by test_diagnostics.cu too (planted_bugs.h)
// An in-place update inside one block: thread i reads what thread i - 1 wrote, no barrier between.
__global__ void shift_in_one_block(float* a, int n) {
  int i = threadIdx.x;
  if (i > 0 && i < n) {
    float left = a[i - 1];  // BUG: in_place_shift_in_one_block
    a[i] = left;
  }
}

// The other direction: thread i writes what thread i + 1 reads; thread i + 1 may read before or
// after the write.
__global__ void shift_left_in_one_block(float* a, int n) {
  int i = threadIdx.x;
  if (i + 1 < n) {
    float right = a[i + 1];
    a[i] = right;  // BUG: write_after_read_in_one_block
  }
}

// Two threads of a block write different values to one element: the index is halved, so threads
// 2k and 2k + 1 both write out[k] (which one lands depends on the order).
__global__ void half_index_in_one_block(const float* in, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i / 2] = in[i];  // BUG: two_threads_write_one_element
}
// Not in the catalogue (a guard of the emu's row loop, for test_diagnostics.cu): threads (x, 0)
// and (x, 1) of a 2D block write out[x] with different values, a race between two rows of threads.
__global__ void two_rows_write_one_row(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.y * blockDim.x + threadIdx.x];  // BUG: two_rows_write_one_row
}
}  // namespace planted
namespace {
using planted::half_index_in_one_block;
using planted::shift_in_one_block;
using planted::shift_left_in_one_block;

// The same in a loop by one block over an array far larger than the block: each thread writes
// thousands of words before the next thread runs (more than the race table keeps).
__global__ void grid_stride_shift_in_one_block(float* a, int n) {
  for (int i = threadIdx.x + 1; i < n; i += blockDim.x) {
    float left = a[i - 1];  // BUG: grid_stride_shift_in_one_block
    a[i] = left;
  }
}

// Each thread adds to its own particle's force (a struct of doubles), then reads its left
// neighbour's, which the thread before it in the block wrote with no barrier between.
struct Force {
  double x, y;
};
__global__ void force_of_the_left_neighbour(const float* in, Force* f, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) {
    f[i].x += in[i];
    f[i].y += 2.0 * in[i];
  }
  if (i > 0 && i < n)
    out[i] = static_cast<float>(f[i - 1].x + f[i].y);  // BUG: struct_read_before_barrier
}

// ---- host side -------------------------------------------------------------------------------

// The first error of a sequence of calls.
struct First {
  cudaError_t error = cudaSuccess;
  First& operator<<(cudaError_t e) {
    if (error == cudaSuccess) error = e;
    return *this;
  }
};

// Device arrays of N floats: `in` holds data, `out` holds zeros.
// The squares 0, 1, 4, 9, ... in the first n elements of device array `to`: data on which a race
// between neighbours shows. (The emu judges a race by its result: an in-place shift of equal
// elements, or an in-place average of a straight line, leaves the same array in any order and is
// not reported.)
cudaError_t upload_squares(float* to, size_t n) {
  std::vector<float> squares(n);
  for (size_t i = 0; i < n; ++i) squares[i] = static_cast<float>(i) * static_cast<float>(i);
  return cudaMemcpy(to, squares.data(), n * sizeof(float), cudaMemcpyHostToDevice);
}

struct Arrays {
  float *in = nullptr, *out = nullptr;
  First status;
  Arrays() {
    std::vector<float> host(N, 1.0f);
    status << cudaMalloc(&in, N * sizeof(float)) << cudaMalloc(&out, N * sizeof(float))
           << cudaMemcpy(in, host.data(), N * sizeof(float), cudaMemcpyHostToDevice)
           << cudaMemset(out, 0, N * sizeof(float));
  }
  ~Arrays() {
    cudaFree(in);
    cudaFree(out);
  }
  cudaError_t finish() {
    status << cudaGetLastError() << cudaDeviceSynchronize();
    return status.error;
  }
};

template <class Kernel>
cudaError_t launch(Kernel kernel, size_t shared = 0) {
  Arrays a;
  kernel<<<BLOCKS, THREADS, shared>>>(a.in, a.out, N);
  return a.finish();
}
// One block updating THREADS elements of one array in place.
template <class Kernel>
cudaError_t launch_in_place_one_block(Kernel kernel) {
  Arrays a;
  a.status << upload_squares(a.in, THREADS);
  kernel<<<1, THREADS>>>(a.in, THREADS);
  return a.finish();
}

cudaError_t use_after_free() {
  Arrays a;
  float* gone;
  a.status << cudaMalloc(&gone, N * sizeof(float));
  a.status << cudaMemcpy(gone, a.out, N * sizeof(float), cudaMemcpyDeviceToDevice);
  a.status << cudaFree(gone);
  copy<<<BLOCKS, THREADS>>>(gone, a.out, N);
  return a.finish();
}

cudaError_t host_pointer() {
  Arrays a;
  std::vector<float> host(N, 1.0f);
  add_host<<<BLOCKS, THREADS>>>(host.data(), a.out, N);
  return a.finish();
}

cudaError_t accumulate_unset() {
  Arrays a;
  float* sum;
  a.status << cudaMalloc(&sum, N * sizeof(float));  // never cleared
  accumulate<<<BLOCKS, THREADS>>>(a.in, sum, N);
  cudaError_t e = a.finish();
  cudaFree(sum);
  return e;
}

cudaError_t spin() {
  Arrays a;
  int* flag;
  a.status << cudaMalloc(&flag, sizeof(int)) << cudaMemset(flag, 0, sizeof(int));
  wait_for_flag<<<1, 32>>>(flag, a.out);
  cudaError_t e = a.finish();
  cudaFree(flag);
  return e;
}

cudaError_t histogram() {
  Arrays a;
  int *in, *bins;
  std::vector<int> host(N, 3);
  a.status << cudaMalloc(&in, N * sizeof(int)) << cudaMalloc(&bins, 4 * sizeof(int))
           << cudaMemcpy(in, host.data(), N * sizeof(int), cudaMemcpyHostToDevice)
           << cudaMemset(bins, 0, 4 * sizeof(int));
  histogram_without_atomics<<<BLOCKS, THREADS>>>(in, bins, N);
  cudaError_t e = a.finish();
  cudaFree(in);
  cudaFree(bins);
  return e;
}

cudaError_t shift() {
  Arrays a;
  a.status << upload_squares(a.in, N);
  shift_in_place<<<BLOCKS, THREADS>>>(a.in, N);
  return a.finish();
}

// ---- copies ------------------------------------------------------------------------------------
__constant__ float c_weights[4];
constexpr size_t kBytes = N * sizeof(float);

cudaError_t copy_back_wrong_kind() {
  Arrays a;
  std::vector<float> host(N);
  float* h = host.data();
  a.status << cudaMemcpy(h, a.in, kBytes, cudaMemcpyHostToDevice);  // BUG: copy_back_wrong_kind
  return a.finish();
}
cudaError_t upload_wrong_kind() {
  Arrays a;
  std::vector<float> host(N, 2.0f);
  float* h = host.data();
  a.status << cudaMemcpy(a.in, h, kBytes, cudaMemcpyDeviceToHost);  // BUG: upload_wrong_kind
  return a.finish();
}
cudaError_t memcpy_to_constant() {
  Arrays a;
  const float w[4] = {0.25f, 0.5f, 0.25f, 0.0f};
  a.status << cudaMemcpy(c_weights, w, 16, cudaMemcpyHostToDevice);  // BUG: memcpy_to_constant
  return a.finish();
}

// A ROWS x COLS matrix (not square) through a 2D kernel of 16 x 16 blocks.
template <class Kernel>
cudaError_t launch_2d(Kernel kernel) {
  float *in, *out;
  First status;
  std::vector<float> host(ROWS * COLS, 1.0f);
  status << cudaMalloc(&in, ROWS * COLS * sizeof(float))
         << cudaMalloc(&out, ROWS * COLS * sizeof(float))
         << cudaMemcpy(in, host.data(), ROWS * COLS * sizeof(float), cudaMemcpyHostToDevice);
  kernel<<<dim3((COLS + 15) / 16, (ROWS + 15) / 16), dim3(16, 16)>>>(in, out, ROWS, COLS);
  status << cudaGetLastError() << cudaDeviceSynchronize();
  cudaFree(in);
  cudaFree(out);
  return status.error;
}
cudaError_t csr_with_row_end() {
  Arrays a;  // a.in: one entry per row; row r holds entry r
  int* row_ptr;
  std::vector<int> offsets(N + 1);
  for (int r = 0; r <= N; ++r) offsets[r] = r;
  a.status << cudaMalloc(&row_ptr, (N + 1) * sizeof(int))
           << cudaMemcpy(row_ptr, offsets.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice);
  csr_row_end_included<<<BLOCKS, THREADS>>>(row_ptr, a.in, a.out, N);
  cudaError_t e = a.finish();
  cudaFree(row_ptr);
  return e;
}
cudaError_t average_in_one_array() {
  Arrays a;
  a.status << upload_squares(a.in, N);
  average_in_place<<<BLOCKS, THREADS>>>(a.in, N);
  return a.finish();
}
cudaError_t two_threads_write_one_element() {
  Arrays a;
  a.status << upload_squares(a.in, THREADS);  // each thread's value differs from its neighbour's
  half_index_in_one_block<<<1, THREADS>>>(a.in, a.out, THREADS);
  return a.finish();
}
// Two particles: thread 1's read of thread 0's force is the only race.
cudaError_t forces_of_neighbours() {
  Arrays a;
  Force* f;
  a.status << cudaMalloc(&f, 2 * sizeof(Force)) << cudaMemset(f, 0, 2 * sizeof(Force));
  force_of_the_left_neighbour<<<1, 2>>>(a.in, f, a.out, 2);
  const cudaError_t error = a.finish();
  cudaFree(f);
  return error;
}
cudaError_t grid_stride_shift_large() {
  constexpr int kLarge = 1 << 22;  // 16384 words per thread
  float* a;
  First status;
  status << cudaMalloc(&a, kLarge * sizeof(float)) << upload_squares(a, kLarge);
  grid_stride_shift_in_one_block<<<1, THREADS>>>(a, kLarge);
  status << cudaGetLastError() << cudaDeviceSynchronize();
  cudaFree(a);
  return status.error;
}
cudaError_t short_upload() {
  Arrays a;
  float* in;
  std::vector<float> host(N, 1.0f);
  a.status << cudaMalloc(&in, N * sizeof(float))
           << cudaMemcpy(in, host.data(), N, cudaMemcpyHostToDevice);  // N bytes
  copy_kernel<<<BLOCKS, THREADS>>>(in, a.out, N);
  cudaError_t e = a.finish();
  cudaFree(in);
  return e;
}
cudaError_t malloc_without_sizeof() {
  Arrays a;
  float* out;
  a.status << cudaMalloc(&out, N);  // N bytes: room for N / 4 floats
  fill_kernel<<<BLOCKS, THREADS>>>(a.in, out, N);
  cudaError_t e = a.finish();
  cudaFree(out);
  return e;
}
cudaError_t free_twice() {
  float* p;
  First status;
  status << cudaMalloc(&p, kBytes) << cudaFree(p);
  status << cudaFree(p);  // BUG: free_twice
  return status.error;
}
cudaError_t copy_back_after_free() {
  Arrays a;
  float* d;
  std::vector<float> host(N);
  float* h = host.data();
  a.status << cudaMalloc(&d, kBytes) << cudaMemcpy(d, a.in, kBytes, cudaMemcpyDeviceToDevice);
  a.status << cudaFree(d);
  a.status << cudaMemcpy(h, d, kBytes, cudaMemcpyDeviceToHost);  // BUG: copy_back_after_free
  return a.finish();
}
cudaError_t write_through_host_pointer() {
  Arrays a;
  std::vector<float> host(N);
  write_host_output<<<BLOCKS, THREADS>>>(a.in, host.data(), N);
  return a.finish();
}

// A __shared__ array at file scope: each block has its own, checked as one declared in a kernel.
__shared__ float block_tile[THREADS];
__global__ void file_scope_tile_past_end(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  block_tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  float right = block_tile[threadIdx.x + 1];  // BUG: file_scope_shared_past_end
  if (i < n) out[i] = block_tile[threadIdx.x] + right;
}

// A tile narrower than the block (TILE_WIDTH 8 in 16 x 16 blocks): thread (8,0)'s subscripts
// reach tile[1][0], thread (0,1)'s element.
constexpr int TILE_WIDTH = 8;
__global__ void tile_narrower_than_block(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[16][TILE_WIDTH];
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols)
    tile[threadIdx.y][threadIdx.x] = in[row * cols + col];  // BUG: shared_tile_narrower_than_block
  __syncthreads();
  if (row < rows && col < cols) out[row * cols + col] = 2.0f * tile[threadIdx.y][threadIdx.x];
}

// A block reduction whose last warp's steps go without __syncwarp(), through a volatile pointer,
// as reductions were written before Volta: thread 1's step writes partial[1], which thread 0 read.
__global__ void warp_tail_without_syncwarp(const float* in, float* out, int n) {
  __shared__ float partial[THREADS];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    volatile float* last_warp = partial;
    for (unsigned s = 32; s > 0; s /= 2)
      last_warp[threadIdx.x] += last_warp[threadIdx.x + s];  // BUG: warp_tail_without_syncwarp
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// ---- wrong results ----------------------------------------------------------------------------
__global__ void scale_by_two(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
__global__ void scale_by_two_but_last(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) out[i] = 2.0f * in[i];
}
__global__ void scale_by_half_of_four(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (1 / 2) * 4.0f * in[i];  // BUG: integer_division_zeros
}
__global__ void squared_for_doubled(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i];  // BUG: squared_not_doubled
}

// Runs `launch(in, out)` on in = 1, 2, 3 ... (N floats) and an output filled with the poison, and
// compares the output with 2 * in.
template <class Launch>
std::string compared_with_doubled(Launch launch) {
  std::vector<float> host(N);
  for (int i = 0; i < N; ++i) host[i] = float(i + 1);
  std::vector<float> got(N, cudalab::poison_float());
  float *in, *out;
  cudaMalloc(&in, N * sizeof(float));
  cudaMalloc(&out, N * sizeof(float));
  cudaMemcpy(in, host.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(out, got.data(), N * sizeof(float), cudaMemcpyHostToDevice);
  launch(in, out);
  cudaMemcpy(got.data(), out, N * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(in);
  cudaFree(out);
  std::vector<double> want(N);
  for (int i = 0; i < N; ++i) want[i] = 2.0 * (i + 1);
  return cudalab::compare("out", got.data(), want.data(), N, {1e-6, 0});
}
}  // namespace

const std::vector<PlantedBug>& planted_bugs() {
  static const std::vector<PlantedBug> all = {
      {"read_past_end", "outside every array", [] { return launch(scale_no_guard); }},
      {"negative_index", "before the first element", [] { return launch(shift_left); }},
      {"write_one_past_end", "outside every array", [] { return launch(write_one_past); }},
      {"use_after_free", "after cudaFree", use_after_free},
      {"host_pointer", "a host pointer", host_pointer},
      {"shared_past_end", "past the end of __shared__ array 'tile'",
       [] { return launch(stencil_no_halo); }},
      {"file_scope_shared_past_end", "past the end of __shared__ array 'block_tile'",
       [] { return launch(file_scope_tile_past_end); }},
      {"shared_tile_narrower_than_block",
       "A row of 'tile' holds 8 elements and the block is 16 threads wide",
       [] { return launch_2d(tile_narrower_than_block); }},
      {"dynamic_shared_too_small", "past the end of the dynamic",
       [] { return launch(dynamic_too_small, THREADS / 2 * sizeof(float)); }},
      {"read_before_barrier", "no __syncthreads() in between",
       [] { return launch(reverse_no_sync); }},
      {"doubles_read_before_barrier", "no __syncthreads() in between",
       [] { return launch(differences_of_doubles_no_sync); }},
      {"write_while_others_read", "no __syncthreads() in between",
       [] { return launch(sum_no_second_sync); }},
      {"barrier_after_return", "barrier divergence", [] { return launch(early_exit); }},
      {"barrier_in_branch", "barrier divergence", [] { return launch(barrier_in_branch); }},
      {"global_never_written", "nobody wrote since cudaMalloc", accumulate_unset},
      {"shared_never_written", "no thread of this block wrote",
       [] { return launch(halo_not_loaded); }},
      {"loop_without_increment", "time limit", [] { return launch(stride_not_added); }},
      {"spin_on_flag", "time limit", spin},
      {"loop_through_helper", "time limit", [] { return launch(running_sum_without_step); }},
      {"tile_load_without_guard", "outside every array",
       [] { return launch(tile_load_without_guard); }},
      {"reduction_without_guard", "past the end of __shared__ array 'partial'",
       [] { return launch(reduction_without_guard); }},
      {"shared_counter_not_cleared", "no thread of this block wrote",
       [] { return launch(shared_counter_not_cleared); }},
      {"barrier_in_divergent_loop", "barrier divergence",
       [] { return launch(barrier_in_divergent_loop); }},
      {"write_through_host_pointer", "a host pointer", write_through_host_pointer},
      {"blocks_write_same_word", "also wrote in this launch",
       [] { return launch(sum_without_atomics); }},
      {"histogram_without_atomics", "also wrote in this launch|of this block wrote", histogram},
      {"read_other_blocks_write", "also wrote in this launch|of this block wrote", shift},
      {"grid_stride_by_block", "also wrote in this launch",
       [] { return launch(grid_stride_by_block); }},
      {"index_without_block", "also wrote in this launch",
       [] { return launch(index_without_block); }},
      {"row_col_swapped", "outside every array", [] { return launch_2d(scale_rows_cols_swapped); }},
      {"shuffle_in_branch", "warp divergence", [] { return launch(shuffle_in_branch); }},
      {"memcpy_elements_not_bytes", "nobody wrote since cudaMalloc", short_upload},
      {"malloc_without_sizeof", "outside every array", malloc_without_sizeof},
      {"copy_back_wrong_kind", "the kind is cudaMemcpyDeviceToHost", copy_back_wrong_kind},
      {"upload_wrong_kind", "the kind is cudaMemcpyHostToDevice", upload_wrong_kind},
      {"memcpy_to_constant", "written with cudaMemcpyToSymbol", memcpy_to_constant},
      {"free_twice", "was already freed", free_twice},
      {"copy_back_after_free", "was freed at", copy_back_after_free},
      {"blur_without_border_check", "before the first element",
       [] { return launch(blur_without_border_check); }},
      {"row_guard_off_by_one", "outside every array",
       [] { return launch_2d(scale_row_guard_off_by_one); }},
      {"inner_loop_one_too_far", "outside every array",
       [] { return launch(inner_loop_one_too_far); }},
      {"tile_second_barrier_missing", "no __syncthreads() in between",
       [] { return launch(tile_second_barrier_missing); }},
      {"convolution_without_ghost_check", "before the first element",
       [] { return launch(convolution_without_ghost_check); }},
      {"tile_without_halo_room", "past the end of __shared__ array 'tile'",
       [] { return launch(tile_without_halo_room); }},
      {"csr_row_end_included", "outside every array", csr_with_row_end},
      {"in_place_shift_in_one_block", "of this block wrote",
       [] { return launch_in_place_one_block(shift_in_one_block); }},
      {"grid_stride_shift_in_one_block", "of this block wrote", grid_stride_shift_large},
      {"struct_read_before_barrier", "of this block wrote", forces_of_neighbours},
      {"write_after_read_in_one_block", "of this block read",
       [] { return launch_in_place_one_block(shift_left_in_one_block); }},
      {"two_threads_write_one_element", "with another value", two_threads_write_one_element},
      {"average_in_place", "also wrote in this launch|of this block wrote", average_in_one_array},
      {"transpose_without_barrier", "no __syncthreads() in between",
       [] { return launch(transpose_without_barrier); }},
      {"sum_before_partials_written", "no __syncthreads() in between",
       [] { return launch(sum_before_partials_written); }},
      {"warp_tail_without_syncwarp", "put a __syncwarp() there instead",
       [] { return launch(warp_tail_without_syncwarp); }},
  };
  return all;
}

const std::vector<PlantedWrongResult>& planted_wrong_results() {
  static const std::vector<PlantedWrongResult> all = {
      {"grid_too_small", "which the grid does not have",
       [] {
         return compared_with_doubled([](const float* in, float* out) {
           scale_by_two<<<N / THREADS, THREADS>>>(in, out, N);  // BUG: grid_too_small
         });
       }},
      {"guard_skips_last", "which the grid has: that thread did not store it",
       [] {
         return compared_with_doubled([](const float* in, float* out) {
           scale_by_two_but_last<<<BLOCKS, THREADS>>>(in, out, N);  // BUG: guard_skips_last
         });
       }},
      {"integer_division_zeros", "the kernel computed 0",
       [] {
         return compared_with_doubled([](const float* in, float* out) {
           scale_by_half_of_four<<<BLOCKS, THREADS>>>(in, out, N);
         });
       }},
      {"squared_not_doubled", "stored by thread",
       [] {
         return compared_with_doubled([](const float* in, float* out) {
           squared_for_doubled<<<BLOCKS, THREADS>>>(in, out, N);
         });
       }},
  };
  return all;
}
