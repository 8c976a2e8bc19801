// The foundation kernels as plain C++ on emu (cudalab run --unchecked).
#define FOUNDATION_VARIANT unchecked
#include "foundation_kernels.cuh"
