// Who stored the elements of a wrong result (internal to compare.cpp): the thread, block and line
// of each listed element's store, and for elements no thread stored, the launch that should have:
// its line, its grid, and which thread of it the element needs.
//
// Which thread an element needs is read from the elements that are right, never assumed: where
// every sampled right element was stored by the thread whose global x index is the element's index
// (1D: i = blockIdx.x * blockDim.x + threadIdx.x), or whose global x and y are the element's column
// and row (2D), the unwritten element needs the thread that index names, and the grid either has
// that thread (it skipped the element) or not (the grid is too small). Where the right elements
// follow neither, only the launch and its grid are named.
#include <sstream>

#include "wrong_result.h"

namespace cudalab::detail {
namespace {

constexpr size_t kSampled = 32;  // right elements whose stores are compared with an index

std::string dims(Dim3 d) {
  std::ostringstream s;
  s << "(" << d.x << "," << d.y << "," << d.z << ")";
  return s.str();
}

unsigned long long threads_of(const ElementStore& s) {
  return 1ull * s.grid.x * s.grid.y * s.grid.z * s.block.x * s.block.y * s.block.z;
}

// The thread's global x and y index (blockIdx * blockDim + threadIdx).
unsigned long long global_x(const ElementStore& s) {
  return 1ull * s.block_index.x * s.block.x + s.thread_index.x;
}
unsigned long long global_y(const ElementStore& s) {
  return 1ull * s.block_index.y * s.block.y + s.thread_index.y;
}

// How the right elements map to the threads that stored them.
enum class Mapping { none, linear_x, column_x_row_y };

bool follows(const Evidence& e, Mapping m, size_t i, const ElementStore& s) {
  if (!s.stored || s.block_index.z != 0 || s.thread_index.z != 0) return false;
  if (m == Mapping::linear_x) return global_x(s) == i && global_y(s) == 0;
  return e.cols > 0 && global_x(s) == i % e.cols && global_y(s) == i / e.cols;
}

Mapping mapping_of_right_elements(const Evidence& e) {
  std::vector<size_t> right;
  for (size_t i = 0, w = 0; i < e.n; ++i) {
    if (w < e.wrong.size() && e.wrong[w] == i) {
      ++w;
      continue;
    }
    right.push_back(i);
  }
  if (right.size() < 2) return Mapping::none;
  for (Mapping m : {Mapping::linear_x, Mapping::column_x_row_y}) {
    bool all = true;
    for (size_t k = 0; k < kSampled && all; ++k) {
      const size_t i = right[k * (right.size() - 1) / (kSampled - 1)];
      const std::optional<ElementStore> s = e.store(i);
      all = s && follows(e, m, i, *s);
    }
    if (all) return m;
  }
  return Mapping::none;
}

// The store of the first right element, where a thread stored it.
std::optional<ElementStore> first_right_store(const Evidence& e) {
  for (size_t i = 0, w = 0; i < e.n; ++i) {
    if (w < e.wrong.size() && e.wrong[w] == i) {
      ++w;
      continue;
    }
    const std::optional<ElementStore> s = e.store(i);
    return s && s->stored ? s : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string store_words(const ElementStore& s) {
  if (!s.stored) return "no thread stored it";
  std::string words = std::string(s.atomic ? "last changed by an atomic of" : "stored by") +
                      " thread " + dims(s.thread_index) + " of block " + dims(s.block_index);
  if (s.store.known()) words += " at " + s.store.text();
  if (!s.loads.empty()) {  // "from what it loaded at k.cu:28 and k.cu:29"
    words += ", from what it loaded at ";
    for (size_t i = 0; i < s.loads.size(); ++i)
      words += (i == 0 ? "" : i + 1 == s.loads.size() ? " and " : ", ") + s.loads[i].text();
  }
  return words;
}

std::string unwritten_words(const Evidence& e, size_t first) {
  const std::optional<ElementStore> s = e.store(first);
  if (!s || s->stored) return "";
  std::ostringstream t;
  t << "The last launch that stored into this array, " << s->kernel << "<<<" << dims(s->grid)
    << ", " << dims(s->block) << ">>> at " << s->launch.text() << ", has " << threads_of(*s)
    << " threads for " << e.n << " elements.";
  const Mapping m = mapping_of_right_elements(e);
  if (m == Mapping::none) return t.str();
  // The thread the element needs, by the index the right elements follow.
  const unsigned long long x = m == Mapping::linear_x ? first : first % e.cols;
  const unsigned long long y = m == Mapping::linear_x ? 0 : first / e.cols;
  const Dim3 block{static_cast<unsigned>(x / s->block.x), static_cast<unsigned>(y / s->block.y), 0};
  const Dim3 thread{static_cast<unsigned>(x % s->block.x), static_cast<unsigned>(y % s->block.y),
                    0};
  const std::string element = m == Mapping::linear_x
                                  ? "element " + std::to_string(first)
                                  : "row " + std::to_string(y) + ", column " + std::to_string(x);
  t << " Each right element was stored by the thread whose "
    << (m == Mapping::linear_x ? "blockIdx.x * blockDim.x + threadIdx.x is its index"
                               : "global x index is its column and y index its row")
    << ", so " << element << " needs thread " << dims(thread) << " of block " << dims(block);
  const bool in_grid = block.x < s->grid.x && block.y < s->grid.y;
  if (in_grid) {
    t << ", which the grid has: that thread did not store it";
    // Where the others were stored: the guard or loop that skips it is on the way there.
    const std::optional<ElementStore> right = first_right_store(e);
    if (right && right->store.known())
      t << ", where the right elements were stored at " << right->store.text()
        << " (does a guard or a loop on the way to that line skip it?).";
    else
      t << " (a guard or a loop that stops early?).";
  } else
    t << ", which the grid does not have: launch enough blocks to cover every element, the "
         "division rounded up ("
      << (m == Mapping::linear_x ? "(n + blockDim.x - 1) / blockDim.x blocks"
                                 : "(columns + blockDim.x - 1) / blockDim.x blocks in x, (rows + "
                                   "blockDim.y - 1) / blockDim.y in y")
      << ").";
  return t.str();
}

}  // namespace cudalab::detail
