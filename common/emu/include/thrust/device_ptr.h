// Thrust's device_ptr on the emu backend: Thrust's own header, then its execution policies with the
// emu's algorithms for device iterators (cudalab/emu/thrust_device.h), so that a call over device
// iterators with no policy runs as a launch as on a GPU. Found before Thrust's file of this name.
#pragma once

#include_next <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
