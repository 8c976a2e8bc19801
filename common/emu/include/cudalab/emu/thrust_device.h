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
// returns when the launch has ended, as Thrust's synchronous thrust::device does. Called with no
// policy, Thrust picks the system of the iterators, and on a GPU iterators over device memory
// (`thrust::device_ptr`, a device vector's, or adaptors of them: zip, transform, permutation, ...)
// pick the device, or, beside host iterators (a raw pointer, a host or std::vector's), make a copy
// between the systems: where such an iterator points at memory that host code may not touch
// (cudaMalloc memory), the call runs as a launch as well; over managed memory (device vectors
// here) it stays host code, whose checks cost less per access than a kernel's.
//
// How: Thrust's entry point (thrust::inclusive_scan(exec, ...)) calls the system's algorithm with
// `par` as its first argument, found by argument-dependent lookup; the function templates below,
// in the C++ system's namespace, take `par` itself where Thrust's take a base of it, so overload
// resolution picks them. Each tells thrust::device from the other objects of that type by its
// address. With no policy, Thrust calls the system's algorithm with the iterators' system, the C++
// system's `tag` here for host and device iterators alike: the overloads for `tag` tell them apart
// by the iterators' types (memory_of).
//
// Limitations: a copy of thrust::device (`auto policy = thrust::device;`) is another object, and
// runs as host code; results are the sequential order's, so a floating-point sum may differ from a
// GPU's in its last bits.
#pragma once

#include <thrust/detail/raw_pointer_cast.h>
#include <thrust/detail/seq.h>
#include <thrust/system_error.h>

#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "cudalab/emu/launch.h"

THRUST_NAMESPACE_BEGIN
template <typename T>
class device_ptr;
template <typename IteratorTuple>
class zip_iterator;
template <typename ElementIterator, typename IndexIterator>
class permutation_iterator;
THRUST_NAMESPACE_END

namespace cudalab::emu::thrust_device {

// Which memory an argument of an algorithm names, as bits: an iterator over host memory, one over
// device memory, or neither (a value, a functor, a counting or constant iterator).
enum Memory : unsigned { kNoMemory = 0, kHostMemory = 1, kDeviceMemory = 2 };

template <class Argument>
constexpr unsigned memory_of();

template <class T>
struct is_device_ptr : std::false_type {};
template <class T>
struct is_device_ptr<THRUST_NS_QUALIFIER::device_ptr<T>> : std::true_type {};
template <class T>
struct zipped : std::false_type {};
template <template <class...> class Tuple, class... Iterators>  // (Thrust's tuple: ten types)
struct zipped<THRUST_NS_QUALIFIER::zip_iterator<Tuple<Iterators...>>> : std::true_type {
  static constexpr unsigned memory = (memory_of<Iterators>() | ... | 0u);
};
template <class T>
struct permuted : std::false_type {};
template <class Elements, class Indices>
struct permuted<THRUST_NS_QUALIFIER::permutation_iterator<Elements, Indices>> : std::true_type {
  static constexpr unsigned memory = memory_of<Elements>() | memory_of<Indices>();
};

template <class Argument>
constexpr unsigned memory_of() {
  using T = std::remove_cvref_t<Argument>;
  if constexpr (is_device_ptr<T>::value)
    return kDeviceMemory;
  else if constexpr (std::is_pointer_v<T>)
    return std::is_object_v<std::remove_pointer_t<T>> ? kHostMemory : kNoMemory;
  else if constexpr (zipped<T>::value)
    return zipped<T>::memory;
  else if constexpr (permuted<T>::value)
    return permuted<T>::memory;
  else if constexpr (requires { typename T::base_type; })  // Thrust's adaptors: the base's
    return memory_of<typename T::base_type>();
  else if constexpr (
      requires { typename T::iterator_category; } &&
      requires(T t) { t.base(); })  // std::vector's iterators
    return memory_of<decltype(std::declval<T>().base())>();
  else
    return kNoMemory;
}

// Whether a call with these arguments and no policy names device memory: on a GPU, it runs on the
// device, or copies between the systems.
template <class... Arguments>
constexpr bool names_device = ((memory_of<Arguments>() & kDeviceMemory) | ... | 0u) != 0;

// Whether host code may touch the memory at p: outside the device's memory, or managed or
// page-locked memory (the runtime's answer, from a cache of the arrays this thread asked of last).
bool host_may_touch(const void* p);
inline bool device_only(const void* p) { return !in_kernel() && !host_may_touch(p); }

// How many of Thrust's algorithms run as host code in this thread: their device references' reads
// and writes are the host's (each algorithm's iterators were judged once, names_device_only).
inline thread_local int host_algorithms = 0;
template <class Algorithm>
decltype(auto) on_host(Algorithm algorithm) {
  struct Running {
    Running() { ++host_algorithms; }
    ~Running() { --host_algorithms; }
  } running;
  return algorithm();
}

// Whether an argument's device iterators name memory that host code may not touch, or memory out
// of sight (a permutation's elements, an iterator of another kind): the call must then run on the
// device.
template <class Argument>
bool names_device_only(const Argument& argument) {
  using T = std::remove_cvref_t<Argument>;
  if constexpr ((memory_of<T>() & kDeviceMemory) == 0) {
    return false;
  } else if constexpr (is_device_ptr<T>::value) {
    return device_only(argument.get());
  } else if constexpr (zipped<T>::value) {
    const auto& iterators = argument.get_iterator_tuple();
    using Tuple = std::remove_cvref_t<decltype(iterators)>;
    return [&]<size_t... i>(std::index_sequence<i...>) {
      return (names_device_only(THRUST_NS_QUALIFIER::get<i>(iterators)) || ...);
    }
    (std::make_index_sequence<THRUST_NS_QUALIFIER::tuple_size<Tuple>::value>());
  } else if constexpr (!permuted<T>::value && requires { argument.base(); }) {
    return names_device_only(argument.base());
  } else {
    return true;
  }
}

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

// One element's read or write through device references, access(): in place in a Thrust algorithm
// that runs as host code or where the host may touch the memory (host_may(), asked only outside
// such an algorithm), else a launch named `thrust::device_reference`.
template <class Access>
[[gnu::noinline]] decltype(auto) element_access_on_device(Access access) {
  return run("thrust::device_reference", access);
}
template <class HostMay, class Access>
[[gnu::always_inline]] inline decltype(auto) element_access(HostMay host_may, Access access) {
  if (host_algorithms > 0 || host_may()) [[likely]]
    return access();
  return element_access_on_device(access);
}

}  // namespace cudalab::emu::thrust_device

THRUST_NAMESPACE_BEGIN
namespace system::cpp::detail {

// Host code's read or write of one element of device memory through a device reference
// (`int first = d[0];`, `d[0] = 1;` with d a device_ptr to cudaMalloc memory): as on a GPU, a copy
// made by the device, here a launch named `thrust::device_reference` at the program's line, so
// that the element is checked as a kernel's access. Managed memory, which host code may touch, and
// a reference in a kernel are read and written in place.
template <class T>
std::remove_cv_t<T> get_value(tag&, THRUST_NS_QUALIFIER::device_ptr<T> pointer) {
  T* element = THRUST_NS_QUALIFIER::raw_pointer_cast(pointer);
  return ::cudalab::emu::thrust_device::element_access(
      [element] { return !::cudalab::emu::thrust_device::device_only(element); },
      [element]() -> std::remove_cv_t<T> { return *element; });
}
template <class T, class Source>
void assign_value(tag&, THRUST_NS_QUALIFIER::device_ptr<T> destination, Source source) {
  T* element = THRUST_NS_QUALIFIER::raw_pointer_cast(destination);
  const auto* from = THRUST_NS_QUALIFIER::raw_pointer_cast(source);
  ::cudalab::emu::thrust_device::element_access(
      [element, &source] {
        return !::cudalab::emu::thrust_device::device_only(element) &&
               !::cudalab::emu::thrust_device::names_device_only(source);
      },
      [element, from] { *element = *from; });
}
template <class T>
void iter_swap(tag&, THRUST_NS_QUALIFIER::device_ptr<T> a, THRUST_NS_QUALIFIER::device_ptr<T> b) {
  T* x = THRUST_NS_QUALIFIER::raw_pointer_cast(a);
  T* y = THRUST_NS_QUALIFIER::raw_pointer_cast(b);
  ::cudalab::emu::thrust_device::element_access(
      [x, y] {
        return !::cudalab::emu::thrust_device::device_only(x) &&
               !::cudalab::emu::thrust_device::device_only(y);
      },
      [x, y] {
        T kept = *x;
        *x = *y;
        *y = kept;
      });
}

// Each of Thrust's algorithms that takes an execution policy: with thrust::device, a launch (run
// above); with any other object of the type, Thrust's sequential algorithm on the host. With no
// policy (the iterators' system, `tag`): a launch where a device iterator names memory that host
// code may not touch, else the sequential algorithm on the host (the C++ system's algorithms are
// Thrust's sequential ones).
#define CUDALAB_THRUST_DEVICE_ALGORITHM(name)                                                 \
  template <class... Args>                                                                    \
  decltype(auto) name(par_t& exec, Args&&... args) {                                          \
    const auto& sequential = THRUST_NS_QUALIFIER::seq;                                        \
    if (&exec != &THRUST_NS_QUALIFIER::device) return name(sequential, args...);              \
    return ::cudalab::emu::thrust_device::run(                                                \
        "thrust::" #name, [&]() -> decltype(auto) { return name(sequential, args...); });     \
  }                                                                                           \
  template <class... Args>                                                                    \
  decltype(auto) name(tag&, Args&&... args) {                                                 \
    const auto& sequential = THRUST_NS_QUALIFIER::seq;                                        \
    if constexpr (::cudalab::emu::thrust_device::names_device<Args...>)                       \
      if ((::cudalab::emu::thrust_device::names_device_only(args) || ...))                    \
        return ::cudalab::emu::thrust_device::run(                                            \
            "thrust::" #name, [&]() -> decltype(auto) { return name(sequential, args...); }); \
    return ::cudalab::emu::thrust_device::on_host(                                            \
        [&]() -> decltype(auto) { return name(sequential, args...); });                       \
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
