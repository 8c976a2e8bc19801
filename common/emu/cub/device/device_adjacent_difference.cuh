// cub::DeviceAdjacentDifference is not part of the emu's CUB: a call is a compile error that says
// so.
#pragma once

#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceAdjacentDifference {
  CUB_EMU_UNSUPPORTED(DeviceAdjacentDifference, SubtractLeftCopy, "adjacent differences")
  CUB_EMU_UNSUPPORTED(DeviceAdjacentDifference, SubtractLeft, "adjacent differences")
  CUB_EMU_UNSUPPORTED(DeviceAdjacentDifference, SubtractRightCopy, "adjacent differences")
  CUB_EMU_UNSUPPORTED(DeviceAdjacentDifference, SubtractRight, "adjacent differences")
};

CUB_NAMESPACE_END
