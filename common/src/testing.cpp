#include "cudalab/testing.h"

#include <cstdio>

#ifdef CUDALAB_EMU
#include "cudalab/emu/inspect.h"
#endif

namespace cudalab::testing {

#ifndef CUDALAB_EMU
unsigned long long launches_in_this_test();  // src/launch_count.cpp
#endif

uint64_t test_seed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  uint64_t seed = seed_for(name);
  std::printf("[   SEED   ] %llu (replay: CUDALAB_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

std::string computed_on_device(const std::string& name, const void* got, size_t bytes) {
#ifdef CUDALAB_EMU
  if (bytes == 0 || cudalab::emu::device_work(got, bytes).by_kernels > 0) return {};
  return name +
         ": no kernel computed any of it. Its values were written on the host (or copied "
         "from host memory) and then copied to the device, so the test cannot count them: "
         "compute " +
         name + " in a kernel.";
#else  // a GPU does not say who wrote the bytes, but the harness counts kernel launches
  (void)got;
  if (bytes == 0 || launches_in_this_test() > 0) return {};
  return name +
         ": no kernel was launched in this test, so the device computed none of it: "
         "compute " +
         name + " in a kernel.";
#endif
}

}  // namespace cudalab::testing
