// The foundation kernels with the checks on emu (the way make check builds lab code).
#define FOUNDATION_VARIANT checked
#include "foundation_kernels.cuh"
