// Asynchronous copies (memcpy_async of libcu++, cooperative groups and cuda_pipeline.h) on the emu
// backend: what <cuda/barrier>, <cuda/pipeline>, <cooperative_groups/memcpy_async.h> and
// <cuda_pipeline.h> share.
//
// Algorithm: a copy is done at once, by the thread that asks for it, in the program's
// instrumented code (so the checks and counters see every word it reads and writes, at the
// program's line). A GPU may finish an asynchronous copy at any time before the wait that covers
// it, so finishing it at once is one of the behaviours CUDA allows; what a wait must still give
// is ordering between threads, and there the waits are barriers: cg::wait(group) is
// group.sync(), a barrier's arrive_and_wait() is __syncthreads(). A pipeline of one thread
// (thread_scope_thread) orders nothing between threads, so its producer and consumer calls do
// nothing.
//
// Limitations:
// - a copy read before the wait that covers it is not reported (it reads the data here, and
//   may not on a GPU);
// - a pipeline shared by a block's threads (cuda::pipeline_shared_state, producer and consumer
//   roles) is refused when it is made: its waits would have to block one thread until others
//   produce, and the emu's threads switch only at barriers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudalab/emu/device.h"

namespace cuda {
enum thread_scope {
  thread_scope_system = 0,
  thread_scope_device = 1,
  thread_scope_block = 2,
  thread_scope_thread = 3,
};

// A size whose copy may assume both pointers aligned to Alignment bytes.
template <std::size_t Alignment>
struct aligned_size_t {
  static constexpr std::size_t align = Alignment;
  std::size_t value;
  constexpr explicit aligned_size_t(std::size_t size) : value(size) {}
  constexpr operator std::size_t() const { return value; }
};
}  // namespace cuda

namespace cudalab::emu {
// The part of an n-byte copy that member `rank` of a group of `ranks` threads makes: words of
// four bytes dealt out in turn (bytes where the pointers or the size are not word-aligned).
inline void copy_share(void* dst, const void* src, std::size_t n, unsigned long long rank,
                       unsigned long long ranks) {
  const bool words =
      (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | n) % 4 == 0;
  if (words) {
    auto* d = static_cast<std::uint32_t*>(dst);
    const auto* s = static_cast<const std::uint32_t*>(src);
    for (std::size_t i = rank; i < n / 4; i += ranks) d[i] = s[i];
  } else {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    for (std::size_t i = rank; i < n; i += ranks) d[i] = s[i];
  }
}
}  // namespace cudalab::emu
