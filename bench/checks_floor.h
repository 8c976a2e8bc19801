// The least a check per access costs: vector add and the tiled matmul with the checks that no
// design looking at each access can skip, written inline where each access is, as a compiler pass
// would put them. The foundation benchmark (bench_foundation.cu) times them beside the emu's
// unchecked and checked kernels, to say how low checks that look at every access could go on this
// machine.
//
// Algorithm: the blocks run on as many threads as emu has workers, each thread a contiguous share
// of the blocks; a block's threads run one after another, and between two barriers each thread
// runs its stretch before the next thread starts, as emu runs them. Before each global access, the
// check finds the array that holds the address among the kernel's arrays (out of bounds, a freed
// or a host pointer otherwise), reads the word's writer from a shadow of one writer per word
// (never written; written by another block of this launch, a race), and a store writes its block's
// stamp there. Before each shared access, the check bounds the index by the tile's size and reads
// the word's writer from the block's shadow of one (barrier interval, thread) per word: a load of a
// word nobody wrote, or one another thread wrote since the last barrier (a race), stops; a store
// over another thread's store since the last barrier stops; a store writes its own. That is less
// than emu checks (no race of a load with a later store, no source lines of stores, no time
// limit): a floor, not a design. Any violation stops the run, as emu would stop the kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace checks_floor {

// Where a real checker would word its message; the floor never gets here on correct code.
[[noreturn, gnu::noinline, gnu::cold]] inline void violation(const void* address, bool store) {
  std::fprintf(stderr, "checks_floor: %s of %p broke a rule\n", store ? "store" : "load", address);
  std::abort();
}

// Runs block(b) for b in [0, blocks) on `workers` threads, each a contiguous share.
template <class Block>
void run_blocks(int blocks, int workers, Block block) {
  const int share = (blocks + workers - 1) / workers;
  const auto run_share = [&](int first) {
    for (int b = first; b < std::min(first + share, blocks); ++b) block(b);
  };
  std::vector<std::thread> others;
  for (int first = share; first < blocks; first += share) others.emplace_back(run_share, first);
  run_share(0);
  for (std::thread& t : others) t.join();
}

// A kernel's global arrays of floats, each with its shadow of one writer per 4-byte word (0:
// never written; kHost: copied from the host; otherwise the stamp of the block that stored it).
class GlobalArrays {
 public:
  static constexpr uint32_t kHost = 1;

  // An input (written by the host) or an output (never written) of n floats.
  float* add(const std::vector<float>& values) { return add(values, kHost); }
  float* add(size_t n) { return add(std::vector<float>(n), 0); }
  // The stamp of a launch of `blocks` blocks: its blocks' stamps are launch_stamp + block.
  uint32_t launch(int blocks) {
    const uint32_t launch_stamp = next_stamp_;
    next_stamp_ += blocks;
    return launch_stamp;
  }

  [[gnu::always_inline]] void load(const float* p, uint32_t launch_stamp, uint32_t stamp) const {
    const uint32_t w = *writer_of(p, false);
    if (w == 0 || (w >= launch_stamp && w != stamp)) violation(p, false);
  }
  [[gnu::always_inline]] void store(float* p, uint32_t launch_stamp, uint32_t stamp) {
    uint32_t* w = writer_of(p, true);
    if (*w >= launch_stamp && *w != stamp) violation(p, true);
    *w = stamp;
  }

 private:
  struct Array {
    uintptr_t base = 0;
    size_t bytes = 0;
    uint32_t* writers = nullptr;
  };
  static constexpr int kMaxArrays = 3;

  float* add(const std::vector<float>& values, uint32_t writer) {
    if (count_ == kMaxArrays) std::abort();
    data_[count_] = values;
    shadows_[count_].assign(values.size(), writer);
    arrays_[count_] = {reinterpret_cast<uintptr_t>(data_[count_].data()),
                       values.size() * sizeof(float), shadows_[count_].data()};
    return data_[count_++].data();
  }
  [[gnu::always_inline]] uint32_t* writer_of(const void* p, bool store) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    for (int i = 0; i < count_; ++i)
      if (a - arrays_[i].base < arrays_[i].bytes)
        return arrays_[i].writers + (a - arrays_[i].base) / 4;
    violation(p, store);
  }

  std::vector<float> data_[kMaxArrays];
  std::vector<uint32_t> shadows_[kMaxArrays];
  Array arrays_[kMaxArrays];
  int count_ = 0;
  uint32_t next_stamp_ = kHost + 1;
};

// A block's __shared__ array of `Words` floats, with its shadow of who wrote each word since the
// block began: (barrier interval << 10) | (thread + 1), 0 for nobody.
template <int Words>
class SharedArray {
 public:
  void begin_block() {
    for (uint32_t& w : writers_) w = 0;
  }
  [[gnu::always_inline]] float load(int index, uint32_t me) const {
    const uint32_t w = writers_[bounded(index, false)];
    if (w == 0 || ((w >> 10) == (me >> 10) && w != me)) violation(values_ + index, false);
    return values_[index];
  }
  [[gnu::always_inline]] void store(int index, float value, uint32_t me) {
    uint32_t& w = writers_[bounded(index, true)];
    if (w != 0 && (w >> 10) == (me >> 10) && w != me) violation(values_ + index, true);
    w = me;
    values_[index] = value;
  }
  // Who thread `thread` (below 1023) is in barrier interval `interval`, as the shadow says it.
  static uint32_t writer(uint32_t interval, int thread) { return interval << 10 | (thread + 1); }

 private:
  [[gnu::always_inline]] int bounded(int index, bool store) const {
    if (static_cast<unsigned>(index) >= Words) violation(values_ + index, store);
    return index;
  }
  float values_[Words];
  uint32_t writers_[Words];
};

// C[i] = A[i] + B[i] for i < n, in blocks of `block_size` threads.
class VectorAdd {
 public:
  VectorAdd(const std::vector<float>& A, const std::vector<float>& B, int n)
      : A_(arrays_.add({A.begin(), A.begin() + n})),
        B_(arrays_.add({B.begin(), B.begin() + n})),
        C_(arrays_.add(n)),
        n_(n) {}

  void launch(int block_size, int workers) {
    const int blocks = (n_ + block_size - 1) / block_size;
    const uint32_t launch_stamp = arrays_.launch(blocks);
    run_blocks(blocks, workers, [&](int blockIdx) {
      const uint32_t stamp = launch_stamp + blockIdx;
      for (int threadIdx = 0; threadIdx < block_size; ++threadIdx) {
        const int i = blockIdx * block_size + threadIdx;
        if (i < n_) {
          arrays_.load(A_ + i, launch_stamp, stamp);
          arrays_.load(B_ + i, launch_stamp, stamp);
          arrays_.store(C_ + i, launch_stamp, stamp);
          C_[i] = A_[i] + B_[i];
        }
      }
    });
  }
  std::vector<float> C() const { return {C_, C_ + n_}; }

 private:
  GlobalArrays arrays_;
  const float *A_, *B_;
  float* C_;
  int n_;
};

// P = M N for Width x Width matrices (Width a multiple of TILE_WIDTH), one TILE_WIDTH^2 block per
// tile of P, its tiles of M and N staged in shared memory per phase (textbook_kernels.cuh's
// tiledMatMul).
template <int TILE_WIDTH>
class TiledMatMul {
 public:
  TiledMatMul(const std::vector<float>& M, const std::vector<float>& N, int Width)
      : M_(arrays_.add(M)), N_(arrays_.add(N)), P_(arrays_.add(M.size())), Width_(Width) {}

  void launch(int workers) {
    const int tiles = Width_ / TILE_WIDTH;
    const uint32_t launch_stamp = arrays_.launch(tiles * tiles);
    run_blocks(tiles * tiles, workers, [&](int block) {
      run_block(block % tiles, block / tiles, launch_stamp, launch_stamp + block);
    });
  }
  std::vector<float> P() const { return {P_, P_ + Width_ * Width_}; }

 private:
  static constexpr int kThreads = TILE_WIDTH * TILE_WIDTH;
  using Tile = SharedArray<kThreads>;

  void run_block(int bx, int by, uint32_t launch_stamp, uint32_t stamp) {
    thread_local Tile Mds, Nds;  // (a worker's, reused by its blocks)
    Mds.begin_block();
    Nds.begin_block();
    float Pvalue[kThreads] = {};  // each thread's, kept across barriers
    uint32_t interval = 0;
    for (int ph = 0; ph < Width_ / TILE_WIDTH; ++ph) {
      ++interval;
      for (int ty = 0, t = 0; ty < TILE_WIDTH; ++ty)
        for (int tx = 0; tx < TILE_WIDTH; ++tx, ++t) {
          const int Row = by * TILE_WIDTH + ty, Col = bx * TILE_WIDTH + tx;
          const float* m = M_ + Row * Width_ + ph * TILE_WIDTH + tx;
          const float* n = N_ + (ph * TILE_WIDTH + ty) * Width_ + Col;
          arrays_.load(m, launch_stamp, stamp);
          arrays_.load(n, launch_stamp, stamp);
          Mds.store(ty * TILE_WIDTH + tx, *m, Tile::writer(interval, t));
          Nds.store(ty * TILE_WIDTH + tx, *n, Tile::writer(interval, t));
        }
      ++interval;  // __syncthreads(): the whole tile is loaded
      for (int ty = 0, t = 0; ty < TILE_WIDTH; ++ty)
        for (int tx = 0; tx < TILE_WIDTH; ++tx, ++t) {
          const uint32_t me = Tile::writer(interval, t);
          for (int k = 0; k < TILE_WIDTH; ++k)
            Pvalue[t] += Mds.load(ty * TILE_WIDTH + k, me) * Nds.load(k * TILE_WIDTH + tx, me);
        }
      ++interval;  // __syncthreads(): everyone is done with the tile
    }
    for (int ty = 0, t = 0; ty < TILE_WIDTH; ++ty)
      for (int tx = 0; tx < TILE_WIDTH; ++tx, ++t) {
        float* p = P_ + (by * TILE_WIDTH + ty) * Width_ + bx * TILE_WIDTH + tx;
        arrays_.store(p, launch_stamp, stamp);
        *p = Pvalue[t];
      }
  }

  GlobalArrays arrays_;
  const float *M_, *N_;
  float* P_;
  int Width_;
};

}  // namespace checks_floor
