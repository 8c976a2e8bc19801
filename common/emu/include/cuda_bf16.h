// The emu backend stands in for the CUDA toolkit header of this name.
#pragma once
#include "cudalab/emu/bf16.h"
#include "cudalab/emu/prelude.h"
