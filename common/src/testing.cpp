#include "cudalab/testing.h"

#include <cstdio>

namespace cudalab::testing {

uint64_t test_seed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  uint64_t seed = seed_for(name);
  std::printf("[   SEED   ] %llu (replay: CUDALAB_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace cudalab::testing
