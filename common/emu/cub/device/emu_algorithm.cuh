// Internal to the emu's CUB (common/emu/cub): how its device-wide algorithms run. On a GPU each is
// a few kernels that CUB's dispatch launches; on the emu each is one launch of one thread that
// runs Thrust's sequential algorithm (thrust::seq) over the same iterators, on the stream given.
// So the checks see every element it reads and writes (an input past an array's end, or never
// written, is named as in a kernel), the stream orders it with the program's kernels, and the
// launch's name and line are the algorithm's and the program's call. The temporary storage
// follows CUB's protocol (a first call with d_temp_storage == nullptr asks its size) and is
// written, so a pointer that is not device memory is named too.
//
// Limitations: results are the sequential order's, so a floating-point sum may differ from a
// GPU's in its last bits (a GPU adds in a tree whose shape depends on the device).
#pragma once

#include <thrust/execution_policy.h>

#include <cstddef>
#include <iterator>
#include <source_location>
#include <type_traits>

#include "../config.cuh"
#include "../util_type.cuh"

CUB_NAMESPACE_BEGIN
namespace emu_detail {

inline constexpr std::size_t kTempStorageBytes = 16;
using Where = std::source_location;

// The value type an algorithm writes: the output iterator's, or the input's when that is void.
template <class OutputIteratorT, class InputIteratorT>
using output_value_t =
    cub::detail::non_void_value_t<OutputIteratorT, cub::detail::value_t<InputIteratorT>>;

// Runs body(args...) as one GPU thread of a launch named `algorithm`, at the program's call, on
// `stream`; or answers the size query.
template <class Body, class... Args>
cudaError_t run(const char* algorithm, void* d_temp_storage, std::size_t& temp_storage_bytes,
                cudaStream_t stream, const Where& where, Body body, Args... args) {
  if (d_temp_storage == nullptr) {
    temp_storage_bytes = kTempStorageBytes;
    return cudaSuccess;
  }
  if (temp_storage_bytes < kTempStorageBytes) return cudaErrorInvalidValue;
  ::cudalab::emu::Launch(algorithm, where.file_name(), static_cast<int>(where.line()), dim3(1),
                         dim3(1), 0, stream)(
      [body](unsigned char* temp, Args... a) {
        for (std::size_t i = 0; i < kTempStorageBytes; ++i) temp[i] = 0;
        body(a...);
      },
      static_cast<unsigned char*>(d_temp_storage), args...);
  return cudaPeekAtLastError();
}

// What the emu's CUB does not have: a compile error naming it, where the program calls it.
template <class... T>
inline constexpr bool unsupported = false;

}  // namespace emu_detail
CUB_NAMESPACE_END

#define CUB_EMU_UNSUPPORTED(Class, Name, what)                                                    \
  template <auto... N, class... A>                                                                \
  static cudaError_t Name(A&&...) {                                                               \
    static_assert(::cub::emu_detail::unsupported<A...>,                                           \
                  "cudalab emu: cub::" #Class "::" #Name " (" what                                \
                  ") is not supported on the CPU backend (docs/compatibility.md lists what is)"); \
    return cudaErrorNotSupported;                                                                 \
  }
