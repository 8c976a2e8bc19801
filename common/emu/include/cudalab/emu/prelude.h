// Included first by every .cu file that the emu backend translates: it makes CUDA C++ plain C++.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cudalab/emu/device.h"
#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/emu/types.h"

#define CUDALAB_EMU 1

// Execution-space qualifiers: every function is a host function here.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// __constant__ data is an ordinary global; __shared__ data lives once per worker thread, and a
// worker runs one block at a time, so each block sees its own copy.
#define __constant__
#define __shared__ static thread_local

#define threadIdx (::cudalab::emu::builtins.threadIdx)
#define blockIdx (::cudalab::emu::builtins.blockIdx)
#define blockDim (::cudalab::emu::builtins.blockDim)
#define gridDim (::cudalab::emu::builtins.gridDim)
#define __syncthreads() ::cudalab::emu::syncthreads(__FILE__, __LINE__)
