// Thrust's algorithms called with thrust::device on the emu backend. Thrust runs here on its C++
// system, where thrust::device and thrust::host are objects of one type (the system's `par`), so an
// algorithm called with either ran as host code, and over cudaMalloc memory the host-code check
// stopped it: on a GPU, thrust::device runs it in kernels, which may use that memory. Here each
// algorithm called with the object thrust::device runs as one launch of one thread, on the default
// stream, that runs Thrust's sequential algorithm (thrust::seq) over the same iterators and
// arguments, named as the call (`thrust::inclusive_scan`, launched at the program's line): every
// element it reads and writes is checked as a kernel's is (an input past an array's end, or never
// written, is named). Called with thrust::host (or the C++ system's par) it stays host code, so
// device memory behind it is still named, as a GPU's segmentation fault would be. The call
// returns when the launch has ended, as Thrust's synchronous thrust::device does.
//
// How: Thrust's entry point (thrust::inclusive_scan(exec, ...)) calls the system's algorithm with
// `par` as its first argument, found by argument-dependent lookup; the function templates below,
// in the C++ system's namespace, take `par` itself where Thrust's take a base of it, so overload
// resolution picks them. Each tells thrust::device from the other objects of that type by its
// address.
//
// Limitations: a copy of thrust::device (`auto policy = thrust::device;`) is another object, and
// runs as host code; results are the sequential order's, so a floating-point sum may differ from a
// GPU's in its last bits.
#pragma once

#include <thrust/detail/seq.h>
#include <thrust/system_error.h>

#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "cudalab/emu/launch.h"

namespace cudalab::emu::thrust_device {

// The runtime's errors as Thrust's error category (its CUDA system's, which the C++ system lacks).
class RuntimeErrors final : public THRUST_NS_QUALIFIER::error_category {
 public:
  const char* name() const noexcept override { return "cuda"; }
  std::string message(int error) const override {
    const auto status = static_cast<cudaError_t>(error);
    return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
  }
};

// Thrust's answer to a failed launch: a thrust::system_error with the launch's error.
inline void throw_if_failed(const char* name) {
  static const RuntimeErrors runtime_errors;
  if (const cudaError_t status = cudaDeviceSynchronize(); status != cudaSuccess)
    throw THRUST_NS_QUALIFIER::system_error(static_cast<int>(status), runtime_errors, name);
}

// Runs algorithm() as Thrust's thrust::device would: one thread of a launch named `name`, at the
// program's line, then waits for it; in a kernel, in the calling thread (Thrust's device code runs
// it sequentially there). Its result, if any, is the call's.
template <class Algorithm>
decltype(auto) run(const char* name, Algorithm algorithm) {
  using Result = decltype(algorithm());
  if (in_kernel()) return algorithm();
  const CallSite at = program_call_site();
  const Launch launch(name, at.file, at.line, dim3(1), dim3(1));
  if constexpr (std::is_void_v<Result>) {
    launch([&algorithm] { algorithm(); });
    throw_if_failed(name);
  } else {
    alignas(Result) unsigned char result[sizeof(Result)];
    launch([&algorithm, &result] { ::new (static_cast<void*>(result)) Result(algorithm()); });
    throw_if_failed(name);
    Result* value = std::launder(reinterpret_cast<Result*>(result));
    Result out = std::move(*value);
    value->~Result();
    return out;
  }
}

}  // namespace cudalab::emu::thrust_device

THRUST_NAMESPACE_BEGIN
namespace system::cpp::detail {

// Each of Thrust's algorithms that takes an execution policy: with thrust::device, a launch (run
// above); with any other object of the type, Thrust's sequential algorithm on the host.
#define CUDALAB_THRUST_DEVICE_ALGORITHM(name)                                             \
  template <class... Args>                                                                \
  decltype(auto) name(par_t& exec, Args&&... args) {                                      \
    const auto& sequential = THRUST_NS_QUALIFIER::seq;                                    \
    if (&exec != &THRUST_NS_QUALIFIER::device) return name(sequential, args...);          \
    return ::cudalab::emu::thrust_device::run(                                            \
        "thrust::" #name, [&]() -> decltype(auto) { return name(sequential, args...); }); \
  }

// (Thrust 1.17's algorithms that take a policy, as its headers declare them.)
CUDALAB_THRUST_DEVICE_ALGORITHM(adjacent_difference)
CUDALAB_THRUST_DEVICE_ALGORITHM(all_of)
CUDALAB_THRUST_DEVICE_ALGORITHM(any_of)
CUDALAB_THRUST_DEVICE_ALGORITHM(binary_search)
CUDALAB_THRUST_DEVICE_ALGORITHM(copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(copy_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(copy_n)
CUDALAB_THRUST_DEVICE_ALGORITHM(count)
CUDALAB_THRUST_DEVICE_ALGORITHM(count_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(equal)
CUDALAB_THRUST_DEVICE_ALGORITHM(equal_range)
CUDALAB_THRUST_DEVICE_ALGORITHM(exclusive_scan)
CUDALAB_THRUST_DEVICE_ALGORITHM(exclusive_scan_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(fill)
CUDALAB_THRUST_DEVICE_ALGORITHM(fill_n)
CUDALAB_THRUST_DEVICE_ALGORITHM(find)
CUDALAB_THRUST_DEVICE_ALGORITHM(find_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(find_if_not)
CUDALAB_THRUST_DEVICE_ALGORITHM(for_each)
CUDALAB_THRUST_DEVICE_ALGORITHM(for_each_n)
CUDALAB_THRUST_DEVICE_ALGORITHM(gather)
CUDALAB_THRUST_DEVICE_ALGORITHM(gather_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(generate)
CUDALAB_THRUST_DEVICE_ALGORITHM(generate_n)
CUDALAB_THRUST_DEVICE_ALGORITHM(inclusive_scan)
CUDALAB_THRUST_DEVICE_ALGORITHM(inclusive_scan_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(inner_product)
CUDALAB_THRUST_DEVICE_ALGORITHM(is_partitioned)
CUDALAB_THRUST_DEVICE_ALGORITHM(is_sorted)
CUDALAB_THRUST_DEVICE_ALGORITHM(is_sorted_until)
CUDALAB_THRUST_DEVICE_ALGORITHM(lower_bound)
CUDALAB_THRUST_DEVICE_ALGORITHM(max_element)
CUDALAB_THRUST_DEVICE_ALGORITHM(merge)
CUDALAB_THRUST_DEVICE_ALGORITHM(merge_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(min_element)
CUDALAB_THRUST_DEVICE_ALGORITHM(minmax_element)
CUDALAB_THRUST_DEVICE_ALGORITHM(mismatch)
CUDALAB_THRUST_DEVICE_ALGORITHM(none_of)
CUDALAB_THRUST_DEVICE_ALGORITHM(partition)
CUDALAB_THRUST_DEVICE_ALGORITHM(partition_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(partition_point)
CUDALAB_THRUST_DEVICE_ALGORITHM(reduce)
CUDALAB_THRUST_DEVICE_ALGORITHM(reduce_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(remove)
CUDALAB_THRUST_DEVICE_ALGORITHM(remove_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(remove_copy_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(remove_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(replace)
CUDALAB_THRUST_DEVICE_ALGORITHM(replace_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(replace_copy_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(replace_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(reverse)
CUDALAB_THRUST_DEVICE_ALGORITHM(reverse_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(scatter)
CUDALAB_THRUST_DEVICE_ALGORITHM(scatter_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(sequence)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_difference)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_difference_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_intersection)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_intersection_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_symmetric_difference)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_symmetric_difference_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_union)
CUDALAB_THRUST_DEVICE_ALGORITHM(set_union_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(sort)
CUDALAB_THRUST_DEVICE_ALGORITHM(sort_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(stable_partition)
CUDALAB_THRUST_DEVICE_ALGORITHM(stable_partition_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(stable_sort)
CUDALAB_THRUST_DEVICE_ALGORITHM(stable_sort_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(swap_ranges)
CUDALAB_THRUST_DEVICE_ALGORITHM(tabulate)
CUDALAB_THRUST_DEVICE_ALGORITHM(transform)
CUDALAB_THRUST_DEVICE_ALGORITHM(transform_exclusive_scan)
CUDALAB_THRUST_DEVICE_ALGORITHM(transform_if)
CUDALAB_THRUST_DEVICE_ALGORITHM(transform_inclusive_scan)
CUDALAB_THRUST_DEVICE_ALGORITHM(transform_reduce)
CUDALAB_THRUST_DEVICE_ALGORITHM(uninitialized_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(uninitialized_copy_n)
CUDALAB_THRUST_DEVICE_ALGORITHM(uninitialized_fill)
CUDALAB_THRUST_DEVICE_ALGORITHM(uninitialized_fill_n)
CUDALAB_THRUST_DEVICE_ALGORITHM(unique)
CUDALAB_THRUST_DEVICE_ALGORITHM(unique_by_key)
CUDALAB_THRUST_DEVICE_ALGORITHM(unique_by_key_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(unique_copy)
CUDALAB_THRUST_DEVICE_ALGORITHM(unique_count)
CUDALAB_THRUST_DEVICE_ALGORITHM(upper_bound)

#undef CUDALAB_THRUST_DEVICE_ALGORITHM

}  // namespace system::cpp::detail
THRUST_NAMESPACE_END
