// Comparison of a kernel's output with a reference computed in double precision on the CPU.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cudalab/records.h"

namespace cudalab {

// An element passes when |got - expected| <= rel * |expected| + abs.
struct Tolerance {
  double rel;
  double abs;
};

// The layout of a 2D output: `rows` x `cols`, row-major (the default, {}: a 1D output).
struct Shape {
  size_t rows = 0, cols = 0;
};

// Empty when every element passes; otherwise a report for the student: how many elements are
// wrong, the first few with expected and actual values, and what the data of the wrong elements
// suggests (src/wrong_result.cpp: never written, shifted, transposed, a factor, a border, a tile
// period ...); for a 2D output (`shape`), a map of where they are.
std::string compare(const std::string& name, const float* got, const double* expected, size_t n,
                    Tolerance tol, Shape shape = {});
std::string compare(const std::string& name, const int* got, const long long* expected, size_t n,
                    Shape shape = {});
// The index of the first element compare() calls wrong (n where every one passes): the element a
// harness asks about further (testing.h: matmul_reads, element_reads).
size_t first_wrong(const float* got, const double* expected, size_t n, Tolerance tol);
size_t first_wrong(const int* got, const long long* expected, size_t n);
// Whether the last report compare() made in this thread says why the elements are wrong (a
// pattern of the data: never written, shifted, a factor ...), not only which and who stored
// them: a test's fixed hint is left out then (testing.h: EXPECT_MATCHES).
bool last_report_explained();
// Pixels: pass within max_difference of the expected value (float-to-byte rounding may differ by
// 1).
std::string compare(const std::string& name, const unsigned char* got, const long long* expected,
                    size_t n, int max_difference, Shape shape = {});

// Who stored an element of an output last, for the report of a wrong result: the emu backend
// knows (its runtime follows each word from the thread that stored it to the host); a GPU does not
// say.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
struct ElementStore {
  // The launch: the last that stored into the element's array, where no thread stored the element.
  std::string kernel;  // as written at the launch
  records::SourceLine launch;
  Dim3 grid, block;
  bool stored = false;  // whether a thread of that launch stored the element
  bool atomic = false;  // ... with an atomic
  Dim3 block_index, thread_index;
  records::SourceLine store;  // the store's line
  // The lines the thread loaded from (known for the first warp of the first block, which stores
  // a wrong result's first elements most often).
  std::vector<records::SourceLine> loads;
};
// `bytes` bytes at `element` (host memory a cudaMemcpy filled from the device, or device memory):
// who stored them, or nothing when not known.
using StoreFinder = std::optional<ElementStore> (*)(const void* element, size_t bytes);
// The backend's finder (the harness sets the emu's: src/testing.cpp); none by default.
void set_store_finder(StoreFinder finder);

}  // namespace cudalab
