// The last and the sticky error of the emu runtime, and its diagnostics (names and strings of the
// codes: error_names.cpp).
#include "errors.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "array_names.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"
#include "launches.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {
thread_local cudaError_t last_error = cudaSuccess;
std::atomic<cudaError_t> sticky{cudaSuccess};
std::mutex diagnostic_mutex;
std::string diagnostic;
}  // namespace

cudaError_t set_last_error(cudaError_t error) {
  if (cudaError_t s = sticky.load(); s != cudaSuccess) error = s;
  if (error != cudaSuccess) last_error = error;
  return error;
}

std::atomic<unsigned long> skipped{0};
std::string first_failure;  // guarded by diagnostic_mutex

// At exit, after a kernel was stopped: say so again if the program went on as if nothing
// happened.
void report_at_exit() {
  std::string first;
  {
    std::lock_guard<std::mutex> lock(diagnostic_mutex);
    first = first_failure;
  }
  if (first.empty()) return;
  if (unsigned long n = skipped.load(); n > 0)
    std::fprintf(stderr,
                 "cudalab emu: after the error below stopped a kernel, the program went on: %lu "
                 "later launch%s did nothing (the error is sticky; check the return value of "
                 "cudaDeviceSynchronize or cudaGetLastError after each launch).\n  %s\n",
                 n, n == 1 ? "" : "es", first.c_str());
}

void fail(cudaError_t error, const Diagnostic& diagnostic) {
  cudaError_t expected = cudaSuccess;
  if (sticky.compare_exchange_strong(expected, error)) {
    std::lock_guard<std::mutex> lock(diagnostic_mutex);
    if (first_failure.empty()) {
      static const bool registered = std::atexit(report_at_exit) == 0;
      (void)registered;
      first_failure = std::string(cudaGetErrorName(error)) + ": " + diagnostic.english();
    }
  }
  diagnose(diagnostic, error);
  set_last_error(error);
}

void skipped_after_error() { ++skipped; }

cudaError_t sticky_error() { return sticky.load(); }

void diagnose(const Diagnostic& found, cudaError_t error) {
  const std::string message = found.english();
  records::write(found.record(error));
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  diagnostic = message;
  std::fprintf(stderr, "cudalab emu: %s\n", message.c_str());
}

std::string Diagnostic::english() const {
  if (kernel.empty()) return problem;
  std::string s = "kernel '" + kernel + "' (launched at " + launch.text() + "), block (" +
                  std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                  std::to_string(block.z) + "), thread (" + std::to_string(thread.x) + "," +
                  std::to_string(thread.y) + "," + std::to_string(thread.z) + ")";
  return s + (at.text().empty() ? "" : ", at " + at.text()) + ": " + problem;
}

records::Record Diagnostic::record(cudaError_t error) const {
  records::Record r("diagnostic");
  if (error != cudaSuccess) r.text("error", cudaGetErrorName(error));
  if (!check.empty()) r.text("check", check);
  if (!kernel.empty()) {
    r.text("kernel", kernel);
    r.site("launch", launch);
    r.triple("block", block.x, block.y, block.z).triple("thread", thread.x, thread.y, thread.z);
  }
  r.site("at", at);
  return r.text("problem", problem).text("text", english());
}

void reset_errors() {
  sticky = cudaSuccess;
  last_error = cudaSuccess;
  skipped = 0;
  clear_diagnostic();
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  first_failure.clear();
}

std::string last_diagnostic() {
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  return diagnostic;
}

void clear_diagnostic() {
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  diagnostic.clear();
}

namespace {
thread_local const char* caller_file = nullptr;  // set_caller_site()
thread_local int caller_line = 0;
thread_local std::string caller_array;

// The line a host call is made for: its own, or the one set_caller_site() gave.
void called_from(const char*& file, int& line) {
  if (caller_file != nullptr) {
    file = caller_file;
    line = caller_line;
  }
}
}  // namespace

void set_caller_site(const char* file, int line, std::string_view array) {
  caller_file = file;
  caller_line = line;
  caller_array = array;
}

records::SourceLine place(const char* file, int line) {
  called_from(file, line);
  return code_place(file, line);
}

std::string site(const char* file, int line) { return place(file, line).text(); }

records::SourceLine code_place(const char* file, int line) {
  std::string f = file ? file : "?";
  if (auto slash = f.find_last_of('/'); slash != std::string::npos) f = f.substr(slash + 1);
  return {f, static_cast<unsigned>(line)};
}

std::string code_site(const char* file, int line) { return code_place(file, line).text(); }

std::string allocation_site(const char* file, int line) {
  const bool for_caller = caller_file != nullptr;
  called_from(file, line);
  std::string name = for_caller ? caller_array : file ? array_name(file, line) : "";
  return site(file, line) + (name.empty() ? "" : " (" + name + ")");
}

std::string launch_site(const LaunchConfig& c) {
  return "kernel '" + std::string(c.kernel) + "' (launched at " + site(c.file, c.line) + ")";
}

Diagnostic refused_call(std::string check, records::SourceLine at, std::string words) {
  Diagnostic d(std::move(check), std::move(words));
  d.at = std::move(at);
  return d;
}

Diagnostic in_kernel(const LaunchConfig& c, uint3 block, uint3 thread, records::SourceLine at,
                     std::string check, std::string problem) {
  Diagnostic d;
  d.check = std::move(check);
  d.problem = std::move(problem);
  d.kernel = c.kernel;
  d.launch = place(c.file, c.line);
  d.block = block;
  d.thread = thread;
  d.at = std::move(at);
  return d;
}

}  // namespace cudalab::emu

using cudalab::emu::set_last_error;

cudaError_t cudaGetLastError() {
  // Returns the last error and resets it, except that a sticky error never goes away.
  cudaError_t e = cudalab::emu::last_error;
  cudalab::emu::last_error = cudalab::emu::sticky_error();
  return e != cudaSuccess ? e : cudalab::emu::last_error;
}

cudaError_t cudaPeekAtLastError() {
  cudaError_t e = cudalab::emu::last_error;
  return e != cudaSuccess ? e : cudalab::emu::sticky_error();
}
