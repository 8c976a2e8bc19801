// cub::DeviceSegmentedSort is not part of the emu's CUB (cub::DeviceSegmentedRadixSort is): a
// call is a compile error that says so.
#pragma once

#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceSegmentedSort {
#define CUB_EMU_REFUSED(Name) \
  CUB_EMU_UNSUPPORTED(DeviceSegmentedSort, Name, "use cub::DeviceSegmentedRadixSort")
  CUB_EMU_REFUSED(SortKeys)
  CUB_EMU_REFUSED(SortKeysDescending)
  CUB_EMU_REFUSED(StableSortKeys)
  CUB_EMU_REFUSED(StableSortKeysDescending)
  CUB_EMU_REFUSED(SortPairs)
  CUB_EMU_REFUSED(SortPairsDescending)
  CUB_EMU_REFUSED(StableSortPairs)
  CUB_EMU_REFUSED(StableSortPairsDescending)
#undef CUB_EMU_REFUSED
};

CUB_NAMESPACE_END
