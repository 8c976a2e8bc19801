// mma_sync of the warp matrix functions (include/cudalab/emu/wmma.h states the algorithm): the
// warp meets, and its first lane multiplies for all. This file is not instrumented: the lanes'
// fragments are their registers, which no check watches.
#include "cudalab/emu/wmma.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cudalab/emu/bf16.h"
#include "cudalab/emu/device.h"
#include "cudalab/emu/half.h"

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

template <class Sum, class Stored, class Convert>
void convert_run(Sum* out, const void* data, size_t count, Convert convert) {
  Stored stored[512];
  std::memcpy(stored, data, count * sizeof(Stored));
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<Sum>(convert(stored[i]));
}

// A lane's run of `count` elements of type e, as the type the sums are made in.
template <class Sum>
void read_run(Sum* out, const void* data, Element e, size_t count) {
  const auto same = [](auto v) { return v; };
  switch (e) {
    case Element::f16: {
      const float* value = half_values();
      return convert_run<Sum, unsigned short>(out, data, count,
                                              [value](unsigned short h) { return value[h]; });
    }
    case Element::bf16:
      return convert_run<Sum, __nv_bfloat16>(out, data, count,
                                             [](__nv_bfloat16 v) { return static_cast<float>(v); });
    case Element::tf32:  // a tensor core reads the top 19 bits
      return convert_run<Sum, uint32_t>(out, data, count, [](uint32_t bits) {
        bits &= 0xffffe000u;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
      });
    case Element::f32:
      return convert_run<Sum, float>(out, data, count, same);
    case Element::f64:
      return convert_run<Sum, double>(out, data, count, same);
    case Element::s8:
      return convert_run<Sum, signed char>(out, data, count, same);
    case Element::u8:
      return convert_run<Sum, unsigned char>(out, data, count, same);
    case Element::s32:
      return convert_run<Sum, int32_t>(out, data, count, same);
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
// D = A * B + C, and deal D out. `lanes` of the warp exist (a block's last warp may be short).
template <class Sum>
void multiply(int m, int n, int k, Element ab, Element c_type, Element d_type,
              const MmaOperands* const* operands, unsigned lanes, bool satf) {
  const size_t a_run = size_t(m) * k / 32, b_run = size_t(k) * n / 32, c_run = size_t(m) * n / 32;
  Sum A[512], B[512], D[256];  // the largest tiles: 32 x 16, 16 x 32, 16 x 16
  if (lanes < 32) {            // the missing lanes' runs count as zeros
    std::fill(std::begin(A), std::end(A), Sum{});
    std::fill(std::begin(B), std::end(B), Sum{});
    std::fill(std::begin(D), std::end(D), Sum{});
  }
  for (unsigned lane = 0; lane < lanes; ++lane) {
    const MmaOperands& o = *operands[lane];
    read_run(A + lane * a_run, o.a, ab, a_run);
    read_run(B + lane * b_run, o.b, ab, b_run);
    read_run(D + lane * c_run, o.c, c_type, c_run);
  }
  for (int row = 0; row < m; ++row)
    for (int i = 0; i < k; ++i) {
      const Sum a = A[size_t(row) * k + i];
      for (int col = 0; col < n; ++col) D[size_t(row) * n + col] += a * B[size_t(i) * n + col];
    }
  if constexpr (!std::is_integral_v<Sum>)
    if (satf)
      for (Sum& v : D) v = saturated(v, d_type);
  for (unsigned lane = 0; lane < lanes; ++lane)
    write_run(operands[lane]->d, d_type, D + lane * c_run, c_run);
}

}  // namespace

void mma_sync(int m, int n, int k, Element ab, Element c, Element d, const MmaOperands& mine,
              bool satf, const char* file, int line) {
  const uint64_t* published =
      warp_exchange(0xffffffffu, reinterpret_cast<uintptr_t>(&mine), file, line);
  // The warp's lanes resume in order: the first does the work while the others still wait.
  if (lane_id() != 0) return;
  const unsigned first = thread_rank(), count = static_cast<unsigned>(block_threads());
  const unsigned lanes = count - first < 32 ? count - first : 32;
  const MmaOperands* operands[32];
  for (unsigned lane = 0; lane < lanes; ++lane)
    operands[lane] = reinterpret_cast<const MmaOperands*>(static_cast<uintptr_t>(published[lane]));
  if (ab == Element::f64)
    multiply<double>(m, n, k, ab, c, d, operands, lanes, satf);
  else if (ab == Element::s8 || ab == Element::u8)
    multiply<uint32_t>(m, n, k, ab, c, d, operands, lanes, satf);  // sums wrap, as a GPU's do
  else
    multiply<float>(m, n, k, ab, c, d, operands, lanes, satf);
}

}  // namespace cudalab::emu::wmma
