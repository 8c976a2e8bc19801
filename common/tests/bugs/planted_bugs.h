// A catalogue of student bugs, each planted in a small kernel (planted_bugs.cu, the line marked
// `// BUG: <name>`). On emu, test_diagnostics.cu checks that each is named with its category and
// line; on a GPU, run_planted_bug runs one under compute-sanitizer (docs/diagnostics.md).
#pragma once

#include <cuda_runtime.h>

#include <vector>

struct PlantedBug {
  const char* name;
  const char* category;  // what the diagnostic must say (a phrase of the emu's message; "a|b":
                         // either, for a bug that is two races at once)
  cudaError_t (*run)();  // allocates, launches, synchronizes, frees; returns the first error
};

const std::vector<PlantedBug>& planted_bugs();
