// Internal header of the host helpers (not for tests): what the data of a wrong result says
// (wrong_result.cpp), for compare.cpp's reports.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace cudalab::detail {

// A wrong result as the analysis sees it: which elements are wrong, and the values.
struct Evidence {
  std::vector<size_t> wrong;  // indices of the wrong elements, ascending (at least one)
  size_t n = 0;
  size_t rows = 0, cols = 0;                    // cols > 0: a rows x cols output, row-major
  std::function<double(size_t)> got, want;      // the output's and the reference's element i
  std::function<bool(size_t, size_t)> matches;  // got[i] passes as the reference's element j
  std::function<bool(size_t)> never_written;    // got[i] is still the poison
};

// The pattern of the wrong elements and what it usually means, and for a 2D output a map of
// where they are ("" when nothing stands out).
std::string wrong_result_pattern(const Evidence& evidence);

}  // namespace cudalab::detail
