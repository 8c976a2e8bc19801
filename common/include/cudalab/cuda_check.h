// CUDA_CHECK(call): stops the program with the file, line and CUDA's message when a runtime call
// fails. For harnesses and benchmarks; the labs' host code returns errors to its caller instead.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cudalab {
// "cudaErrorInvalidValue (invalid argument)": the name and CUDA's text, for test messages.
inline std::string error_text(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}
// A kernel's error is sticky: every later call fails with it, so only its first report matters
// (on emu, the explanation above it); the message says so.
inline const char* consequence_of(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorLaunchFailure:
      return " (a kernel's error: every later CUDA call fails with it, so read its first report)";
    default:
      return "";
  }
}
}  // namespace cudalab

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t cuda_check_error_ = (call);                                                    \
    if (cuda_check_error_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)%s\n", __FILE__, __LINE__, #call,         \
                   cudaGetErrorString(cuda_check_error_), cudaGetErrorName(cuda_check_error_), \
                   ::cudalab::consequence_of(cuda_check_error_));                              \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)
