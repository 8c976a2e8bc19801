/* The CUDA runtime as a program's C files see it on the emu backend (a .c file that includes
   <cuda_runtime.h>, which nvcc hands to the host compiler with the toolkit's headers on its path):
   the error codes and the calls with plain arguments, which the runtime defines with C linkage
   (runtime.h). The rest of the runtime is C++ (it records where each call was made), so C code
   calls it through the program's .cu files, as the program's own kernels are. */
#pragma once

typedef enum cudaError {
#define CUDALAB_ERROR(name, code, text) name = code,
#include "cudalab/emu/errors.def"
#undef CUDALAB_ERROR
} cudaError_t;

#include "cudalab/emu/c_calls.h"
