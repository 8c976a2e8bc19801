// What the thread that stored a wrong element read (testing.h: matmul_reads, element_reads): on
// emu, the thread is watched while the harness runs the same launch again (inspect.h:
// watch_thread), and its global loads are placed in the inputs the harness names: rows and columns
// of a matrix product's operands, or elements of vectors, said against what the element needs.
//
// Evidence rule: the reads are said only from the loads of the thread that stored the element, in
// a second run of the same launch; where no thread stored the element, or no load fell in an
// input, nothing is claimed. Global loads only: a tiled kernel's thread reads most of its inputs
// through shared memory, which this does not follow (the harnesses ask for the kernels that read
// global memory: lab 03's, lab 05's basic convolution, lab 06's scalar CSR).
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

// The store of the element and the loads of its thread in the run again; nothing where no thread
// stored it.
struct Watched {
  ElementStore store;
  std::vector<emu::WatchedLoad> loads;
};
template <class Inputs>
std::optional<Watched> watched_run(const void* element, size_t bytes,
                                   const std::function<Inputs()>& again, Inputs& inputs) {
  const std::optional<ElementStore> s = emu::element_store(element, bytes);
  if (!s || !s->stored) return std::nullopt;
  emu::watch_thread(s->block_index, s->thread_index);
  inputs = again();
  return Watched{*s, emu::watched_loads()};
}

// Whether a load read an element of an input (`count` of `element_bytes` at `device`).
bool within(const void* device, size_t count, size_t element_bytes, const emu::WatchedLoad& l) {
  const auto* base = static_cast<const char*>(device);
  const auto* c = static_cast<const char*>(l.address);
  return c >= base && c < base + count * element_bytes;
}

// The indices of the elements of such an input the loads read.
std::set<size_t> elements_read(const void* device, size_t count, size_t element_bytes,
                               const std::vector<emu::WatchedLoad>& loads) {
  std::set<size_t> read;
  for (const emu::WatchedLoad& l : loads)
    if (within(device, count, element_bytes, l))
      read.insert((static_cast<const char*>(l.address) - static_cast<const char*>(device)) /
                  element_bytes);
  return read;
}

// " at k.cu:23, k.cu:24": the lines of the loads that read one of `inputs`' elements.
template <class Reads>
std::string load_lines(const std::vector<emu::WatchedLoad>& loads, Reads reads_an_input) {
  std::set<records::SourceLine> lines;
  for (const emu::WatchedLoad& l : loads)
    if (l.at.known() && reads_an_input(l)) lines.insert(l.at);
  std::string at;
  for (const records::SourceLine& l : lines) at += (at.empty() ? " at " : ", ") + l.text();
  return at;
}

std::string thread_of(const ElementStore& s) {
  return "thread (" + str(s.thread_index.x) + "," + str(s.thread_index.y) + "," +
         str(s.thread_index.z) + ") of block (" + str(s.block_index.x) + "," +
         str(s.block_index.y) + "," + str(s.block_index.z) + ")";
}

// ---- a matrix product ----------------------------------------------------------------------

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

// ---- vectors -------------------------------------------------------------------------------

// "x[3..7]", "x[2, 5, 9]", "12 elements of x in 0..99", "nothing of x".
std::string described(const std::string& name, const std::set<size_t>& elements) {
  if (elements.empty()) return "nothing of " + name;
  const size_t first = *elements.begin(), last = *elements.rbegin();
  if (last - first + 1 == elements.size())
    return name + "[" + str(first) + (first == last ? "" : ".." + str(last)) + "]";
  if (elements.size() <= 4) {  // "x[96, 340, 352]"
    std::string said;
    for (size_t e : elements) said += (said.empty() ? "" : ", ") + str(e);
    return name + "[" + said + "]";
  }
  return str(elements.size()) + " elements of " + name + " in " + str(first) + ".." + str(last);
}

}  // namespace
#endif

std::string matmul_reads(const std::string& c_name, const void* c_element, size_t bytes, size_t row,
                         size_t col, const std::function<Operands()>& again) {
#ifdef CUDALAB_EMU
  Operands operands;
  const std::optional<Watched> w = watched_run(c_element, bytes, again, operands);
  if (!w) return "";
  const auto& [a, b] = operands;
  auto read_of = [&](const MatrixOperand& m) {
    return elements_read(m.device, m.rows * m.cols, m.element_bytes, w->loads);
  };
  const std::set<size_t> from_a = read_of(a), from_b = read_of(b);
  if (from_a.empty() && from_b.empty()) return "";
  const std::string at = load_lines(w->loads, [&](const emu::WatchedLoad& l) {
    return within(a.device, a.rows * a.cols, a.element_bytes, l) ||
           within(b.device, b.rows * b.cols, b.element_bytes, l);
  });
  const std::string element = c_name + "[" + str(row) + "][" + str(col) + "]";
  std::string said = "The thread that stored " + element + ", " + thread_of(w->store) +
                     ", read (in the same launch run again with that thread watched) " +
                     described(a, from_a) + " and " + described(b, from_b) + at;
  const Missed of_a = missed(a, from_a, row, false), of_b = missed(b, from_b, col, true);
  if (of_a.count == 0 && of_b.count == 0)
    return said + ": all that " + element + " needs (row " + str(row) + " of " + a.name +
           ", column " + str(col) + " of " + b.name +
           "), so the arithmetic on them or the store is wrong (the sum's start or type, or "
           "the index it is stored at).\n";
  said += ", where " + element + " needs row " + str(row) + " of " + a.name + " and column " +
          str(col) + " of " + b.name + ", all of each.";
  // Both missing the same last elements, and all the others read: the loop over k ends early.
  if (of_a.count == of_b.count && of_a.at_the_end && of_b.at_the_end &&
      from_a.size() + of_a.count == a.cols && from_b.size() + of_b.count == b.rows)
    said += of_a.count == 1 ? " It left out the last element of each: does the loop over k stop "
                              "one too early?"
                            : " It left out the last " + str(of_a.count) +
                                  " elements of each: does the loop over k stop too early?";
  return said + "\n";
#else  // a GPU does not say which thread stored an element
  (void)c_name, (void)c_element, (void)bytes, (void)row, (void)col, (void)again;
  return "";
#endif
}

std::string element_reads(const std::string& element, const void* got_element, size_t bytes,
                          const std::function<std::vector<VectorOperand>()>& again) {
#ifdef CUDALAB_EMU
  std::vector<VectorOperand> inputs;
  const std::optional<Watched> w = watched_run(got_element, bytes, again, inputs);
  if (!w) return "";
  std::vector<std::string> reads, needs;
  bool all_needed = true, any = false;
  for (const VectorOperand& v : inputs) {
    const std::set<size_t> read = elements_read(v.device, v.count, v.element_bytes, w->loads);
    const std::set<size_t> needed(v.needed.begin(), v.needed.end());
    any = any || !read.empty();
    all_needed =
        all_needed && std::includes(read.begin(), read.end(), needed.begin(), needed.end());
    reads.push_back(described(v.name, read));
    needs.push_back(described(v.name, needed));
  }
  if (!any) return "";
  auto listed = [](const std::vector<std::string>& parts) {
    std::string said;
    for (size_t i = 0; i < parts.size(); ++i)
      said += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return said;
  };
  const std::string at = load_lines(w->loads, [&](const emu::WatchedLoad& l) {
    return std::any_of(inputs.begin(), inputs.end(), [&](const VectorOperand& v) {
      return within(v.device, v.count, v.element_bytes, l);
    });
  });
  const std::string said = "The thread that stored " + element + ", " + thread_of(w->store) +
                           ", read (in the same launch run again with that thread watched) " +
                           listed(reads) + at;
  if (all_needed)
    return said + ": all that " + element + " needs (" + listed(needs) +
           "), so the arithmetic on them or the store is wrong.\n";
  return said + ", where " + element + " needs " + listed(needs) + ".\n";
#else
  (void)element, (void)got_element, (void)bytes, (void)again;
  return "";
#endif
}

}  // namespace cudalab::testing
