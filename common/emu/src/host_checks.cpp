// The check of host memory in a kernel: a kernel that reads through a host pointer given as an
// argument (h_A instead of d_A) is stopped with the argument's number.
#include <cstdint>
#include <string>

#include "checks.h"
#include "memory.h"

namespace cudalab::emu {

// A kernel reads memory that is neither device, shared nor its own stack: if it lies behind a
// host pointer given as an argument, name the argument.
void check_host(const BlockState& b, uintptr_t a, bool store, const void* pc) {
  const LaunchConfig& c = *b.config;
  if (!b.host_pointer_args) return;
  if (program_global(reinterpret_cast<const void*>(a)))
    return;  // the program's globals (__constant__ and __device__ variables)
  if (stack_or_arguments(c, a)) return;
  for (unsigned i = 0; i < c.pointer_count; ++i) {
    if (!host_pointer(c.pointers[i])) continue;
    const auto p = reinterpret_cast<uintptr_t>(c.pointers[i]);
    if (a - p < (64u << 20) && !registered_host_memory(a)) {
      fault(b, pc, cudaErrorIllegalAddress, "host_pointer",
            std::string(store ? "a write to" : "a read of") + " host memory through argument " +
                std::to_string(i + 1) +
                " of the kernel, a host pointer. A kernel can only use device memory: pass the "
                "pointer that cudaMalloc gave (d_...), not the host array (h_...).");
    }
  }
}

}  // namespace cudalab::emu
