// Kernels whose threads run as loops between their barriers: the translator
// (common/emu/thread_loops.py says which kernels, and how) gives such a kernel a loop form that
// runs once per block, in which each stretch of the kernel between two barriers is a loop over the
// block's threads (BlockThreads::run) and each barrier a call that does its bookkeeping
// (BlockThreads::barrier): there is nothing to wait for, as every thread has run the stretch
// before it. A variable that lives across barriers is kept per thread (PerThread) in the block's
// memory (block_memory: chunks the worker keeps, reused when the block ends).
//
// In checked code every access of the form is checked as the kernel's would be: the loops set each
// thread's index and number, and settle what the race checks of the thread before it left waiting
// (as the row loop of fibers does, launch.h), with one call of the runtime per thread
// (next_loop_thread), which gives the thread's index; a stretch's second parameter,
// CUDALAB_LOOPS_INDEX, is that index, named threadIdx (checked code's threadIdx is const: a
// compiler could keep the first thread's for the whole loop), so that its reads need no check.
//
// Limitations: a kernel with another wait (votes, __syncwarp(), cooperative groups, a shuffle
// inside a thread's own branch, a function that waits: thread_loops.py's list) runs on fibers.
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>

#include "cudalab/emu/launch.h"

namespace cudalab::emu {

// Internal (scheduler.cpp): memory for the running block that does not fit in what is left of the
// current chunk (block_memory takes the rest).
void* more_block_memory(size_t bytes);
// Internal: what is left of the chunk the running block's memory comes from, [next, end) (set by
// scheduler.cpp's BlockMemory): a piece that fits is a bump of `next`, without a call. Every
// piece's bytes are a multiple of kBlockMemoryGrain.
struct BlockChunk {
  std::byte* next = nullptr;
  std::byte* end = nullptr;
};
inline constinit thread_local BlockChunk block_chunk{};
inline constexpr size_t kBlockMemoryGrain = 64;
// Memory for the running block, given back when it ends (PerThread's, BlockThreads' and
// WarpShuffles'), aligned as operator new aligns.
inline void* block_memory(size_t bytes) {
  bytes = (bytes + kBlockMemoryGrain - 1) / kBlockMemoryGrain * kBlockMemoryGrain;
  BlockChunk& chunk = block_chunk;
  if (static_cast<size_t>(chunk.end - chunk.next) < bytes) return more_block_memory(bytes);
  void* piece = chunk.next;
  chunk.next += bytes;
  return piece;
}

// Internal (scheduler.cpp): a loop form's barrier, which every thread that has not returned
// reaches: it opens (and is counted), unless some threads returned (`returned`, per thread; nullptr
// where none did) and others wait, which stops the block with barrier divergence, as on fibers.
void loops_barrier(const char* file, int line, const bool* returned);
// Internal (scheduler.cpp): thread `thread` of a loop form waits at a warp-level call at file:line,
// but the lanes `missing` of its warp, named in its mask, returned: warp divergence, as on fibers.
[[noreturn]] void loops_warp_divergence(unsigned thread, uint32_t missing, const char* file,
                                        int line);

// Internal (scheduler.cpp), for checked code: the next thread of a row of a loop form, whose index
// it gives (what the last one's race checks left waiting is done first); the row's y, z and first
// thread's number; and the end of a row (its last thread's checks are settled).
uint3 next_loop_thread(unsigned x);
void next_loop_row(unsigned y, unsigned z, unsigned first_thread);
void end_loop_row();
// Internal (scheduler.cpp), for checked code: whether the running block's threads run last first
// (a launch run again to judge a race by its result: replay.h).
bool block_runs_reversed();
// Internal (proven_stretches.cpp), for checked code: whether the accesses of a stretch (the
// translator proves they are all it touches: stretch_accesses.py) are fine for every thread that
// makes them and every value of the stretch's loop counters, so that the stretch runs without a
// check per access (the barrier or the kernel's end after it leaves no later access to race with):
// loads of `__shared__` arrays read words written in this block and not since the last barrier
// (or the thread's own element, which it stores); stores to them, which every thread makes (or
// every thread below an x bound), reach words no other thread touched since the barrier and no two
// threads the same (they are then recorded as the checks record them); loads of global memory lie
// in their array and read words written before the launch; stores to it (where nothing of the
// block touched memory since its start or the last barrier: the translator's part) reach words
// no block wrote in the launch, each thread its own; loads of `__constant__` arrays lie in them
// (device code cannot write them). Each subscript is constant + x *
// threadIdx.x + y * threadIdx.y + z * threadIdx.z + the sum of counters[i] * (loop i's counter),
// which must lie in [0, extent) (an index past its dimension keeps the checks, which then say
// where it leads); a global access's one subscript, in [0, 2^31). `returned`: the threads that
// returned from the kernel (BlockThreads::returned). Where the counters are on, a stretch whose
// accesses every thread makes (none `sometimes`) has them counted here, request by request
// (count_proven_requests).
inline constexpr unsigned kProvenLoops = 4;
struct ProvenLoop {
  long long first, end, step;  // its counter runs over first, first + step, ... below end
};
struct ProvenSubscript {
  long long extent, stride;  // the dimension's extent (a global access's: 0), an index's bytes
  long long constant, x, y, z;
  long long counters[kProvenLoops];
};
// The extent of the dynamic `extern __shared__` array (its declaration has no bound): as many
// elements as the launch's dynamic shared bytes hold.
inline constexpr long long kDynamicExtent = -1;
// The extent of dimension `level` of array type T, as a ProvenSubscript gives it.
template <class T, unsigned level>
inline constexpr long long extent_of = level == 0 && std::is_unbounded_array_v<T>
                                           ? kDynamicExtent
                                           : static_cast<long long>(std::extent_v<T, level>);
inline constexpr long long kEveryThread = 1LL << 62;
// An x bound the launch cannot give (the access keeps its stretch checked).
inline constexpr long long kNoBound = -(1LL << 62);
// The x bound of a guard of the thread's global index, `offset + threadIdx.x < limit` (both
// signed): limit - offset, where the kernel's index cannot wrap (offset plus the block's last x
// fits an int, as the kernel's unsigned arithmetic then does); else kNoBound.
inline long long index_bound(long long limit, long long offset) {
  if (offset < 0 || offset + ::blockDim.x - 1 > 0x7fffffffLL) return kNoBound;
  return limit - offset;
}
// Where an access's array lives: global memory (through a pointer parameter), a `__shared__`
// array of the kernel, a `__constant__` array.
enum class Space : unsigned char { global, shared, constant };
struct StretchAccess {
  const void* array;
  Space space;
  bool store;
  int line;
  long long x_end;     // the threads with threadIdx.x < x_end make it (kEveryThread: all;
                       // kNoBound: the stretch stays checked)
  unsigned enclosing;  // bit i: the access is inside loop i (it is made at each of its values)
  bool sometimes;      // a thread may skip it (a load under `?:`, `&&`, `||` or another `if`)
  // Only the threads whose threadIdx.x is a multiple of x_every make it (a warp's first lane,
  // `if (threadIdx.x % 32 == 0)`: 32), and the subscripts' x terms count those threads
  // (threadIdx.x / x_every); 1: every thread.
  unsigned x_every;
  std::initializer_list<ProvenSubscript> subscripts;  // from the outermost
};
// `barrier_follows`: the next barrier or the kernel's end comes after the stretch; else a warp's
// meeting (a shuffle) does, and only loads of global and constant memory can be proven.
bool stretch_fine(const char* file, std::initializer_list<ProvenLoop> loops,
                  std::initializer_list<StretchAccess> accesses, const bool* returned,
                  bool barrier_follows);

// What unchecked code's stretches are given besides the thread's number: nothing (they read the
// worker's threadIdx, which the loops write).
struct WorkerIndex {};
#ifdef CUDALAB_EMU_CHECKED
#define CUDALAB_LOOPS_INDEX const ::uint3 threadIdx
#else
#define CUDALAB_LOOPS_INDEX ::cudalab::emu::WorkerIndex
#endif

// Each thread's value of one variable of a loop form, for the running block.
template <class T>
class PerThread {
 public:
  PerThread() : values_(static_cast<T*>(block_memory(sizeof(T) * block_threads()))) {}
  __attribute__((no_sanitize("thread"))) T& operator[](unsigned thread) { return values_[thread]; }
  __attribute__((no_sanitize("thread"))) const T* values() const { return values_; }

 private:
  T* values_;
};

// A stretch's name for a thread's value of a kept variable: in unchecked code, the value where
// PerThread keeps it; in checked code, a copy of a scalar, written back when the stretch ends
// (the stretch's uses of it are then a register's, which need no check: a tiled product's
// running sum, kept across its barriers, would otherwise be checked at each addition), and the
// kept value itself for an array or a class. The copy is made and written back without the checks'
// hooks (the kept value is the emu's memory, never the program's).
#ifdef CUDALAB_EMU_CHECKED
template <class T, bool kScalar = std::is_scalar_v<T>>
class KeptCopy {
 public:
  __attribute__((no_sanitize("thread"))) explicit KeptCopy(T& kept) : kept_(kept), value_(kept) {}
  KeptCopy(const KeptCopy&) = delete;
  __attribute__((no_sanitize("thread"))) ~KeptCopy() { kept_ = value_; }
  T& get() { return value_; }

 private:
  T& kept_;
  T value_;
};
template <class T>
class KeptCopy<T, false> {
 public:
  explicit KeptCopy(T& kept) : kept_(kept) {}
  T& get() { return kept_; }

 private:
  T& kept_;
};
#define CUDALAB_LOOPS_RESTORE(name, kept)                                                        \
  ::cudalab::emu::KeptCopy<::std::remove_reference_t<decltype(kept)>> cudalab_copy_##name{kept}; \
  auto& name = cudalab_copy_##name.get();
// A proven stretch's copy, which has no checks, names a copy of a scalar too (the compiler keeps a
// running sum in a register, where it cannot tell that the kept value is not among the tiles the
// sum reads), made and written back without checks (a function with the checks is not inlined
// into one without).
template <class T, bool kScalar = std::is_scalar_v<T>>
class ProvenCopy {
 public:
  __attribute__((no_sanitize("thread"))) explicit ProvenCopy(T& kept) : kept_(kept), value_(kept) {}
  ProvenCopy(const ProvenCopy&) = delete;
  __attribute__((no_sanitize("thread"))) ~ProvenCopy() { kept_ = value_; }
  __attribute__((no_sanitize("thread"))) T& get() { return value_; }

 private:
  T& kept_;
  T value_;
};
template <class T>
class ProvenCopy<T, false> {
 public:
  __attribute__((no_sanitize("thread"))) explicit ProvenCopy(T& kept) : kept_(kept) {}
  __attribute__((no_sanitize("thread"))) T& get() { return kept_; }

 private:
  T& kept_;
};
#define CUDALAB_LOOPS_REFER(name, kept)                                                            \
  ::cudalab::emu::ProvenCopy<::std::remove_reference_t<decltype(kept)>> cudalab_copy_##name{kept}; \
  auto& name = cudalab_copy_##name.get();
#else
// (unchecked code names the kept value itself)
#define CUDALAB_LOOPS_RESTORE(name, kept) auto& name = kept;
#endif

// Stores a thread's value of a variable where PerThread keeps it (an array as its elements).
// Unchecked: both are the emu's (the stretch's local variable, and the block's storage for it), and
// the checks' hooks for a copy's two ranges cost more than the stretch that computes the value.
template <class T, class V>
__attribute__((no_sanitize("thread"))) void keep(T& kept, V& value) {
  if constexpr (std::is_trivially_copyable_v<T>)
    std::memcpy(static_cast<void*>(&kept), &value, sizeof(T));
  else
    ::new (static_cast<void*>(&kept)) T(std::move(value));
}

// The running block's threads, as a loop form runs them.
class BlockThreads {
 public:
  BlockThreads() : returned_(static_cast<bool*>(block_memory(block_threads()))) {
    std::memset(returned_, 0, block_threads());
  }
  // Runs `stretch(thread)` for each thread that has not returned from the kernel, in order
  // (threadIdx.x fastest), with threadIdx and the running thread's number set (kSetsIndex: a
  // stretch that reads neither, as the translator knows, runs without, so that the compiler may
  // vectorize its loop); a stretch returns true where its thread returned from the kernel. In a
  // launch run again to judge a race (checked code), the last thread runs first, as on fibers,
  // unless the stretch needs the order (kInOrder: it reads a later lane's kept value as a down
  // shuffle's, WarpShuffles::down_result_in).
  template <bool kSetsIndex = true, bool kInOrder = false, class Stretch>
  void run(Stretch stretch) {
    const uint3 b = ::blockDim;
#ifdef CUDALAB_EMU_CHECKED
    run_checked(
        b, [](unsigned, uint3) { return true; }, stretch, !kInOrder && block_runs_reversed());
#else
    if constexpr (!kSetsIndex) {
      const unsigned n = b.x * b.y * b.z;
      if (any_returned_) {
        for (unsigned t = 0; t < n; ++t)
          if (!returned_[t] && stretch(t, WorkerIndex{})) returned_[t] = true;
        return;
      }
      for (unsigned t = 0; t < n; ++t)
        if (stretch(t, WorkerIndex{})) [[unlikely]]
          returned_[t] = any_returned_ = true;
      return;
    }
    unsigned t = 0;
    for (unsigned z = 0; z < b.z; ++z)
      for (unsigned y = 0; y < b.y; ++y) {
        running_thread_base = t;
        ::threadIdx.y = y;
        ::threadIdx.z = z;
        if (any_returned_) {
          for (unsigned x = 0; x < b.x; ++x, ++t) {
            if (returned_[t]) continue;
            ::threadIdx.x = x;
            if (stretch(t, WorkerIndex{})) returned_[t] = true;
          }
          continue;
        }
        for (unsigned x = 0; x < b.x; ++x, ++t) {  // (no flag to read: most kernels' case)
          ::threadIdx.x = x;
          if (stretch(t, WorkerIndex{})) [[unlikely]]
            returned_[t] = any_returned_ = true;
        }
      }
#endif
  }
  // Runs `stretch` as run() does, for the threads of each row from its first up to the first for
  // which `holds(thread)` is false (the translator gives it a stretch that is one
  // `if (threadIdx.x < limit) ...` with the block's limit, whose condition holds for a row's first
  // threads only): the threads after it, for which the stretch does nothing, are not visited.
  template <class Holds, class Stretch>
  void run_while(Holds holds, Stretch stretch) {
    const uint3 b = ::blockDim;
#ifdef CUDALAB_EMU_CHECKED
    run_checked(b, holds, stretch, block_runs_reversed());
#else
    unsigned row = 0;
    bool any = any_returned_;
    for (unsigned z = 0; z < b.z; ++z)
      for (unsigned y = 0; y < b.y; ++y, row += b.x) {
        begin_row(y, z, row);
        for (unsigned x = 0; x < b.x; ++x) {
          const unsigned t = row + x;
          const auto index = begin_thread(x);
          if (!holds(t, index)) break;
          if (any && returned_[t]) continue;
          if (stretch(t, index)) [[unlikely]]
            returned_[t] = any = true;
        }
        end_row();
      }
    any_returned_ = any;
#endif
  }
#ifdef CUDALAB_EMU_CHECKED
  // Runs a proven stretch's copy (thread_loops.py) as run() runs a stretch, but without the
  // runtime's step between threads (the copy makes no checks, so none waits to be settled).
  // Uninstrumented, as the copy is, so that the compiler inlines the copy into the loop.
  template <class Stretch>
  __attribute__((no_sanitize("thread"))) void run_proven(Stretch stretch) {
    const uint3 b = ::blockDim;
    unsigned t = 0;
    for (unsigned z = 0; z < b.z; ++z)
      for (unsigned y = 0; y < b.y; ++y)
        for (unsigned x = 0; x < b.x; ++x, ++t) {
          if (any_returned_ && returned_[t]) continue;
          if (stretch(t, uint3{x, y, z})) [[unlikely]]
            returned_[t] = any_returned_ = true;
        }
  }
  // The same for a stretch that run_while() would run.
  template <class Holds, class Stretch>
  __attribute__((no_sanitize("thread"))) void run_proven_while(Holds holds, Stretch stretch) {
    const uint3 b = ::blockDim;
    for (unsigned z = 0, row = 0; z < b.z; ++z)
      for (unsigned y = 0; y < b.y; ++y, row += b.x)
        for (unsigned x = 0; x < b.x; ++x) {
          const unsigned t = row + x;
          const uint3 index{x, y, z};
          if (!holds(t, index)) break;
          if (any_returned_ && returned_[t]) continue;
          if (stretch(t, index)) [[unlikely]]
            returned_[t] = any_returned_ = true;
        }
  }
#endif
  // The flags of the threads that returned from the kernel, or nullptr where none did.
  const bool* returned() const { return any_returned_ ? returned_ : nullptr; }
  void barrier(const char* file, int line) {
    loops_barrier(file, line, any_returned_ ? returned_ : nullptr);
  }

 private:
#ifdef CUDALAB_EMU_CHECKED
  // Checked code's run() and run_while(): in each row, the threads for which `holds(thread,
  // index)` is true before the first for which it is false; in order, or (`reversed`) the rows
  // and each row's threads last first.
  template <class Holds, class Stretch>
  void run_checked(uint3 b, Holds holds, Stretch stretch, bool reversed) {
    const unsigned rows = b.y * b.z;
    bool any = any_returned_;
    for (unsigned i = 0; i < rows; ++i) {
      const unsigned r = reversed ? rows - 1 - i : i;
      const unsigned y = r % b.y, z = r / b.y, row = r * b.x;
      begin_row(y, z, row);
      unsigned end = 0;
      while (end < b.x && holds(row + end, uint3{end, y, z})) ++end;
      for (unsigned k = 0; k < end; ++k) {
        const unsigned x = reversed ? end - 1 - k : k;
        const unsigned t = row + x;
        const auto index = begin_thread(x);
        if (any && returned_[t]) continue;
        if (stretch(t, index)) [[unlikely]]
          returned_[t] = any = true;
      }
      end_row();
    }
    any_returned_ = any;
  }
#endif
  // A row's and a thread's start, and a row's end: in checked code, the runtime's (which settles
  // the race checks the thread before left waiting) and the index for the stretch; in unchecked
  // code, stores into the worker's threadIdx.
#ifdef CUDALAB_EMU_CHECKED
  static void begin_row(unsigned y, unsigned z, unsigned first) { next_loop_row(y, z, first); }
  static uint3 begin_thread(unsigned x) { return next_loop_thread(x); }
  static void end_row() { end_loop_row(); }
#else
  static void begin_row(unsigned y, unsigned z, unsigned first) {
    running_thread_base = first;
    ::threadIdx.y = y;
    ::threadIdx.z = z;
  }
  static WorkerIndex begin_thread(unsigned x) {
    ::threadIdx.x = x;
    return {};
  }
  static void end_row() {}
#endif
  bool* returned_;             // per thread: it returned from the kernel
  bool any_returned_ = false;  // some thread did
};

// What a loop form's warp shuffles publish (thread_loops.py): a stretch publishes each thread's
// value and the thread it reads (`down`, `up`, `xor_`, `idx`: as __shfl_down_sync... choose it,
// with the same check of the width), and the next stretch reads it (`result`). A source outside
// the thread's segment of the warp, or past the block's last thread, gives the thread its own.
// The values move in the emu's memory: their stores and loads carry no checks' hooks.
class WarpShuffles {
 public:
  WarpShuffles()
      : values_(static_cast<std::byte*>(block_memory(kLargest * block_threads()))),
        sources_(static_cast<unsigned*>(block_memory(sizeof(unsigned) * block_threads()))),
        masks_(static_cast<unsigned*>(block_memory(sizeof(unsigned) * block_threads()))),
        threads_(static_cast<unsigned>(block_threads())) {}
  template <class T>
  void idx(unsigned t, const char* file, int line, unsigned mask, const T& v, int src,
           int width = 32) {
    publish(t, mask, v, (lane(t) & -width) + (src & (width - 1)), width, file, line);
  }
  template <class T>
  void down(unsigned t, const char* file, int line, unsigned mask, const T& v, unsigned delta,
            int width = 32) {
    publish(t, mask, v, lane(t) + static_cast<int>(delta), width, file, line);
  }
  template <class T>
  void up(unsigned t, const char* file, int line, unsigned mask, const T& v, unsigned delta,
          int width = 32) {
    publish(t, mask, v, lane(t) - static_cast<int>(delta), width, file, line);
  }
  template <class T>
  void xor_(unsigned t, const char* file, int line, unsigned mask, const T& v, int lane_mask,
            int width = 32) {
    publish(t, mask, v, lane(t) ^ lane_mask, width, file, line);
  }
  // After a stretch that published: where threads returned, each that published must find the
  // lanes of its mask there (else warp divergence, as on fibers: the first such thread is named).
  void meet(const BlockThreads& threads, const char* file, int line) const {
    meet_with(threads, file, line, [this](unsigned t) { return masks_[t]; });
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) T result(unsigned t) const {
    return reinterpret_cast<const T*>(values_)[sources_[t]];
  }

  // A shuffle whose mask, lane or delta and width are the block's values: they are given once
  // (X_of_block, before the stretch), each thread puts its value (put), and reads the result from
  // the lane the rule gives it (X_result), with the same segments and checks as above.
  void idx_of_block(const char* file, int line, unsigned mask, int src, int width = 32) {
    rule(file, line, mask, src, width);
  }
  void down_of_block(const char* file, int line, unsigned mask, unsigned delta, int width = 32) {
    rule(file, line, mask, static_cast<int>(delta), width);
  }
  void up_of_block(const char* file, int line, unsigned mask, unsigned delta, int width = 32) {
    rule(file, line, mask, static_cast<int>(delta), width);
  }
  void xor_of_block(const char* file, int line, unsigned mask, int lane_mask, int width = 32) {
    rule(file, line, mask, lane_mask, width);
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) void put(unsigned t, const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kLargest,
                  "shuffles move trivially copyable values of up to 16 bytes");
    // (each call's values are of one type; typed stores leave the loop's other values in registers)
    reinterpret_cast<T*>(values_)[t] = v;
  }
  void meet_of_block(const BlockThreads& threads, const char* file, int line) const {
    meet_with(threads, file, line, [this](unsigned) { return block_mask_; });
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) T idx_result(unsigned t) const {
    return from<T>(t, (lane(t) & -width_) + (operand_ & (width_ - 1)));
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) T down_result(unsigned t) const {
    return from<T>(t, lane(t) + operand_);
  }
  // A down shuffle of a variable kept per thread: the value of the source lane's copy, read where
  // it is kept, with no stretch that puts the values first. The stretch runs the threads in
  // ascending order and each changes only its own copy, so a thread's source (a later lane, or
  // itself) has not yet run the statement that holds the shuffle.
  template <class T>
  __attribute__((no_sanitize("thread"))) T down_result_in(const PerThread<T>& kept,
                                                          unsigned t) const {
    return from<T>(kept.values(), t, lane(t) + operand_);
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) T up_result(unsigned t) const {
    return from<T>(t, lane(t) - operand_);
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) T xor_result(unsigned t) const {
    return from<T>(t, lane(t) ^ operand_);
  }

 private:
  static constexpr size_t kLargest = 16;  // bytes of a value
  // Thread t's lane: warps are runs of 32 threads of the block, in the order BlockThreads runs them
  // (shuffle_source's lane(), without reading threadIdx and blockDim).
  __attribute__((no_sanitize("thread"))) static int lane(unsigned t) {
    return static_cast<int>(t & 31);
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) void publish(unsigned t, unsigned mask, const T& v,
                                                      int src_lane, int width, const char* file,
                                                      int line) {
    masks_[t] = mask;
    check_shuffle_width(width, file, line);
    put(t, v);
    const unsigned source = t - static_cast<unsigned>(lane(t)) + static_cast<unsigned>(src_lane);
    sources_[t] =
        outside_segment(src_lane, lane(t) & -width, width) || source >= threads_ ? t : source;
  }
  template <class MaskOf>
  void meet_with(const BlockThreads& threads, const char* file, int line, MaskOf mask_of) const {
    const bool* returned = threads.returned();
    if (returned == nullptr) return;
    for (unsigned t = 0; t < threads_; ++t) {
      if (returned[t]) continue;
      const unsigned first = t - static_cast<unsigned>(lane(t));
      uint32_t missing = 0;
      for (unsigned l = 0; l < 32 && first + l < threads_; ++l)
        if ((mask_of(t) >> l & 1u) && returned[first + l]) missing |= 1u << l;
      if (missing != 0) loops_warp_divergence(t, missing, file, line);
    }
  }
  void rule(const char* file, int line, unsigned mask, int operand, int width) {
    check_shuffle_width(width, file, line);
    block_mask_ = mask;
    operand_ = operand;
    width_ = width;
  }
  // Thread t's value from lane `src_lane` of its warp, or its own outside its segment or block.
  // (Without a branch: which lanes read their own value follows a pattern a branch predictor
  // misses at each warp's end.)
  template <class T>
  __attribute__((no_sanitize("thread"))) T from(unsigned t, int src_lane) const {
    return from<T>(reinterpret_cast<const T*>(values_), t, src_lane);
  }
  template <class T>
  __attribute__((no_sanitize("thread"))) T from(const T* values, unsigned t, int src_lane) const {
    const int l = lane(t);
    const unsigned source = t - static_cast<unsigned>(l) + static_cast<unsigned>(src_lane);
    const unsigned from_segment = static_cast<unsigned>(src_lane - (l & -width_));
    const bool own = (from_segment >= static_cast<unsigned>(width_)) | (source >= threads_);
    return values[own ? t : source];
  }
  std::byte* values_;
  unsigned* sources_;
  unsigned* masks_;  // each thread's mask at the last call
  unsigned threads_;
  unsigned block_mask_ = 0;  // the last rule's (X_of_block)
  int operand_ = 0, width_ = 32;
};

}  // namespace cudalab::emu
