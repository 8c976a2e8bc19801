// mma_sync of the warp matrix functions (include/cudalab/emu/wmma.h states the algorithm): the
// warp meets, and its first lane multiplies for all; and checked code's loads and stores of a
// lane's run. This file is not instrumented: the lanes' fragments are their registers, which no
// check watches; the runs' elements in memory are checked here, each as the program's access.
#include "cudalab/emu/wmma.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cudalab/emu/bf16.h"
#include "cudalab/emu/device.h"
#include "cudalab/emu/half.h"
#include "fast_path.h"

namespace cudalab::emu::wmma {
namespace {

// Every half's value as a float: converting through _Float16 calls the compiler's library once
// an element, which costs more than the multiplication.
const float* half_values() {
  static const std::vector<float> values = [] {
    std::vector<float> v(65536);
    for (unsigned bits = 0; bits < 65536; ++bits)
      v[bits] = static_cast<float>(__half(__half_raw{static_cast<unsigned short>(bits)}));
    return v;
  }();
  return values.data();
}

// Where one lane's fragments are, for the warp's mma_sync.
struct Operands {
  void* d;
  const void* a;
  const void* b;
  const void* c;
};

// Each lane's run of `run` elements stored as `Stored` (the operand `member` of its fragments),
// converted to the type the sums are made in, into `out` in lane order: the whole tile.
template <class Sum, size_t run, class Stored, class Convert>
void gather_as(Sum* out, const Operands* const* lanes, unsigned count,
               const void* Operands::*member, Convert convert) {
  for (unsigned lane = 0; lane < count; ++lane) {
    const auto* stored = static_cast<const unsigned char*>(lanes[lane]->*member);
    for (size_t i = 0; i < run; ++i) {
      Stored v;
      std::memcpy(&v, stored + i * sizeof(Stored), sizeof(Stored));
      out[lane * run + i] = static_cast<Sum>(convert(v));
    }
  }
}

// The tile of operand `member`, whose elements are of type e.
template <class Sum, size_t run>
void gather(Sum* out, const Operands* const* lanes, unsigned count, const void* Operands::*member,
            Element e) {
  const auto same = [](auto v) { return v; };
  switch (e) {
    case Element::f16: {
      const float* value = half_values();
      return gather_as<Sum, run, unsigned short>(out, lanes, count, member,
                                                 [value](unsigned short h) { return value[h]; });
    }
    case Element::bf16:
      return gather_as<Sum, run, __nv_bfloat16>(
          out, lanes, count, member, [](__nv_bfloat16 v) { return static_cast<float>(v); });
    case Element::tf32:  // a tensor core reads the top 19 bits
      return gather_as<Sum, run, uint32_t>(out, lanes, count, member, [](uint32_t bits) {
        bits &= 0xffffe000u;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
      });
    case Element::f32:
      return gather_as<Sum, run, float>(out, lanes, count, member, same);
    case Element::f64:
      return gather_as<Sum, run, double>(out, lanes, count, member, same);
    case Element::s8:
      return gather_as<Sum, run, signed char>(out, lanes, count, member, same);
    case Element::u8:
      return gather_as<Sum, run, unsigned char>(out, lanes, count, member, same);
    case Element::s32:
      return gather_as<Sum, run, int32_t>(out, lanes, count, member, same);
  }
}

// A float sum saturated as satf asks: infinities to the largest finite value, NaN to 0.
template <class Sum>
Sum saturated(Sum v, Element e) {
  if (std::isnan(static_cast<double>(v))) return Sum{};
  const double largest = e == Element::f16 ? 65504.0 : std::numeric_limits<float>::max();
  if (static_cast<double>(v) > largest) return static_cast<Sum>(largest);
  if (static_cast<double>(v) < -largest) return static_cast<Sum>(-largest);
  return v;
}

template <class Stored, class Sum, class Convert>
void store_run(void* data, const Sum* values, size_t count, Convert convert) {
  Stored stored[256];
  for (size_t i = 0; i < count; ++i) stored[i] = convert(values[i]);
  std::memcpy(data, stored, count * sizeof(Stored));
}

// A lane's run of the result, stored as type e (an accumulator's).
template <class Sum>
void write_run(void* data, Element e, const Sum* values, size_t count) {
  switch (e) {
    case Element::f16:
      return store_run<__half>(data, values, count,
                               [](Sum v) { return __half(static_cast<float>(v)); });
    case Element::f32:
    case Element::tf32:
      return store_run<float>(data, values, count, [](Sum v) { return static_cast<float>(v); });
    case Element::f64:
      return store_run<double>(data, values, count, [](Sum v) { return static_cast<double>(v); });
    case Element::s32:
      return store_run<int32_t>(data, values, count, [](Sum v) { return static_cast<int32_t>(v); });
    case Element::bf16:
    case Element::s8:
    case Element::u8:
      return;  // never an accumulator
  }
}

// The first lane's work: gather A (m x k), B (k x n) and C (m x n) from the lanes' runs, make
// D = A * B + C, and deal D out. `count` lanes of the warp exist (a block's last warp may be
// short). The shape is a constant, so that the compiler makes the product's rows vector code.
template <class Sum, int m, int n, int k>
void multiply(Element ab, Element c_type, Element d_type, const Operands* const* lanes,
              unsigned count, bool satf) {
  constexpr size_t a_run = size_t(m) * k / 32, b_run = size_t(k) * n / 32,
                   c_run = size_t(m) * n / 32;
  Sum A[m * k], B[k * n], D[m * n];
  if (count < 32) {  // the missing lanes' runs count as zeros
    std::fill(std::begin(A), std::end(A), Sum{});
    std::fill(std::begin(B), std::end(B), Sum{});
    std::fill(std::begin(D), std::end(D), Sum{});
  }
  gather<Sum, a_run>(A, lanes, count, &Operands::a, ab);
  gather<Sum, b_run>(B, lanes, count, &Operands::b, ab);
  gather<Sum, c_run>(D, lanes, count, &Operands::c, c_type);
  // A row of D at a time in vector registers, the sums of each element in k order.
  using Vector [[gnu::vector_size(16)]] = Sum;
  constexpr int per_vector = 16 / sizeof(Sum), vectors = n / per_vector;
  for (int row = 0; row < m; ++row) {
    Vector sums[vectors];
    std::memcpy(sums, D + row * n, sizeof(sums));
    for (int i = 0; i < k; ++i) {
      const Sum a = A[row * k + i];
#pragma GCC unroll 8
      for (int v = 0; v < vectors; ++v) {
        Vector b;
        std::memcpy(&b, B + i * n + v * per_vector, sizeof(b));
        sums[v] += a * b;
      }
    }
    std::memcpy(D + row * n, sums, sizeof(sums));
  }
  if constexpr (!std::is_integral_v<Sum>)
    if (satf)
      for (Sum& v : D) v = saturated(v, d_type);
  for (unsigned lane = 0; lane < count; ++lane)
    write_run(lanes[lane]->d, d_type, D + lane * c_run, c_run);
}

// multiply for the sums' type of the inputs `ab`.
template <int m, int n, int k>
void multiply_shape(Element ab, Element c, Element d, const Operands* const* lanes, unsigned count,
                    bool satf) {
  if (ab == Element::f64)
    multiply<double, m, n, k>(ab, c, d, lanes, count, satf);
  else if (ab == Element::s8 || ab == Element::u8)
    multiply<uint32_t, m, n, k>(ab, c, d, lanes, count, satf);  // sums wrap, as a GPU's do
  else
    multiply<float, m, n, k>(ab, c, d, lanes, count, satf);
}

// Copies the running lane's run between its fragment `x` and the tile (its first element at
// `first`, the next `step` elements on), each element checked as the program's access at `pc`.
template <bool store>
void copy_run_checked(unsigned char* x, unsigned char* first, size_t step, int count,
                      unsigned bytes, const void* pc) {
  for (int e = 0; e < count; ++e) {
    unsigned char* element = first + e * step * bytes;
    access(element, bytes, store, pc);
    if constexpr (store)
      std::memcpy(element, x + e * bytes, bytes);
    else
      std::memcpy(x + e * bytes, element, bytes);
  }
}

}  // namespace

void mma_sync(int m, int n, int k, Element ab, Element c, Element d, void* d_x, const void* a_x,
              const void* b_x, const void* c_x, bool satf, const char* file, int line) {
  const Operands mine{d_x, a_x, b_x, c_x};
  const uint64_t* published =
      warp_exchange(0xffffffffu, reinterpret_cast<uintptr_t>(&mine), file, line);
  // The warp's lanes resume in order: the first does the work while the others still wait.
  if (lane_id() != 0) return;
  const unsigned first = thread_rank(), threads = static_cast<unsigned>(block_threads());
  const unsigned count = threads - first < 32 ? threads - first : 32;
  const Operands* lanes[32];
  for (unsigned lane = 0; lane < count; ++lane)
    lanes[lane] = reinterpret_cast<const Operands*>(static_cast<uintptr_t>(published[lane]));
  if (m == 16 && n == 16 && k == 16)
    multiply_shape<16, 16, 16>(ab, c, d, lanes, count, satf);
  else if (m == 32 && n == 8 && k == 16)
    multiply_shape<32, 8, 16>(ab, c, d, lanes, count, satf);
  else if (m == 8 && n == 32 && k == 16)
    multiply_shape<8, 32, 16>(ab, c, d, lanes, count, satf);
  else if (m == 16 && n == 16 && k == 8)
    multiply_shape<16, 16, 8>(ab, c, d, lanes, count, satf);
  else  // m8n8k4 (wmma.h admits CUDA's shapes only)
    multiply_shape<8, 8, 4>(ab, c, d, lanes, count, satf);
}

// Called from the program's checked code: the caller's return address is where the access is, as
// for the instrumentation's own calls (hooks.cpp).
void load_run_checked(void* x, const void* first, size_t step, int count, unsigned bytes) {
  copy_run_checked<false>(static_cast<unsigned char*>(x),
                          static_cast<unsigned char*>(const_cast<void*>(first)), step, count, bytes,
                          __builtin_return_address(0));
}
void store_run_checked(void* first, const void* x, size_t step, int count, unsigned bytes) {
  copy_run_checked<true>(static_cast<unsigned char*>(const_cast<void*>(x)),
                         static_cast<unsigned char*>(first), step, count, bytes,
                         __builtin_return_address(0));
}

}  // namespace cudalab::emu::wmma
