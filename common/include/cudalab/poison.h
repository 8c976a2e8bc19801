// The poison pattern: the 32-bit word 0x7FC0DEAD, a quiet NaN as float and 2143346349 as int.
// Test harnesses fill outputs with it before a run, and the CPU backend fills fresh device memory
// with it, so an element that no thread wrote is recognised as "never written", also after a copy.
#pragma once

#include <cstdint>

namespace cudalab {
inline constexpr uint32_t kPoisonBits = 0x7FC0DEADu;
inline constexpr int kPoisonInt = static_cast<int>(kPoisonBits);
}  // namespace cudalab
