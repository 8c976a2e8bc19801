// The entry points of the compiler's instrumentation. The student's kernels are compiled with
// ThreadSanitizer's instrumentation (-fsanitize=thread, GCC or Clang), which calls a function
// before every load, store and atomic; we link these functions instead of ThreadSanitizer's
// runtime, and hand each access to the checks and the counters (block.h).
#include <algorithm>
#include <cstdint>

#include "fast_path.h"

namespace cudalab::emu {

namespace {
bool checked_modules = false;  // set before main(), read after
}  // namespace
bool checked_code_linked() { return checked_modules; }

const BuiltinsPlace builtins_place = [] {
  const auto at = [](const void* p) { return reinterpret_cast<intptr_t>(p); };
  const intptr_t first =
      std::min({at(&::threadIdx), at(&::blockIdx), at(&::blockDim), at(&::gridDim), at(&builtins)});
  const intptr_t end = std::max({at(&::threadIdx + 1), at(&::blockIdx + 1), at(&::blockDim + 1),
                                 at(&::gridDim + 1), at(&builtins + 1)});
  return BuiltinsPlace{first - at(&::threadIdx), static_cast<uintptr_t>(end - first)};
}();

namespace {

// Atomics: the operation itself, done here (this file is not instrumented), after the check.
template <class T>
T* checked(volatile T* a, const void* pc) {
  check_access(const_cast<T*>(a), sizeof(T), true, true, pc);
  return const_cast<T*>(a);
}
// An atomic store or exchange writes without needing the old value: no unwritten-read check.
template <class T>
T* overwritten(volatile T* a, const void* pc) {
  atomic_overwrites = true;
  check_access(const_cast<T*>(a), sizeof(T), true, true, pc);
  atomic_overwrites = false;
  return const_cast<T*>(a);
}

}  // namespace
}  // namespace cudalab::emu

using cudalab::emu::access;
using cudalab::emu::checked;
using cudalab::emu::overwritten;
#define PC __builtin_return_address(0)

extern "C" {
// Called by every instrumented module before main() (the compiler adds the call).
void __tsan_init() { cudalab::emu::checked_modules = true; }
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
void __tsan_ignore_thread_begin() {}
void __tsan_ignore_thread_end() {}

#define CUDALAB_ACCESS(n)                                                      \
  void __tsan_read##n(void* a) { access(a, n, false, PC); }                    \
  void __tsan_write##n(void* a) { access(a, n, true, PC); }                    \
  void __tsan_unaligned_read##n(void* a) { access(a, n, false, PC); }          \
  void __tsan_unaligned_write##n(void* a) { access(a, n, true, PC); }          \
  void __tsan_volatile_read##n(void* a) { access(a, n, false, PC); }           \
  void __tsan_volatile_write##n(void* a) { access(a, n, true, PC); }           \
  void __tsan_unaligned_volatile_read##n(void* a) { access(a, n, false, PC); } \
  void __tsan_unaligned_volatile_write##n(void* a) { access(a, n, true, PC); } \
  void __tsan_read##n##_pc(void* a, void* pc) { access(a, n, false, pc); }     \
  void __tsan_write##n##_pc(void* a, void* pc) { access(a, n, true, pc); }
CUDALAB_ACCESS(1)
CUDALAB_ACCESS(2)
CUDALAB_ACCESS(4)
CUDALAB_ACCESS(8)
CUDALAB_ACCESS(16)
#undef CUDALAB_ACCESS

void __tsan_read_range(void* a, unsigned long n) {
  for (unsigned long i = 0; i < n; i += 8)
    access(static_cast<char*>(a) + i, n - i < 8 ? n - i : 8, false, PC);
}
void __tsan_write_range(void* a, unsigned long n) {
  for (unsigned long i = 0; i < n; i += 8)
    access(static_cast<char*>(a) + i, n - i < 8 ? n - i : 8, true, PC);
}

void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) {}

#define CUDALAB_ATOMICS(bits, T)                                                                 \
  T __tsan_atomic##bits##_load(const volatile T* a, int) {                                       \
    cudalab::emu::check_access(const_cast<T*>(a), sizeof(T), false, true, PC);                   \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                 \
  }                                                                                              \
  void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                                    \
    __atomic_store_n(overwritten(a, PC), v, __ATOMIC_SEQ_CST);                                   \
  }                                                                                              \
  T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                                    \
    return __atomic_exchange_n(overwritten(a, PC), v, __ATOMIC_SEQ_CST);                         \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_add(volatile T* a, T v, int) {                                   \
    return __atomic_fetch_add(checked(a, PC), v, __ATOMIC_SEQ_CST);                              \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_sub(volatile T* a, T v, int) {                                   \
    return __atomic_fetch_sub(checked(a, PC), v, __ATOMIC_SEQ_CST);                              \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_and(volatile T* a, T v, int) {                                   \
    return __atomic_fetch_and(checked(a, PC), v, __ATOMIC_SEQ_CST);                              \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_or(volatile T* a, T v, int) {                                    \
    return __atomic_fetch_or(checked(a, PC), v, __ATOMIC_SEQ_CST);                               \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_xor(volatile T* a, T v, int) {                                   \
    return __atomic_fetch_xor(checked(a, PC), v, __ATOMIC_SEQ_CST);                              \
  }                                                                                              \
  T __tsan_atomic##bits##_fetch_nand(volatile T* a, T v, int) {                                  \
    return __atomic_fetch_nand(checked(a, PC), v, __ATOMIC_SEQ_CST);                             \
  }                                                                                              \
  int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* expected, T v, int, int) { \
    return __atomic_compare_exchange_n(checked(a, PC), expected, v, false, __ATOMIC_SEQ_CST,     \
                                       __ATOMIC_SEQ_CST);                                        \
  }                                                                                              \
  int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* expected, T v, int, int) {   \
    return __atomic_compare_exchange_n(checked(a, PC), expected, v, true, __ATOMIC_SEQ_CST,      \
                                       __ATOMIC_SEQ_CST);                                        \
  }                                                                                              \
  T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T expected, T v, int, int) {       \
    __atomic_compare_exchange_n(checked(a, PC), &expected, v, false, __ATOMIC_SEQ_CST,           \
                                __ATOMIC_SEQ_CST);                                               \
    return expected;                                                                             \
  }
CUDALAB_ATOMICS(8, uint8_t)
CUDALAB_ATOMICS(16, uint16_t)
CUDALAB_ATOMICS(32, uint32_t)
CUDALAB_ATOMICS(64, uint64_t)
#undef CUDALAB_ATOMICS
}
