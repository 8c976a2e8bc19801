// Kernel launches on the emu backend. The build's translator (common/emu/translate.py) rewrites
//     kernel<<<grid, block, shared_bytes, stream>>>(a, b, c);
// into
//     ::cudalab::emu::Launch("kernel", __FILE__, __LINE__, grid, block, shared_bytes, stream)(
//         [&](auto&&... args) { kernel(args...); }, a, b, c);
// so that templates, overloads and default arguments behave as they do under nvcc.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "cudalab/emu/types.h"

namespace cudalab::emu {

struct LaunchConfig {
  dim3 grid, block;
  size_t shared_bytes;
  const char* kernel;  // as written at the launch
  const char* file;
  int line;
  // The arguments as copied for the kernel, and those that are pointers (nullptr for the others):
  // the checks name an argument that holds a host pointer.
  const void* params = nullptr;
  size_t params_bytes = 0;
  const void* const* pointers = nullptr;
  unsigned pointer_count = 0;
};

// One GPU thread's work: call(ctx) runs the kernel body for the thread that is current.
struct ThreadFn {
  void (*call)(void*);
  void* ctx;
};

// Checks the configuration as a GPU does, runs every block and records the launch's errors.
void execute(const LaunchConfig& config, ThreadFn thread);

class Launch {
 public:
  Launch(const char* kernel, const char* file, int line, dim3 grid, dim3 block,
         size_t shared_bytes = 0, cudaStream_t = nullptr)
      : config_{grid, block, shared_bytes, kernel, file, line} {}

  template <class Body, class... Args>
  void operator()(Body body, Args&&... args) const {
    // Arguments are evaluated once on the host and copied, like a kernel's parameters.
    std::tuple<std::decay_t<Args>...> params(std::forward<Args>(args)...);
    const void* pointers[sizeof...(Args) + 1] = {};
    std::apply(
        [&](const auto&... p) {
          unsigned i = 0;
          ((pointers[i++] = pointer_or_null(p)), ...);
        },
        params);
    LaunchConfig config = config_;
    config.params = &params;
    config.params_bytes = sizeof params;
    config.pointers = pointers;
    config.pointer_count = sizeof...(Args);
    auto thread = [&] { std::apply(body, params); };
    execute(config, {[](void* t) { (*static_cast<decltype(thread)*>(t))(); }, &thread});
  }

 private:
  template <class T>
  static const void* pointer_or_null(const T& arg) {
    if constexpr (std::is_pointer_v<T>)
      return (const void*)arg;
    else
      return nullptr;
  }
  LaunchConfig config_;
};

}  // namespace cudalab::emu
