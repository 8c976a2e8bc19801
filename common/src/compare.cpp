#include "cudalab/compare.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "cudalab/data.h"
#include "cudalab/records.h"
#include "wrong_result.h"

namespace cudalab {
namespace {

constexpr size_t kShown = 5;  // wrong elements listed in a report

StoreFinder store_finder = nullptr;
thread_local bool last_explained = false;  // (last_report_explained)

template <class Got, class Expected, class Close>
std::string report(const std::string& name, const Got* got, const Expected* expected, size_t n,
                   Close close, const std::string& tolerance, bool (*unwritten)(Got), Shape shape) {
  std::vector<size_t> wrong;
  for (size_t i = 0; i < n; ++i) {
    if (!close(got[i], expected[i])) {
      wrong.push_back(i);
    }
  }
  last_explained = false;
  if (wrong.empty()) return "";
  auto store = [got](size_t i) {
    return store_finder ? store_finder(got + i, sizeof(Got)) : std::optional<ElementStore>();
  };
  records::Record record("wrong_elements");
  std::vector<records::Record> stores;
  std::ostringstream s;
  s.precision(9);
  s << name << ": " << wrong.size() << " of " << n << " elements are wrong" << tolerance << "\n";
  for (size_t k = 0; k < wrong.size() && k < kShown; ++k) {
    size_t i = wrong[k];
    s << "  " << name << "[" << i << "] = ";
    if (unwritten(got[i]))
      s << "(never written)";
    else
      s << +got[i];  // + prints a byte as a number
    s << ", expected " << expected[i];
    if (const std::optional<ElementStore> st = store(i)) {
      if (st->stored || !unwritten(got[i])) s << ": " << detail::store_words(*st);
      // Where no thread stored the element: no block, thread nor line.
      records::Record r("store");
      r.count("element", i).text("kernel", st->kernel).site("launch", st->launch);
      if (st->stored)
        r.triple("block", st->block_index.x, st->block_index.y, st->block_index.z)
            .triple("thread", st->thread_index.x, st->thread_index.y, st->thread_index.z)
            .count("atomic", st->atomic)
            .site("at", st->store);
      if (!st->loads.empty()) {
        std::vector<records::Record> loads;
        for (const records::SourceLine& l : st->loads)
          loads.push_back(std::move(records::Record("line").site("at", l)));
        r.objects("loads", loads);
      }
      stores.push_back(std::move(r));
    }
    s << "\n";
  }
  if (wrong.size() > kShown) s << "  ... and " << wrong.size() - kShown << " more\n";
  detail::Evidence evidence{
      .wrong = std::move(wrong),
      .n = n,
      .rows = shape.cols > 0 ? shape.rows : 0,
      .cols = shape.rows * shape.cols == n ? shape.cols : 0,  // (a shape that does not fit: 1D)
      .got = [got](size_t i) { return double(got[i]); },
      .want = [expected](size_t j) { return double(expected[j]); },
      .matches = [&](size_t i, size_t j) { return close(got[i], expected[j]); },
      .never_written = [got, unwritten](size_t i) { return unwritten(got[i]); },
      .store = store,
  };
  if (evidence.cols == 0) evidence.rows = 0;
  std::string found = detail::wrong_result_pattern(evidence);
  last_explained = !found.empty();
  const std::optional<detail::WrongMap> map = detail::where_wrong(evidence);
  if (map) found += (found.empty() ? "" : "\n  ") + map->english();
  if (!found.empty()) s << "  " << found << "\n";
  record.text("output", name).count("elements", n).count("wrong", evidence.wrong.size());
  if (map)
    record.count("rows", map->rows)
        .count("cols", map->cols)
        .count("mark_rows", map->mark_rows)
        .count("mark_cols", map->mark_cols)
        .texts("cells", map->cells);
  if (!stores.empty()) record.objects("stores", stores);
  records::write(record.text("text", s.str()));
  return s.str();
}

// When an element passes: one definition for compare() and first_wrong().
auto float_close(Tolerance tol) {
  return [tol](float g, double e) {
    return std::isfinite(g) == std::isfinite(e) &&
           std::fabs(double(g) - e) <= tol.rel * std::fabs(e) + tol.abs;
  };
}
bool int_close(int g, long long e) { return g == e; }

template <class Got, class Expected, class Close>
size_t first_failing(const Got* got, const Expected* expected, size_t n, Close close) {
  size_t i = 0;
  while (i < n && close(got[i], expected[i])) ++i;
  return i;
}

bool float_unwritten(float x) { return is_poison(x); }
bool int_unwritten(int x) { return x == kPoisonInt; }
bool byte_unwritten(unsigned char) { return false; }  // every byte value is a possible result

}  // namespace

void set_store_finder(StoreFinder finder) { store_finder = finder; }

bool last_report_explained() { return last_explained; }

std::string compare(const std::string& name, const float* got, const double* expected, size_t n,
                    Tolerance tol, Shape shape) {
  std::ostringstream t;
  t << " (an element passes when |got - expected| <= " << tol.rel << " * |expected| + " << tol.abs
    << ")";
  return report(name, got, expected, n, float_close(tol), t.str(), float_unwritten, shape);
}

std::string compare(const std::string& name, const int* got, const long long* expected, size_t n,
                    Shape shape) {
  return report(name, got, expected, n, int_close, " (integers must match exactly)", int_unwritten,
                shape);
}

size_t first_wrong(const float* got, const double* expected, size_t n, Tolerance tol) {
  return first_failing(got, expected, n, float_close(tol));
}

size_t first_wrong(const int* got, const long long* expected, size_t n) {
  return first_failing(got, expected, n, int_close);
}

std::string compare(const std::string& name, const unsigned char* got, const long long* expected,
                    size_t n, int max_difference, Shape shape) {
  auto close = [max_difference](unsigned char g, long long e) {
    return std::llabs(g - e) <= max_difference;
  };
  std::string t = max_difference == 0 ? " (bytes must match exactly)"
                                      : " (a byte passes within " + std::to_string(max_difference) +
                                            " of expected)";
  return report(name, got, expected, n, close, t, byte_unwritten, shape);
}

}  // namespace cudalab
