// A header included with angle brackets and found through -I (include_path.cu): a launch.
#pragma once
#include <cuda_runtime.h>

__global__ void add_three(int* x) { *x += 3; }

inline void run_add_three(int* x) { add_three<<<1, 1>>>(x); }
