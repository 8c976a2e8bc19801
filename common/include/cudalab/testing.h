// GoogleTest glue for the lab harnesses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "cudalab/compare.h"
#include "cudalab/data.h"

namespace cudalab::testing {

// The seed of the running test's inputs; prints it once so that a failure can be replayed.
uint64_t test_seed();

}  // namespace cudalab::testing

// compare() as a non-fatal GoogleTest check that takes a hint for the student:
//   EXPECT_MATCHES("C", got, expected, n, tolerance) << "Each thread ...";
#define EXPECT_MATCHES(...)                                                                     \
  if (std::string cudalab_report_ = ::cudalab::compare(__VA_ARGS__); cudalab_report_.empty()) { \
  } else                                                                                        \
    ADD_FAILURE() << cudalab_report_
