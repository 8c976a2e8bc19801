// The checker's side of the remote runner: the test program that decides links no student code.
// Its kernel launches and its calls of the lab's host functions travel to the runner (the
// student's code, in a process of its own) and their results come back; every other CUDA call of
// the harness (cudaMalloc, cudaMemcpy, events, ...) goes there too (src/checker.cpp). The emu
// translator's checker mode (translate.py --checker) turns `kernel<<<...>>>(args)` into
// Launch<decltype(&kernel)>, and the lab's interface gets definitions that call Call<...>::run
// (cudalab_tools/interface.py writes them).
//
// Device pointers have the same value in both processes: the runner allocates, and the checker
// reserves the same addresses in its own address space so that none of its own memory can ever
// be mistaken for device memory. A host pointer travels as the checker's memory block that holds
// it (the block's bytes, and the offset into it); the runner works on a copy of the block (its
// twin) and sends back the blocks that the function may write (those not behind a const pointer).
#pragma once

// The runner is a GPU's program: the harness takes the branches it takes on a GPU.
#ifdef CUDALAB_CHECKER_OF_CUDA
#undef CUDALAB_EMU
#endif

#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>

#include "cudalab/emu/types.h"
#include "cudalab/remote/wire.h"

namespace cudalab::remote {

// Sends a request and returns the runner's answer. If the runner has gone (it crashed, or a limit
// stopped it), the checker says so and ends with the runner's fate: no verdict without it.
Message request(Op op, const Message& m);

// Records that the running test's verdict uses `fact` ("device_work", "live_allocations",
// "counters", "timings"), which only the runner, holding the student's code, could tell: the
// property runner_reported of the test's report.
void note_runner_reported(const char* fact);

// A pointer argument of a host function: null, device memory, or a block of the checker's host
// memory (sent with its bytes; `writable`: the runner sends it back after the call). Outside the
// checker's heap, the block is the `element_bytes` at p.
void put_pointer(Message& m, const void* p, bool writable, size_t element_bytes);
// After a host function returns: the blocks the runner sent back, into the checker's memory.
void receive_blocks(Message& reply);

template <class T>
void put_argument(Message& m, const T& value) {
  if constexpr (std::is_pointer_v<T>) {
    using Element = std::remove_cv_t<std::remove_pointer_t<T>>;
    constexpr size_t bytes = std::is_void_v<Element> ? 1 : sizeof(Element);
    put_pointer(m, value, !std::is_const_v<std::remove_pointer_t<T>>, bytes);
  } else
    m.put(value);
}

template <class Kernel>
class Launch;
template <class... P>
class Launch<void (*)(P...)> {
 public:
  Launch(const char* kernel, const char* file, int line, dim3 grid, dim3 block,
         size_t shared_bytes = 0, cudaStream_t stream = nullptr)
      : kernel_(kernel),
        file_(file),
        line_(line),
        grid_(grid),
        block_(block),
        shared_bytes_(shared_bytes),
        stream_(stream) {}

  // The arguments become the kernel's parameters as in a call (an int for an int parameter),
  // and travel as their bytes: device pointers mean the same on both sides.
  template <class... A>
  void operator()(A&&... args) const {
    std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
    Message m;
    m.put(std::string(kernel_));
    m.put(std::string(file_));
    m.put(line_);
    m.put(grid_);
    m.put(block_);
    m.put<uint64_t>(shared_bytes_);
    m.put(reinterpret_cast<uintptr_t>(stream_));
    std::apply([&](const auto&... p) { (m.put(p), ...); }, params);
    request(Op::launch, m);
  }

 private:
  const char* kernel_;
  const char* file_;
  int line_;
  dim3 grid_, block_;
  size_t shared_bytes_;
  cudaStream_t stream_;
};

// A host function of the lab's interface, run by the runner.
template <class F>
struct Call;
template <class R, class... P>
struct Call<R(P...)> {
  static R run(const char* name, P... args) {
    Message m;
    m.put(function_key<R (*)(P...)>(name));
    (put_argument(m, args), ...);
    Message reply = request(Op::call, m);
    if constexpr (std::is_void_v<R>) {
      receive_blocks(reply);
    } else {
      R result = reply.get<R>();
      receive_blocks(reply);
      return result;
    }
  }
};

}  // namespace cudalab::remote

namespace cudalab::remote {
// The harness's own __constant__ and __device__ variables, by name: cudaMemcpyToSymbol(kMask2D,
// ...) fills the runner's kMask2D (the table that interface.py writes lists them).
struct SymbolNames {
  SymbolNames(std::initializer_list<std::pair<const char*, const void*>> symbols);
};
}  // namespace cudalab::remote
