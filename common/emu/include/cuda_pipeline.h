// <cuda_pipeline.h> on the emu backend: the primitives of one thread's pipeline. A copy is made at
// once (with its zero fill); cudalab/emu/async_copy.h states the algorithm and its limitations.
#pragma once

#include <cstddef>
#include <cstring>

#include "cudalab/emu/async_copy.h"
#include "cudalab/emu/prelude.h"

// Copies size - zfill bytes and writes zfill zeros after them (size is 4, 8 or 16).
inline void __pipeline_memcpy_async(void* dst, const void* src, std::size_t size,
                                    std::size_t zfill = 0) {
  cudalab::emu::copy_share(dst, src, size - zfill, 0, 1);
  auto* tail = static_cast<unsigned char*>(dst) + (size - zfill);
  for (std::size_t i = 0; i < zfill; ++i) tail[i] = 0;
}
inline void __pipeline_commit() {}
inline void __pipeline_wait_prior(std::size_t) {}
