// Warp matrix functions (mma.h, namespace nvcuda::wmma) on the emu backend.
//
// Algorithm: a fragment holds its warp's share of one matrix tile, as on a GPU: the tile's
// elements in row-major order, dealt out in runs of num_elements = rows * cols / 32 (lane 0 the
// first run, lane 1 the next...). Loads, stores and fills touch only the calling lane's run, so
// the checks and counters see each lane's own accesses, and element-wise code on fragment.x[]
// works as on a GPU (which lane holds which element is unspecified by CUDA). In checked code a
// load or store of a run is made by the runtime (src/wmma.cpp), which checks each element of
// memory as the program's own access at that line would be checked, and copies the fragment's side
// unchecked (a fragment is the lane's registers). mma_sync is a warp-level call: every lane
// publishes where its fragments are, and when the warp has met, its first lane gathers the tiles,
// multiplies and writes every lane's share of the result (src/wmma.cpp, outside the checks).
//
// Arithmetic: products of half or bfloat16 inputs are exact in float; sums are made in k order in
// the accumulator's precision (float for a float or half accumulator, double, or 32-bit integers
// that wrap). tf32 inputs keep the 10 mantissa bits a tensor core reads.
//
// Limitations (refused when the program is compiled, with a message):
// - the sub-byte types of wmma::experimental (u4, s4, b1: bmma_sync);
// - shapes other than CUDA's: m16n16k16, m32n8k16, m8n32k16 (half, bfloat16, char), m16n16k8
//   (tf32), m8n8k4 (double); a bfloat16 product into anything but float.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cudalab/emu/bf16.h"
#include "cudalab/emu/device.h"
#include "cudalab/emu/half.h"

namespace cudalab::emu::wmma {
// The element types the tensor cores multiply or accumulate, as the runtime names them.
enum class Element : unsigned char { f16, bf16, f32, tf32, f64, s8, u8, s32 };
// D = A * B + C for the warp (M x K times K x N); every lane calls it with its own fragments'
// elements (d_x, a_x, b_x, c_x).
void mma_sync(int m, int n, int k, Element ab, Element c, Element d, void* d_x, const void* a_x,
              const void* b_x, const void* c_x, bool satf, const char* file, int line);
// Checked code's load and store of the calling lane's run of a tile: `count` elements of `bytes`
// bytes, the first at `first` and each next `step` elements on (the run lies in one row of the
// tile). Each element of the tile is checked as the caller's own load or store of it.
void load_run_checked(void* x, const void* first, size_t step, int count, unsigned bytes);
void store_run_checked(void* first, const void* x, size_t step, int count, unsigned bytes);
}  // namespace cudalab::emu::wmma

namespace nvcuda::wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}  // namespace precision
namespace experimental::precision {
struct u4 {};
struct s4 {};
struct b1 {};
}  // namespace experimental::precision

namespace detail {
using cudalab::emu::wmma::Element;

template <class T>
struct element_of;  // the type a fragment of T stores, and its name for the runtime
template <>
struct element_of<__half> {
  using storage = __half;
  static constexpr Element name = Element::f16;
};
template <>
struct element_of<__nv_bfloat16> {
  using storage = __nv_bfloat16;
  static constexpr Element name = Element::bf16;
};
template <>
struct element_of<float> {
  using storage = float;
  static constexpr Element name = Element::f32;
};
template <>
struct element_of<precision::tf32> {
  using storage = float;
  static constexpr Element name = Element::tf32;
};
template <>
struct element_of<double> {
  using storage = double;
  static constexpr Element name = Element::f64;
};
template <>
struct element_of<signed char> {
  using storage = signed char;
  static constexpr Element name = Element::s8;
};
template <>
struct element_of<unsigned char> {
  using storage = unsigned char;
  static constexpr Element name = Element::u8;
};
template <>
struct element_of<int> {
  using storage = int;
  static constexpr Element name = Element::s32;
};

// The tile a fragment of `Use` holds in an m x n x k product: A is m x k, B is k x n, C and D m x
// n.
template <class Use, int m, int n, int k>
struct tile;
template <int m, int n, int k>
struct tile<matrix_a, m, n, k> {
  static constexpr int rows = m, cols = k;
};
template <int m, int n, int k>
struct tile<matrix_b, m, n, k> {
  static constexpr int rows = k, cols = n;
};
template <int m, int n, int k>
struct tile<accumulator, m, n, k> {
  static constexpr int rows = m, cols = n;
};

template <int m, int n, int k>
constexpr bool cuda_shape = (m == 16 && n == 16 && k == 16) || (m == 32 && n == 8 && k == 16) ||
                            (m == 8 && n == 32 && k == 16) || (m == 16 && n == 16 && k == 8) ||
                            (m == 8 && n == 8 && k == 4);
}  // namespace detail

template <class Use, int m, int n, int k, class T, class Layout = void>
class fragment {
  static_assert(!std::is_same_v<T, experimental::precision::u4> &&
                    !std::is_same_v<T, experimental::precision::s4> &&
                    !std::is_same_v<T, experimental::precision::b1>,
                "cudalab emu: sub-byte wmma fragments (u4, s4, b1) are not supported");
  static_assert(detail::cuda_shape<m, n, k>, "cudalab emu: not a wmma shape CUDA has");
  using Tile = detail::tile<Use, m, n, k>;

 public:
  using element_type = T;
  using storage_element_type = typename detail::element_of<T>::storage;
  static constexpr int rows = Tile::rows, cols = Tile::cols;
  enum { num_elements = Tile::rows * Tile::cols / 32 };
  storage_element_type x[num_elements];
};

namespace detail {
// The address of element e of the running lane's run, for a tile at p with leading dimension ldm.
template <class F, class P>
P* element_address(P* p, unsigned ldm, bool col_major, int e) {
  const int at = static_cast<int>(cudalab::emu::lane_id()) * F::num_elements + e;
  const int row = at / F::cols, col = at % F::cols;
  return col_major ? p + static_cast<size_t>(col) * ldm + row
                   : p + static_cast<size_t>(row) * ldm + col;
}
}  // namespace detail

namespace detail {
// The running lane's run of the tile at p, loaded into fragment a (stored from it: store_run).
// Checked code hands a run of the fragment's own element type to the runtime: its first element,
// and the step to the next within the run's row.
template <class F>
constexpr bool run_in_one_row = F::cols % F::num_elements == 0;
template <class F, class P>
inline void load_run(F& a, const P* p, unsigned ldm, bool col_major) {
#ifdef CUDALAB_EMU_CHECKED
  if constexpr (std::is_same_v<std::remove_cv_t<P>, typename F::storage_element_type>) {
    static_assert(run_in_one_row<F>);
    cudalab::emu::wmma::load_run_checked(a.x, element_address<F>(p, ldm, col_major, 0),
                                         col_major ? ldm : 1, F::num_elements, sizeof(P));
    return;
  }
#endif
  for (int e = 0; e < F::num_elements; ++e) a.x[e] = *element_address<F>(p, ldm, col_major, e);
}
template <class F, class P>
inline void store_run(P* p, const F& a, unsigned ldm, bool col_major) {
#ifdef CUDALAB_EMU_CHECKED
  if constexpr (std::is_same_v<P, typename F::storage_element_type>) {
    static_assert(run_in_one_row<F>);
    cudalab::emu::wmma::store_run_checked(element_address<F>(p, ldm, col_major, 0), a.x,
                                          col_major ? ldm : 1, F::num_elements, sizeof(P));
    return;
  }
#endif
  for (int e = 0; e < F::num_elements; ++e) *element_address<F>(p, ldm, col_major, e) = a.x[e];
}
}  // namespace detail

template <class Use, int m, int n, int k, class T, class Layout, class P>
inline void load_matrix_sync(fragment<Use, m, n, k, T, Layout>& a, const P* mptr, unsigned ldm) {
  static_assert(!std::is_same_v<Use, accumulator>,
                "load_matrix_sync of an accumulator takes a layout (wmma::mem_row_major)");
  detail::load_run(a, mptr, ldm, std::is_same_v<Layout, col_major>);
}
template <int m, int n, int k, class T, class P>
inline void load_matrix_sync(fragment<accumulator, m, n, k, T>& a, const P* mptr, unsigned ldm,
                             layout_t layout) {
  detail::load_run(a, mptr, ldm, layout == mem_col_major);
}
template <int m, int n, int k, class T, class P>
inline void store_matrix_sync(P* mptr, const fragment<accumulator, m, n, k, T>& a, unsigned ldm,
                              layout_t layout) {
  detail::store_run(mptr, a, ldm, layout == mem_col_major);
}
template <class Use, int m, int n, int k, class T, class Layout, class V>
inline void fill_fragment(fragment<Use, m, n, k, T, Layout>& a, const V& v) {
  for (auto& x : a.x) x = v;
}

template <int m, int n, int k, class TA, class TB, class LA, class LB, class TC, class TD>
inline void mma_sync(fragment<accumulator, m, n, k, TD>& d,
                     const fragment<matrix_a, m, n, k, TA, LA>& a,
                     const fragment<matrix_b, m, n, k, TB, LB>& b,
                     const fragment<accumulator, m, n, k, TC>& c, bool satf = false,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  static_assert(std::is_same_v<TA, TB>, "wmma::mma_sync: A and B hold the same element type");
  static_assert(std::is_same_v<TC, TD> || std::is_same_v<TA, __half>,
                "wmma::mma_sync: C and D hold the same element type");
  static_assert(!std::is_same_v<TA, __nv_bfloat16> || std::is_same_v<TC, float>,
                "wmma::mma_sync: a bfloat16 product accumulates into float");
  cudalab::emu::wmma::mma_sync(m, n, k, detail::element_of<TA>::name, detail::element_of<TC>::name,
                               detail::element_of<TD>::name, d.x, a.x, b.x, c.x, satf, file, line);
}

// A float rounded to the tf32 a tensor core reads (10 mantissa bits, to nearest, ties away).
inline float __float_to_tf32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace nvcuda::wmma
