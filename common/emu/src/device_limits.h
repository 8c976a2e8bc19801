// Internal header of the emu runtime (not for programs): the device's limits, those of compute
// capability 9.0 as measured on an H100 (driver 580), written once for cudaGetDeviceProperties
// (device_api.cpp), the checks of a launch (validate() in scheduler.cpp) and the occupancy
// calculator (kernels.cpp), so that a launch that fails on the course's GPUs fails here too.
#pragma once

#include <cstddef>

namespace cudalab::emu::device_limits {

constexpr unsigned kThreadsPerBlock = 1024;
constexpr unsigned kBlockDim[3] = {1024, 1024, 64};
constexpr unsigned kGridDim[3] = {2147483647u, 65535, 65535};
constexpr unsigned kWarpSize = 32;

constexpr size_t kSharedPerBlock = 48 * 1024;  // what a launch may ask for without opting in
constexpr size_t kSharedPerBlockOptIn = 227 * 1024;
constexpr size_t kSharedPerMultiprocessor = 228 * 1024;
constexpr size_t kReservedSharedPerBlock = 1024;
constexpr size_t kConstantBytes = 64 * 1024;

constexpr int kThreadsPerMultiprocessor = 2048;
constexpr int kBlocksPerMultiprocessor = 32;
constexpr int kRegisters = 65536;  // per block and per multiprocessor

}  // namespace cudalab::emu::device_limits
