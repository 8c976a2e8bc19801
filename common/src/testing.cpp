#include "cudalab/testing.h"

#include <cstdio>
#include <string>

#ifdef CUDALAB_EMU
#include "cudalab/emu/inspect.h"
#endif

namespace cudalab::testing {

#ifndef CUDALAB_EMU
unsigned long long launches_in_this_test();  // src/launch_count.cpp
#endif

#ifdef CUDALAB_REMOTE_CHECKER
// The bytes the runner uploaded to the device in this test that the checker did not give
// (remote/src/checker.cpp asks the runner).
unsigned long long foreign_uploads_in_this_test();
#else
// A test program that runs the student's code itself has no checker to have given the inputs.
unsigned long long foreign_uploads_in_this_test() { return 0; }
#endif

// Uploads of other bytes than the inputs that a host function may make for itself: a flag, a
// scalar, a few constants.
constexpr size_t kMostConstantBytes = 64;

#ifdef CUDALAB_EMU
// A wrong result's report names who stored its elements: the emu knows (in the grader's checker,
// the runner's emu answers).
[[maybe_unused]] const bool store_finder_set = (set_store_finder(&emu::element_store), true);
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
  // Uploads of bytes that are none of the test's inputs, half as many as the output holds or more
  // (and at least a few constants' worth), carried an answer computed on the host, whatever
  // copied it on the device. (Half: some words of an answer may equal words of the inputs.)
  if (const auto foreign = foreign_uploads_in_this_test();
      bytes > 0 && 2 * foreign >= bytes && foreign >= kMostConstantBytes)
    return name + ": the host sent the device " + std::to_string(foreign) +
           " bytes that are none of the test's inputs, for the " + std::to_string(bytes) +
           " bytes of " + name +
           ": an answer computed on the host and copied on the device earns nothing. "
           "Compute " +
           name + " in a kernel, from the inputs.";
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
