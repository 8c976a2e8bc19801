// What the data of a wrong result says (internal to compare.cpp): the patterns a student's typical
// mistakes leave in the output, read from the values themselves, never from the test's name.
//
// Each finding is tried in turn; the first that fits every wrong element is said, with what it
// usually means: nothing written, the end never written, NaN or Inf, zeros, a constant factor,
// a shift by k, a transposed layout, only the last partial block, only one row or column, only
// rows or columns from some on, only a border, wrong elements every p-th. Each says above it what
// it needs to see (its evidence), so that a hint that does not hold is not given; none is drawn
// from fewer than kAgreeingElements elements, but for zeros. A small map (where_wrong) shows where
// the wrong (X) and never-written (o) elements lie (a 2D output as rows, a 1D output as one row).
#include "wrong_result.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

namespace cudalab::detail {
namespace {

constexpr size_t kMaxShift = 64;         // shifts tried: -64..64 (and one row either way in 2D)
constexpr size_t kAgreeingElements = 3;  // the fewest wrong elements a pattern is drawn from
constexpr size_t kMapRows = 12, kMapCols = 48;

std::string str(size_t x) { return std::to_string(x); }

bool all_of_wrong(const Evidence& e, auto predicate) {
  return std::all_of(e.wrong.begin(), e.wrong.end(), predicate);
}

// Element i holds what belongs at i + k, for every wrong element that has such a neighbour (and
// enough of them do)?
bool shifted_by(const Evidence& e, long k) {
  size_t checked = 0;
  for (size_t i : e.wrong) {
    const long j = long(i) + k;
    if (j < 0 || j >= long(e.n)) continue;
    if (!e.matches(i, size_t(j))) return false;
    ++checked;
  }
  return checked * 2 > e.wrong.size();
}

std::string shift(const Evidence& e) {
  std::vector<long> tried;
  for (long k = 1; k <= long(kMaxShift); ++k) tried.insert(tried.end(), {k, -k});
  if (e.cols > 0) tried.insert(tried.end(), {long(e.cols), -long(e.cols)});
  for (long k : tried) {
    if (!shifted_by(e, k)) continue;
    const bool rows = e.cols > 0 && std::labs(k) == long(e.cols);
    const std::string by =
        rows ? "one row" : str(std::labs(k)) + (std::labs(k) == 1 ? " element" : " elements");
    return "The output is shifted by " + by + ": element i holds what belongs at i " +
           (k > 0 ? "+ " : "- ") + (rows ? "cols" : str(std::labs(k))) +
           ". Look for an off-by-one in the index (i + 1, i - 1, a halo offset counted twice).";
  }
  return "";
}

// Evidence: every wrong element is the factor times its expected value, and at least
// kAgreeingElements of them have an expected value that is not 0 (one element makes any factor).
std::string constant_factor(const Evidence& e) {
  double factor = 0;
  for (size_t i : e.wrong)
    if (e.want(i) != 0 && std::isfinite(e.got(i))) {
      factor = e.got(i) / e.want(i);
      break;
    }
  if (factor == 0 || std::fabs(factor - 1) < 1e-6) return "";
  const bool fits = all_of_wrong(e, [&](size_t i) {
    return std::fabs(e.got(i) - factor * e.want(i)) <=
           1e-4 * (std::fabs(factor * e.want(i)) + 1e-6);
  });
  const auto agreeing =
      std::count_if(e.wrong.begin(), e.wrong.end(), [&](size_t i) { return e.want(i) != 0; });
  if (!fits || agreeing < long(kAgreeingElements)) return "";
  std::ostringstream s;
  s.precision(4);
  s << "Every wrong element is " << factor << " times the expected value: a wrong divisor or a "
    << "factor missing or counted twice (a sum over the wrong count, a mask or weight applied "
       "twice).";
  return s.str();
}

std::string transposed(const Evidence& e) {
  if (e.rows < 2 || e.rows != e.cols) return "";
  const bool fits = all_of_wrong(e, [&](size_t i) {
    const size_t r = i / e.cols, c = i % e.cols;
    return e.matches(i, c * e.cols + r);
  });
  return fits
             ? "The output is transposed: element (row, col) holds what belongs at (col, row). Row "
               "and Col are swapped somewhere (the index of the output, or of an input)."
             : "";
}

std::string last_partial_block(const Evidence& e) {
  if (e.cols > 0) return "";  // (2D: rows_or_columns)
  for (size_t p : {8, 16, 32, 64, 128, 256, 512, 1024}) {
    const size_t tail = e.n % p, start = e.n - tail;
    if (tail == 0 || start == 0) continue;
    if (e.wrong.front() >= start && e.wrong.size() * 2 > tail)
      return "Only the last, partial group of " + str(tail) + " elements (from " + str(start) +
             ", after whole groups of " + str(p) +
             ") is wrong: the grid's rounding (round the block count up) or the guard for the end "
             "(if (i < n)) is off.";
  }
  return "";
}

std::string border(const Evidence& e) {
  if (e.cols > 0) {
    for (size_t w = 1; w <= 8 && 2 * w < std::min(e.rows, e.cols); ++w) {
      const bool fits = all_of_wrong(e, [&](size_t i) {
        const size_t r = i / e.cols, c = i % e.cols;
        return std::min({r, c, e.rows - 1 - r, e.cols - 1 - c}) < w;
      });
      if (fits)
        return "Only a border " + str(w) + (w == 1 ? " element" : " elements") +
               " wide is wrong, the inside is right: the halo or ghost cells (elements outside the "
               "image count as 0), or the bounds of the loop over the neighbours.";
    }
    return "";
  }
  for (size_t w = 1; w <= 8 && 2 * w < e.n; ++w)
    if (all_of_wrong(e, [&](size_t i) { return i < w || i >= e.n - w; }))
      return "Only the first or last " + str(w) + (w == 1 ? " element is" : " elements are") +
             " wrong: the ends (ghost cells count as 0, or the loop over the neighbours starts or "
             "stops one early).";
  return "";
}

// Evidence: all the wrong elements are in one row or one column (of an output with several of
// each), and at least kAgreeingElements of them.
std::string one_row_or_column(const Evidence& e) {
  if (e.cols < 2 || e.rows < 2 || e.wrong.size() < kAgreeingElements) return "";
  const size_t row = e.wrong.front() / e.cols, col = e.wrong.front() % e.cols;
  const auto named = [](const char* what, size_t k, size_t count) {
    return std::string(what) + " " + str(k) +
           (k == 0           ? " (the first)"
            : k + 1 == count ? " (the last)"
                             : "");
  };
  std::string only;
  if (all_of_wrong(e, [&](size_t i) { return i % e.cols == col; }))
    only = named("column", col, e.cols) + " is wrong, in " + str(e.wrong.size()) + " of its " +
           str(e.rows) + " rows";
  else if (all_of_wrong(e, [&](size_t i) { return i / e.cols == row; }))
    only = named("row", row, e.rows) + " is wrong, in " + str(e.wrong.size()) + " of its " +
           str(e.cols) + " columns";
  else
    return "";
  return "Only " + only +
         ": look at what the threads of that line do differently from their neighbours (the guard "
         "or the loop bound at an edge: < against <=, Width - 1; a halo element).";
}

// Evidence: no wrong element before row (or column) k, and wrong elements in at least half the
// rows (columns) from k on: the grid or the index stops short, not one line gone wrong.
std::string rows_or_columns(const Evidence& e) {
  if (e.cols == 0) return "";
  size_t first_row = e.rows, first_col = e.cols;
  std::set<size_t> wrong_rows, wrong_cols;
  for (size_t i : e.wrong) {
    first_row = std::min(first_row, i / e.cols), first_col = std::min(first_col, i % e.cols);
    wrong_rows.insert(i / e.cols);
    wrong_cols.insert(i % e.cols);
  }
  if (first_row > 0 && wrong_rows.size() * 2 < e.rows - first_row) return "";
  if (first_row == 0 && first_col > 0 && wrong_cols.size() * 2 < e.cols - first_col) return "";
  if (first_row > 0)
    return "Rows 0.." + str(first_row - 1) + " are right; the wrong elements are in rows " +
           str(first_row) + ".." + str(e.rows - 1) +
           ": does the grid cover every row (blocks in y rounded up), or does the row index use "
           "the wrong width?";
  if (first_col > 0)
    return "Columns 0.." + str(first_col - 1) + " are right; the wrong elements are in columns " +
           str(first_col) + ".." + str(e.cols - 1) +
           ": does the grid cover every column (blocks in x rounded up)?";
  return "";
}

// Evidence: a period p that fits at least twice in the output's row (a 1D output: in the output),
// whose few positions (at most one in 8) are wrong nearly everywhere, each several times.
std::string periodic(const Evidence& e) {
  if (e.wrong.size() < 4) return "";
  const size_t line = e.cols > 0 ? e.cols : e.n;
  for (size_t p = 2; p <= 1024 && p * 2 <= line; ++p) {
    std::set<size_t> residues;
    for (size_t i : e.wrong) {
      residues.insert((e.cols > 0 ? i % e.cols : i) % p);
      if (residues.size() * 8 > p) break;
    }
    if (residues.size() * 8 > p) continue;
    const size_t candidates = (line / p) * residues.size() * (e.cols > 0 ? e.rows : 1);
    // Nearly every position of those residues is wrong, each several times.
    if (e.wrong.size() * 10 < candidates * 9 || e.wrong.size() < 3 * residues.size()) continue;
    std::string where;
    for (size_t r : residues) where += (where.empty() ? "" : ", ") + str(r);
    return std::string("The wrong elements repeat every ") + str(p) +
           (e.cols > 0 ? " columns" : " elements") + " (positions " + where + " of each " + str(p) +
           "): a tile or block size. Look at what the thread at that position of its tile or block "
           "does (the first or last one, a halo element, a bank-conflict padding).";
  }
  return "";
}

// Every wrong element is 0. Where the backend says a thread stored the first of them and the copy
// brought it, the kernel computed the 0. Otherwise the copy back is blamed only where nothing is
// right (the output as the host had it before), or where the zeros are the output's end and all
// before them right (a copy of too few bytes); zeros among right elements come from the kernel.
std::string zeros(const Evidence& e) {
  if (const std::optional<ElementStore> s = e.store(e.wrong.front()); s && s->stored)
    return "Every wrong element is 0, and the copy back brought what the kernel stored (element " +
           str(e.wrong.front()) + ": " + store_words(*s) +
           "): the kernel computed 0, by an integer division, a sum whose loop never runs, or a "
           "product with an element that is 0.";
  if (e.wrong.size() == e.n)
    return "Every element is 0: was the result copied back after the kernel, and does the kernel "
           "write (and not only read) the output?";
  const size_t first = e.wrong.front();
  if (first > 0 && e.wrong.size() == e.n - first)
    return "Elements 0.." + str(first - 1) + " are right and every one from " + str(first) +
           " on is 0: was only part of the output copied back (a count of elements where "
           "cudaMemcpy takes bytes)?";
  return "Every wrong element is 0 and the others are right: an integer division, a product "
         "with an element that is 0, or a branch that skips the store.";
}

}  // namespace

std::optional<WrongMap> where_wrong(const Evidence& e) {
  const bool two_d = e.cols > 0 && e.rows > 1;
  if (!two_d && e.n <= 1) return std::nullopt;
  const size_t out_rows = two_d ? e.rows : 1, out_cols = two_d ? e.cols : e.n;
  const size_t rows = std::min(out_rows, kMapRows), cols = std::min(out_cols, kMapCols);
  std::vector<std::string> grid(rows, std::string(cols, '.'));
  for (size_t i : e.wrong) {
    char& cell = grid[(i / out_cols) * rows / out_rows][(i % out_cols) * cols / out_cols];
    cell = e.never_written(i) ? (cell == 'X' ? 'X' : 'o') : 'X';
  }
  if (std::all_of(grid.begin(), grid.end(), [](const std::string& line) {
        return line.find_first_not_of('X') == std::string::npos;
      }))
    return std::nullopt;  // everywhere: the map would say nothing
  return WrongMap{out_rows, out_cols, (out_rows + rows - 1) / rows, (out_cols + cols - 1) / cols,
                  std::move(grid)};
}

std::string WrongMap::english() const {
  std::ostringstream s;
  s << "Where the wrong elements are (" << rows << " x " << cols << ", each mark " << mark_rows
    << " x " << mark_cols << " elements; X wrong, o never written, . right):\n";
  for (const std::string& line : cells) s << "    " << line << "\n";
  return s.str();
}

std::string wrong_result_pattern(const Evidence& e) {
  const size_t unwritten = static_cast<size_t>(
      std::count_if(e.wrong.begin(), e.wrong.end(), [&](size_t i) { return e.never_written(i); }));
  std::string found;
  if (e.wrong.size() == e.n && unwritten == e.n) {
    found =
        "No element was written: did the kernel run? Check the launch configuration and the "
        "error that cudaGetLastError() returns after it.";
    if (const std::string launch = unwritten_words(e, 0); !launch.empty())
      found = "No element was written. " + launch;
  } else if (const size_t first = e.wrong.front();
             first > 0 && e.wrong.size() == e.n - first && unwritten == e.wrong.size()) {
    found = "Elements 0.." + str(first - 1) + " are right and none from " + str(first) +
            " on was written";
    const std::string launch = unwritten_words(e, first);
    found += launch.empty() ? ": do the grid's threads cover all " + str(e.n) + " elements?"
                            : ". " + launch;
  } else if (const size_t bad = static_cast<size_t>(std::count_if(
                 e.wrong.begin(), e.wrong.end(),
                 [&](size_t i) { return !e.never_written(i) && !std::isfinite(e.got(i)); }));
             bad > 0) {
    found = str(bad) +
            " wrong element(s) are NaN or Inf: a division by zero, a square root of a "
            "negative number, or arithmetic on memory nobody wrote.";
  } else if (all_of_wrong(e, [&](size_t i) { return e.got(i) == 0; })) {
    found = zeros(e);
  } else {
    for (auto finding : {constant_factor, transposed, shift, last_partial_block, one_row_or_column,
                         rows_or_columns, border, periodic}) {
      if (found = finding(e); !found.empty()) break;
    }
    if (found.empty() && unwritten == e.wrong.size())
      found =
          "The wrong elements were never written: some threads skip their element or the "
          "index computation leaves gaps.";
    if (found.empty() || unwritten == e.wrong.size())
      if (const std::string launch = unwritten_words(e, e.wrong.front()); !launch.empty())
        found += (found.empty() ? "" : " ") + launch;
  }
  return found;
}

}  // namespace cudalab::detail
