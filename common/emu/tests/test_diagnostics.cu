// Every planted bug of the catalogue (bugs/planted_bugs.cu) is stopped with the right category of
// diagnostic, the kernel, and the line of the bug; four of them also when launched from this file,
// which is compiled without the checks, and a race between two rows of a block.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "cudalab/emu/inspect.h"
#include "planted_bugs.h"

namespace {

// The line of `mark` in `path`.
int line_in(const char* path, const std::string& mark) {
  std::ifstream file(path);
  std::string text;
  for (int line = 1; std::getline(file, text); ++line)
    if (text.find(mark) != std::string::npos) return line;
  return -1;
}
// The line of `// BUG: name` in planted_bugs.cu.
int line_of(const std::string& name) { return line_in(CUDALAB_BUGS_FILE, "// BUG: " + name); }

// Runs `bug` (its own run, or `run`) and expects its diagnostic: the category, or one of its
// alternatives ("a|b": a bug that is both, found either way first), and the bug's line. Returns
// what was said.
std::string expect_named(const PlantedBug& bug, cudaError_t (*run)()) {
  cudaDeviceReset();
  cudalab::emu::clear_diagnostic();
  cudalab::emu::set_time_limit(1);
  cudaError_t error = run();
  std::string said = cudalab::emu::last_diagnostic();
  EXPECT_NE(error, cudaSuccess) << "the bug went unnoticed";
  bool named = false;
  for (size_t from = 0, bar;; from = bar + 1) {
    bar = std::string(bug.category).find('|', from);
    named =
        named || said.find(std::string(bug.category).substr(from, bar - from)) != std::string::npos;
    if (bar == std::string::npos) break;
  }
  EXPECT_TRUE(named) << "expected '" << bug.category << "' in: " << said;
  const std::string line = "planted_bugs.cu:" + std::to_string(line_of(bug.name));
  EXPECT_NE(said.find(line), std::string::npos) << "expected " << line << " in: " << said;
  cudaDeviceReset();
  return said;
}

// Each planted wrong result is explained with its line and a fix that fits (compare.h, with the
// emu's word on who stored each element).
class PlantedWrongResults : public ::testing::TestWithParam<PlantedWrongResult> {};

TEST_P(PlantedWrongResults, ExplainedWithLineAndFix) {
  cudalab::set_store_finder(&cudalab::emu::element_store);
  cudaDeviceReset();
  const std::string report = GetParam().run();
  cudalab::set_store_finder(nullptr);
  ASSERT_FALSE(report.empty()) << "the wrong result went unnoticed";
  EXPECT_NE(report.find(GetParam().fix), std::string::npos)
      << "expected '" << GetParam().fix << "' in: " << report;
  const std::string line = "planted_bugs.cu:" + std::to_string(line_of(GetParam().name));
  EXPECT_NE(report.find(line), std::string::npos) << "expected " << line << " in: " << report;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, PlantedWrongResults,
                         ::testing::ValuesIn(planted_wrong_results()),
                         [](const auto& info) { return std::string(info.param.name); });

class PlantedBugs : public ::testing::TestWithParam<PlantedBug> {};

TEST_P(PlantedBugs, NamedWithCategoryAndLine) { expect_named(GetParam(), GetParam().run); }

INSTANTIATE_TEST_SUITE_P(Catalogue, PlantedBugs, ::testing::ValuesIn(planted_bugs()),
                         [](const auto& info) { return std::string(info.param.name); });

// The catalogue launches its kernels from planted_bugs.cu, which has the checks; a lab's test
// launches the student's kernel from its own file, compiled without them (as this one is). The
// checks must tell the kernel's threads apart then too, and judge a thread's overwrite before the
// next thread runs: these four bugs are races between two threads that run one after the other in
// one row of a block. Where a block runs alone, the message must name the thread too.
constexpr int N = 1000, THREADS = 256;
cudaError_t reverse_without_barrier() {
  float *in, *out;
  cudaMalloc(&in, N * sizeof(float));
  cudaMalloc(&out, N * sizeof(float));
  cudaMemset(in, 0, N * sizeof(float));
  planted::reverse_no_sync<<<(N + THREADS - 1) / THREADS, THREADS>>>(in, out, N);
  cudaError_t error = cudaDeviceSynchronize();
  cudaFree(in);
  cudaFree(out);
  return error;
}
// Runs `launch(in, out)` on a device copy of a ramp of `inputs` floats (each thread's value differs
// from every other's) and an output of `outputs` floats; returns the launch's error.
cudaError_t on_a_ramp(size_t inputs, size_t outputs, void (*launch)(const float* in, float* out)) {
  std::vector<float> ramp(inputs);
  for (size_t i = 0; i < inputs; ++i) ramp[i] = static_cast<float>(i);
  float *in, *out;
  cudaMalloc(&in, inputs * sizeof(float));
  cudaMalloc(&out, outputs * sizeof(float));
  cudaMemcpy(in, ramp.data(), inputs * sizeof(float), cudaMemcpyHostToDevice);
  launch(in, out);
  cudaError_t error = cudaDeviceSynchronize();
  cudaFree(in);
  cudaFree(out);
  return error;
}
cudaError_t two_writers_in_one_block() {
  return on_a_ramp(THREADS, THREADS, [](const float* in, float* out) {
    planted::half_index_in_one_block<<<1, THREADS>>>(in, out, THREADS);
  });
}
template <void (*kernel)(float*, int)>
cudaError_t in_place_in_one_block() {
  float* a;
  cudaMalloc(&a, THREADS * sizeof(float));
  std::vector<float> ramp(THREADS);  // (a shift of equal elements leaves them in any order)
  for (int i = 0; i < THREADS; ++i) ramp[i] = static_cast<float>(i);
  cudaMemcpy(a, ramp.data(), THREADS * sizeof(float), cudaMemcpyHostToDevice);
  kernel<<<1, THREADS>>>(a, THREADS);
  cudaError_t error = cudaDeviceSynchronize();
  cudaFree(a);
  return error;
}
struct LaunchedHere {
  const char* bug;  // its name in the catalogue
  cudaError_t (*run)();
  const char* thread;  // the thread the message names first, or nullptr (blocks run in any order)
  friend void PrintTo(const LaunchedHere& l, std::ostream* os) { *os << l.bug; }
};
class PlantedBugsLaunchedFromUncheckedCode : public ::testing::TestWithParam<LaunchedHere> {};

TEST_P(PlantedBugsLaunchedFromUncheckedCode, NamedWithCategoryAndLine) {
  const auto& bugs = planted_bugs();
  auto bug = std::find_if(bugs.begin(), bugs.end(), [&](const PlantedBug& b) {
    return std::string(b.name) == GetParam().bug;
  });
  ASSERT_NE(bug, bugs.end()) << GetParam().bug << " is not in the catalogue";
  const std::string said = expect_named(*bug, GetParam().run);
  if (GetParam().thread != nullptr)
    EXPECT_NE(said.find(GetParam().thread), std::string::npos)
        << "expected " << GetParam().thread << " in: " << said;
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, PlantedBugsLaunchedFromUncheckedCode,
    ::testing::Values(LaunchedHere{"read_before_barrier", reverse_without_barrier, nullptr},
                      LaunchedHere{"in_place_shift_in_one_block",
                                   in_place_in_one_block<planted::shift_in_one_block>,
                                   "thread (2,0,0), at"},
                      LaunchedHere{"write_after_read_in_one_block",
                                   in_place_in_one_block<planted::shift_left_in_one_block>,
                                   "thread (2,0,0), at"},
                      LaunchedHere{"two_threads_write_one_element", two_writers_in_one_block,
                                   "thread (1,0,0), at"}),
    [](const auto& info) { return std::string(info.param.bug); });

// The same for two threads in different rows of a 2D block (threadIdx.y differs): the row loop
// keeps the running thread's number once per row, so a number left from the row before would make
// the two writers look like one thread.
cudaError_t two_rows_write_one_row() {
  constexpr unsigned kRow = 32;  // a block of two rows
  return on_a_ramp(2 * kRow, kRow, [](const float* in, float* out) {
    planted::two_rows_write_one_row<<<1, dim3(kRow, 2)>>>(in, out);
  });
}
TEST(RowsOfABlockLaunchedFromUncheckedCode, TwoWritersInTwoRowsAreNamed) {
  const std::string said = expect_named(
      PlantedBug{"two_rows_write_one_row", "with another value", nullptr}, two_rows_write_one_row);
  EXPECT_NE(said.find("thread (0,1,0), at"), std::string::npos) << said;
}

// Kernels of this file that wait at barriers or warp-level calls, in their own body or in functions
// of the file, run their threads as loops between barriers (thread_loops.h: return_before_barrier,
// return_before_shuffle, assert_after_barrier, reverse) or on fibers (the others; this file has no
// checks). Barrier and warp divergence are named there as on fibers, a
// failed assert fails its launch and the next runs, and a wait the translator could not see is said
// to be one.
__global__ void return_before_barrier(float* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = 1;
  __syncthreads();  // WAITS: return_before_barrier
}
__global__ void two_barriers(float* out) {
  if (threadIdx.x < 16)
    __syncthreads();  // WAITS: two_barriers
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}
__global__ void barriers_in_a_loop_of_each_own_length(float* out) {
  for (unsigned k = 0; k < threadIdx.x % 4; ++k) __syncthreads();  // WAITS: own_length
  out[threadIdx.x] = 1;
}
__global__ void shuffle_in_half_a_warp(float* out) {
  float v = 1;
  if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffff, v, 1);  // WAITS: half_a_warp
  out[threadIdx.x] = v;
}
__global__ void return_before_shuffle(float* out) {
  if (threadIdx.x >= 16) return;
  const float v = __shfl_down_sync(0xffffffff, 1.0f, 1);  // WAITS: return_before_shuffle
  out[threadIdx.x] = v;
}
__global__ void vote_in_half_a_block(float* out) {
  if (threadIdx.x < 16) out[0] = __syncthreads_count(1);  // WAITS: vote_in_half_a_block
}
__global__ void syncwarp_in_half_a_warp(float* out) {
  if (threadIdx.x < 16) __syncwarp();  // WAITS: syncwarp_in_half_a_warp
  out[threadIdx.x] = 1;
}
__device__ void barrier_after(float* out) {
  out[threadIdx.x] = 1;
  __syncthreads();  // WAITS: barrier_in_a_function
}
__global__ void half_the_block_calls_a_barrier(float* out) {
  if (threadIdx.x < 16) barrier_after(out);
}
__device__ float shuffled(float v) {
  return __shfl_xor_sync(0xffffffff, v, 1);  // WAITS: shuffle_in_a_function
}
__global__ void half_a_warp_calls_a_shuffle(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x < 16) v = shuffled(v);
  out[threadIdx.x] = v;
}
__global__ void shuffle_of_width_12(float* out) {
  out[threadIdx.x] = __shfl_down_sync(0xffffffff, 1.0f, 1, 12);  // WAITS: width_12
}
__global__ void assert_after_barrier(float* out) {
  out[threadIdx.x] = 1;
  __syncthreads();
  assert(threadIdx.x != 5);  // WAITS: assert_after_barrier
}
__global__ void reverse(const float* in, float* out) {
  __shared__ float tile[32];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[31 - threadIdx.x];
}
// A wait that the translator's front end does not see (Clang reads the file with
// CUDALAB_FRONT_END defined), as a wait it missed would be: the runtime must say so.
#ifdef CUDALAB_FRONT_END
#define CUDALAB_HIDDEN_WAIT
#else
#define CUDALAB_HIDDEN_WAIT __syncthreads()
#endif
__global__ void waits_where_the_translator_cannot_see(float* out) {
  __syncthreads();
  CUDALAB_HIDDEN_WAIT;  // WAITS: hidden_wait
  out[threadIdx.x] = 1;
}

// Runs `launch` on 32 threads; returns its error, and what was said.
std::pair<cudaError_t, std::string> on_32_threads(void (*launch)(const float* in, float* out)) {
  cudaDeviceReset();
  cudalab::emu::clear_diagnostic();
  const cudaError_t error = on_a_ramp(32, 32, launch);
  return {error, cudalab::emu::last_diagnostic()};
}
std::string here(const char* name) {
  return "test_diagnostics.cu:" +
         std::to_string(line_in(__FILE__, "// WAITS: " + std::string(name)));
}
// Runs `launch` on 32 threads, which must fail it with `what`, said at the line marked `name`;
// returns what was said.
std::string expect_stopped(void (*launch)(const float* in, float* out), const char* what,
                           const char* name) {
  const auto [error, said] = on_32_threads(launch);
  EXPECT_EQ(error, cudaErrorLaunchFailure) << name;
  EXPECT_NE(said.find(what), std::string::npos) << name << ": " << said;
  EXPECT_NE(said.find(here(name)), std::string::npos)
      << "expected " << here(name) << " in: " << said;
  return said;
}

TEST(KernelsOfUncheckedCode, BarrierDivergenceIsNamed) {
  using Launch = void (*)(const float*, float*);
  const std::pair<const char*, Launch> kernels[] = {
      {"return_before_barrier",
       [](const float*, float* out) { return_before_barrier<<<1, 32>>>(out); }},
      {"two_barriers", [](const float*, float* out) { two_barriers<<<1, 32>>>(out); }},
      {"own_length",
       [](const float*, float* out) { barriers_in_a_loop_of_each_own_length<<<1, 32>>>(out); }},
      {"vote_in_half_a_block",
       [](const float*, float* out) { vote_in_half_a_block<<<1, 32>>>(out); }},
      {"barrier_in_a_function",
       [](const float*, float* out) { half_the_block_calls_a_barrier<<<1, 32>>>(out); }},
  };
  for (const auto& [name, launch] : kernels) expect_stopped(launch, "barrier divergence", name);
}

TEST(KernelsOfUncheckedCode, WarpDivergenceIsNamed) {
  using Launch = void (*)(const float*, float*);
  const std::pair<const char*, Launch> kernels[] = {
      {"half_a_warp", [](const float*, float* out) { shuffle_in_half_a_warp<<<1, 32>>>(out); }},
      {"syncwarp_in_half_a_warp",
       [](const float*, float* out) { syncwarp_in_half_a_warp<<<1, 32>>>(out); }},
      {"shuffle_in_a_function",
       [](const float*, float* out) { half_a_warp_calls_a_shuffle<<<1, 32>>>(out); }},
      {"return_before_shuffle",
       [](const float*, float* out) { return_before_shuffle<<<1, 32>>>(out); }},
  };
  for (const auto& [name, launch] : kernels) {
    const std::string said = expect_stopped(launch, "warp divergence", name);
    EXPECT_NE(said.find("16-31"), std::string::npos) << said;
  }
}

TEST(KernelsOfUncheckedCode, AShuffleWidthThatIsNotAPowerOfTwoIsNamed) {
  expect_stopped([](const float*, float* out) { shuffle_of_width_12<<<1, 32>>>(out); },
                 "a shuffle of width 12", "width_12");
}

TEST(KernelsOfUncheckedCode, AFailedAssertFailsItsLaunchAndTheNextRuns) {
  const auto [error, said] =
      on_32_threads([](const float*, float* out) { assert_after_barrier<<<1, 32>>>(out); });
  EXPECT_EQ(error, cudaErrorAssert) << said;
  EXPECT_NE(said.find(here("assert_after_barrier")), std::string::npos) << said;
  static float reversed[32];
  const auto [next, nothing] = on_32_threads([](const float* in, float* out) {
    reverse<<<1, 32>>>(in, out);
    cudaMemcpy(reversed, out, sizeof reversed, cudaMemcpyDeviceToHost);
  });
  EXPECT_EQ(next, cudaSuccess) << nothing;
  for (int i = 0; i < 32; ++i) EXPECT_EQ(reversed[i], 31 - i);
}

TEST(KernelsOfUncheckedCode, AWaitTheTranslatorCouldNotSeeIsSaidToBeOne) {
  const auto [error, said] = on_32_threads(
      [](const float*, float* out) { waits_where_the_translator_cannot_see<<<1, 32>>>(out); });
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(
      said.find("waits at a barrier or warp-level call inside a function that the kernel calls"),
      std::string::npos)
      << said;
  EXPECT_NE(said.find("thread (0,0,0) of block (0,0,0)"), std::string::npos) << said;
}

}  // namespace
