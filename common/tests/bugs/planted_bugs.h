// A catalogue of student bugs, each planted in a small kernel (planted_bugs.cu, the line marked
// `// BUG: <name>`). On emu, test_diagnostics.cu checks that each is named with its category and
// line; on a GPU, run_planted_bug runs one under compute-sanitizer (docs/diagnostics.md).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

struct PlantedBug {
  const char* name;
  const char* category;  // what the diagnostic must say (a phrase of the emu's message; "a|b":
                         // either, for a bug that is two races at once)
  cudaError_t (*run)();  // allocates, launches, synchronizes, frees; returns the first error
};

const std::vector<PlantedBug>& planted_bugs();

// Wrong results: kernels that run to the end with a wrong output. The comparison with a reference
// (compare.h) must name the line marked `// BUG: <name>` (the store of a wrong element, or the
// launch whose grid left elements unwritten) and say `fix`, a phrase that fits the fault.
struct PlantedWrongResult {
  const char* name;
  const char* fix;
  std::string (*run)();  // the comparison's report
};
const std::vector<PlantedWrongResult>& planted_wrong_results();

// Four of the catalogue's kernels, which test_diagnostics.cu also launches from its own file,
// compiled without the checks, as a lab's test launches a student's kernel. Their bugs, in order:
// read_before_barrier, in_place_shift_in_one_block, write_after_read_in_one_block,
// two_threads_write_one_element.
namespace planted {
__global__ void reverse_no_sync(const float* in, float* out, int n);
__global__ void shift_in_one_block(float* a, int n);
__global__ void shift_left_in_one_block(float* a, int n);
__global__ void half_index_in_one_block(const float* in, float* out, int n);
// And one that is not in the catalogue: two rows of a 2D block write one row of `out`.
__global__ void two_rows_write_one_row(const float* in, float* out);
}  // namespace planted
