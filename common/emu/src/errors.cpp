// Error codes, their names and strings, and the last/sticky error of the emu runtime.
#include <atomic>
#include <cstdio>
#include <mutex>

#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"
#include "state.h"

namespace cudalab::emu {
namespace {
thread_local cudaError_t last_error = cudaSuccess;
std::atomic<cudaError_t> sticky{cudaSuccess};
std::mutex diagnostic_mutex;
std::string diagnostic;

struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* text;
};
// Strings as CUDA 13's cudaGetErrorName/String return them.
constexpr ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorNotYetImplemented, "cudaErrorNotYetImplemented", "feature not yet implemented"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* find(cudaError_t code) {
  for (const ErrorText& e : kErrors)
    if (e.code == code) return &e;
  return nullptr;
}
}  // namespace

cudaError_t record(cudaError_t error) {
  if (cudaError_t s = sticky.load(); s != cudaSuccess) error = s;
  if (error != cudaSuccess) last_error = error;
  return error;
}

void fail(cudaError_t error, const std::string& message) {
  cudaError_t expected = cudaSuccess;
  sticky.compare_exchange_strong(expected, error);
  diagnose(message);
  record(error);
}

cudaError_t sticky_error() { return sticky.load(); }

void diagnose(const std::string& message) {
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  diagnostic = message;
  std::fprintf(stderr, "cudalab emu: %s\n", message.c_str());
}

void reset_errors() {
  sticky = cudaSuccess;
  last_error = cudaSuccess;
  clear_diagnostic();
}

std::string last_diagnostic() {
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  return diagnostic;
}

void clear_diagnostic() {
  std::lock_guard<std::mutex> lock(diagnostic_mutex);
  diagnostic.clear();
}

std::string site(const char* file, int line) {
  std::string f = file ? file : "?";
  if (auto slash = f.find_last_of('/'); slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

std::string launch_site(const LaunchConfig& c) {
  return "kernel '" + std::string(c.kernel) + "' (launched at " + site(c.file, c.line) + ")";
}

}  // namespace cudalab::emu

using cudalab::emu::record;

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

const char* cudaGetErrorString(cudaError_t error) {
  const auto* e = cudalab::emu::find(error);
  return e ? e->text : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
  const auto* e = cudalab::emu::find(error);
  return e ? e->name : "unrecognized error code";
}
