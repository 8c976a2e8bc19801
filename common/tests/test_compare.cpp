// Unit tests of the host helpers: the reports a student reads must say the right thing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/data.h"

namespace {

using cudalab::compare;

TEST(Compare, EmptyWhenWithinTolerance) {
  float got[] = {1.0f, 2.0000001f};
  double want[] = {1.0, 2.0};
  EXPECT_EQ(compare("C", got, want, 2, {1e-6, 0}), "");
}

TEST(Compare, NamesFirstWrongElementsWithValues) {
  float got[] = {1.0f, 5.0f, 3.0f};
  double want[] = {1.0, 2.0, 3.0};
  std::string r = compare("C", got, want, 3, {1e-6, 0});
  EXPECT_NE(r.find("1 of 3 elements are wrong"), std::string::npos) << r;
  EXPECT_NE(r.find("C[1] = 5, expected 2"), std::string::npos) << r;
}

TEST(Compare, NanNeverPasses) {
  float got[] = {NAN};
  double want[] = {1.0};
  EXPECT_NE(compare("C", got, want, 1, {1.0, 1.0}), "");
}

TEST(Compare, PoisonIsReportedAsNeverWritten) {
  float got[] = {1.0f, cudalab::poison_float(), cudalab::poison_float()};
  double want[] = {1.0, 2.0, 3.0};
  std::string r = compare("C", got, want, 3, {1e-6, 0});
  EXPECT_NE(r.find("C[1] = (never written)"), std::string::npos) << r;
  EXPECT_NE(r.find("none from 1 on was written"), std::string::npos) << r;
}

TEST(Compare, NothingWrittenSuggestsTheLaunch) {
  float got[] = {cudalab::poison_float(), cudalab::poison_float()};
  double want[] = {1.0, 2.0};
  EXPECT_NE(compare("C", got, want, 2, {1e-6, 0}).find("did the kernel run"), std::string::npos);
}

TEST(Compare, ListsAtMostFiveAndCountsTheRest) {
  float got[8] = {};
  double want[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  std::string r = compare("C", got, want, 8, {0, 0});
  EXPECT_NE(r.find("... and 3 more"), std::string::npos) << r;
  EXPECT_EQ(r.find("C[5]"), std::string::npos) << r;
}

TEST(Compare, IntegersMustMatchExactly) {
  int got[] = {3, cudalab::kPoisonInt};
  long long want[] = {3, 4};
  std::string r = compare("P", got, want, 2);
  EXPECT_NE(r.find("P[1] = (never written), expected 4"), std::string::npos) << r;
}

TEST(Compare, BytesWithinAMaximumDifference) {
  unsigned char got[] = {10, 12, 200};
  long long want[] = {11, 12, 198};
  std::string r = compare("gray", got, want, 3, 1);
  EXPECT_NE(r.find("1 of 3 elements are wrong"), std::string::npos) << r;
  EXPECT_NE(r.find("gray[2] = 200, expected 198"), std::string::npos) << r;
  EXPECT_EQ(compare("gray", got, want, 2, 1), "");
}

// What the data of a wrong result says (src/wrong_result.cpp): each typical mistake, planted in
// an output of distinct values, must be named, and a right one must not be.
std::vector<double> distinct(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 1.0 + double((i * 7919) % 1000003) / 7.0;
  return v;
}
std::vector<float> as_floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }
std::string check(const std::vector<float>& got, const std::vector<double>& want,
                  cudalab::Shape shape = {}) {
  return compare("P", got.data(), want.data(), want.size(), {1e-6, 0}, shape);
}

TEST(WrongResult, ShiftedByOne) {
  auto want = distinct(1000);
  auto got = as_floats(want);
  for (size_t i = 0; i + 1 < 1000; ++i) got[i] = float(want[i + 1]);
  std::string r = check(got, want);
  EXPECT_NE(r.find("shifted by 1 element: element i holds what belongs at i + 1"),
            std::string::npos)
      << r;
}

TEST(WrongResult, AConstantFactor) {
  auto want = distinct(300);
  auto got = as_floats(want);
  for (size_t i = 0; i < 300; ++i) got[i] = float(want[i] / 5);
  std::string r = check(got, want);
  EXPECT_NE(r.find("Every wrong element is 0.2 times the expected value"), std::string::npos) << r;
}

TEST(WrongResult, Transposed) {
  const size_t n = 40;
  auto want = distinct(n * n);
  auto got = as_floats(want);
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) got[r * n + c] = float(want[c * n + r]);
  std::string r = check(got, want, {n, n});
  EXPECT_NE(r.find("The output is transposed"), std::string::npos) << r;
  EXPECT_EQ(r.find("Where the wrong elements are"), std::string::npos) << "(all of them)\n" << r;
}

TEST(WrongResult, OnlyTheBorderOfAnImage) {
  const size_t rows = 30, cols = 50;
  auto want = distinct(rows * cols);
  auto got = as_floats(want);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      if (r < 2 || c < 2 || r >= rows - 2 || c >= cols - 2) got[r * cols + c] += 1.0f;
  std::string r = check(got, want, {rows, cols});
  EXPECT_NE(r.find("Only a border 2 elements wide is wrong"), std::string::npos) << r;
  EXPECT_NE(r.find("Where the wrong elements are (30 x 50"), std::string::npos) << r;
  EXPECT_NE(r.find("    XXXXXXXX"), std::string::npos) << r;  // the first row of the map
  EXPECT_NE(r.find("    X......"), std::string::npos) << r;   // and inside
}

TEST(WrongResult, RowsFromSomeOn) {
  const size_t rows = 20, cols = 16;
  auto want = distinct(rows * cols);
  auto got = as_floats(want);
  for (size_t i = 16 * cols; i < rows * cols; ++i) got[i] = cudalab::poison_float();
  got[16 * cols] = 3.0f;  // (one written wrong: not "none written from there on")
  std::string r = check(got, want, {rows, cols});
  EXPECT_NE(r.find("the wrong elements are in rows 16..19"), std::string::npos) << r;
}

TEST(WrongResult, EveryTileWidthElement) {
  auto want = distinct(1024);
  auto got = as_floats(want);
  for (size_t i = 15; i < 1024; i += 16) got[i] += 1.0f;  // the last element of each tile of 16
  std::string r = check(got, want);
  EXPECT_NE(r.find("repeat every 16 elements (positions 15 of each 16)"), std::string::npos) << r;
}

TEST(WrongResult, OnlyTheLastPartialBlock) {
  auto want = distinct(1000);  // 3 blocks of 256 and 232 more
  auto got = as_floats(want);
  for (size_t i = 768; i < 1000; ++i) got[i] = float(want[i]) + 1.0f;
  std::string r = check(got, want);
  EXPECT_NE(r.find("Only the last, partial group of 232 elements (from 768"), std::string::npos)
      << r;
}

TEST(WrongResult, AOneDimensionalOutputGetsAOneRowMap) {
  auto want = distinct(1000);
  auto got = as_floats(want);
  for (size_t i = 768; i < 1000; ++i) got[i] = float(want[i]) + 1.0f;  // the last 232 elements
  std::string r = check(got, want);
  EXPECT_NE(r.find("Where the wrong elements are (1 x 1000, each mark 1 x 21 elements"),
            std::string::npos)
      << r;
  // 48 marks of about 21 elements: marks 0..35 hold right ones only, from mark 36 on wrong ones.
  EXPECT_NE(r.find("    " + std::string(36, '.') + "X" + std::string(11, 'X')), std::string::npos)
      << r;
}

TEST(WrongResult, NanAndZeros) {
  auto want = distinct(10);
  auto got = as_floats(want);
  got[3] = NAN;
  EXPECT_NE(check(got, want).find("1 wrong element(s) are NaN or Inf"), std::string::npos);
  got = as_floats(want);
  got[2] = got[7] = 0.0f;
  EXPECT_NE(check(got, want).find("Every wrong element is 0 and the others are right"),
            std::string::npos);
}

// Each pattern's evidence rule, and the cases it must refuse.
TEST(WrongResult, ZerosBlameTheCopyOnlyWhereTheyShowIt) {
  auto want = distinct(100);
  std::vector<float> got(100, 0.0f);
  std::string r = check(got, want);
  EXPECT_NE(r.find("Every element is 0: was the result copied back"), std::string::npos) << r;
  got = as_floats(want);
  for (size_t i = 25; i < 100; ++i) got[i] = 0.0f;  // a copy of 25 elements' bytes, say
  r = check(got, want);
  EXPECT_NE(r.find("every one from 25 on is 0: was only part of the output copied back"),
            std::string::npos)
      << r;
  got = as_floats(want);
  for (size_t i = 0; i < 100; i += 3) got[i] = 0.0f;  // zeros among right elements
  r = check(got, want);
  EXPECT_EQ(r.find("copied back"), std::string::npos) << r;
}

TEST(WrongResult, AFactorFromOneElementIsNoClaim) {
  auto want = distinct(300);
  auto got = as_floats(want);
  got[42] = float(want[42] * 10.23);
  std::string r = check(got, want);
  EXPECT_EQ(r.find("times the expected"), std::string::npos) << r;
}

TEST(WrongResult, APeriodFitsTwiceInARow) {
  const size_t rows = 32, cols = 64;
  auto want = distinct(rows * cols);
  auto got = as_floats(want);
  for (size_t r = 0; r < rows; ++r) got[r * cols + 5] += 1.0f;  // one column: no period
  std::string r = check(got, want, {rows, cols});
  EXPECT_EQ(r.find("repeat every"), std::string::npos) << r;
  EXPECT_NE(r.find("Only column 5 is wrong, in 32 of its 32 rows"), std::string::npos) << r;
  EXPECT_EQ(r.find("Columns 0..4 are right"), std::string::npos) << r;
}

TEST(WrongResult, TheLastColumnIsNotTheGridsCoverage) {
  const size_t rows = 20, cols = 33;
  auto want = distinct(rows * cols);
  auto got = as_floats(want);
  for (size_t r = 0; r < rows; ++r) got[r * cols + cols - 1] += 1.0f;
  std::string r = check(got, want, {rows, cols});
  EXPECT_NE(r.find("Only column 32 (the last) is wrong"), std::string::npos) << r;
  EXPECT_EQ(r.find("does the grid cover"), std::string::npos) << r;
  EXPECT_EQ(r.find("border"), std::string::npos) << r;
}

TEST(WrongResult, ColumnsFromSomeOnNeedMostOfThemWrong) {
  const size_t rows = 20, cols = 64;
  auto want = distinct(rows * cols);
  auto got = as_floats(want);
  for (size_t r = 0; r < rows; ++r) got[r * cols + 10] += 1.0f, got[r * cols + 60] += 1.0f;
  std::string r = check(got, want, {rows, cols});
  EXPECT_EQ(r.find("are right; the wrong elements are in columns"), std::string::npos) << r;
}

TEST(WrongResult, ScatteredErrorsClaimNoPattern) {
  auto want = distinct(1000);
  auto got = as_floats(want);
  for (size_t i : {3u, 97u, 412u, 413u, 998u}) got[i] = float(want[i]) * (1 + 0.01f * float(i % 7));
  std::string r = check(got, want);
  for (const char* claim :
       {"shifted", "times the expected", "repeat every", "partial group", "border"})
    EXPECT_EQ(r.find(claim), std::string::npos) << claim << "\n" << r;
}

TEST(Data, SeedsAreStablePerTestAndOverridable) {
  unsetenv("CUDALAB_SEED");
  EXPECT_EQ(cudalab::seed_for("A.b"), cudalab::seed_for("A.b"));
  EXPECT_NE(cudalab::seed_for("A.b"), cudalab::seed_for("A.c"));
  setenv("CUDALAB_SEED", "42", 1);
  EXPECT_EQ(cudalab::seed_for("A.b"), 42u);
  unsetenv("CUDALAB_SEED");
}

TEST(Data, RandomInputsFollowTheSeedAndRange) {
  auto a = cudalab::random_floats(1000, 7, -2.0f, 3.0f);
  EXPECT_EQ(a, cudalab::random_floats(1000, 7, -2.0f, 3.0f));
  EXPECT_NE(a, cudalab::random_floats(1000, 8, -2.0f, 3.0f));
  for (float x : a) ASSERT_TRUE(x >= -2.0f && x <= 3.0f) << x;
}

TEST(Data, PoisonIsANanNothingElseEquals) {
  EXPECT_TRUE(std::isnan(cudalab::poison_float()));
  EXPECT_TRUE(cudalab::is_poison(cudalab::poison_float()));
  EXPECT_FALSE(cudalab::is_poison(NAN));
}

// Who stored the elements, as a backend's finder says: a 1D launch of `blocks` blocks of 32
// threads, element i stored by global thread i + `offset` (unstored past the grid, and from
// element `skipped_from` on).
struct FakeLaunch {
  const float* base = nullptr;
  unsigned blocks = 0;
  size_t offset = 0;
  size_t skipped_from = SIZE_MAX;
};
FakeLaunch fake;

std::optional<cudalab::ElementStore> fake_store(const void* element, size_t) {
  const size_t i = static_cast<const float*>(element) - fake.base;
  cudalab::ElementStore s{.kernel = "vecAdd",
                          .launch = {"vector_add.cu", 57},
                          .grid = {fake.blocks, 1, 1},
                          .block = {32, 1, 1}};
  const size_t thread = i + fake.offset;
  if (thread >= 32ull * fake.blocks || i >= fake.skipped_from) return s;
  s.stored = true;
  s.block_index = {static_cast<unsigned>(thread / 32), 0, 0};
  s.thread_index = {static_cast<unsigned>(thread % 32), 0, 0};
  s.store = {"vector_add.cu", 6};
  s.loads = {{"vector_add.cu", 5}, {"vector_add.cu", 6}};
  return s;
}

// The finder is set for the test's scope only.
struct WithFakeStores {
  explicit WithFakeStores(const std::vector<float>& got, unsigned blocks, size_t offset = 0,
                          size_t skipped_from = SIZE_MAX) {
    fake = {got.data(), blocks, offset, skipped_from};
    cudalab::set_store_finder(&fake_store);
  }
  ~WithFakeStores() { cudalab::set_store_finder(nullptr); }
};

TEST(ElementStores, AListedElementNamesItsThreadAndLine) {
  auto want = distinct(64);
  auto got = as_floats(want);
  got[40] += 1.0f;
  WithFakeStores stores(got, 2);
  const std::string r = check(got, want);
  EXPECT_NE(r.find(": stored by thread (8,0,0) of block (1,0,0) at vector_add.cu:6, from what it "
                   "loaded at vector_add.cu:5 and vector_add.cu:6\n"),
            std::string::npos)
      << r;
}

TEST(ElementStores, AnUnwrittenTailNamesTheLaunchAndTheThreadItNeeds) {
  auto want = distinct(100);
  auto got = as_floats(want);
  for (size_t i = 96; i < 100; ++i) got[i] = cudalab::poison_float();
  WithFakeStores stores(got, 3);  // 96 threads
  const std::string r = check(got, want);
  EXPECT_NE(r.find("vecAdd<<<(3,1,1), (32,1,1)>>> at vector_add.cu:57, has 96 threads for 100 "
                   "elements"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("element 96 needs thread (0,0,0) of block (3,0,0), which the grid does not "
                   "have"),
            std::string::npos)
      << r;
  EXPECT_EQ(r.find("(never written): no thread stored it"), std::string::npos) << r;
}

TEST(ElementStores, AThreadTheGridHasSkippedItsElement) {
  auto want = distinct(100);
  auto got = as_floats(want);
  for (size_t i = 90; i < 100; ++i) got[i] = cudalab::poison_float();  // a guard i < n - 10
  WithFakeStores stores(got, 4, 0, 90);                                // 128 threads
  const std::string r = check(got, want);
  EXPECT_NE(r.find("element 90 needs thread (26,0,0) of block (2,0,0), which the grid has: that "
                   "thread did not store it, where the right elements were stored at "
                   "vector_add.cu:6"),
            std::string::npos)
      << r;
}

TEST(ElementStores, NoIndexIsClaimedWhereTheRightElementsFollowNone) {
  auto want = distinct(100);
  auto got = as_floats(want);
  for (size_t i = 64; i < 100; ++i) got[i] = cudalab::poison_float();
  WithFakeStores stores(got, 3, 32);  // element i from thread i + 32: no index the claim knows
  const std::string r = check(got, want);
  EXPECT_NE(r.find("has 96 threads for 100 elements."), std::string::npos) << r;
  EXPECT_EQ(r.find("needs thread"), std::string::npos) << r;
}

TEST(ElementStores, ZerosAThreadStoredAreTheKernelsNotTheCopys) {
  auto want = distinct(100);
  std::vector<float> got(100, 0.0f);
  WithFakeStores stores(got, 4);
  const std::string r = check(got, want);
  EXPECT_EQ(r.find("copied back after"), std::string::npos) << r;
  EXPECT_NE(r.find("the kernel computed 0"), std::string::npos) << r;
}

}  // namespace
