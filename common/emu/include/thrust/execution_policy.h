// Thrust's execution policies on the emu backend: Thrust's own header, then the emu's algorithms
// for thrust::device (cudalab/emu/thrust_device.h). Found before Thrust's file of this name.
#pragma once

#include_next <thrust/execution_policy.h>

#include "cudalab/emu/thrust_device.h"
