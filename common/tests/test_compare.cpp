// Unit tests of the host helpers: the reports a student reads must say the right thing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

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

}  // namespace
