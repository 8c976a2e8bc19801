// cub::WarpScanShfl for the emu backend: CUB 1.17's shuffle scan is inline PTX (several
// instructions per step), which a CPU cannot assemble; its shared-memory scan (WarpScanSmem,
// Debian's, unchanged) takes its place. Both add lane i - 1, i - 2, i - 4, ... to lane i in the
// same order, so a scan gives the GPU's result, also in floating point.
#pragma once

#include "../../config.cuh"
#include "warp_scan_smem.cuh"

CUB_NAMESPACE_BEGIN

template <typename T, int LOGICAL_WARP_THREADS, int PTX_ARCH>
struct WarpScanShfl : WarpScanSmem<T, LOGICAL_WARP_THREADS, PTX_ARCH> {
  static_assert(PowerOfTwo<LOGICAL_WARP_THREADS>::VALUE,
                "LOGICAL_WARP_THREADS must be a power of two");
  using WarpScanSmem<T, LOGICAL_WARP_THREADS, PTX_ARCH>::WarpScanSmem;
};

CUB_NAMESPACE_END
