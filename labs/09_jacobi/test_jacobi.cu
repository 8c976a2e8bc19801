// Lab 09 tests: one sweep (plain and tiled) against the same sweep in double precision, on grids
// that are not multiples of the block; the GPU's squared difference against the host's; and the
// solver on a problem with a known solution, with the sweep count of the same iteration on the
// host.
#include <cmath>
#include <string>
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/reference.h"
#include "cudalab/testing.h"
#include "jacobi.h"

namespace {

using cudalab::DeviceArray;
using Sweep = cudaError_t (*)(const float*, float*, int, int);

using cudalab::reference::jacobi_sweep;
using cudalab::reference::squared_difference;

void check_sweep(Sweep sweep, const char* name, const char* hint) {
  for (auto [ny, nx] :
       {std::pair{1, 1}, {2, 2}, {3, 3}, {17, 33}, {100, 257}, {513, 511}, {0, 4}}) {
    std::vector<float> u = cudalab::random_floats(size_t(ny) * nx, cudalab::testing::test_seed());
    std::vector<double> expected = jacobi_sweep(u, ny, nx);
    DeviceArray<float> d_u(u), d_v(std::vector<float>(u.size(), cudalab::poison_float()));
    cudaError_t err = sweep(d_u.get(), d_v.get(), ny, nx);
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess)
      FAIL() << name << "(" << ny << " x " << nx << ") returned " << cudalab::error_text(err);
    std::vector<float> v = d_v.to_host();
    // Three additions and a multiplication by 0.25 (exact) in float: within 4 ulps.
    EXPECT_COMPUTED_ON_DEVICE("v", v.data(), expected.size());
    EXPECT_MATCHES("v", v.data(), expected.data(), expected.size(), {1e-6, 1e-6},
                   {size_t(ny), size_t(nx)})
        << name << " on a " << ny << " x " << nx << " grid. " << hint;
  }
}

TEST(JacobiSweep, Grids) {
  check_sweep(jacobiSweep, "jacobiSweep",
              "Boundary points (row 0 or ny-1, column 0 or nx-1) copy u; the others average their "
              "four neighbours.");
}
TEST(JacobiSweepTiled, Grids) {
  check_sweep(jacobiSweepTiled, "jacobiSweepTiled",
              "Blocks of (JACOBI_TILE + 2)^2 threads each load one point (tile + halo); after the "
              "barrier the "
              "inner JACOBI_TILE^2 threads compute from the tile.");
}

TEST(SquaredDifference, MatchesTheHost) {
  for (auto [ny, nx] : {std::pair{1, 1}, {31, 33}, {300, 700}, {1024, 1024}}) {
    uint64_t seed = cudalab::testing::test_seed();
    std::vector<float> u = cudalab::random_floats(size_t(ny) * nx, seed),
                       v = cudalab::random_floats(u.size(), seed + 1);
    double expected = squared_difference(u, v);
    DeviceArray<float> d_u(u), d_v(v), d_sum(std::vector<float>{cudalab::poison_float()});
    cudaError_t err = squaredDifference(d_u.get(), d_v.get(), ny, nx, d_sum.get());
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) FAIL() << "squaredDifference returned " << cudalab::error_text(err);
    std::vector<float> got = d_sum.to_host();
    // A float sum of up to a million terms in any order: relative error well below 1e-4.
    EXPECT_COMPUTED_ON_DEVICE("sum", got.data(), 1);
    EXPECT_MATCHES("sum", got.data(), &expected, 1, {1e-4, 0})
        << ny << " x " << nx
        << ": each block sums its terms in shared memory, then thread 0 atomicAdds the "
        << "block's sum into *result, which the function sets to 0 first.";
  }
}

// Laplace's equation on the unit square with u = x^2 - y^2 on the boundary: the solution is
// x^2 - y^2 itself, and the 5-point average is exact for it, so the converged grid must match it.
struct Problem {
  int n;
  std::vector<float> grid;  // boundary values, interior 0
  std::vector<double> exact;
};

Problem harmonic(int n) {
  Problem p{n, std::vector<float>(n * n, 0.0f), std::vector<double>(n * n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double x = double(j) / (n - 1), y = double(i) / (n - 1);
      p.exact[i * n + j] = x * x - y * y;
      if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
        p.grid[i * n + j] = float(p.exact[i * n + j]);
    }
  return p;
}

// The same iteration on the host, in float as the GPU does: the number of sweeps it needs.
int host_sweeps(std::vector<float> u, int n, float tolerance, int max_sweeps, int check_every) {
  std::vector<float> v = u;
  for (int sweeps = 1; sweeps <= max_sweeps; ++sweeps) {
    for (int i = 1; i < n - 1; ++i)
      for (int j = 1; j < n - 1; ++j)
        v[i * n + j] =
            0.25f * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    u.swap(v);
    if (sweeps % check_every == 0 && squared_difference(u, v) <= tolerance) return sweeps;
  }
  return max_sweeps;
}

TEST(JacobiSolve, ConvergesToTheKnownSolution) {
  const int n = 17, max_sweeps = 5000, check_every = 10;
  const float tolerance = 1e-10f;
  Problem p = harmonic(n);
  DeviceArray<float> d_u(p.grid),
      d_scratch(std::vector<float>(p.grid.size(), cudalab::poison_float()));
  int sweeps = -1;
  cudaError_t err =
      jacobiSolve(d_u.get(), d_scratch.get(), n, n, tolerance, max_sweeps, check_every, &sweeps);
  if (err != cudaSuccess) FAIL() << "jacobiSolve returned " << cudalab::error_text(err);
  std::vector<float> u = d_u.to_host();
  EXPECT_COMPUTED_ON_DEVICE("u", u.data(), p.exact.size());
  EXPECT_MATCHES("u", u.data(), p.exact.data(), p.exact.size(), {0, 1e-4})
      << "the converged grid should be x^2 - y^2 (17 x 17 grid, boundary from the same function)";
  const int expected = host_sweeps(p.grid, n, tolerance, max_sweeps, check_every);
  EXPECT_LT(sweeps, max_sweeps)
      << "jacobiSolve did not stop: is the squared difference checked every " << check_every
      << " sweeps and compared with the tolerance?";
  EXPECT_LE(std::abs(sweeps - expected), check_every)
      << "jacobiSolve stopped after " << sweeps
      << " sweeps; the same iteration on the host stops after " << expected
      << " (a check may land one interval apart: float sums in another order)";
}

TEST(JacobiSolve, StopsAtMaxSweepsAndEmptyGrids) {
  Problem p = harmonic(9);
  DeviceArray<float> d_u(p.grid), d_scratch(std::vector<float>(p.grid.size()));
  int sweeps = -1;
  ASSERT_EQ(jacobiSolve(d_u.get(), d_scratch.get(), 9, 9, 0.0f, 7, 1, &sweeps), cudaSuccess);
  EXPECT_EQ(sweeps, 7)
      << "a tolerance of 0 is never met (before exact convergence): stop after max_sweeps";
  std::vector<float> u = p.grid;
  for (int s = 0; s < 7; ++s) {
    std::vector<double> next = jacobi_sweep(u, 9, 9);
    u.assign(next.begin(), next.end());
  }
  std::vector<double> expected(u.begin(), u.end());
  std::vector<float> got = d_u.to_host();
  EXPECT_COMPUTED_ON_DEVICE("u", got.data(), expected.size());
  EXPECT_MATCHES("u", got.data(), expected.data(), expected.size(), {1e-5, 1e-6})
      << "after 7 sweeps the grid is in u (copy it back if the last sweep wrote scratch)";
  sweeps = -1;
  EXPECT_EQ(jacobiSolve(nullptr, nullptr, 0, 0, 1e-3f, 10, 1, &sweeps), cudaSuccess)
      << "an empty grid";
  EXPECT_EQ(sweeps, 0);
}

// Performance. On emu: the tiled sweep reads each point from global memory about once (plus the
// halos), the plain one about five times.
TEST(JacobiPerformance, TiledReadsEachPointOnce) {
  CUDALAB_COUNTING_TEST();
  const int ny = 96, nx = 128;
  DeviceArray<float> d_u(cudalab::random_floats(ny * nx, 1)), d_v(std::vector<float>(ny * nx));
  const double flops = cudalab::performance::flops::jacobi(ny * nx);
  auto plain = cudalab::performance::count(
      [&] { ASSERT_EQ(jacobiSweep(d_u.get(), d_v.get(), ny, nx), cudaSuccess); },
      {"jacobiSweep", flops});
  auto tiled = cudalab::performance::count(
      [&] { ASSERT_EQ(jacobiSweepTiled(d_u.get(), d_v.get(), ny, nx), cudaSuccess); },
      {"jacobiSweepTiled", flops});
  ASSERT_EQ(plain.size(), 1u);
  ASSERT_EQ(tiled.size(), 1u);
  const double halo = double((JACOBI_TILE + 2) * (JACOBI_TILE + 2)) / (JACOBI_TILE * JACOBI_TILE);
  EXPECT_LE(tiled[0].global_load_bytes, halo * ny * nx * sizeof(float))
      << "each block should read its tile and halo once: (JACOBI_TILE + 2)^2 points per "
         "JACOBI_TILE^2";
  EXPECT_GE(plain[0].global_load_bytes, 3 * tiled[0].global_load_bytes)
      << "the plain sweep reads four neighbours per point, the tiled one each point about once";
}

// On emu: the reduction makes one atomicAdd per block, not one per point (a global atomic from
// every thread serialises the whole grid on one address).
TEST(JacobiPerformance, OneAtomicPerBlock) {
  CUDALAB_COUNTING_TEST();
  const int ny = 96, nx = 128;
  DeviceArray<float> d_u(cudalab::random_floats(ny * nx, 1)),
      d_v(cudalab::random_floats(ny * nx, 2));
  DeviceArray<float> d_sum(std::vector<float>{0.0f});
  auto launches = cudalab::performance::count([&] {
    ASSERT_EQ(squaredDifference(d_u.get(), d_v.get(), ny, nx, d_sum.get()), cudaSuccess);
  });
  ASSERT_FALSE(launches.empty()) << "squaredDifference launched no kernel";
  unsigned long long atomics = 0;
  for (const auto& launch : launches) atomics += launch.atomics;
  const unsigned long long blocks = (ny * nx + JACOBI_REDUCE_BLOCK - 1) / JACOBI_REDUCE_BLOCK;
  EXPECT_GE(atomics, 1u) << "the blocks' sums reach *result with atomicAdd";
  // (Twice the blocks: on emu a float atomicAdd whose swap another block's made fail counts again.)
  EXPECT_LE(atomics, 2 * blocks)
      << atomics << " atomic operations for " << ny * nx << " points: one per block is enough ("
      << blocks << " blocks of " << JACOBI_REDUCE_BLOCK
      << " threads): sum the block's terms in shared memory first, then thread 0 alone does "
         "atomicAdd(result, blockSum).";
}

// On a GPU: the convergence check on the GPU (squaredDifference, one float back) against copying
// both 4096 x 4096 grids to the host and summing there.
TEST(JacobiPerformance, CheckOnTheGpuBeatsCopying) {
  CUDALAB_TIMING_TEST();
  const int n = 4096;
  std::vector<float> u = cudalab::random_floats(size_t(n) * n, 1),
                     v = cudalab::random_floats(u.size(), 2);
  DeviceArray<float> d_u(u), d_v(v), d_sum(std::vector<float>{0});
  std::vector<float> hu(u.size()), hv(v.size());
  auto on_host = [&] {
    CUDA_CHECK(cudaMemcpy(hu.data(), d_u.get(), hu.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hv.data(), d_v.get(), hv.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return squared_difference(hu, hv);
  };
  float got = 0;
  ASSERT_EQ(squaredDifference(d_u.get(), d_v.get(), n, n, d_sum.get()), cudaSuccess);
  CUDA_CHECK(cudaMemcpy(&got, d_sum.get(), sizeof(float), cudaMemcpyDeviceToHost));
  double expected = on_host();
  ASSERT_NEAR(got, expected, 1e-3 * expected) << "not timed: squaredDifference is wrong";
  cudalab::performance::expect_speed(
      "the check on the GPU vs copying both grids to the host",
      [&] {
        squaredDifference(d_u.get(), d_v.get(), n, n, d_sum.get());
        CUDA_CHECK(cudaMemcpy(&got, d_sum.get(), sizeof(float), cudaMemcpyDeviceToHost));
      },
      on_host, 5.0, {.bytes = 2.0 * n * n * sizeof(float), .flops = 3.0 * n * n},
      cudalab::performance::Output<float>{d_sum.get(), 1});
}

}  // namespace
