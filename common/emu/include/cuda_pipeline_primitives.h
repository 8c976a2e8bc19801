// The emu backend stands in for the CUDA toolkit header of this name.
#pragma once
#include "cuda_pipeline.h"
