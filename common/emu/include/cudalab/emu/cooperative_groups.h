// Cooperative groups (cooperative_groups.h) on the emu backend: the block, tiles of a warp (static
// and dynamic sizes up to 32), tiles of several warps (static sizes 64 to 512), coalesced groups,
// and the grid of a cooperative launch. Groups are views of the running thread's coordinates;
// their syncs and collectives are the block barrier, the warp-level exchange of the scheduler
// (common/emu/src/scheduler.cpp) with the tile's lanes as the mask, and the grid barrier of a
// cooperative launch.
//
// A tile of a warp (Size up to 32) makes each of its waits from a description of the call
// (device.h's warp_calls).
//
// Limitation: the sync and the collectives of a tile larger than a warp are block barriers, so
// every tile of the block must make them together (a tile that skips one is reported as a
// barrier that some threads miss); on a GPU the tiles may go their own ways.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cudalab/emu/device.h"
#include "cudalab/emu/prelude.h"  // threadIdx and friends

namespace cudalab::emu {
// The lanes that reached this coalesced_threads() call together (the scheduler decides).
unsigned coalesce(const char* file, int line);
// A collective of a tile larger than a warp: every thread of the block publishes `value` at a
// block barrier and reads what all published, by thread_rank().
const uint64_t* block_exchange(uint64_t value, const char* file, int line);
// grid.sync() of a cooperative launch; the number of the running block and whether the launch is
// cooperative.
void grid_sync(const char* file, int line);
bool cooperative_launch();
}  // namespace cudalab::emu

namespace cooperative_groups {

// Where a wait or a collective is called (the emu's diagnostics name it).
#define CUDALAB_PLACE const char *file = __builtin_FILE(), int line = __builtin_LINE()

class thread_block {
 public:
  void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    ::cudalab::emu::syncthreads(file, line);
  }
  unsigned thread_rank() const { return cudalab::emu::thread_rank(); }
  unsigned long long size() const { return cudalab::emu::block_threads(); }
  unsigned long long num_threads() const { return size(); }
  dim3 group_index() const { return blockIdx; }
  dim3 thread_index() const { return threadIdx; }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return group_dim(); }
  static constexpr bool is_valid() { return true; }
};
inline thread_block this_thread_block() { return {}; }
// The memory a GPU gives the collectives of tiles larger than a warp; the emu keeps its own.
template <unsigned MaxBlockSize = 1024>
struct block_tile_memory {};
template <unsigned MaxBlockSize>
inline thread_block this_thread_block(block_tile_memory<MaxBlockSize>&) {
  return {};
}

// A group of lanes of one warp: `mask` names them, the running thread is lane `lane` of its warp.
class thread_group {
 public:
  thread_group(unsigned mask, bool whole_block) : mask_(mask), block_(whole_block) {}
  thread_group(const thread_block&) : mask_(0), block_(true) {}
  void sync(CUDALAB_PLACE) const {
    if (block_)
      cudalab::emu::syncthreads(file, line);
    else
      __syncwarp(mask_, file, line);
  }
  unsigned thread_rank() const {
    if (block_) return cudalab::emu::thread_rank();
    return __builtin_popcount(mask_ & ((1u << (cudalab::emu::lane_id())) - 1u));
  }
  unsigned long long size() const {
    return block_ ? cudalab::emu::block_threads() : __builtin_popcount(mask_);
  }
  unsigned long long num_threads() const { return size(); }
  unsigned get_mask() const { return mask_; }

 protected:
  unsigned mask_;
  bool block_;
};

// Lanes of a warp working together: shuffles and votes over the group's lanes only.
class coalesced_group : public thread_group {
 public:
  explicit coalesced_group(unsigned mask) : thread_group(mask, false) {}
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }
  // Lane `rank` of the group is the rank-th set bit of the mask.
  unsigned lane_of(unsigned rank) const {
    unsigned m = mask_;
    for (unsigned i = 0; i < rank; ++i) m &= m - 1;
    return m ? __builtin_ctz(m) : 0;
  }
  template <class T>
  T shfl(T var, unsigned src_rank, const char* file = __builtin_FILE(),
         int line = __builtin_LINE()) const {
    return __shfl_sync(mask_, var, static_cast<int>(lane_of(src_rank)), 32, file, line);
  }
  template <class T>
  T shfl_down(T var, unsigned delta, const char* file = __builtin_FILE(),
              int line = __builtin_LINE()) const {
    const unsigned r = thread_rank() + delta;
    const T other = __shfl_sync(
        mask_, var, static_cast<int>(lane_of(r < size() ? r : thread_rank())), 32, file, line);
    return other;
  }
  template <class T>
  T shfl_up(T var, unsigned delta, const char* file = __builtin_FILE(),
            int line = __builtin_LINE()) const {
    const unsigned r = thread_rank();
    return __shfl_sync(mask_, var, static_cast<int>(lane_of(r >= delta ? r - delta : r)), 32, file,
                       line);
  }
  int any(int p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __ballot_sync(mask_, p, file, line) != 0;
  }
  int all(int p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    return __ballot_sync(mask_, p, file, line) == mask_;
  }
  unsigned ballot(int p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    // The result is in the group's ranks, not the warp's lanes.
    const unsigned lanes = __ballot_sync(mask_, p, file, line);
    unsigned bits = 0;
    for (unsigned r = 0; r < size(); ++r)
      if (lanes >> lane_of(r) & 1u) bits |= 1u << r;
    return bits;
  }
};
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(),
                                         int line = __builtin_LINE()) {
  return coalesced_group(cudalab::emu::coalesce(file, line));
}

// The lanes of a group split by a predicate: those that agree with the caller
// (binaryPartitionCG's cg::binary_partition).
template <class Group>
inline coalesced_group binary_partition(const Group& g, bool predicate,
                                        const char* file = __builtin_FILE(),
                                        int line = __builtin_LINE()) {
  const unsigned mask = g.get_mask(), yes = __ballot_sync(mask, predicate, file, line);
  return coalesced_group(predicate ? yes : mask & ~yes);
}

// The lanes of a group with the same label (warpAggregatedAtomicsCG's cg::labeled_partition).
template <class Group>
inline coalesced_group labeled_partition(const Group& g, unsigned long long label,
                                         const char* file = __builtin_FILE(),
                                         int line = __builtin_LINE()) {
  return coalesced_group(__match_any_sync(g.get_mask(), label, file, line));
}

template <unsigned Size, class Parent = void>
class thread_block_tile;
namespace details {
// A tile's votes from its warp's (device.h's warp_calls): all() holds if every lane of the tile
// voted yes (so not in a tile of a block's short last warp, as on a GPU); ballot() and
// match_any() in the tile's lane numbers.
struct TileAll : cudalab::emu::warp_calls::Ballot {
  int result(const uint64_t* lanes) const { return Ballot::result(lanes) == mask; }
};
template <class Call>
struct InTileLanes : Call {
  unsigned first_lane;
  unsigned result(const uint64_t* lanes) const { return Call::result(lanes) >> first_lane; }
};
// The group a tile was partitioned from, for the tile's meta_group_rank() and _size(): the block
// (or a parent of a type that does not say), or a larger tile.
template <class Parent>
struct TileParent {
  static unsigned rank() { return cudalab::emu::thread_rank(); }
  static unsigned size() { return cudalab::emu::block_threads(); }
};
template <unsigned Size, class P>
struct TileParent<thread_block_tile<Size, P>> {
  static unsigned rank() { return cudalab::emu::thread_rank() % Size; }
  static unsigned size() { return Size; }
};
// A tile's place among its parent's tiles (meta_group_rank() and _size()): it stays with the tile
// when it becomes a tile of no named parent (`thread_block_tile<16> t = tiled_partition<16>(...)`).
template <unsigned Size>
class TilePlace {
 public:
  unsigned meta_group_rank() const { return rank_; }
  unsigned meta_group_size() const { return size_; }

 protected:
  template <class Parent>
  static TilePlace in() {
    return {TileParent<Parent>::rank() / Size, (TileParent<Parent>::size() + Size - 1) / Size};
  }
  TilePlace(unsigned rank, unsigned size) : rank_(rank), size_(size) {}

 private:
  unsigned rank_, size_;
};
}  // namespace details

// A tile of Size lanes (a power of two up to 32) of one warp.
template <unsigned Size, class Parent>
class thread_block_tile : public thread_group, public details::TilePlace<Size> {
  static_assert(Size > 0 && Size <= 32 && (Size & (Size - 1)) == 0,
                "cudalab emu: tiles of 1, 2, 4, 8, 16 or 32 threads");
  using Place = details::TilePlace<Size>;

 public:
  thread_block_tile() : thread_group(tile_mask(), false), Place(Place::template in<Parent>()) {}
  template <class P>
  thread_block_tile(const thread_block_tile<Size, P>& tile)
      : thread_group(tile_mask(), false), Place(tile) {}
  static unsigned first_lane() { return cudalab::emu::lane_id() / Size * Size; }
  static unsigned tile_mask() {
    return (Size == 32 ? 0xffffffffu : (1u << Size) - 1u) << first_lane();
  }
  unsigned thread_rank() const { return cudalab::emu::lane_id() % Size; }
  static constexpr unsigned long long size() { return Size; }
  static constexpr unsigned long long num_threads() { return Size; }
  // Each wait: the call (device.h's warp_calls), made by on_fibers.
  auto sync_call() const { return cudalab::emu::warp_calls::SyncWarp{mask_}; }
  auto any_call(int p) const { return cudalab::emu::warp_calls::Any{{mask_, p != 0}}; }
  auto all_call(int p) const { return details::TileAll{{mask_, p != 0}}; }
  auto ballot_call(int p) const {
    return details::InTileLanes<cudalab::emu::warp_calls::Ballot>{{mask_, p != 0}, first_lane()};
  }
  auto match_any_call(unsigned long long v) const {
    return details::InTileLanes<cudalab::emu::warp_calls::MatchAny>{{mask_, v}, first_lane()};
  }
  void sync(CUDALAB_PLACE) const { cudalab::emu::warp_calls::on_fibers(sync_call(), file, line); }
  int any(int p, CUDALAB_PLACE) const {
    return cudalab::emu::warp_calls::on_fibers(any_call(p), file, line);
  }
  int all(int p, CUDALAB_PLACE) const {
    return cudalab::emu::warp_calls::on_fibers(all_call(p), file, line);
  }
  unsigned ballot(int p, CUDALAB_PLACE) const {
    return cudalab::emu::warp_calls::on_fibers(ballot_call(p), file, line);
  }
  unsigned match_any(unsigned long long v, CUDALAB_PLACE) const {
    return cudalab::emu::warp_calls::on_fibers(match_any_call(v), file, line);
  }
  // Shuffles of any trivially copyable type: the source lane (shuffle_source's), moved by
  // shuffle().
#define CUDALAB_TILE_SHUFFLE(name, Operand, source)                     \
  template <class T>                                                    \
  T name(T var, Operand operand, CUDALAB_PLACE) const {                 \
    return cudalab::emu::shuffle(mask_, var, source, Size, file, line); \
  }
  CUDALAB_TILE_SHUFFLE(shfl, int, cudalab::emu::shuffle_source::idx(operand, Size))
  CUDALAB_TILE_SHUFFLE(shfl_down, unsigned, cudalab::emu::shuffle_source::down(operand))
  CUDALAB_TILE_SHUFFLE(shfl_up, unsigned, cudalab::emu::shuffle_source::up(operand))
  CUDALAB_TILE_SHUFFLE(shfl_xor, int, cudalab::emu::shuffle_source::xor_(operand))
#undef CUDALAB_TILE_SHUFFLE
};

// A tile of Size threads, several warps (64 to 512): sync, ranks and collectives (reduce, scans).
template <unsigned Size, class Parent>
requires(Size > 32) class thread_block_tile<Size, Parent> : public details::TilePlace<Size> {
  static_assert(Size <= 512 && (Size & (Size - 1)) == 0,
                "cudalab emu: tiles of several warps have 64, 128, 256 or 512 threads");
  using Place = details::TilePlace<Size>;

 public:
  thread_block_tile() : Place(Place::template in<Parent>()) {}
  template <class P>
  thread_block_tile(const thread_block_tile<Size, P>& tile) : Place(tile) {}
  unsigned thread_rank() const { return cudalab::emu::thread_rank() % Size; }
  static constexpr unsigned long long size() { return Size; }
  static constexpr unsigned long long num_threads() { return Size; }
  void sync(CUDALAB_PLACE) const { cudalab::emu::syncthreads(file, line); }
};

template <unsigned Size, class Parent>
inline thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
  return {};
}
// A tile whose size is known at run time (a power of two up to 32).
inline thread_group tiled_partition(const thread_group& parent, unsigned size) {
  if (size == 0 || size > 32 || (size & (size - 1)) != 0)
    cudalab::emu::unsupported("tiled_partition into tiles other than 1, 2, 4, 8, 16 or 32 threads");
  const unsigned lane = cudalab::emu::lane_id();
  const unsigned bits = size == 32 ? 0xffffffffu : (1u << size) - 1u;
  unsigned mask = bits << (lane / size * size);
  if (!parent.size() || parent.get_mask() != 0) mask &= parent.get_mask() ? parent.get_mask() : ~0u;
  return thread_group(mask, false);
}
inline thread_group tiled_partition(const thread_block& parent, unsigned size) {
  return tiled_partition(thread_group(parent), size);
}

// The grid of a cooperative launch (cudaLaunchCooperativeKernel): grid.sync() waits for every
// thread of every block.
class grid_group {
 public:
  void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    cudalab::emu::grid_sync(file, line);
  }
  bool is_valid() const { return cudalab::emu::cooperative_launch(); }
  unsigned long long thread_rank() const {
    return block_rank() * cudalab::emu::block_threads() + cudalab::emu::thread_rank();
  }
  unsigned long long size() const { return num_blocks() * cudalab::emu::block_threads(); }
  unsigned long long num_threads() const { return size(); }
  unsigned long long block_rank() const {
    return blockIdx.x + 1ull * gridDim.x * (blockIdx.y + 1ull * gridDim.y * blockIdx.z);
  }
  unsigned long long num_blocks() const { return 1ull * gridDim.x * gridDim.y * gridDim.z; }
  dim3 group_dim() const { return gridDim; }
  dim3 dim_blocks() const { return group_dim(); }
  dim3 block_index() const { return blockIdx; }
};
inline grid_group this_grid() { return {}; }

template <class Group>
inline void sync(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  g.sync(file, line);
}
template <class Group>
inline unsigned long long thread_rank(const Group& g) {
  return g.thread_rank();
}
template <class Group>
inline unsigned long long group_size(const Group& g) {
  return g.size();
}

// ---- collectives (cooperative_groups/reduce.h and scan.h) ---------------------------------
template <class T = void>
struct plus {
  constexpr T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T = void>
struct less {
  constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T = void>
struct greater {
  constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T = void>
struct bit_and {
  constexpr T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T = void>
struct bit_or {
  constexpr T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T = void>
struct bit_xor {
  constexpr T operator()(const T& a, const T& b) const { return a ^ b; }
};

namespace details {
// A collective of a group of one warp's lanes: the lanes' values in rank order go to f(values, the
// group's size, the caller's rank), as the call of a warp's meeting (device.h's warp_calls).
template <class T, class F>
struct OverRanks {
  static_assert(sizeof(T) <= 8, "cudalab emu: collectives on values of at most 8 bytes");
  unsigned mask;
  uint64_t mine;
  F f;
  OverRanks(unsigned mask, T value, F f)
      : mask(mask), mine(cudalab::emu::piece_of(value, 0)), f(f) {}
  T result(const uint64_t* lanes) const {
    T values[32];
    unsigned n = 0, me = 0;
    cudalab::emu::warp_calls::each_lane(mask, [&](unsigned lane) {
      if (lane == cudalab::emu::lane_id()) me = n;
      cudalab::emu::put_piece(values[n++], 0, lanes[lane]);
    });
    return f(values, n, me);
  }
};
template <class Group, class T, class F>
inline T over_ranks(const Group& g, T value, F f, const char* file, int line) {
  return cudalab::emu::warp_calls::on_fibers(OverRanks<T, F>(g.get_mask(), value, f), file, line);
}
// The same for a tile of several warps, through a block barrier.
template <unsigned Size, class Parent, class T, class F>
requires(Size > 32) inline T
    over_ranks(const thread_block_tile<Size, Parent>& g, T value, F f, const char* file, int line) {
  static_assert(sizeof(T) <= 8, "cudalab emu: collectives on values of at most 8 bytes");
  const uint64_t* ranks =
      cudalab::emu::block_exchange(cudalab::emu::piece_of(value, 0), file, line);
  const unsigned first = g.meta_group_rank() * Size;
  const unsigned n = std::min<unsigned>(Size, cudalab::emu::block_threads() - first);
  T values[Size];
  for (unsigned i = 0; i < n; ++i) cudalab::emu::put_piece(values[i], 0, ranks[first + i]);
  return f(values, n, g.thread_rank());
}

// What each collective computes from the values in rank order.
template <class T, class Op>
auto reduction(Op op) {
  return [op](const T* v, unsigned n, unsigned) {
    T r = v[0];
    for (unsigned i = 1; i < n; ++i) r = op(r, v[i]);
    return r;
  };
}
template <class T, class Op>
auto inclusive_scan_of(Op op) {
  return [op](const T* v, unsigned, unsigned me) {
    T r = v[0];
    for (unsigned i = 1; i <= me; ++i) r = op(r, v[i]);
    return r;
  };
}
template <class T, class Op>
auto exclusive_scan_of(Op op) {
  return [op](const T* v, unsigned, unsigned me) {
    T r{};
    for (unsigned i = 0; i < me; ++i) r = i == 0 ? v[0] : op(r, v[i]);
    return r;
  };
}
}  // namespace details

// Every lane gets op over the group's values (a tile or a coalesced group); the scans, op over
// the values of the ranks up to its own (inclusive) or before it (exclusive).
template <class Group, class T, class Op>
inline T reduce(const Group& g, T value, Op op, CUDALAB_PLACE) {
  return details::over_ranks(g, value, details::reduction<T>(op), file, line);
}
template <class Group, class T, class Op = plus<T>>
inline T inclusive_scan(const Group& g, T value, Op op = {}, CUDALAB_PLACE) {
  return details::over_ranks(g, value, details::inclusive_scan_of<T>(op), file, line);
}
template <class Group, class T, class Op = plus<T>>
inline T exclusive_scan(const Group& g, T value, Op op = {}, CUDALAB_PLACE) {
  return details::over_ranks(g, value, details::exclusive_scan_of<T>(op), file, line);
}

#undef CUDALAB_PLACE

}  // namespace cooperative_groups
