// Internal header of the host helpers (not for tests): what the data of a wrong result says
// (wrong_result.cpp), for compare.cpp's reports.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
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

// The pattern of the wrong elements and what it usually means ("" when nothing stands out).
std::string wrong_result_pattern(const Evidence& evidence);

// Where the wrong elements are: the output (rows x cols; a 1D output is one row) drawn as at
// most 12 x 48 marks, each covering mark_rows x mark_cols elements: 'X' (one of them is wrong),
// 'o' (wrong because never written), '.' (all right).
struct WrongMap {
  size_t rows = 0, cols = 0, mark_rows = 0, mark_cols = 0;
  std::vector<std::string> cells;  // a string of marks per row
  std::string english() const;
};
// The map, where it says something (not for one element, nor when every mark is 'X').
std::optional<WrongMap> where_wrong(const Evidence& evidence);

}  // namespace cudalab::detail
