// Lab 03 tests: the four matrix-product variants, int (exact) and float (within a tolerance),
// against a CPU product in 64-bit integers or double precision. Points per test: rubric.toml.
#include <cmath>
#include <cstdio>
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/reference.h"
#include "cudalab/testing.h"
#include "matmul_variants.h"

namespace {

using cudalab::DeviceArray;
using cudalab::testing::test_seed;

constexpr int kSlack = 32;  // poisoned elements behind C

// The variants by name, each for int and float.
enum class Variant { Row, Col, OneBlock, Element };

template <class T>
cudaError_t run(Variant v, const T* a, const T* b, T* c, int ha, int wa, int wb) {
  switch (v) {
    case Variant::Row:
      return matmulRowPerThread(a, b, c, ha, wa, wb);
    case Variant::Col:
      return matmulColPerThread(a, b, c, ha, wa, wb);
    case Variant::OneBlock:
      return matmulElementOneBlock(a, b, c, ha, wa, wb);
    case Variant::Element:
      return matmulElementPerThread(a, b, c, ha, wa, wb);
  }
  return cudaErrorInvalidValue;
}

const char* hint(Variant v) {
  switch (v) {
    case Variant::Row:
      return "Thread `row` computes c[row][col] for every col: row = blockIdx.x * blockDim.x + "
             "threadIdx.x, and only rows < ha.";
    case Variant::Col:
      return "Thread `col` computes c[row][col] for every row: col = blockIdx.x * blockDim.x + "
             "threadIdx.x, and only columns < wb.";
    case Variant::OneBlock:
      return "One block of dim3(wb, ha) threads: row = threadIdx.y, col = threadIdx.x, wb = "
             "blockDim.x.";
    case Variant::Element:
      return "Row = blockIdx.y * blockDim.y + threadIdx.y, Col = blockIdx.x * blockDim.x + "
             "threadIdx.x; only Row < ha and Col < wb.";
  }
  return "";
}

// C = A * B on the device; the result and the launcher's error (and where a and b lay).
template <class T>
std::vector<T> product(Variant v, const std::vector<T>& a, const std::vector<T>& b, int ha, int wa,
                       int wb, T poison, cudaError_t* err,
                       cudalab::testing::Operands* operands = nullptr) {
  DeviceArray<T> d_a(a), d_b(b), d_c(std::vector<T>(size_t(ha) * wb, poison), kSlack, poison);
  *err = run(v, d_a.get(), d_b.get(), d_c.get(), ha, wa, wb);
  if (operands != nullptr)
    *operands = {{"a", d_a.get(), size_t(ha), size_t(wa), sizeof(T)},
                 {"b", d_b.get(), size_t(wa), size_t(wb), sizeof(T)}};
  return d_c.to_host();
}

// What the thread that stored c's first wrong element read of a and b (emu; testing.h).
template <class T>
std::string reads(Variant v, const std::vector<T>& a, const std::vector<T>& b, int ha, int wa,
                  int wb, const std::vector<T>& c, size_t first_wrong) {
  return cudalab::testing::matmul_reads("c", &c[first_wrong], sizeof(T), first_wrong / wb,
                                        first_wrong % wb, [&] {
                                          cudalab::testing::Operands operands;
                                          cudaError_t err;
                                          product(v, a, b, ha, wa, wb, T(), &err, &operands);
                                          return operands;
                                        });
}

void check_int(Variant v, int ha, int wa, int wb, const std::vector<int>& a,
               const std::vector<int>& b) {
  std::vector<long long> expected(size_t(ha) * wb);
  for (int i = 0; i < ha; ++i)
    for (int j = 0; j < wb; ++j)
      for (int k = 0; k < wa; ++k)
        expected[size_t(i) * wb + j] += (long long)a[i * wa + k] * b[k * wb + j];
  cudaError_t err;
  std::vector<int> c = product(v, a, b, ha, wa, wb, cudalab::kPoisonInt, &err);
  if (err != cudaSuccess)
    FAIL() << ha << "x" << wa << " times " << wa << "x" << wb << " returned "
           << cudalab::error_text(err);
  EXPECT_COMPUTED_ON_DEVICE("c", c.data(), expected.size());
  const size_t first_wrong = cudalab::first_wrong(c.data(), expected.data(), expected.size());
  EXPECT_MATCHES("c", c.data(), expected.data(), expected.size(), {size_t(ha), size_t(wb)})
      << reads(v, a, b, ha, wa, wb, c, first_wrong) << hint(v);
  for (size_t i = expected.size(); i < c.size(); ++i)
    ASSERT_EQ(c[i], cudalab::kPoisonInt)
        << "the kernel wrote past the end of c (element " << i << ")";
}

void check_random_int(Variant v, int ha, int wa, int wb) {
  uint64_t seed = test_seed();
  check_int(v, ha, wa, wb, cudalab::random_ints(size_t(ha) * wa, seed, -9, 9),
            cudalab::random_ints(size_t(wa) * wb, seed + 1, -9, 9));
}

void check_random_float(Variant v, int ha, int wa, int wb) {
  uint64_t seed = test_seed();
  std::vector<float> a = cudalab::random_floats(size_t(ha) * wa, seed);
  std::vector<float> b = cudalab::random_floats(size_t(wa) * wb, seed + 1);
  std::vector<double> expected = cudalab::reference::matmul(a, b, ha, wa, wb);
  cudaError_t err;
  std::vector<float> c = product(v, a, b, ha, wa, wb, cudalab::poison_float(), &err);
  if (err != cudaSuccess)
    FAIL() << ha << "x" << wa << " times " << wa << "x" << wb << " returned "
           << cudalab::error_text(err);
  // A float sum of wa products of numbers below 1 is off by at most about wa * 6e-8 per term.
  EXPECT_COMPUTED_ON_DEVICE("c", c.data(), expected.size());
  const cudalab::Tolerance tolerance{1e-5, 2e-6 * wa};
  const size_t first_wrong =
      cudalab::first_wrong(c.data(), expected.data(), expected.size(), tolerance);
  EXPECT_MATCHES("c", c.data(), expected.data(), expected.size(), tolerance,
                 {size_t(ha), size_t(wb)})
      << reads(v, a, b, ha, wa, wb, c, first_wrong) << hint(v);
  for (size_t i = expected.size(); i < c.size(); ++i)
    ASSERT_TRUE(cudalab::is_poison(c[i]))
        << "the kernel wrote past the end of c (element " << i << ")";
}

// The course's example: a 2 x 3 matrix times a 3 x 3 matrix.
void check_course_example(Variant v) {
  cudaError_t err;
  std::vector<int> c = product<int>(v, {2, 3, 1, 4, 5, 7}, {1, 8, 5, 4, 2, 7, 9, 6, 3}, 2, 3, 3,
                                    cudalab::kPoisonInt, &err);
  if (err != cudaSuccess) FAIL() << "2x3 times 3x3 returned " << cudalab::error_text(err);
  const long long expected[] = {23, 28, 34, 87, 84, 76};
  EXPECT_COMPUTED_ON_DEVICE("c", c.data(), 6);
  EXPECT_MATCHES("c", c.data(), expected, 6) << hint(v);
}

TEST(RowPerThread, CourseExample) { check_course_example(Variant::Row); }
TEST(RowPerThread, OneByOne) { check_random_int(Variant::Row, 1, 1, 1); }
TEST(RowPerThread, ManyRowsInt) {
  check_random_int(Variant::Row, 300, 17, 5);
}  // > 1 block of rows
TEST(RowPerThread, RectangularFloat) { check_random_float(Variant::Row, 37, 53, 29); }

TEST(ColPerThread, CourseExample) { check_course_example(Variant::Col); }
TEST(ColPerThread, OneByOne) { check_random_int(Variant::Col, 1, 1, 1); }
TEST(ColPerThread, ManyColumnsInt) { check_random_int(Variant::Col, 5, 17, 300); }
TEST(ColPerThread, RectangularFloat) { check_random_float(Variant::Col, 37, 53, 29); }

TEST(ElementOneBlock, CourseExample) { check_course_example(Variant::OneBlock); }
TEST(ElementOneBlock, OneByOne) { check_random_int(Variant::OneBlock, 1, 1, 1); }
TEST(ElementOneBlock, RectangularInt) {
  check_random_int(Variant::OneBlock, 20, 33, 25);
}  // 500 threads
TEST(ElementOneBlock, RectangularFloat) { check_random_float(Variant::OneBlock, 31, 7, 33); }
TEST(ElementOneBlock, TooLargeIsRefused) {
  cudaError_t err;
  product<float>(Variant::OneBlock, std::vector<float>(40 * 8, 1.0f),
                 std::vector<float>(8 * 40, 1.0f), 40, 8, 40, 0.0f, &err);
  EXPECT_NE(err, cudaSuccess)
      << "a 40 x 40 result needs 1600 threads in one block, over the limit of "
         "1024: the launch fails, and the function must return its error";
  EXPECT_NE(err, cudaErrorNotYetImplemented) << "matmulElementOneBlock is not written yet";
}

TEST(ElementPerThread, CourseExample) { check_course_example(Variant::Element); }
TEST(ElementPerThread, OneByOne) { check_random_int(Variant::Element, 1, 1, 1); }
TEST(ElementPerThread, RectangularInt) { check_random_int(Variant::Element, 37, 53, 29); }
TEST(ElementPerThread, RectangularFloat) { check_random_float(Variant::Element, 45, 61, 19); }
TEST(ElementPerThread, LargeFloat) { check_random_float(Variant::Element, 129, 257, 65); }

// Performance. On emu: one thread per row makes a warp read 32 different rows of a (32 sectors per
// request); one thread per element makes it read a row of b (a few sectors) and one element of a
// (a broadcast).
TEST(MatmulVariantsPerformance, ElementPerThreadCoalesces) {
  CUDALAB_COUNTING_TEST();
  const int n = 64;
  DeviceArray<float> a(cudalab::random_floats(n * n, 1)), b(cudalab::random_floats(n * n, 2)),
      c(std::vector<float>(n * n));
  const double flops = cudalab::performance::flops::matmul(n, n, n);
  auto rows = cudalab::performance::count(
      [&] { ASSERT_EQ(matmulRowPerThread(a.get(), b.get(), c.get(), n, n, n), cudaSuccess); },
      {"matmulRowPerThread", flops});
  auto elements = cudalab::performance::count(
      [&] { ASSERT_EQ(matmulElementPerThread(a.get(), b.get(), c.get(), n, n, n), cudaSuccess); },
      {"matmulElementPerThread", flops});
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(elements.size(), 1u);
  std::printf("[ COUNTED  ] load sectors: row per thread %llu, element per thread %llu\n",
              rows[0].global_load_sectors, elements[0].global_load_sectors);
  EXPECT_GT(elements[0].global_load_sectors, 0u);
  EXPECT_LE(elements[0].global_load_sectors * 4, rows[0].global_load_sectors)
      << "one thread per element with threadIdx.x choosing the column should touch at most a "
         "quarter of the "
         "sectors that one thread per row touches";
}

// On a GPU: one thread per element (2D grid) against one thread per row, 1024 x 1024.
TEST(MatmulVariantsPerformance, ElementPerThreadFaster) {
  CUDALAB_TIMING_TEST();
  const int n = 1024;
  DeviceArray<float> a(cudalab::random_floats(n * n, 1)), b(cudalab::random_floats(n * n, 2));
  DeviceArray<float> c(std::vector<float>(n * n)), d(std::vector<float>(n * n));
  ASSERT_EQ(matmulRowPerThread(a.get(), b.get(), d.get(), n, n, n), cudaSuccess);
  ASSERT_EQ(matmulElementPerThread(a.get(), b.get(), c.get(), n, n, n), cudaSuccess);
  std::vector<float> C = c.to_host(), D = d.to_host();
  ASSERT_EQ(cudalab::performance::disagreements(C, D, 1e-3f), 0u)
      << "not timed: the two variants disagree";
  cudalab::performance::expect_speed(
      "matmulElementPerThread vs matmulRowPerThread, 1024^3",
      [&] { matmulElementPerThread(a.get(), b.get(), c.get(), n, n, n); },
      [&] { matmulRowPerThread(a.get(), b.get(), d.get(), n, n, n); }, 4.0,
      {.flops = 2.0 * n * n * n}, cudalab::performance::Output<float>{c.get(), size_t(n) * n});
}

}  // namespace
