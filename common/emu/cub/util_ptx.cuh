// CUB's PTX layer (cub/util_ptx.cuh of CUB 1.17, Debian's libcub-dev) for the emu backend: the
// same functions, written with the emu's warp-level calls instead of inline PTX, which a CPU cannot
// assemble. The rest of CUB's block, warp and thread primitives is Debian's, unchanged: the build
// copies CUB's headers beside the emu's and puts this file in place of CUB's (common/emu/cub/).
// Shuffles follow PTX's shfl: a lane outside its segment, or past the clamp, keeps its own word.
#pragma once

#include <cstdint>
#include <cstring>

#include "util_arch.cuh"
#include "util_debug.cuh"
#include "util_namespace.cuh"
#include "util_type.cuh"

#define __CUB_LP64__ 1
#define _CUB_ASM_PTR_ "l"
#define _CUB_ASM_PTR_SIZE_ "u64"

CUB_NAMESPACE_BEGIN

// (x >> shift) + addend, the shift clamped to 32 (vshr.clamp).
__device__ __forceinline__ unsigned int SHR_ADD(unsigned int x, unsigned int shift,
                                                unsigned int addend) {
  return (shift >= 32 ? 0u : x >> shift) + addend;
}
// (x << shift) + addend, the shift clamped to 32 (vshl.clamp).
__device__ __forceinline__ unsigned int SHL_ADD(unsigned int x, unsigned int shift,
                                                unsigned int addend) {
  return (shift >= 32 ? 0u : x << shift) + addend;
}

// num_bits of source from bit_start on (bfe.u32: bits past the word's end read as zero).
template <typename UnsignedBits, int BYTE_LEN>
__device__ __forceinline__ unsigned int BFE(UnsignedBits source, unsigned int bit_start,
                                            unsigned int num_bits, Int2Type<BYTE_LEN>) {
  const unsigned long long word = static_cast<unsigned int>(source);
  const unsigned start = bit_start & 0xFF, bits = num_bits & 0xFF;
  if (start >= 32 || bits == 0) return 0;
  const unsigned long long mask = bits >= 32 ? 0xFFFFFFFFull : (1ull << bits) - 1;
  return static_cast<unsigned int>((word >> start) & mask);
}
template <typename UnsignedBits>
__device__ __forceinline__ unsigned int BFE(UnsignedBits source, unsigned int bit_start,
                                            unsigned int num_bits, Int2Type<8>) {
  const unsigned long long MASK = (1ull << num_bits) - 1;
  return (source >> bit_start) & MASK;
}
template <typename UnsignedBits>
__device__ __forceinline__ unsigned int BFE(UnsignedBits source, unsigned int bit_start,
                                            unsigned int num_bits) {
  return BFE(source, bit_start, num_bits, Int2Type<sizeof(UnsignedBits)>());
}

// The num_bits lowest bits of y into x at bit_start (bfi.b32).
__device__ __forceinline__ void BFI(unsigned int& ret, unsigned int x, unsigned int y,
                                    unsigned int bit_start, unsigned int num_bits) {
  const unsigned start = bit_start & 0xFF, bits = num_bits & 0xFF;
  ret = x;
  for (unsigned i = 0; i < bits && start + i < 32; ++i)
    ret = (ret & ~(1u << (start + i))) | (((y >> i) & 1u) << (start + i));
}

__device__ __forceinline__ unsigned int IADD3(unsigned int x, unsigned int y, unsigned int z) {
  return x + y + z;
}

// Byte permute (prmt.b32, default mode): the bytes of {b, a} numbered 0-7, each result byte
// picked by a nibble of index, whose bit 3 asks for the byte's sign replicated.
__device__ __forceinline__ int PRMT(unsigned int a, unsigned int b, unsigned int index) {
  const unsigned long long bytes = (static_cast<unsigned long long>(b) << 32) | a;
  unsigned int result = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned selector = (index >> (4 * i)) & 0xF;
    unsigned byte = (bytes >> (8 * (selector & 7))) & 0xFF;
    if (selector & 8) byte = (byte & 0x80) ? 0xFF : 0x00;
    result |= byte << (8 * i);
  }
  return static_cast<int>(result);
}

// A named barrier of `count` threads (bar.sync 1): the emu's barriers are the whole block's.
__device__ __forceinline__ void BAR(int count) {
  if (count != ::cudalab::emu::block_threads())
    ::cudalab::emu::unsupported("cub::BAR of part of a block (a named barrier)");
  __syncthreads();
}
__device__ __forceinline__ void CTA_SYNC() { __syncthreads(); }
__device__ __forceinline__ int CTA_SYNC_AND(int p) { return __syncthreads_and(p); }
__device__ __forceinline__ int CTA_SYNC_OR(int p) { return __syncthreads_or(p); }
__device__ __forceinline__ void WARP_SYNC(unsigned int member_mask) { __syncwarp(member_mask); }
__device__ __forceinline__ int WARP_ANY(int predicate, unsigned int member_mask) {
  return __any_sync(member_mask, predicate);
}
__device__ __forceinline__ int WARP_ALL(int predicate, unsigned int member_mask) {
  return __all_sync(member_mask, predicate);
}
__device__ __forceinline__ int WARP_BALLOT(int predicate, unsigned int member_mask) {
  return __ballot_sync(member_mask, predicate);
}

namespace emu_detail {
enum class ShuffleMode { up, down, idx };
// PTX's shfl.sync: c packs the segment mask (bits 8-12) and the clamp lane (bits 0-4); a lane
// whose source fails the clamp test reads its own word.
__device__ __forceinline__ unsigned int shuffle(ShuffleMode mode, unsigned int word, int b, int c,
                                                unsigned int member_mask) {
  const int lane = static_cast<int>(::cudalab::emu::lane_id());
  const int segmask = (c >> 8) & 0x1F, clamp = c & 0x1F;
  const int max_lane = (lane & segmask) | (clamp & ~segmask);
  const int min_lane = lane & segmask;
  int j = lane;
  bool valid = false;
  switch (mode) {
    case ShuffleMode::up:
      j = lane - b;
      valid = j >= max_lane;
      break;
    case ShuffleMode::down:
      j = lane + b;
      valid = j <= max_lane;
      break;
    case ShuffleMode::idx:
      j = min_lane | (b & 0x1F & ~segmask);
      valid = j <= max_lane;
      break;
  }
  const uint64_t* lanes = ::cudalab::emu::warp_exchange(member_mask, word, __FILE__, __LINE__);
  return valid ? static_cast<unsigned int>(lanes[j]) : word;
}
}  // namespace emu_detail

__device__ __forceinline__ unsigned int SHFL_UP_SYNC(unsigned int word, int src_offset, int flags,
                                                     unsigned int member_mask) {
  return emu_detail::shuffle(emu_detail::ShuffleMode::up, word, src_offset, flags, member_mask);
}
__device__ __forceinline__ unsigned int SHFL_DOWN_SYNC(unsigned int word, int src_offset, int flags,
                                                       unsigned int member_mask) {
  return emu_detail::shuffle(emu_detail::ShuffleMode::down, word, src_offset, flags, member_mask);
}
__device__ __forceinline__ unsigned int SHFL_IDX_SYNC(unsigned int word, int src_lane, int flags,
                                                      unsigned int member_mask) {
  return emu_detail::shuffle(emu_detail::ShuffleMode::idx, word, src_lane, flags, member_mask);
}
__device__ __forceinline__ unsigned int SHFL_IDX_SYNC(unsigned int word, int src_lane,
                                                      unsigned int member_mask) {
  return __shfl_sync(member_mask, word, src_lane);
}

__device__ __forceinline__ float FMUL_RZ(float a, float b) { return __fmul_rz(a, b); }
__device__ __forceinline__ float FFMA_RZ(float a, float b, float c) { return __fmaf_rz(a, b, c); }

__device__ __forceinline__ void ThreadExit() {
  ::cudalab::emu::unsupported("cub::ThreadExit (PTX exit)");
}
__device__ __forceinline__ void ThreadTrap() { __trap(); }

__device__ __forceinline__ int RowMajorTid(int block_dim_x, int block_dim_y, int block_dim_z) {
  return ((block_dim_z == 1) ? 0 : (threadIdx.z * block_dim_x * block_dim_y)) +
         ((block_dim_y == 1) ? 0 : (threadIdx.y * block_dim_x)) + threadIdx.x;
}

__device__ __forceinline__ unsigned int LaneId() { return ::cudalab::emu::ptx::laneid(); }
__device__ __forceinline__ unsigned int WarpId() { return ::cudalab::emu::ptx::warpid(); }

template <int LOGICAL_WARP_THREADS, int PTX_ARCH = CUB_PTX_ARCH>
__host__ __device__ __forceinline__ unsigned int WarpMask(unsigned int warp_id) {
  constexpr bool is_pow_of_two = PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE;
  constexpr bool is_arch_warp = LOGICAL_WARP_THREADS == CUB_WARP_THREADS(PTX_ARCH);
  unsigned int member_mask = 0xFFFFFFFFu >> (CUB_WARP_THREADS(PTX_ARCH) - LOGICAL_WARP_THREADS);
  if (is_pow_of_two && !is_arch_warp) member_mask <<= warp_id * LOGICAL_WARP_THREADS;
  return member_mask;
}

__device__ __forceinline__ unsigned int LaneMaskLt() { return ::cudalab::emu::ptx::lanemask_lt(); }
__device__ __forceinline__ unsigned int LaneMaskLe() { return ::cudalab::emu::ptx::lanemask_le(); }
__device__ __forceinline__ unsigned int LaneMaskGt() { return ::cudalab::emu::ptx::lanemask_gt(); }
__device__ __forceinline__ unsigned int LaneMaskGe() { return ::cudalab::emu::ptx::lanemask_ge(); }

namespace emu_detail {
// A value of any size, shuffled word by word as CUB does.
template <typename T, class Shuffle>
__device__ __forceinline__ T shuffle_words(T input, Shuffle shuffle_word) {
  typedef typename UnitWord<T>::ShuffleWord ShuffleWord;
  constexpr int WORDS = (sizeof(T) + sizeof(ShuffleWord) - 1) / sizeof(ShuffleWord);
  ShuffleWord in[WORDS], out[WORDS];
  std::memcpy(in, &input, sizeof(T));
  for (int word = 0; word < WORDS; ++word)
    out[word] = static_cast<ShuffleWord>(shuffle_word(static_cast<unsigned int>(in[word])));
  T output;
  std::memcpy(&output, out, sizeof(T));
  return output;
}
}  // namespace emu_detail

template <int LOGICAL_WARP_THREADS, typename T>
__device__ __forceinline__ T ShuffleUp(T input, int src_offset, int first_thread,
                                       unsigned int member_mask) {
  constexpr int SHFL_C = (32 - LOGICAL_WARP_THREADS) << 8;
  return emu_detail::shuffle_words(input, [&](unsigned int word) {
    return SHFL_UP_SYNC(word, src_offset, first_thread | SHFL_C, member_mask);
  });
}
template <int LOGICAL_WARP_THREADS, typename T>
__device__ __forceinline__ T ShuffleDown(T input, int src_offset, int last_thread,
                                         unsigned int member_mask) {
  constexpr int SHFL_C = (32 - LOGICAL_WARP_THREADS) << 8;
  return emu_detail::shuffle_words(input, [&](unsigned int word) {
    return SHFL_DOWN_SYNC(word, src_offset, last_thread | SHFL_C, member_mask);
  });
}
template <int LOGICAL_WARP_THREADS, typename T>
__device__ __forceinline__ T ShuffleIndex(T input, int src_lane, unsigned int member_mask) {
  constexpr int SHFL_C = ((32 - LOGICAL_WARP_THREADS) << 8) | (LOGICAL_WARP_THREADS - 1);
  return emu_detail::shuffle_words(
      input, [&](unsigned int word) { return SHFL_IDX_SYNC(word, src_lane, SHFL_C, member_mask); });
}

// The lanes of the warp whose label's LABEL_BITS lowest bits equal this lane's.
template <int LABEL_BITS>
inline __device__ unsigned int MatchAny(unsigned int label) {
  const unsigned int mask = LABEL_BITS >= 32 ? 0xFFFFFFFFu : (1u << LABEL_BITS) - 1;
  return __match_any_sync(0xFFFFFFFFu, label & mask);
}

CUB_NAMESPACE_END
