// Included first by every .cu file that the emu backend translates, and by every CUDA header name
// (cuda_runtime.h, vector_types.h, ...): it makes CUDA C++ plain C++.
#pragma once

// The program's C++ dialect (cudalab cc passes the -std it was given, or nvcc's default C++17):
// the code is compiled as C++20, the emu's own, but a program written for an older standard sees
// its library's names. C++20's std::lerp is the one that clashes (math.h declares it as ::lerp, and
// programs define their own lerp()): for an older program <cmath> declares it under another name.
#if defined(CUDALAB_PROGRAM_CPLUSPLUS) && CUDALAB_PROGRAM_CPLUSPLUS < 202002L
#define lerp cudalab_cxx20_lerp
#endif
#include <math.h>  // (nvcc's runtime headers bring it in: ::isfinite, ::fabsf need no std::)

#include <cassert>
#include <climits>
#include <cmath>
#undef lerp
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>  // (nvcc's runtime headers bring time.h in: clock() needs no include)
#ifndef CUDALAB_FRONT_END
// Before __noinline__ is defined below: libstdc++'s shared_ptr spells the attribute
// __attribute__((__noinline__)). (Clang, the front end, knows __noinline__ as CUDA's keyword.)
#include <memory>
#endif

#include "cudalab/emu/device.h"
#include "cudalab/emu/launch.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/emu/textures.h"
#include "cudalab/emu/thread_loops.h"
#include "cudalab/emu/types.h"

#define CUDALAB_EMU 1

// What the toolkit's headers define, for programs that test them (helper_cuda.h does): the
// runtime of CUDA 13.0. __CUDACC__ says "compiled as CUDA". One compilation serves host and device
// code alike, and the device is of compute capability 9.0: __CUDA_ARCH__ is 900 everywhere, so that
// device code behind `#if __CUDA_ARCH__ >= 700` is compiled (undefined, it silently vanished); a
// __host__ __device__ function that picks its device branch by it runs that branch on the host
// too, where every intrinsic works.
#define CUDART_VERSION 13000
#define CUDA_VERSION 13000
#define __CUDART_API_VERSION CUDART_VERSION
#define __CUDACC__ 1
#define __CUDA_ARCH__ 900
#define __NVCC__ 1
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __HOST_DEFINES_H__
#define __DEVICE_LAUNCH_PARAMETERS_H__
#define CUDART_CB

// Thrust (Debian's libthrust-dev) runs on its C++ system, with device vectors in managed memory
// (see thrust/system/cpp/memory_resource.h beside this prelude).
#ifndef THRUST_DEVICE_SYSTEM
#define THRUST_DEVICE_SYSTEM 4  // THRUST_DEVICE_SYSTEM_CPP
#endif
// CUB (the system's, with the emu's PTX layer and device-wide algorithms: common/emu/cub) names
// itself `cub`, not `::cub`, from outside its namespace: GCC rejects a class head such as
// `template <> struct ::cub::FpLimits<T>`, which nvcc's front end accepts.
#if !defined(CUB_NS_QUALIFIER) && !defined(CUB_WRAPPED_NAMESPACE)
#define CUB_NS_QUALIFIER cub
#endif
// CUB's calls of the runtime (occupancy, device attributes) are allowed, as in host code and
// relocatable device code: code here is both, with __CUDA_ARCH__ defined.
#ifndef CUB_RUNTIME_FUNCTION
#define CUB_RUNTIME_ENABLED
#define CUB_RUNTIME_FUNCTION __host__ __device__
#endif

// Execution-space qualifiers: every function is a host function here (and Clang's attributes when
// the front end parses: front_end.h).
#ifndef CUDALAB_FRONT_END
#define __global__
#define __device__
#define __host__
#define __managed__
#endif
#ifndef CUDALAB_FRONT_END
#define __noinline__ __attribute__((noinline))
#endif
#define __forceinline__ inline __attribute__((always_inline))
#define __inline_hint__ inline
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __grid_constant__
#define __cluster_dims__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
#define CUDARTAPI
// __constant__ data is an ordinary global; __shared__ data lives once per worker thread, and a
// worker runs one block at a time, so each block sees its own copy.
#ifndef CUDALAB_FRONT_END
#define __constant__
#define __shared__ static thread_local
#endif

#define __syncthreads() ::cudalab::emu::syncthreads(__FILE__, __LINE__)

// Barriers with a vote (compute capability 2.0).
namespace cudalab::emu {
int syncthreads_count(int predicate, const char* file, int line);
}
#define __syncthreads_count(p) ::cudalab::emu::syncthreads_count((p) != 0, __FILE__, __LINE__)
#define __syncthreads_and(p)                                          \
  (::cudalab::emu::syncthreads_count((p) != 0, __FILE__, __LINE__) == \
   ::cudalab::emu::block_threads())
#define __syncthreads_or(p) (::cudalab::emu::syncthreads_count((p) != 0, __FILE__, __LINE__) != 0)

// assert() in a kernel fails the launch with cudaErrorAssert (the translator turns assert( into
// cudalab_assert( in the files it translates); elsewhere it is the C library's.
#ifdef NDEBUG
#define cudalab_assert(e) ((void)0)
#else
#define cudalab_assert(e) \
  ((e) ? (void)0 : ::cudalab::emu::assert_failed(#e, __FILE__, __LINE__, __func__))
#endif

// assert itself is the program's to include, as with nvcc, whose headers do not bring <cassert> in
// (`identifier "assert" is undefined`): the prelude's own include of it is forgotten here, and a
// program's <cassert> or <assert.h> (which C lets a file include again) defines it anew.
#undef assert
