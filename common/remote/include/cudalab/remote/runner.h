// The runner's side of the remote runner: what the checker may ask of the student's code. The
// runner program is the lab's test program (student code and harness, as `make check` has always
// built it); started with --serve FD it runs no test but answers the checker on socket FD
// (src/runner.cpp). This header is included by the table that cudalab_tools/interface.py writes
// for each lab, which names the lab's kernels, host functions and the harness's __constant__
// symbols:
//
//   static const cudalab::remote::Registry registry{
//       cudalab::remote::kernel("vecAddKernel", &vecAddKernel),
//       cudalab::remote::function<cudaError_t (*)(const float*, const float*, float*, int)>(
//           "vecAdd", &vecAdd),
//       cudalab::remote::symbol("kMask2D", &kMask2D, sizeof(kMask2D))};
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>

#include "cudalab/remote/wire.h"

namespace cudalab::remote {

// Where a launch was written in the harness (the emu names it in its diagnostics).
struct LaunchSite {
  const char* file;
  int line;
  dim3 grid, block;
  size_t shared_bytes;
  cudaStream_t stream;
};

struct Entry {
  std::string key;  // a kernel's or symbol's name; a host function's function_key
  std::function<void(Message& in, Message& out)> run;  // kernels and host functions
  void* symbol = nullptr;
  size_t symbol_bytes = 0;
};

// The memory behind a host pointer argument (runner.cpp): the twin of the checker's block,
// filled with the bytes the checker sent; remembered for the reply if `writable`.
void* get_pointer(Message& in, bool writable);
// Ends a host function's reply: the twins it may have written, for the checker's memory.
void put_blocks(Message& out);
// The launch's configuration, as the checker sent it (after the kernel's name).
LaunchSite get_launch_site(Message& in);

template <class T>
T get_argument(Message& in) {
  if constexpr (std::is_pointer_v<T>)
    return static_cast<T>(get_pointer(in, !std::is_const_v<std::remove_pointer_t<T>>));
  else
    return in.get<T>();
}

template <class... P>
Entry kernel(const char* name, void (*k)(P...)) {
  return {name, [k, name](Message& in, Message&) {
            LaunchSite at = get_launch_site(in);
            std::tuple<std::decay_t<P>...> params{in.get<std::decay_t<P>>()...};
            std::apply(
                [&](auto&... p) {
#if defined(CUDALAB_EMU)
                  ::cudalab::emu::Launch(name, at.file, at.line, at.grid, at.block, at.shared_bytes,
                                         at.stream)([k](auto... a) { k(a...); }, p...);
#elif defined(__CUDACC__)  // (the table is a .cu file; runner.cpp instantiates no kernel)
                  k<<<at.grid, at.block, at.shared_bytes, at.stream>>>(p...);
#endif
                },
                params);
          }};
}

template <class R, class... P>
Entry function(const char* name, R (*f)(P...)) {
  return {function_key<R (*)(P...)>(name), [f](Message& in, Message& out) {
            // Braced: the arguments are read in order.
            std::tuple<P...> args{get_argument<P>(in)...};
            if constexpr (std::is_void_v<R>) {
              std::apply(f, args);
            } else {
              out.put(std::apply(f, args));
            }
            put_blocks(out);
          }};
}

inline Entry symbol(const char* name, void* address, size_t bytes) {
  return {name, nullptr, address, bytes};
}

// Adds the entries to the runner's table.
struct Registry {
  Registry(std::initializer_list<Entry> entries);
};

}  // namespace cudalab::remote
