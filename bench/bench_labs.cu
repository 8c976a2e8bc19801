// make bench: every lab's kernels over a range of sizes, each next to the ceiling that bounds it,
// measured in the same run: the device's copy bandwidth (cudaMemcpy device to device) for
// memory-bound kernels, cuBLAS SGEMM (where the build has it) for matrix products. Prints a table
// and writes JSON for bench/plots.py.
//
//   bench_labs [OUT.json]        (SOURCE=labs in make bench: the student's kernels)
//
// On emu the sizes are small and the numbers are the emulator's (useful for the counters, not as
// speeds).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "averaging_filter.h"
#include "bank_conflicts.h"
#include "convolution.h"
#include "cudalab/cuda_check.h"
#include "cudalab/data.h"
#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#ifdef CUDALAB_HAVE_FAST
#include "fast.h"
#endif
#include "jacobi.h"
#include "matmul_variants.h"
#include "spmv.h"
#include "thread_indexing.h"
#include "tiled_matmul.h"
#include "vector_add.h"
#ifdef CUDALAB_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

namespace {

using cudalab::DeviceArray;

#ifdef CUDALAB_EMU
constexpr int kScale = 64;  // emu: sizes divided by this (per dimension for 2D problems: by 8)
constexpr int kRepeats = 3;
#else
constexpr int kScale = 1;
constexpr int kRepeats = 21;
#endif

// The least a kernel must do per run (performance.h's floor: the bytes it must move, each input
// read and each output written once, and its floating-point operations), for the roofline.
using cudalab::performance::Floor;
namespace flops = cudalab::performance::flops;

struct Result {
  std::string lab, kernel, size;
  double n, ms, value;
  std::string unit, ceiling;
  double fraction;  // of the ceiling, 0 when there is none
  Floor work;       // 0: not on the roofline
};
std::vector<Result> results;
double copy_gbps = 0;

double time_ms(const std::function<void()>& work) {
  auto t = cudalab::performance::time(work, kRepeats);
  if (t.spread > cudalab::performance::kMaxSpread)
    std::printf("  (warning: repeats of the next line differ by %.0f%%)\n", 100 * t.spread);
  return t.ms;
}

void add(const std::string& lab, const std::string& kernel, const std::string& size, double n,
         double ms, double value, const std::string& unit, const std::string& ceiling,
         double ceiling_value, Floor work = {}) {
  double fraction = ceiling_value > 0 ? value / ceiling_value : 0;
  results.push_back({lab, kernel, size, n, ms, value, unit, ceiling, fraction, work});
  std::printf("%-4s %-28s %-14s %10.4f ms %10.1f %-7s", lab.c_str(), kernel.c_str(), size.c_str(),
              ms, value, unit.c_str());
  if (fraction > 0) std::printf(" %5.1f%% of %s", 100 * fraction, ceiling.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

// Memory-bound: the bytes it moves per run, compared with the copy bandwidth.
void memory_bound(const std::string& lab, const std::string& kernel, const std::string& size,
                  double n, Floor work, const std::function<void()>& run) {
  double ms = time_ms(run);
  add(lab, kernel, size, n, ms, work.bytes / ms / 1e6, "GB/s", "copy", copy_gbps, work);
}

// An n x n matrix product: 2 n^3 operations, compared with cuBLAS.
void compute_bound(const std::string& lab, const std::string& kernel, int n,
                   const std::function<void()>& run, double ceiling) {
  const Floor work{.bytes = 3.0 * n * n * sizeof(float), .flops = flops::matmul(n, n, n)};
  double ms = time_ms(run);
  add(lab, kernel, std::to_string(n) + "^3", n, ms, work.flops / ms / 1e6, "GFLOP/s", "cuBLAS",
      ceiling, work);
}

void ceilings() {
  const size_t bytes = (size_t(256) << 20) / kScale;
  DeviceArray<char> a(bytes, 0), b(bytes, 0);
  double ms = time_ms(cudalab::performance::device_copy(b.get(), a.get(), bytes));
  copy_gbps = 2.0 * bytes / ms / 1e6;  // read and write
  add("-", "cudaMemcpy D2D", std::to_string(bytes >> 20) + " MiB", bytes, ms, copy_gbps, "GB/s", "",
      0);
}

#ifdef CUDALAB_HAVE_CUBLAS
double cublas(int n) {
  DeviceArray<float> A(size_t(n) * n, 1.0f), B(size_t(n) * n, 1.0f), C(size_t(n) * n, 0.0f);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float one = 1, zero = 0;
  double ms = time_ms([&] {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A.get(), n, B.get(), n, &zero,
                C.get(), n);
  });
  cublasDestroy(handle);
  double gflops = flops::matmul(n, n, n) / ms / 1e6;
  add("-", "cuBLAS SGEMM", std::to_string(n) + "^3", n, ms, gflops, "GFLOP/s", "", 0);
  return gflops;
}
#endif

#include "cudalab/textbook_kernels.cuh"  // naiveMatMul

void matmuls() {
  for (int n : {512, 1024, 2048, 4096}) {
    n /= kScale == 1 ? 1 : 8;
    double ceiling = 0;
#ifdef CUDALAB_HAVE_CUBLAS
    ceiling = cublas(n);
#endif
    DeviceArray<float> A(cudalab::random_floats(size_t(n) * n, 1)),
        B(cudalab::random_floats(size_t(n) * n, 2)), C(size_t(n) * n, 0.0f);
    dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
    if (n <= 2048)
      compute_bound(
          "03", "matmulElementPerThread", n,
          [&] { matmulElementPerThread(A.get(), B.get(), C.get(), n, n, n); }, ceiling);
    compute_bound(
        "04", "naive (one thread/element)", n,
        [&] { naiveMatMul<<<grid, block>>>(A.get(), B.get(), C.get(), n); }, ceiling);
    compute_bound(
        "04", "tiledMatMul16", n, [&] { tiledMatMul16(A.get(), B.get(), C.get(), n, n, n); },
        ceiling);
    compute_bound(
        "04", "tiledMatMul32", n, [&] { tiledMatMul32(A.get(), B.get(), C.get(), n, n, n); },
        ceiling);
#ifdef CUDALAB_HAVE_FAST
    compute_bound(
        "04", "matmulColumnPerThread", n,
        [&] { matmulColumnPerThread(A.get(), B.get(), C.get(), n, n, n); }, ceiling);
    compute_bound(
        "04", "matmulFast", n, [&] { matmulFast(A.get(), B.get(), C.get(), n, n, n); }, ceiling);
#endif
  }
}

void vector_add() {
  for (int n : {1 << 20, 1 << 22, 1 << 24, 1 << 26}) {
    n /= kScale;
    DeviceArray<float> A(n, 1.0f), B(n, 2.0f), C(n, 0.0f);
    memory_bound("01", "vecAddKernel", "2^" + std::to_string(int(std::log2(n))), n,
                 {.bytes = 12.0 * n, .flops = flops::vector_add(n)},
                 [&] { vecAddKernel<<<(n + 255) / 256, 256>>>(A.get(), B.get(), C.get(), n); });
  }
}

void grayscale() {
  for (int n : {1024, 4096, 8192}) {
    n /= kScale == 1 ? 1 : 8;
    const size_t pixels = size_t(n) * n;
    DeviceArray<unsigned char> rgb(pixels * 3, 100), grey(pixels, 0);
    memory_bound("02", "colorToGrayscale", std::to_string(n) + "^2", double(pixels),
                 {.bytes = 4.0 * pixels, .flops = flops::grayscale(pixels)},
                 [&] { colorToGrayscale(grey.get(), rgb.get(), n, n); });
  }
}

void convolutions() {
  std::vector<float> M = cudalab::random_floats(25, 3);
  for (int n : {1024, 4096, 8192}) {
    n /= kScale == 1 ? 1 : 8;
    DeviceArray<float> N(cudalab::random_floats(size_t(n) * n, 1)), P(size_t(n) * n, 0.0f);
    std::string size = std::to_string(n) + "^2, 5x5";
    const Floor conv{.bytes = 8.0 * n * n, .flops = flops::convolution(double(n) * n, 25)};
    memory_bound("05", "convolution2DTiled", size, double(n) * n, conv,
                 [&] { convolution2DTiled(N.get(), M.data(), P.get(), 5, n, n); });
#ifdef CUDALAB_HAVE_FAST
    memory_bound("05", "convolution2DFast", size, double(n) * n, conv,
                 [&] { convolution2DFast(N.get(), M.data(), P.get(), 5, n, n); });
#endif
  }
}

void spmvs() {
  for (int rows : {1 << 14, 1 << 17, 1 << 20}) {
    rows /= kScale;
    const int per_row = 32, cols = rows;
    std::vector<int> row_ptr(rows + 1), col_index(size_t(rows) * per_row);
    for (int r = 0; r <= rows; ++r) row_ptr[r] = r * per_row;
    // Columns within 1024 of the diagonal, as in a mesh's matrix: x is read from the caches.
    for (size_t k = 0; k < col_index.size(); ++k) {
      long r = long(k / per_row), c = r - 512 + long((k * 2654435761u) % 1024);
      col_index[k] = int((c % cols + cols) % cols);
    }
    for (int r = 0; r < rows; ++r)
      std::sort(col_index.begin() + r * per_row, col_index.begin() + (r + 1) * per_row);
    DeviceArray<int> d_row_ptr(row_ptr), d_col(col_index);
    DeviceArray<float> data(cudalab::random_floats(col_index.size(), 1)),
        x(cudalab::random_floats(cols, 2)), y(rows, 0.0f);
    // ELL of the same matrix: every row has per_row entries, so no padding.
    std::vector<int> ell_col(col_index.size());
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < per_row; ++k)
        ell_col[size_t(k) * rows + r] = col_index[size_t(r) * per_row + k];
    DeviceArray<int> d_ell_col(ell_col);
    CsrMatrix A{rows, cols, d_row_ptr.get(), d_col.get(), data.get()};
    EllMatrix E{rows, cols, per_row, d_ell_col.get(), data.get()};
    // Bytes that must move at least: values and column indices, row pointers, x once, y.
    const Floor spmv{.bytes = 8.0 * col_index.size() + 4.0 * (rows + 1) + 4.0 * cols + 4.0 * rows,
                     .flops = flops::spmv(col_index.size())};
    std::string size = std::to_string(rows) + " rows x 32";
    memory_bound("06", "spmvCsrScalar", size, rows, spmv,
                 [&] { spmvCsrScalar(A, x.get(), y.get()); });
    memory_bound("06", "spmvCsrVector", size, rows, spmv,
                 [&] { spmvCsrVector(A, x.get(), y.get()); });
    memory_bound("06", "spmvEll", size, rows, spmv, [&] { spmvEll(E, x.get(), y.get()); });
#ifdef CUDALAB_HAVE_FAST
    memory_bound("06", "spmvCsrFast", size, rows, spmv, [&] {
      spmvCsrFast(rows, int(col_index.size()), d_row_ptr.get(), d_col.get(), data.get(), x.get(),
                  y.get());
    });
#endif
  }
}

// The averaging filter's rate counts 8 bytes per element per step, as one launch per step moves:
// "effective" GB/s, which the redundant-border version exceeds the copy bandwidth in (it does not
// move those bytes), so no ceiling is given.
void averaging() {
  const int steps = 50;
  for (int n : {1 << 20, 1 << 22, 1 << 24}) {
    n /= kScale;
    DeviceArray<float> A(cudalab::random_floats(n, 1)), B(n, 0.0f);
    std::string size = "2^" + std::to_string(int(std::log2(n))) + ", 50 steps";
    double ms = time_ms([&] { averageGlobal(A.get(), B.get(), n, steps); });
    add("07", "averageGlobal", size, n, ms, 8.0 * n * steps / ms / 1e6, "GB/s eff.", "", 0);
    ms = time_ms([&] { averageSharedManyBlocks(A.get(), B.get(), n, steps); });
    add("07", "averageSharedManyBlocks", size, n, ms, 8.0 * n * steps / ms / 1e6, "GB/s eff.", "",
        0);
  }
}

// Lab 08's curve: every warp reads shared word (lane * stride) % 1024 over and over; the time per
// warp-wide read grows with the conflict degree gcd(stride, 32).
__global__ void sharedStride(float* out, int stride, int repeats) {
  __shared__ float words[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) words[i] = i;
  __syncthreads();
  int word = (threadIdx.x % 32) * stride % 1024;
  float sum = 0;
  for (int r = 0; r < repeats; ++r) {
    sum += words[word];
    word = (word + 32 * stride) % 1024;  // another row, same bank pattern
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

void bank_conflicts() {
  int sms = 1;
#ifndef CUDALAB_EMU
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
#endif
  const int blocks = 4 * sms, threads = 256, repeats = 4096 / kScale;
  DeviceArray<float> out(size_t(blocks) * threads, 0.0f);
  for (int stride : {1, 2, 4, 8, 16, 32, 33}) {
    double ms = time_ms([&] { sharedStride<<<blocks, threads>>>(out.get(), stride, repeats); });
    // Warp-wide reads per SM; their time per read is the SM's shared-memory throughput.
    double reads_per_sm = double(blocks) / sms * threads / 32 * repeats;
    add("08", "shared read, stride " + std::to_string(stride),
        "degree " + std::to_string(std::gcd(stride, 32)), stride, ms, ms * 1e6 / reads_per_sm,
        "ns/read", "", 0);
  }
  const int n = 8192 / (kScale == 1 ? 1 : 8);
  DeviceArray<float> in(size_t(n) * n, 1.0f), outT(size_t(n) * n, 0.0f);
  std::string size = std::to_string(n) + "^2";
  memory_bound("08", "transposeUnpadded", size, double(n) * n, {.bytes = 8.0 * n * n},
               [&] { transposeUnpadded(in.get(), outT.get(), n, n); });
  memory_bound("08", "transposePadded", size, double(n) * n, {.bytes = 8.0 * n * n},
               [&] { transposePadded(in.get(), outT.get(), n, n); });
}

void jacobis() {
  for (int n : {1024, 4096, 8192}) {
    n /= kScale == 1 ? 1 : 8;
    const Floor sweep{.bytes = 8.0 * n * n, .flops = flops::jacobi(double(n) * n)};
    DeviceArray<float> u(cudalab::random_floats(size_t(n) * n, 1)), v(size_t(n) * n, 0.0f);
    std::string size = std::to_string(n) + "^2";
    memory_bound("09", "jacobiSweep", size, double(n) * n, sweep,
                 [&] { jacobiSweep(u.get(), v.get(), n, n); });
    memory_bound("09", "jacobiSweepTiled", size, double(n) * n, sweep,
                 [&] { jacobiSweepTiled(u.get(), v.get(), n, n); });
#ifdef CUDALAB_HAVE_FAST
    memory_bound("09", "jacobiSweepFast", size, double(n) * n, sweep,
                 [&] { jacobiSweepFast(u.get(), v.get(), n, n); });
#endif
  }
}

void write_json(const std::string& path) {
  std::ofstream out(path);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  out << "{\n  \"device\": \"" << prop.name << "\",\n  \"date\": \"" << date
      << "\",\n  \"backend\": \"";
#ifdef CUDALAB_EMU
  out << "emu";
#else
  out << "cuda";
#endif
  out << "\",\n  \"source\": \"" << CUDALAB_BENCH_SOURCE << "\",\n  \"copy_gbps\": " << copy_gbps
      << ",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << "    {\"lab\": \"" << r.lab << "\", \"kernel\": \"" << r.kernel << "\", \"size\": \""
        << r.size << "\", \"n\": " << r.n << ", \"ms\": " << r.ms << ", \"value\": " << r.value
        << ", \"unit\": \"" << r.unit << "\", \"ceiling\": \"" << r.ceiling
        << "\", \"fraction\": " << r.fraction << ", \"flops\": " << r.work.flops
        << ", \"bytes\": " << r.work.bytes << "}" << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  std::printf("\nwrote %s\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("make bench on %s; each time is the median of %d runs after 2 warm-ups\n\n",
              prop.name, kRepeats);
  std::printf("%-4s %-28s %-14s %13s %18s\n", "lab", "kernel", "size", "time", "rate");
  ceilings();
  vector_add();
  grayscale();
  matmuls();
  convolutions();
  spmvs();
  averaging();
  bank_conflicts();
  jacobis();
  write_json(argc > 1 ? argv[1] : "bench.json");
  return 0;
}
