// Lab 08 tests: the strided copy and the tiled transpose are correct for every stride and size;
// on emu the bank-conflict counters show what the course predicts (stride s: gcd(s, 32)-way;
// padded: conflict-free); on a GPU the padded transpose is timed against the unpadded one.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "bank_conflicts.h"
#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/testing.h"

namespace {

using cudalab::DeviceArray;

std::vector<float> strided(int stride, bool padded) {
  std::vector<float> in(32);
  std::iota(in.begin(), in.end(), 100.0f);
  DeviceArray<float> d_in(in), d_out(std::vector<float>(32, cudalab::poison_float()));
  cudaError_t err = stridedCopy(d_in.get(), d_out.get(), stride, padded);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    ADD_FAILURE() << "stridedCopy(stride " << stride << ") returned " << cudalab::error_text(err);
  return d_out.to_host();
}

TEST(StridedCopy, EveryStrideRoundTrips) {
  std::vector<float> expected(32);
  std::iota(expected.begin(), expected.end(), 100.0f);
  for (bool padded : {false, true})
    for (int stride = 1; stride <= 32; ++stride)
      EXPECT_EQ(strided(stride, padded), expected)
          << "stride " << stride << (padded ? ", padded" : "")
          << ": thread t stores in[t] at word t * stride" << (padded ? " + t * stride / 32" : "")
          << ", then reads the same word into out[t]";
}

// The counters of the copy's launch, counted by the emu backend.
cudalab::LaunchCounters counted(int stride, bool padded) {
  auto launches = cudalab::performance::count([&] { strided(stride, padded); });
  if (launches.size() != 1 || launches[0].shared_load_requests == 0) {
    ADD_FAILURE() << "stridedCopy(stride " << stride << ") made no shared-memory access";
    return {};
  }
  return launches[0];
}

TEST(StridedCopyBanks, StrideSIsGcdWay) {
  CUDALAB_COUNTING_TEST();
  for (int stride : {1, 2, 4, 8, 16, 32, 3, 6}) {
    const cudalab::LaunchCounters c = counted(stride, false);
    EXPECT_DOUBLE_EQ(c.bank_conflict_degree(), std::gcd(stride, 32))
        << "stride " << stride << ": words t * stride fall into 32 / gcd(stride, 32) banks. "
        << c.worst_line(true);
  }
}

TEST(StridedCopyBanks, PaddingMakesPowersOfTwoConflictFree) {
  CUDALAB_COUNTING_TEST();
  for (int stride : {1, 2, 4, 8, 16, 32}) {
    const cudalab::LaunchCounters c = counted(stride, true);
    EXPECT_DOUBLE_EQ(c.bank_conflict_degree(), 1.0)
        << "stride " << stride << " padded: word i + i / 32 moves each row of 32 one bank further. "
        << c.worst_line(true);
  }
}

// A permutation of 0..31 from the test's seed.
std::vector<int> permutation() {
  std::vector<int> perm(32);
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<float> keys = cudalab::random_floats(32, cudalab::testing::test_seed());
  std::sort(perm.begin(), perm.end(), [&](int a, int b) { return keys[a] < keys[b]; });
  return perm;
}

std::vector<float> run_permuted(const std::vector<int>& perm,
                                std::vector<cudalab::LaunchCounters>* counted) {
  std::vector<float> in(32);
  std::iota(in.begin(), in.end(), 7.0f);
  DeviceArray<float> d_in(in), d_out(std::vector<float>(32, cudalab::poison_float()));
  DeviceArray<int> d_perm(perm);
  *counted = cudalab::performance::count([&] {
    cudaError_t err = permutedCopy(d_in.get(), d_out.get(), d_perm.get());
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) ADD_FAILURE() << "permutedCopy returned " << cudalab::error_text(err);
  });
  return d_out.to_host();
}

std::vector<float> run_broadcast(std::vector<cudalab::LaunchCounters>* counted) {
  DeviceArray<float> d_in(std::vector<float>{42.0f}),
      d_out(std::vector<float>(32, cudalab::poison_float()));
  *counted = cudalab::performance::count([&] {
    cudaError_t err = broadcastCopy(d_in.get(), d_out.get());
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) ADD_FAILURE() << "broadcastCopy returned " << cudalab::error_text(err);
  });
  return d_out.to_host();
}

TEST(PermutedAndBroadcast, Copies) {
  std::vector<cudalab::LaunchCounters> counted;
  std::vector<float> expected(32);
  std::iota(expected.begin(), expected.end(), 7.0f);
  EXPECT_EQ(run_permuted(permutation(), &counted), expected)
      << "thread t stores in[t] at word perm[t], then reads word perm[t] back into out[t]";
  EXPECT_EQ(run_broadcast(&counted), std::vector<float>(32, 42.0f))
      << "thread 0 stores in[0] into the shared word; after the barrier every thread reads it";
}

TEST(PermutedAndBroadcastBanks, ConflictFree) {
  CUDALAB_COUNTING_TEST();
  std::vector<cudalab::LaunchCounters> counted;
  run_permuted(permutation(), &counted);
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_GT(counted[0].shared_load_requests, 0u) << "the copy should go through shared memory";
  EXPECT_DOUBLE_EQ(counted[0].bank_conflict_degree(), 1.0)
      << "a permutation of one row's words is conflict-free. " << counted[0].worst_line(true);
  run_broadcast(&counted);
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_GT(counted[0].shared_load_requests, 0u) << "the copy should go through shared memory";
  EXPECT_DOUBLE_EQ(counted[0].bank_conflict_degree(), 1.0)
      << "32 threads reading one word is one pass. " << counted[0].worst_line(true);
}

// A rows x cols matrix of distinct values, transposed on the host.
void check_transpose(cudaError_t (*transpose)(const float*, float*, int, int), const char* name,
                     int rows, int cols) {
  std::vector<float> in =
      cudalab::random_floats(size_t(rows) * cols, cudalab::testing::test_seed());
  std::vector<double> expected(in.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) expected[size_t(c) * rows + r] = in[size_t(r) * cols + c];
  DeviceArray<float> d_in(in), d_out(std::vector<float>(in.size(), cudalab::poison_float()));
  cudaError_t err = transpose(d_in.get(), d_out.get(), rows, cols);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    FAIL() << name << "(" << rows << " x " << cols << ") returned " << cudalab::error_text(err);
  std::vector<float> out = d_out.to_host();
  EXPECT_COMPUTED_ON_DEVICE("out", out.data(), expected.size());
  EXPECT_MATCHES("out", out.data(), expected.data(), expected.size(), {0, 0},
                 {size_t(cols), size_t(rows)})  // (the transpose has cols rows)
      << name << " of a " << rows << " x " << cols
      << " matrix: element (r, c) of in goes to (c, r) of out, "
      << "out[c * rows + r]. Check both bounds tests when the tile sticks out of the matrix.";
}

void check_sizes(cudaError_t (*transpose)(const float*, float*, int, int), const char* name) {
  for (auto [rows, cols] : {std::pair{1, 1}, {32, 32}, {33, 65}, {100, 7}, {0, 5}, {1000, 999}})
    check_transpose(transpose, name, rows, cols);
}

TEST(Transpose, UnpaddedSizes) { check_sizes(transposeUnpadded, "transposeUnpadded"); }
TEST(Transpose, PaddedSizes) { check_sizes(transposePadded, "transposePadded"); }

TEST(TransposeBanks, PaddingRemovesColumnConflicts) {
  CUDALAB_COUNTING_TEST();
  const int n = 64;
  DeviceArray<float> d_in(cudalab::random_floats(n * n, 1)), d_out(std::vector<float>(n * n));
  auto plain = cudalab::performance::count(
      [&] { ASSERT_EQ(transposeUnpadded(d_in.get(), d_out.get(), n, n), cudaSuccess); });
  auto padded = cudalab::performance::count(
      [&] { ASSERT_EQ(transposePadded(d_in.get(), d_out.get(), n, n), cudaSuccess); });
  ASSERT_EQ(plain.size(), 1u);
  ASSERT_EQ(padded.size(), 1u);
  // Per 32 x 32 tile: 32 row stores of one pass each; 32 column loads of 32 passes, or of 1.
  EXPECT_EQ(plain[0].shared_wavefronts, 4u * (32 + 32 * 32))
      << "the unpadded tile's columns are 32-way";
  EXPECT_DOUBLE_EQ(padded[0].bank_conflict_degree(), 1.0)
      << "[TILE_DIM][TILE_DIM + 1] has no conflicts. " << padded[0].worst_line(true);
  for (const auto& c : {plain[0], padded[0]}) {
    EXPECT_DOUBLE_EQ(c.load_efficiency(), 1.0)
        << "reads of `in` should be coalesced: threadIdx.x picks the column. "
        << c.worst_line(false);
    EXPECT_DOUBLE_EQ(c.store_efficiency(), 1.0)
        << "writes of `out` should be coalesced: threadIdx.x picks the column of out. "
        << c.worst_line(false);
  }
}

// On a GPU: an 8192 x 8192 transpose with the padded tile against the unpadded one.
TEST(TransposePerformance, PaddedFaster) {
  CUDALAB_TIMING_TEST();
  const int n = 8192;
  ASSERT_NO_FATAL_FAILURE(check_transpose(transposePadded, "transposePadded", n, n));
  DeviceArray<float> d_in(cudalab::random_floats(size_t(n) * n, 1)),
      d_out(std::vector<float>(size_t(n) * n));
  cudalab::performance::expect_speed(
      "transposePadded vs transposeUnpadded, 8192 x 8192",
      [&] { transposePadded(d_in.get(), d_out.get(), n, n); },
      [&] { transposeUnpadded(d_in.get(), d_out.get(), n, n); }, 1.1,
      {.bytes = 2.0 * n * n * sizeof(float)},
      cudalab::performance::Output<float>{d_out.get(), size_t(n) * n});
}

}  // namespace
