// Included first when the Clang front end (common/tools/cudalab_tools/cuda_ast.py) parses a CUDA
// file; never compiled. Clang parses the file as CUDA (host side only), so the execution-space
// qualifiers are Clang's CUDA attributes here, where the prelude makes them nothing: the AST then
// says which functions are kernels and which variables are __shared__, and `k<<<g, b>>>(args)` is
// a kernel call. Everything else comes from the emu's own headers, as when the file is compiled.
#pragma once

#define CUDALAB_FRONT_END 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))

// The prelude's renaming of C++20's lerp for a program of an older standard (prelude.h), before any
// standard header, as where the prelude comes first: <sstream> below brings <cmath> in.
#if defined(CUDALAB_PROGRAM_CPLUSPLUS) && CUDALAB_PROGRAM_CPLUSPLUS < 202002L
#define lerp cudalab_cxx20_lerp
#endif

// libstdc++'s <source_location> needs a compiler builtin that Clang has from version 15; the emu's
// runtime declares its functions with one. Parsing needs only the name.
#if !__has_builtin(__builtin_source_location)
namespace std {
struct source_location {
  static consteval source_location current() noexcept { return {}; }
  constexpr unsigned line() const noexcept { return 0; }
  constexpr unsigned column() const noexcept { return 0; }
  constexpr const char* file_name() const noexcept { return ""; }
  constexpr const char* function_name() const noexcept { return ""; }
};
}  // namespace std
#endif

// The emu's functions (and the standard library the prelude includes) are plain C++, callable
// from a kernel as nvcc's device functions are: here they are __host__ __device__.
// (What follows stays the host's: Clang declares `new` and `delete` for both sides itself, and a
// class that these headers derive from or a function they overload may not change sides.)
#include <cxxabi.h>

#include <exception>
#include <new>
#include <optional>
#pragma clang force_cuda_host_device begin
// The streams' templates, on both sides with the algorithms they overload: declared after this
// region, by a program's own <iostream>, <fstream>, <memory> or <thread>, they would be host
// functions overloading __host__ __device__ ones, an error that leaves them out of the AST.
#include <sstream>

#include "cudalab/emu/cooperative_groups.h"  // (a program's <cooperative_groups.h> is this)
#include "cudalab/emu/prelude.h"
#pragma clang force_cuda_host_device end

// What Clang calls to pass a launch's configuration (a kernel call's <<<...>>>).
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                                cudaStream_t stream = nullptr);
