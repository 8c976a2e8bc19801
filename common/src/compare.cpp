#include "cudalab/compare.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "cudalab/data.h"

namespace cudalab {
namespace {

constexpr size_t kShown = 5;  // wrong elements listed in a report

// What the positions of the wrong elements suggest.
std::string pattern(const std::vector<size_t>& wrong, size_t n, size_t unwritten) {
  if (wrong.size() == n && unwritten == n)
    return "No element was written: did the kernel run? Check the launch configuration and "
           "the error that cudaGetLastError() returns after it.";
  size_t first = wrong.front();
  if (first > 0 && wrong.size() == n - first && unwritten == wrong.size())
    return "Elements 0.." + std::to_string(first - 1) + " are right and none from " +
           std::to_string(first) + " on was written: do the grid's threads cover all " +
           std::to_string(n) + " elements?";
  if (unwritten == wrong.size())
    return "The wrong elements were never written: some threads skip their element or the "
           "index computation leaves gaps.";
  return "";
}

template <class Got, class Expected, class Close>
std::string report(const std::string& name, const Got* got, const Expected* expected, size_t n,
                   Close close, const std::string& tolerance, bool (*unwritten)(Got)) {
  std::vector<size_t> wrong;
  size_t never = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!close(got[i], expected[i])) {
      wrong.push_back(i);
      never += unwritten(got[i]) ? 1 : 0;
    }
  }
  if (wrong.empty()) return "";
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
    s << ", expected " << expected[i] << "\n";
  }
  if (wrong.size() > kShown) s << "  ... and " << wrong.size() - kShown << " more\n";
  if (std::string p = pattern(wrong, n, never); !p.empty()) s << "  " << p << "\n";
  return s.str();
}

bool float_unwritten(float x) { return is_poison(x); }
bool int_unwritten(int x) { return x == kPoisonInt; }
bool byte_unwritten(unsigned char) { return false; }  // every byte value is a possible result

}  // namespace

std::string compare(const std::string& name, const float* got, const double* expected, size_t n,
                    Tolerance tol) {
  std::ostringstream t;
  t << " (an element passes when |got - expected| <= " << tol.rel << " * |expected| + " << tol.abs
    << ")";
  auto close = [tol](float g, double e) {
    return std::isfinite(g) == std::isfinite(e) &&
           std::fabs(double(g) - e) <= tol.rel * std::fabs(e) + tol.abs;
  };
  return report(name, got, expected, n, close, t.str(), float_unwritten);
}

std::string compare(const std::string& name, const int* got, const long long* expected, size_t n) {
  auto close = [](int g, long long e) { return g == e; };
  return report(name, got, expected, n, close, " (integers must match exactly)", int_unwritten);
}

std::string compare(const std::string& name, const unsigned char* got, const long long* expected,
                    size_t n, int max_difference) {
  auto close = [max_difference](unsigned char g, long long e) {
    return std::llabs(g - e) <= max_difference;
  };
  std::string t = max_difference == 0 ? " (bytes must match exactly)"
                                      : " (a byte passes within " + std::to_string(max_difference) +
                                            " of expected)";
  return report(name, got, expected, n, close, t, byte_unwritten);
}

}  // namespace cudalab
