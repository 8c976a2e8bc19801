// cub::WarpReduceShfl for the emu backend: CUB 1.17's shuffle reduction, whose steps are inline
// PTX (a shuffle and a predicated add in one asm statement) that a CPU cannot assemble, written
// with the emu's shuffles (util_ptx.cuh here). The algorithm is CUB's: at step s each lane adds
// the value of the lane 2^s above it, while that lane is within the segment's last lane, so the
// result, also in floating point, is the GPU's. Its interface is the one cub::WarpReduce uses.
#pragma once

#include <stdint.h>

#include "../../config.cuh"
#include "../../thread/thread_operators.cuh"
#include "../../util_ptx.cuh"
#include "../../util_type.cuh"

CUB_NAMESPACE_BEGIN

template <typename T, int LOGICAL_WARP_THREADS, int PTX_ARCH>
struct WarpReduceShfl {
  static_assert(PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE,
                "LOGICAL_WARP_THREADS must be a power of two");

  enum {
    IS_ARCH_WARP = (LOGICAL_WARP_THREADS == CUB_WARP_THREADS(PTX_ARCH)),
    STEPS = Log2<LOGICAL_WARP_THREADS>::VALUE,
  };
  typedef NullType TempStorage;

  int lane_id;
  int warp_id;
  uint32_t member_mask;

  __device__ __forceinline__ WarpReduceShfl(TempStorage& /*temp_storage*/)
      : lane_id(static_cast<int>(LaneId())),
        warp_id(IS_ARCH_WARP ? 0 : (lane_id / LOGICAL_WARP_THREADS)),
        member_mask(WarpMask<LOGICAL_WARP_THREADS, PTX_ARCH>(warp_id)) {
    if (!IS_ARCH_WARP) lane_id = lane_id % LOGICAL_WARP_THREADS;
  }

  // The lanes up to last_lane (of the logical warp) combined; lane 0 holds the result.
  template <typename ReductionOp>
  __device__ __forceinline__ T Steps(T input, ReductionOp reduction_op, int last_lane) {
    T output = input;
    for (int step = 0; step < STEPS; ++step) {
      const int offset = 1 << step;
      const T peer = ShuffleDown<LOGICAL_WARP_THREADS>(output, offset, last_lane, member_mask);
      if (offset + lane_id <= last_lane) output = reduction_op(output, peer);
    }
    return output;
  }

  template <bool ALL_LANES_VALID, typename ReductionOp>
  __device__ __forceinline__ T Reduce(T input, int valid_items, ReductionOp reduction_op) {
    return Steps(input, reduction_op, ALL_LANES_VALID ? LOGICAL_WARP_THREADS - 1 : valid_items - 1);
  }

  // Segments start (HEAD_SEGMENTED) or end at the lanes whose flag is set; each segment's first
  // lane gets its reduction.
  template <bool HEAD_SEGMENTED, typename FlagT, typename ReductionOp>
  __device__ __forceinline__ T SegmentedReduce(T input, FlagT flag, ReductionOp reduction_op) {
    unsigned int warp_flags = WARP_BALLOT(flag, member_mask);
    if (HEAD_SEGMENTED) warp_flags >>= 1;
    warp_flags &= LaneMaskGe();
    if (!IS_ARCH_WARP) warp_flags = (warp_flags & member_mask) >> (warp_id * LOGICAL_WARP_THREADS);
    warp_flags |= 1u << (LOGICAL_WARP_THREADS - 1);
    const int last_lane = __clz(__brev(warp_flags));
    return Steps(input, reduction_op, last_lane);
  }
};

CUB_NAMESPACE_END
