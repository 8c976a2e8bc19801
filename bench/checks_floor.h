// The least a check per access costs: vector add with the checks of global memory that no design
// can skip, written inline where each access is, as a compiler pass would put them. The
// foundation benchmark (bench_foundation.cu) times it beside the emu's unchecked and checked
// vector add, to say how low checks that look at every access could go on this machine.
//
// Algorithm: the threads run in blocks, one after another, as emu unchecked runs them. Before
// each of the thread's three accesses, the check finds the array that holds the address among the
// kernel's arrays (out of bounds, a freed or a host pointer otherwise), reads the word's writer
// from a shadow of one writer per word (never written; written by another block of this launch,
// a race), and a store writes its block's stamp there. That is less than emu checks (no race
// inside a block, no source lines of stores, no shared memory, no time limit): a floor, not a
// design. Any violation stops the run, as emu would stop the kernel.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace checks_floor {

struct Array {
  uintptr_t base = 0;
  size_t bytes = 0;
  uint32_t* writers = nullptr;  // one per 4-byte word; 0: never written
};

// Where a real checker would word its message; the floor never gets here on correct code.
[[noreturn, gnu::noinline, gnu::cold]] inline void violation(const void* address, bool store) {
  std::fprintf(stderr, "checks_floor: %s of %p broke a rule\n", store ? "store" : "load", address);
  std::abort();
}

class VectorAdd {
 public:
  VectorAdd(const std::vector<float>& A, const std::vector<float>& B, int n)
      : A_(A.begin(), A.begin() + n),
        B_(B.begin(), B.begin() + n),
        C_(n),
        shadows_{std::vector<uint32_t>(n, kHost), std::vector<uint32_t>(n, kHost),
                 std::vector<uint32_t>(n, 0)} {
    const std::vector<float>* data[] = {&A_, &B_, &C_};
    for (int i = 0; i < 3; ++i)
      arrays_[i] = {reinterpret_cast<uintptr_t>(data[i]->data()), n * sizeof(float),
                    shadows_[i].data()};
  }

  // One launch of blocks of `block_size` threads: C[i] = A[i] + B[i] for i < n.
  void launch(int block_size) {
    const uint32_t launch_stamp = next_stamp_;
    const int n = static_cast<int>(C_.size()), blocks = (n + block_size - 1) / block_size;
    next_stamp_ += blocks;
    const float *A = A_.data(), *B = B_.data();
    float* C = C_.data();
    for (int blockIdx = 0; blockIdx < blocks; ++blockIdx) {
      const uint32_t stamp = launch_stamp + blockIdx;
      for (int threadIdx = 0; threadIdx < block_size; ++threadIdx) {
        const int i = blockIdx * block_size + threadIdx;
        if (i < n) {
          load(A + i, launch_stamp, stamp);
          load(B + i, launch_stamp, stamp);
          store(C + i, launch_stamp, stamp);
          C[i] = A[i] + B[i];
        }
      }
    }
  }
  const std::vector<float>& C() const { return C_; }

 private:
  static constexpr uint32_t kHost = 1;  // written by a copy from the host

  [[gnu::always_inline]] uint32_t* writer_of(const void* p, bool store) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    for (const Array& r : arrays_)
      if (a - r.base < r.bytes) return r.writers + (a - r.base) / 4;
    violation(p, store);
  }
  [[gnu::always_inline]] void load(const float* p, uint32_t launch_stamp, uint32_t stamp) {
    const uint32_t w = *writer_of(p, false);
    if (w == 0 || (w >= launch_stamp && w != stamp)) violation(p, false);
  }
  [[gnu::always_inline]] void store(float* p, uint32_t launch_stamp, uint32_t stamp) {
    uint32_t* w = writer_of(p, true);
    if (*w >= launch_stamp && *w != stamp) violation(p, true);
    *w = stamp;
  }

  std::vector<float> A_, B_, C_;
  std::vector<uint32_t> shadows_[3];
  Array arrays_[3];
  uint32_t next_stamp_ = kHost + 1;
};

}  // namespace checks_floor
