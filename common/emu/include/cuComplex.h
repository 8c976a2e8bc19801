// The emu backend stands in for the CUDA toolkit header of this name.
#pragma once
#include "cudalab/emu/complex.h"
#include "cudalab/emu/prelude.h"
