// What the thread that stored a wrong element of a matrix product read (testing.h:
// matmul_reads): on emu, the thread is watched while the harness runs the same product again
// (inspect.h: watch_thread), and its global loads are placed in the operands as rows and columns.
//
// Evidence rule: the reads are said against what the element needs (its row of a, its column of
// b) only from the loads of the thread that stored the element, in a second run of the same
// launch; where the element was not stored by a thread, or no load fell in an operand, nothing is
// claimed. The loads of global memory only: a tiled kernel's thread reads most of its row through
// shared memory, which this does not follow (the harness of lab 03 asks, not lab 04's).
#include <algorithm>
#include <set>
#include <string>

#include "cudalab/testing.h"

#ifdef CUDALAB_EMU  // (in the grader's checker, the runner's emu answers: remote/src/checker.cpp)
#include "cudalab/emu/inspect.h"
#endif

namespace cudalab::testing {
#ifdef CUDALAB_EMU
namespace {

std::string str(size_t x) { return std::to_string(x); }

// The elements of `m` the loads read, as (row, col) flattened row-major.
std::set<size_t> elements_read(const MatrixOperand& m, const std::vector<const void*>& loads) {
  std::set<size_t> read;
  const auto* base = static_cast<const char*>(m.device);
  const size_t bytes = m.rows * m.cols * m.element_bytes;
  for (const void* p : loads) {
    const auto* c = static_cast<const char*>(p);
    if (c >= base && c < base + bytes) read.insert((c - base) / m.element_bytes);
  }
  return read;
}

// "row 5 of a", "row 5 of a (30 of its 31 elements)", "all of b", "12 elements of a in rows 0..3
// and columns 2..9".
std::string described(const MatrixOperand& m, const std::set<size_t>& read) {
  if (read.empty()) return "nothing of " + m.name;
  if (read.size() == m.rows * m.cols) return "all of " + m.name;
  size_t r0 = SIZE_MAX, r1 = 0, c0 = SIZE_MAX, c1 = 0;
  for (size_t e : read) {
    r0 = std::min(r0, e / m.cols), r1 = std::max(r1, e / m.cols);
    c0 = std::min(c0, e % m.cols), c1 = std::max(c1, e % m.cols);
  }
  if (r0 == r1)
    return "row " + str(r0) + " of " + m.name +
           (read.size() < m.cols ? " (" + str(read.size()) + " of its " + str(m.cols) + " elements)"
                                 : "");
  if (c0 == c1)
    return "column " + str(c0) + " of " + m.name +
           (read.size() < m.rows ? " (" + str(read.size()) + " of its " + str(m.rows) + " elements)"
                                 : "");
  return str(read.size()) + " elements of " + m.name + " in rows " + str(r0) + ".." + str(r1) +
         " and columns " + str(c0) + ".." + str(c1);
}

// How many elements of row `index` (or, `column`, of that column) of m the reads miss, and
// whether they are the row's last ones (a loop over k that stops early).
struct Missed {
  size_t count = 0;
  bool at_the_end = true;
};
Missed missed(const MatrixOperand& m, const std::set<size_t>& read, size_t index, bool column) {
  const size_t length = column ? m.rows : m.cols;
  Missed found;
  for (size_t k = 0; k < length; ++k) {
    if (read.contains(column ? k * m.cols + index : index * m.cols + k)) {
      found.at_the_end = found.count == 0;  // a read after a miss
      continue;
    }
    ++found.count;
  }
  return found;
}

}  // namespace
#endif

std::string matmul_reads(const std::string& c_name, const void* c_element, size_t bytes, size_t row,
                         size_t col, const std::function<Operands()>& again) {
#ifdef CUDALAB_EMU
  const std::optional<ElementStore> s = emu::element_store(c_element, bytes);
  if (!s || !s->stored) return "";
  emu::watch_thread(s->block_index, s->thread_index);
  const Operands operands = again();
  const std::vector<emu::WatchedLoad> watched = emu::watched_loads();
  std::vector<const void*> loads;
  for (const emu::WatchedLoad& l : watched) loads.push_back(l.address);
  const auto& [a, b] = operands;
  const std::set<size_t> from_a = elements_read(a, loads), from_b = elements_read(b, loads);
  if (from_a.empty() && from_b.empty()) return "";
  std::set<records::SourceLine> lines;  // where the loads of a and b are
  for (const emu::WatchedLoad& l : watched)
    if (l.at.known() &&
        (!elements_read(a, {l.address}).empty() || !elements_read(b, {l.address}).empty()))
      lines.insert(l.at);
  std::string at;
  for (const records::SourceLine& l : lines) at += (at.empty() ? " at " : ", ") + l.text();
  const std::string element = c_name + "[" + str(row) + "][" + str(col) + "]";
  const std::string thread = "thread (" + str(s->thread_index.x) + "," + str(s->thread_index.y) +
                             "," + str(s->thread_index.z) + ") of block (" + str(s->block_index.x) +
                             "," + str(s->block_index.y) + "," + str(s->block_index.z) + ")";
  std::string said = "The thread that stored " + element + ", " + thread +
                     ", read (in the same launch run again with that thread watched) " +
                     described(a, from_a) + " and " + described(b, from_b) + at;
  const Missed of_a = missed(a, from_a, row, false), of_b = missed(b, from_b, col, true);
  if (of_a.count == 0 && of_b.count == 0)
    return said + ": all that " + element + " needs (row " + str(row) + " of " + a.name +
           ", column " + str(col) + " of " + b.name +
           "), so the arithmetic on them or the store is wrong (the sum's start or type, or "
           "the index it is stored at).";
  said += ", where " + element + " needs row " + str(row) + " of " + a.name + " and column " +
          str(col) + " of " + b.name + ", all of each.";
  // Both missing the same last elements, and all the others read: the loop over k ends early.
  if (of_a.count == of_b.count && of_a.at_the_end && of_b.at_the_end &&
      from_a.size() + of_a.count == a.cols && from_b.size() + of_b.count == b.rows)
    said += of_a.count == 1 ? " It left out the last element of each: does the loop over k stop "
                              "one too early?"
                            : " It left out the last " + str(of_a.count) +
                                  " elements of each: does the loop over k stop too early?";
  return said;
#else  // a GPU does not say which thread stored an element
  (void)c_name, (void)c_element, (void)bytes, (void)row, (void)col, (void)again;
  return "";
#endif
}

}  // namespace cudalab::testing
