// What CUDA 12's runtime had and CUDA 13's removed (the cudaThread* calls, deprecated since
// CUDA 4): nvcc 13 refuses a program that calls them, but a course meets them in older code
// (Rodinia, textbooks). Each runs as its replacement, and the first call of each tells where it
// was and what to call instead: a warning on stderr and a record (check "removed_api").
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "cudalab/emu/runtime.h"
#include "diagnostic.h"
#include "errors.h"

namespace cudalab::emu {
namespace {

void told_once(const char* removed, const char* replacement, const cudalab_source_location& where) {
  static std::mutex mutex;
  static std::set<std::string> told;
  std::lock_guard<std::mutex> lock(mutex);
  if (!told.insert(removed).second) return;
  Diagnostic found("removed_api",
                   std::string(removed) +
                       "() was removed in CUDA 13 (nvcc 13 refuses it): emu runs it as " +
                       replacement + "(), which is what to call instead");
  found.at = place(where.file_name(), static_cast<int>(where.line()));
  records::write(found.record(cudaSuccess).text("severity", "warning"));
  std::fprintf(stderr, "cudalab emu: warning: %s: %s (told once)\n", found.at.text().c_str(),
               found.problem.c_str());
}

}  // namespace
}  // namespace cudalab::emu

using cudalab::emu::told_once;

cudaError_t cudaThreadSynchronize(cudalab_source_location where) {
  told_once("cudaThreadSynchronize", "cudaDeviceSynchronize", where);
  return cudaDeviceSynchronize();
}
cudaError_t cudaThreadExit(cudalab_source_location where) {
  told_once("cudaThreadExit", "cudaDeviceReset", where);
  return cudaDeviceReset();
}
cudaError_t cudaThreadSetLimit(cudaLimit limit, size_t value, cudalab_source_location where) {
  told_once("cudaThreadSetLimit", "cudaDeviceSetLimit", where);
  return cudaDeviceSetLimit(limit, value);
}
cudaError_t cudaThreadGetLimit(size_t* value, cudaLimit limit, cudalab_source_location where) {
  told_once("cudaThreadGetLimit", "cudaDeviceGetLimit", where);
  return cudaDeviceGetLimit(value, limit);
}
cudaError_t cudaThreadSetCacheConfig(cudaFuncCache config, cudalab_source_location where) {
  told_once("cudaThreadSetCacheConfig", "cudaDeviceSetCacheConfig", where);
  return cudaDeviceSetCacheConfig(config);
}
cudaError_t cudaThreadGetCacheConfig(cudaFuncCache* config, cudalab_source_location where) {
  told_once("cudaThreadGetCacheConfig", "cudaDeviceGetCacheConfig", where);
  return cudaDeviceGetCacheConfig(config);
}
