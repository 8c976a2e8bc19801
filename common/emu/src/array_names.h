// Internal header of the emu runtime and the remote checker (not for programs): the name of the
// array an allocation fills, read from its source line (array_names.cpp).
#pragma once
#include <string>

namespace cudalab::emu {

// The variable an allocation at file:line fills ("d_A" of `cudaMalloc(&d_A, bytes)` or of
// `DeviceArray<float> d_A(...)`), or "" if the line names none, or several, or cannot be read.
std::string array_name(const std::string& file, int line);

}  // namespace cudalab::emu
