// The emu backend stands in for the CUDA toolkit header of this name.
#pragma once
#ifdef __cplusplus
#include "cudalab/emu/prelude.h"
#else
#include "cudalab/emu/c_runtime.h"
#endif
