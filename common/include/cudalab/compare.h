// Comparison of a kernel's output with a reference computed in double precision on the CPU.
#pragma once

#include <cstddef>
#include <string>

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
// Pixels: pass within max_difference of the expected value (float-to-byte rounding may differ by
// 1).
std::string compare(const std::string& name, const unsigned char* got, const long long* expected,
                    size_t n, int max_difference, Shape shape = {});

}  // namespace cudalab
