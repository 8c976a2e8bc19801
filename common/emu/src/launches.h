// Internal header of the emu runtime (not for programs): what launches share: child grids
// (streams.cpp) and the dynamic shared memory a kernel may ask for (kernels.cpp).
#pragma once

#include <cstddef>

namespace cudalab::emu {

// Runs the grids that kernels launched (dynamic parallelism), after the launch that made them.
void run_child_grids();

// The dynamic shared memory a launch of `kernel` (as written) may ask for: 48 KiB, or more if a
// kernel of that name opted in with cudaFuncSetAttribute.
size_t allowed_dynamic_shared(const char* kernel);

}  // namespace cudalab::emu
