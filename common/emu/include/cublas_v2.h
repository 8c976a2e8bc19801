// The emu backend stands in for the CUDA toolkit header of this name.
#pragma once
#include "cudalab/emu/complex.h"  // (as CUDA's cuBLAS headers include cuComplex.h)
#include "cudalab/emu/cublas.h"
#include "cudalab/emu/prelude.h"
