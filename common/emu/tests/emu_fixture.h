// The fixture of the emu's own tests (test_emu.cu, test_cub_checks.cu): each test starts and ends
// with a device that no fault has stopped, and reads what the last fault said.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "cudalab/emu/inspect.h"

class Emu : public ::testing::Test {
 protected:
  void SetUp() override { Reset(); }
  void TearDown() override { Reset(); }
  static void Reset() {
    cudaDeviceReset();
    cudalab::emu::clear_diagnostic();
  }
  const std::string diagnostic() { return cudalab::emu::last_diagnostic(); }
  bool says(const std::string& text) { return diagnostic().find(text) != std::string::npos; }
};
