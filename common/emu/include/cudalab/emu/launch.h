// Kernel launches on the emu backend. The build's translator (common/emu/translate.py) rewrites
//     kernel<<<grid, block, shared_bytes, stream>>>(a, b, c);
// into
//     ::cudalab::emu::Launch("kernel", __FILE__, __LINE__, grid, block, shared_bytes, stream)(
//         [&](auto... args) { kernel(args...); }, a, b, c);
// so that templates, overloads and default arguments behave as they do under nvcc. The launch
// APIs that take a kernel as a value (cudaLaunchKernel, cudaLaunchCooperativeKernel, occupancy and
// function attributes) are templates on the kernel's type, so its parameters are known.
#pragma once

#include <cstring>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cudalab/emu/device.h"  // threadIdx
#include "cudalab/emu/runtime.h"
#include "cudalab/emu/types.h"

namespace cudalab::emu {

struct LaunchConfig {
  dim3 grid, block;
  size_t shared_bytes;
  const char* kernel;  // as written at the launch
  const char* file;
  int line;
  cudaStream_t stream = nullptr;
  bool cooperative = false;  // every block resident at once (cudaLaunchCooperativeKernel)
  // The arguments as copied for the kernel, and those that are pointers (nullptr for the others):
  // the checks name an argument that holds a host pointer.
  const void* params = nullptr;
  size_t params_bytes = 0;
  const void* const* pointers = nullptr;
  unsigned pointer_count = 0;
};

// Internal (the scheduler's, scheduler.cpp): the threads a fiber runs one after another,
// threadIdx.x from x up to end in one row of the block (the scheduler has set threadIdx.y and .z,
// and running_thread_base). A thread that stops (at a barrier or a warp-level call) lowers `end` to
// end the row after itself: other fibers start the threads after it.
struct ThreadRow {
  unsigned x, end;
  uint3* index;  // this worker's threadIdx
};
// The running fiber's next row (its last one has finished), or nullptr when its block has no
// thread left to start.
const ThreadRow* take_row();
// A fiber's work: run_rows(ctx) runs the kernel body for each thread of each row take_row()
// gives it; run_thread(ctx) for the thread the scheduler has made current. Or, for a kernel whose
// threads run as loops between barriers (thread_loops.h), run_block(ctx) runs the block.
struct ProvenKernel;
struct ThreadFn {
  void (*run_rows)(void*);
  void (*run_thread)(void*);
  void* ctx;
  void (*run_block)(void*) = nullptr;    // or a loop form's (thread_loops.h): once per block
  const ProvenKernel* proven = nullptr;  // checked code: the kernel's copy for proven blocks
};

// Checked code: the accesses of a kernel that its code proves (the translator's front end,
// grader/cudalab_tools/proven_accesses.py, says which kernels): each is `P[i]`, with i the thread's
// global x index, under the guard i < limit or in a grid-stride loop up to it. Given per launch,
// from the kernel's arguments.
struct ProvenAccess {
  const void* base;  // P
  unsigned element_bytes;
  bool store;
  unsigned line;
  // A load of another element than the thread's own (`affine`): P[constant + column * x + row * y
  // + step * k], x and y the thread's global indices, k a loop's counter in [first_step, end_step).
  // A store in a loop (at the thread's own element) is made where [first_step, end_step) holds a
  // step.
  bool affine = false;
  long long constant = 0, column = 0, row = 0, step = 0, first_step = 0, end_step = 1;
};
// The bound of a guard `index < limit` (or `limit <= index`) where the index has type Index: the
// limit as the comparison converts it, as long long (an int below 0 against an unsigned index is
// a number past every index: the largest bound, 2^62).
template <class Index, class Limit>
long long bound_of(Limit limit) {
  using Compared = std::common_type_t<Index, Limit>;  // (the usual arithmetic conversions)
  const auto value = static_cast<Compared>(limit);
  constexpr long long kLargest = 1LL << 62;
  if constexpr (std::is_unsigned_v<Compared>)
    if (static_cast<unsigned long long>(value) > static_cast<unsigned long long>(kLargest))
      return kLargest;
  return static_cast<long long>(value);
}
// One access of the kernel's text, for the counters: each thread that passes the guard makes it,
// once per value k in [first_step, end_step) of the loop it is in (outside a loop: [0, 1)), at
// P[constant + column * x + row * y + step * k] (the thread's own element: column 1, and in a 2D
// kernel row the pitch).
struct ProvenVisit {
  const void* base;  // P
  unsigned element_bytes;
  bool store;
  unsigned line;
  long long constant, column, row, step, first_step, end_step;
};
struct ProvenRanges {
  const char* file;  // the kernel's, as its lines name it
  long long limit;   // (a kernel without a guard: the largest long long)
  ProvenAccess accesses[8];
  unsigned count;
  bool grid_stride;  // i runs on by the grid's threads (for (...; i < limit; i += grid's threads))
  // A 2D kernel: its y index's guard (-1: a 1D kernel; the largest long long: no guard), and
  // each access is P[y * pitch + i].
  long long rows;
  long long pitch;
  ProvenVisit visits[16];
  int visit_count;  // -1: a thread may skip a load (the counters count such a kernel per access)
};
// The worker's threadIdx, as the copy of a proven kernel reads it. To the rest of checked code it
// is const, so the compiler would take its value as unchanged across the loop over a row's
// threads (launch.h's run_rows writes it through another pointer); the address passes through an
// asm the compiler cannot see into, so that each thread's reads reload it (and the address itself,
// a thread-local's, is computed once).
[[gnu::always_inline]] inline const uint3& thread_index() {
  const uint3* index = &::threadIdx;
  asm("" : "+r"(index));
  return *index;
}
// A launch of such a kernel: the ranges, and the kernel's copy without the checks' instrumentation,
// which a block runs where the launch finds its ranges fine (common/emu/src/proven_blocks.cpp).
struct ProvenKernel {
  ProvenRanges ranges;
  ThreadFn copy;
};

// What a kernel's loop form returns (thread_loops.h).
struct ThreadLoops {};
// What the translator puts before a kernel's name to name its loop form.
inline constexpr char kLoopFormPrefix[] = "cudalab_loops_";
// A launch's call of a kernel's loop form (the translator writes it: translate.py).
template <class Start>
struct LoopFormCall {
  Start start;
};
template <class T>
constexpr bool is_loop_form_call = false;
template <class Start>
constexpr bool is_loop_form_call<LoopFormCall<Start>> = true;
// A launch's call of a kernel whose accesses its code proves (CUDALAB_KERNEL_PROVEN): the kernel,
// its copy without checks, and its ranges.
template <class Kernel, class Copy, class Ranges>
struct ProvenCall {
  Kernel kernel;
  Copy copy;
  Ranges ranges;
};
template <class T>
constexpr bool is_proven_call = false;
template <class Kernel, class Copy, class Ranges>
constexpr bool is_proven_call<ProvenCall<Kernel, Copy, Ranges>> = true;

// Internal: the number in its block of the GPU thread that runs now on this worker (thread_rank()),
// running_thread(), and whether its race checks left something to finish when it stops (checks.h;
// only checked code sets it). The number is kept as running_thread_base, the number less
// threadIdx.x, which the threads of a row share (they differ in threadIdx.x only): the scheduler
// sets it when it gives a fiber a row or a thread and when it switches fibers, so the row loop
// stores nothing per thread for it (a store per thread made an unchecked vector add beside checked
// code 1.4x as long). The row loop finishes the race checks after each thread that leaves some.
inline constinit thread_local unsigned running_thread_base = 0;
inline unsigned running_thread() { return running_thread_base + ::threadIdx.x; }
inline constinit thread_local bool race_checks_waiting = false;
void finish_race_checks();

// Checks the configuration as a GPU does, runs every block and records the launch's errors.
void execute(const LaunchConfig& config, ThreadFn thread);
// Is the stream being captured into a graph (then a launch is recorded, not run)?
bool capturing(cudaStream_t stream);
// Is the calling thread a GPU thread (then a launch is a child grid: it runs when its parent's
// grid has finished, as CUDA 12's dynamic parallelism allows)?
bool in_kernel();
// The line of the program that called a library's algorithm which runs as a launch of its own
// (Thrust's with thrust::device): the first line of the calling stack in the program's own code;
// file "?" and line 0 when it has no line information.
struct CallSite {
  const char* file;
  int line;
};
CallSite program_call_site();

// A kernel's parameter of a class whose copies run code (a copy constructor or a destructor of the
// program's): on a GPU the launch copies the argument once, on the host, each thread gets the
// bytes of that copy, and no constructor or destructor runs for it on the device. The translator
// gives such a parameter this type (a kernel's body names `object()`, a thread's own bytes); the
// launch keeps the argument's bytes so too (Launch::Argument), whatever the kernel's parameter.
template <class T>
class Bitwise {
 public:
  using type = T;
  // The bytes of the launch's copy (implicit: the launch passes the copy where this is expected).
  Bitwise(const std::remove_cv_t<T>& copy) {
    std::memcpy(static_cast<void*>(bytes_), static_cast<const void*>(__builtin_addressof(copy)),
                sizeof(T));
  }
  // A value of another type that converts to T, converted where the bytes are. (Limitation: each
  // thread converts it, and the object made is not destroyed; a GPU converts it once, on the host.)
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, std::remove_cv_t<T>> &&
           std::is_convertible_v<U, T>) Bitwise(U&& value) {
    ::new (static_cast<void*>(bytes_)) std::remove_cv_t<T>(std::forward<U>(value));
  }
  T& object() { return *std::launder(reinterpret_cast<T*>(bytes_)); }

 private:
  alignas(T) unsigned char bytes_[sizeof(T)];
};
template <class T>
constexpr bool is_bitwise = false;
template <class T>
constexpr bool is_bitwise<Bitwise<T>> = true;
// What a launch keeps of an argument of type T: its bytes where copying T runs code.
template <class T>
using KeptArgument = std::conditional_t<std::is_trivially_copyable_v<T>, T, Bitwise<T>>;

// The object a reference parameter refers to, as the launch keeps it.
template <class T>
struct Referenced {
  T* object;
};
// A launch's argument for a reference parameter of the kernel (the translator wraps it): the
// object itself, as a GPU's kernel gets its address, where the other arguments are copied once.
// An rvalue has no object to refer to: it is copied as the others are.
template <class T>
decltype(auto) by_reference(T&& argument) {
  if constexpr (std::is_lvalue_reference_v<T>)
    return Referenced<std::remove_reference_t<T>>{__builtin_addressof(argument)};
  else
    return std::forward<T>(argument);
}
// What the kernel is called with: the launch's copy of an argument, or the object of by_reference.
template <class T>
T& kernel_argument(T& argument) {
#ifdef CUDALAB_EMU_CHECKED
  // (a pointer the compiler knows, NULL written at the launch, would let it drop the kernel's
  // accesses through it as undefined, unseen by the checks: it is read as the launch stored it)
  if constexpr (std::is_pointer_v<T>) asm volatile("" : "+r"(argument));
#endif
  return argument;
}
// What a proven kernel's copy is called with (its parameters are numbers and pointers), without
// the checks' instrumentation.
template <class T>
__attribute__((no_sanitize("thread"))) T& proven_argument(T& argument) {
  return argument;
}
template <class T>
__attribute__((no_sanitize("thread"))) T& proven_argument(Bitwise<T>& argument) {
  return argument.object();
}
template <class T>
T& kernel_argument(Referenced<T>& argument) {
  return *argument.object;
}
// The object whose bytes the launch kept (Bitwise): a kernel's Bitwise parameter takes its bytes,
// a template kernel's parameter of type T (not rewritten) a copy of it.
template <class T>
T& kernel_argument(Bitwise<T>& argument) {
  return argument.object();
}

class Launch {
 public:
  Launch(const char* kernel, const char* file, int line, dim3 grid, dim3 block,
         size_t shared_bytes = 0, cudaStream_t stream = nullptr, bool cooperative = false)
      : config_{grid, block, shared_bytes, kernel, file, line, stream, cooperative} {}

  template <class Body, class... Args>
  void operator()(Body body, Args&&... args) const {
    // Arguments are evaluated once on the host and copied, like a kernel's parameters.
    std::tuple<std::decay_t<Args>...> params(std::forward<Args>(args)...);
    if (capturing(config_.stream) || in_kernel()) {
      enqueue(config_.stream,
              [config = config_, body, params]() mutable { run(config, body, params); });
      return;
    }
    run(config_, body, params);
  }

 private:
  template <class Body, class Params>
  static void run(LaunchConfig config, Body& body, Params& params) {
    constexpr size_t count = std::tuple_size_v<Params>;
    const void* pointers[count + 1] = {};
    std::apply(
        [&](const auto&... p) {
          unsigned i = 0;
          ((pointers[i++] = pointer_or_null(p)), ...);
        },
        params);
    config.params = &params;
    config.params_bytes = sizeof params;
    config.pointers = pointers;
    config.pointer_count = count;
    ArgumentsOf<Params> arguments(params);
    if constexpr (is_proven_call<Body>) {
      using Kernel = decltype(body.kernel);
      using Copy = decltype(body.copy);
      Call<Kernel, Params> call{body.kernel, arguments};
      Call<Copy, Params> copy{body.copy, arguments};
      const ProvenKernel proven{call_with<Params>(body.ranges, arguments, Indices<Params>{}),
                                {&run_rows<Copy, Params>, &run_thread<Copy, Params>, &copy}};
      execute(config,
              {&run_rows<Kernel, Params>, &run_thread<Kernel, Params>, &call, nullptr, &proven});
    } else {
      Call<Body, Params> call{body, arguments};
      if constexpr (is_loop_form_call<Body>)
        execute(config, {nullptr, nullptr, &call, &run_block<Body, Params>});
      else
        execute(config, {&run_rows<Body, Params>, &run_thread<Body, Params>, &call});
    }
  }

  // The kernel's arguments as the threads are given them: a record whose fields run_rows reads
  // without a call. (Through std::get, library code compiled with the kernel's instrumentation,
  // checked code made a call per argument and thread: a compiler does not inline a function into
  // one whose instrumentation differs.)
  template <size_t I, class T>
  struct Argument {
    KeptArgument<T> value;
  };
  template <class Indices, class... T>
  struct Arguments;
  template <size_t... I, class... T>
  struct Arguments<std::index_sequence<I...>, T...> : Argument<I, T>... {
    explicit Arguments(const std::tuple<T...>& params) : Argument<I, T>{std::get<I>(params)}... {}
  };
  template <class Params>
  struct ArgumentsFor;
  template <class... T>
  struct ArgumentsFor<std::tuple<T...>> {
    using type = Arguments<std::index_sequence_for<T...>, T...>;
  };
  template <class Params>
  using ArgumentsOf = typename ArgumentsFor<Params>::type;

  // The GPU threads of a fiber's rows, one after another, each running the body given copies of
  // the kernel's arguments. The loop is here, compiled with the kernel, so that a thread costs
  // what its body costs (the compiler inlines an unchecked body into it) and not a call from the
  // scheduler; a thread that finished after stopping returns straight into it. The copies are the
  // launch's work, not the kernel's, so they are left out of the checks' instrumentation (a hook
  // call per argument and thread otherwise); the body takes them by value, so that the kernel reads
  // its parameters as values, not from memory. (A compiler does not inline the checked body into
  // these functions, whose instrumentation differs: the kernel stays checked.) `row->end` is read
  // again after each thread: a thread that stopped has lowered it. (threadIdx is not const to
  // unchecked programs, device.h, for this loop's sake.)
  template <class Body, class Params>
  struct Call {
    Body& body;
    ArgumentsOf<Params>& arguments;
  };
  template <class Body, class Params>
  __attribute__((no_sanitize("thread"))) static void run_rows(void* call) {
    auto& c = *static_cast<Call<Body, Params>*>(call);
    // The fiber's copy of the arguments: no store of the kernel's can change it.
    ArgumentsOf<Params> arguments = c.arguments;
    while (const ThreadRow* row = take_row()) {
      unsigned x = row->x;
      while (x < row->end) {
        // Threads until the row ends or one leaves race checks to finish (only checked code does:
        // a checked kernel or device function, also when launched from an unchecked file). The
        // call that finishes them is out of this loop, so that an inlined body keeps its values in
        // registers and the test of the flag leaves the loop with them: an unchecked vector add
        // costs the same with checked code linked beside it as without (with the call inside, it
        // reloaded two pointers from the stack per thread and ran 10% longer).
        do {
#ifdef CUDALAB_EMU_CHECKED
          row->index->x = x;  // (threadIdx is const to checked code)
#else
          ::threadIdx.x = x;  // (the compiler sees where the body's threadIdx.x comes from)
#endif
          call_with<Params>(c.body, arguments,
                            std::make_index_sequence<std::tuple_size_v<Params>>{});
          ++x;
        } while (x < row->end && !race_checks_waiting);
        if (race_checks_waiting) finish_race_checks();  // (threadIdx.x is still the thread's)
      }
    }
  }
  template <class Body, class Params>
  __attribute__((no_sanitize("thread"))) static void run_thread(void* call) {
    auto& c = *static_cast<Call<Body, Params>*>(call);
    call_with<Params>(c.body, c.arguments, std::make_index_sequence<std::tuple_size_v<Params>>{});
  }
  template <class Params>
  using Indices = std::make_index_sequence<std::tuple_size_v<Params>>;
  // A loop form's block: its threads, given copies of the arguments (one copy per block).
  template <class Body, class Params>
  static void run_block(void* call) {
    auto& c = *static_cast<Call<Body, Params>*>(call);
    call_with<Params>(c.body.start, c.arguments, Indices<Params>{});
  }
  template <class Params, class Body, size_t... I>
  __attribute__((no_sanitize("thread"))) static decltype(auto) call_with(
      Body& body, ArgumentsOf<Params>& arguments, std::index_sequence<I...>) {
    return body(static_cast<Argument<I, std::tuple_element_t<I, Params>>&>(arguments).value...);
  }
  template <class T>
  static const void* pointer_or_null(const T& arg) {
    if constexpr (std::is_pointer_v<T>)
      return (const void*)arg;
    else
      return nullptr;
  }
  LaunchConfig config_;
};

// The name of the function at `address` ("kernel<float>(...)"), for launches by value.
const char* function_name(const void* address);

// The argument for a parameter of type P at `pointer` (cudaLaunchKernel's array): the bytes there,
// for a parameter that Bitwise keeps (no constructor runs, as a GPU copies them).
template <class P>
decltype(auto) argument_at(void* pointer) {
  using Parameter = std::remove_cvref_t<P>;
  if constexpr (is_bitwise<Parameter>)
    return Parameter(*static_cast<const typename Parameter::type*>(pointer));
  else
    return *static_cast<std::remove_reference_t<P>*>(pointer);
}

// A kernel given as a value with its arguments as an array of pointers (cudaLaunchKernel).
template <class... P>
cudaError_t launch_by_value(void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                            size_t shared_bytes, cudaStream_t stream, bool cooperative) {
  if (args == nullptr && sizeof...(P) > 0) return cudaErrorInvalidValue;
  Launch launch(function_name(reinterpret_cast<const void*>(kernel)), "(by value)", 0, grid, block,
                shared_bytes, stream, cooperative);
  [&]<size_t... I>(std::index_sequence<I...>) {
    launch([kernel](auto&... a) { kernel(kernel_argument(a)...); }, argument_at<P>(args[I])...);
  }
  (std::index_sequence_for<P...>{});
  return cudaPeekAtLastError();
}

// Kernels known by address, for the APIs that take one as a void* (cudaLaunchKernel with a cast,
// graph kernel nodes): the translator registers every kernel that is not a template.
using Launcher = void (*)(const void* kernel, dim3 grid, dim3 block, void** args,
                          size_t shared_bytes, cudaStream_t stream, bool cooperative);
void register_kernel(const void* kernel, Launcher launcher);
cudaError_t launch_untyped(const char* call, const void* kernel, dim3 grid, dim3 block, void** args,
                           size_t shared_bytes, cudaStream_t stream, bool cooperative);
struct KernelEntry {
  template <class... P>
  KernelEntry(void (*kernel)(P...)) {
    register_kernel(reinterpret_cast<const void*>(kernel),
                    [](const void* k, dim3 g, dim3 b, void** args, size_t shared, cudaStream_t s,
                       bool cooperative) {
                      launch_by_value(reinterpret_cast<void (*)(P...)>(const_cast<void*>(k)), g, b,
                                      args, shared, s, cooperative);
                    });
  }
};

// Kernel attributes (occupancy.cpp): the dynamic shared memory a kernel opted in to.
void set_max_dynamic_shared(const void* kernel, int bytes);
int max_dynamic_shared(const void* kernel);
// Resident blocks per multiprocessor for a block size (threads, blocks and shared memory).
int active_blocks_per_sm(int block_size, size_t dynamic_shared);

}  // namespace cudalab::emu

template <class... P>
cudaError_t cudaLaunchKernel(void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                             size_t sharedMem = 0, cudaStream_t stream = nullptr) {
  return cudalab::emu::launch_by_value(kernel, grid, block, args, sharedMem, stream, false);
}
template <class... P>
cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                                        size_t sharedMem = 0, cudaStream_t stream = nullptr) {
  return cudalab::emu::launch_by_value(kernel, grid, block, args, sharedMem, stream, true);
}
inline cudaError_t cudaLaunchKernel(const void* kernel, dim3 grid, dim3 block, void** args,
                                    size_t sharedMem = 0, cudaStream_t stream = nullptr) {
  return cudalab::emu::launch_untyped("cudaLaunchKernel", kernel, grid, block, args, sharedMem,
                                      stream, false);
}
inline cudaError_t cudaLaunchCooperativeKernel(const void* kernel, dim3 grid, dim3 block,
                                               void** args, size_t sharedMem = 0,
                                               cudaStream_t stream = nullptr) {
  return cudalab::emu::launch_untyped("cudaLaunchCooperativeKernel", kernel, grid, block, args,
                                      sharedMem, stream, true);
}

// Occupancy: from the limits of threads, blocks and shared memory per multiprocessor (emu does not
// know a kernel's registers: it counts none).
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, F, int blockSize,
                                                          size_t dynamicSMemSize) {
  if (numBlocks == nullptr || blockSize <= 0) return cudaErrorInvalidValue;
  *numBlocks = cudalab::emu::active_blocks_per_sm(blockSize, dynamicSMemSize);
  return cudaSuccess;
}
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, F func,
                                                                   int blockSize,
                                                                   size_t dynamicSMemSize,
                                                                   unsigned) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize, dynamicSMemSize);
}
template <class F, class SharedOfBlockSize>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* minGridSize, int* blockSize, F,
                                                           SharedOfBlockSize shared_of,
                                                           int blockSizeLimit = 0, unsigned = 0) {
  if (minGridSize == nullptr || blockSize == nullptr) return cudaErrorInvalidValue;
  int sms = 0, best_threads = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
  *blockSize = 0;
  for (int size = limit / 32 * 32; size > 0; size -= 32) {  // the largest of the fullest
    const int blocks = cudalab::emu::active_blocks_per_sm(size, shared_of(size));
    if (blocks * size > best_threads) {
      best_threads = blocks * size;
      *blockSize = size;
      *minGridSize = blocks * sms;
    }
  }
  return cudaSuccess;
}
template <class F>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, F func,
                                               size_t dynamicSMemSize = 0, int blockSizeLimit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMem(
      minGridSize, blockSize, func, [=](int) { return dynamicSMemSize; }, blockSizeLimit);
}
template <class F>
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, F, int numBlocks,
                                                      int) {
  if (dynamicSmemSize == nullptr || numBlocks <= 0) return cudaErrorInvalidValue;
  *dynamicSmemSize = (233472 / numBlocks - 1024) / 128 * 128;
  return cudaSuccess;
}

template <class F>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, F func) {
  if (attr == nullptr) return cudaErrorInvalidValue;
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes =
      cudalab::emu::max_dynamic_shared(reinterpret_cast<const void*>(func));
  return cudaSuccess;
}
template <class F>
cudaError_t cudaFuncSetAttribute(F func, cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || value > 232448) return cudaErrorInvalidValue;
    cudalab::emu::set_max_dynamic_shared(reinterpret_cast<const void*>(func), value);
  }
  return cudaSuccess;
}
template <class F>
cudaError_t cudaFuncSetCacheConfig(F, cudaFuncCache) {
  return cudaSuccess;
}
template <class F>
cudaError_t cudaFuncSetSharedMemConfig(F, cudaSharedMemConfig) {
  return cudaSuccess;
}

// A launch of a kernel whose accesses its code proves: in checked code, the kernel, its copy
// without checks and its ranges; in unchecked code, the kernel.
#ifdef CUDALAB_EMU_CHECKED
#define CUDALAB_KERNEL_PROVEN(kernel, copy, ranges) \
  ::cudalab::emu::ProvenCall { kernel, copy, ranges }
#else
#define CUDALAB_KERNEL_PROVEN(kernel, copy, ranges) kernel
#endif
