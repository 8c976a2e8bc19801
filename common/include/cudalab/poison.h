// The poison pattern: the 32-bit word 0x7FC0DEAD, a quiet NaN as float and 2143346349 as int.
// Test harnesses fill outputs with it before a run, and the CPU backend fills fresh device memory
// with it, so an element that no thread wrote is recognised as "never written", also after a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cudalab {
inline constexpr uint32_t kPoisonBits = 0x7FC0DEADu;
inline constexpr int kPoisonInt = static_cast<int>(kPoisonBits);

// Fills `bytes` bytes at `p` with the pattern, word after word (a last partial word gets the
// pattern's first bytes).
inline void fill_with_poison(void* p, size_t bytes) {
  auto* c = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < bytes; i += 4)
    std::memcpy(c + i, &kPoisonBits, bytes - i < 4 ? bytes - i : 4);
}
}  // namespace cudalab
