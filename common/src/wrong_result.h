// Internal header of the host helpers (not for tests): what the data of a wrong result says
// (wrong_result.cpp), for compare.cpp's reports.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cudalab/compare.h"

namespace cudalab::detail {

// A wrong result as the analysis sees it: which elements are wrong, and the values.
struct Evidence {
  std::vector<size_t> wrong;  // indices of the wrong elements, ascending (at least one)
  size_t n = 0;
  size_t rows = 0, cols = 0;                    // cols > 0: a rows x cols output, row-major
  std::function<double(size_t)> got, want;      // the output's and the reference's element i
  std::function<bool(size_t, size_t)> matches;  // got[i] passes as the reference's element j
  std::function<bool(size_t)> never_written;    // got[i] is still the poison
  // Who stored got[i], where the backend says (compare.h: ElementStore).
  std::function<std::optional<ElementStore>(size_t)> store = [](size_t) {
    return std::optional<ElementStore>();
  };
};

// A listed wrong element's store (element_stores.cpp): "stored by thread (5,0,0) of block (1,0,0)
// at matmul.cu:42", or "no thread stored it".
std::string store_words(const ElementStore& store);
// For elements never written from `first` on: the launch that stored the others, its grid, and
// the thread element `first` needs where the right elements show the index ("" when not known).
std::string unwritten_words(const Evidence& evidence, size_t first);

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
