// CUB on both backends with the same expectations: its block and warp primitives in kernels, its
// device-wide algorithms on the stream. On emu, CUB is Debian's CUB 1.17 with the emu's PTX layer
// and device-wide algorithms (common/emu/cub); on cuda, the toolkit's. Every expectation is
// computed on the host from inputs of a printed seed; sizes include 1, 0 and sizes that are not a
// multiple of the block. Only interfaces that CUB 1.17 and CUDA 13's CUB share are used (functors
// of the test's own, no debug_synchronous).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cub/cub.cuh>
#include <numeric>
#include <random>
#include <vector>

#include "cudalab/cuda_check.h"

namespace {

constexpr unsigned kSeed = 2026;

struct MaxOf {
  __host__ __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct IsEven {
  __host__ __device__ bool operator()(int x) const { return x % 2 == 0; }
};
struct Less {
  __host__ __device__ bool operator()(int a, int b) const { return a < b; }
};

std::vector<int> random_ints(size_t n, unsigned seed, int low = -1000, int high = 1000) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(low, high);
  std::vector<int> v(n);
  for (int& x : v) x = d(gen);
  return v;
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, std::max<size_t>(1, h.size()) * sizeof(T)), cudaSuccess);
  if (!h.empty())
    EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}
template <class T>
std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  if (n) EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}
template <class T>
T* poisoned(size_t n) {  // an output whose every byte is 0xFF until the algorithm writes it
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, std::max<size_t>(1, n) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemset(d, 0xFF, std::max<size_t>(1, n) * sizeof(T)), cudaSuccess);
  return d;
}

// A device-wide call made twice, as CUB asks: once for the temporary storage's size, then with it.
template <class Call>
void with_temp_storage(Call call) {
  size_t bytes = 0;
  ASSERT_EQ(call(nullptr, bytes), cudaSuccess);
  void* temp = nullptr;
  CUDA_CHECK(cudaMalloc(&temp, std::max<size_t>(bytes, 1)));
  ASSERT_EQ(call(temp, bytes), cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(temp));
}

constexpr int kBlock = 128;

__global__ void block_sums(const int* in, int* sums, int* maxima, int n) {
  using BlockReduce = cub::BlockReduce<int, kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int i = blockIdx.x * kBlock + threadIdx.x;
  const int valid = min(kBlock, n - static_cast<int>(blockIdx.x) * kBlock);
  const int v = i < n ? in[i] : 0;
  const int sum = BlockReduce(temp).Sum(v, valid);
  __syncthreads();  // the storage is used again
  const int max = BlockReduce(temp).Reduce(v, MaxOf(), valid);
  if (threadIdx.x == 0) {
    sums[blockIdx.x] = sum;
    maxima[blockIdx.x] = max;
  }
}

__global__ void block_scans(const int* in, int* exclusive, int* inclusive, int n) {
  using BlockScan = cub::BlockScan<int, kBlock>;
  __shared__ typename BlockScan::TempStorage temp;
  const int i = blockIdx.x * kBlock + threadIdx.x;
  const int v = i < n ? in[i] : 0;
  int before = 0, through = 0;
  BlockScan(temp).ExclusiveSum(v, before);
  __syncthreads();
  BlockScan(temp).InclusiveSum(v, through);
  if (i < n) {
    exclusive[i] = before;
    inclusive[i] = through;
  }
}

// Four items per thread, loaded and stored blocked, sorted across the block.
__global__ void block_sort(int* data) {
  using BlockRadixSort = cub::BlockRadixSort<int, kBlock, 4>;
  __shared__ typename BlockRadixSort::TempStorage temp;
  int items[4];
  for (int k = 0; k < 4; ++k) items[k] = data[threadIdx.x * 4 + k];
  BlockRadixSort(temp).Sort(items);
  for (int k = 0; k < 4; ++k) data[threadIdx.x * 4 + k] = items[k];
}

__global__ void warp_sums(const float* in, float* out) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage temp[kBlock / 32];
  const int warp = threadIdx.x / 32;
  const float sum = WarpReduce(temp[warp]).Sum(in[blockIdx.x * kBlock + threadIdx.x]);
  if (threadIdx.x % 32 == 0) out[blockIdx.x * (kBlock / 32) + warp] = sum;
}

}  // namespace

TEST(Cub, BlockReduceAndScanOfPartBlocks) {
  printf("seed %u\n", kSeed);
  for (int n : {1, 127, 128, 300, 1000}) {
    const auto in = random_ints(n, kSeed + n);
    const int blocks = (n + kBlock - 1) / kBlock;
    int* d_in = to_device(in);
    int *d_sums = poisoned<int>(blocks), *d_max = poisoned<int>(blocks);
    int *d_exclusive = poisoned<int>(n), *d_inclusive = poisoned<int>(n);
    block_sums<<<blocks, kBlock>>>(d_in, d_sums, d_max, n);
    block_scans<<<blocks, kBlock>>>(d_in, d_exclusive, d_inclusive, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto sums = to_host(d_sums, blocks), maxima = to_host(d_max, blocks);
    const auto exclusive = to_host(d_exclusive, n), inclusive = to_host(d_inclusive, n);
    for (int b = 0; b < blocks; ++b) {
      const auto first = in.begin() + b * kBlock, last = in.begin() + std::min(n, (b + 1) * kBlock);
      EXPECT_EQ(sums[b], std::accumulate(first, last, 0)) << "n " << n << " block " << b;
      EXPECT_EQ(maxima[b], *std::max_element(first, last)) << "n " << n << " block " << b;
      int running = 0;
      for (auto it = first; it != last; ++it) {
        const auto i = it - in.begin();
        ASSERT_EQ(exclusive[i], running) << "n " << n << " element " << i;
        running += *it;
        ASSERT_EQ(inclusive[i], running) << "n " << n << " element " << i;
      }
    }
    for (int* p : {d_in, d_sums, d_max, d_exclusive, d_inclusive}) CUDA_CHECK(cudaFree(p));
  }
}

TEST(Cub, BlockRadixSortSortsTheBlock) {
  auto in = random_ints(kBlock * 4, kSeed);
  int* d = to_device(in);
  block_sort<<<1, kBlock>>>(d);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::sort(in.begin(), in.end());
  EXPECT_EQ(to_host(d, in.size()), in);
  CUDA_CHECK(cudaFree(d));
}

// A warp's float sum adds lane i + 1, i + 2, i + 4, ... to lane i: the same bits on both backends.
TEST(Cub, WarpReduceAddsInTheGpusOrder) {
  std::mt19937 gen(kSeed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> in(2 * kBlock);
  for (size_t i = 0; i < in.size(); ++i) in[i] = d(gen) * (i % 3 == 0 ? 1e6f : 1.0f);
  float* d_in = to_device(in);
  float* d_out = poisoned<float>(2 * kBlock / 32);
  warp_sums<<<2, kBlock>>>(d_in, d_out);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto out = to_host(d_out, 2 * kBlock / 32);
  for (size_t w = 0; w < out.size(); ++w) {
    float lanes[32];
    std::copy_n(in.begin() + w * 32, 32, lanes);
    for (int offset = 1; offset < 32; offset *= 2)
      for (int lane = 0; lane + offset < 32; ++lane)
        lanes[lane] = lanes[lane] + lanes[lane + offset];
    EXPECT_EQ(out[w], lanes[0]) << "warp " << w;
  }
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
}

TEST(Cub, DeviceReduceAndScan) {
  for (int n : {0, 1, 1000, 100000}) {
    const auto in = random_ints(n, kSeed + n);
    int* d_in = to_device(in);
    int *d_sum = poisoned<int>(1), *d_max = poisoned<int>(1);
    int *d_exclusive = poisoned<int>(n), *d_inclusive = poisoned<int>(n);
    with_temp_storage(
        [&](void* t, size_t& b) { return cub::DeviceReduce::Sum(t, b, d_in, d_sum, n); });
    with_temp_storage([&](void* t, size_t& b) {
      return cub::DeviceReduce::Reduce(t, b, d_in, d_max, n, MaxOf(), -5000);
    });
    with_temp_storage([&](void* t, size_t& b) {
      return cub::DeviceScan::ExclusiveSum(t, b, d_in, d_exclusive, n);
    });
    with_temp_storage([&](void* t, size_t& b) {
      return cub::DeviceScan::InclusiveScan(t, b, d_in, d_inclusive, MaxOf(), n);
    });
    EXPECT_EQ(to_host(d_sum, 1)[0], std::accumulate(in.begin(), in.end(), 0)) << "n " << n;
    EXPECT_EQ(to_host(d_max, 1)[0], std::accumulate(in.begin(), in.end(), -5000, MaxOf()))
        << "n " << n;
    std::vector<int> exclusive(n), inclusive(n);
    std::exclusive_scan(in.begin(), in.end(), exclusive.begin(), 0);
    std::inclusive_scan(in.begin(), in.end(), inclusive.begin(), MaxOf());
    EXPECT_EQ(to_host(d_exclusive, n), exclusive) << "n " << n;
    EXPECT_EQ(to_host(d_inclusive, n), inclusive) << "n " << n;
    for (int* p : {d_in, d_sum, d_max, d_exclusive, d_inclusive}) CUDA_CHECK(cudaFree(p));
  }
}

// Radix sorts are stable, order floats by their bits' radix form with -0.0 equal to +0.0 (as CUDA
// 13's CUB does), and sort by the bits asked for only.
TEST(Cub, DeviceRadixSortOrdersAsCub) {
  const int n = 5001;
  std::vector<float> keys = {0.0f, -0.0f, 1.5f, -1.5f, -0.0f, 0.0f};
  std::mt19937 gen(kSeed);
  std::uniform_int_distribution<int> d(-50, 50);
  while (keys.size() < static_cast<size_t>(n)) keys.push_back(d(gen) * 0.5f);
  std::vector<int> values(n);
  std::iota(values.begin(), values.end(), 0);
  float* d_keys = to_device(keys);
  int* d_values = to_device(values);
  float* d_keys_out = poisoned<float>(n);
  int* d_values_out = poisoned<int>(n);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceRadixSort::SortPairs(t, b, d_keys, d_keys_out, d_values, d_values_out, n);
  });
  auto order = values;
  const auto radix = [](float f) {
    if (f == 0.0f) f = 0.0f;  // -0.0 as +0.0
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return radix(keys[a]) < radix(keys[b]); });
  const auto sorted_values = to_host(d_values_out, n);
  EXPECT_EQ(sorted_values, order);
  const auto sorted_keys = to_host(d_keys_out, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(radix(sorted_keys[i]), radix(keys[order[i]])) << i;

  // Descending, by bits [4, 12) of unsigned keys.
  std::vector<unsigned> ukeys(n);
  for (int i = 0; i < n; ++i) ukeys[i] = static_cast<unsigned>(i * 2654435761u);
  unsigned* d_ukeys = to_device(ukeys);
  unsigned* d_ukeys_out = poisoned<unsigned>(n);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceRadixSort::SortKeysDescending(t, b, d_ukeys, d_ukeys_out, n, 4, 12);
  });
  auto expected = ukeys;
  std::stable_sort(expected.begin(), expected.end(),
                   [](unsigned a, unsigned b) { return ((a >> 4) & 0xFF) > ((b >> 4) & 0xFF); });
  EXPECT_EQ(to_host(d_ukeys_out, n), expected);
  for (void* p : {(void*)d_keys, (void*)d_values, (void*)d_keys_out, (void*)d_values_out,
                  (void*)d_ukeys, (void*)d_ukeys_out})
    CUDA_CHECK(cudaFree(p));
}

TEST(Cub, DeviceSelectPartitionAndRunLengths) {
  const int n = 3001;
  auto in = random_ints(n, kSeed, 0, 9);
  std::sort(in.begin(), in.begin() + n / 2);  // runs in the first half
  std::vector<char> flags(n);
  for (int i = 0; i < n; ++i) flags[i] = i % 3 == 0;
  int* d_in = to_device(in);
  char* d_flags = to_device(flags);
  int *d_out = poisoned<int>(n), *d_count = poisoned<int>(1);

  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceSelect::If(t, b, d_in, d_out, d_count, n, IsEven());
  });
  std::vector<int> even;
  std::copy_if(in.begin(), in.end(), std::back_inserter(even), IsEven());
  ASSERT_EQ(to_host(d_count, 1)[0], static_cast<int>(even.size()));
  EXPECT_EQ(to_host(d_out, even.size()), even);

  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, d_in, d_flags, d_out, d_count, n);
  });
  std::vector<int> flagged;
  for (int i = 0; i < n; ++i)
    if (flags[i]) flagged.push_back(in[i]);
  ASSERT_EQ(to_host(d_count, 1)[0], static_cast<int>(flagged.size()));
  EXPECT_EQ(to_host(d_out, flagged.size()), flagged);

  with_temp_storage(
      [&](void* t, size_t& b) { return cub::DeviceSelect::Unique(t, b, d_in, d_out, d_count, n); });
  std::vector<int> unique(n);
  unique.resize(std::unique_copy(in.begin(), in.end(), unique.begin()) - unique.begin());
  ASSERT_EQ(to_host(d_count, 1)[0], static_cast<int>(unique.size()));
  EXPECT_EQ(to_host(d_out, unique.size()), unique);

  // A partition: the selected in order, then the others from the end backwards.
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DevicePartition::If(t, b, d_in, d_out, d_count, n, IsEven());
  });
  std::vector<int> partitioned = even, odd;
  std::copy_if(in.begin(), in.end(), std::back_inserter(odd), [](int x) { return x % 2 != 0; });
  partitioned.insert(partitioned.end(), odd.rbegin(), odd.rend());
  EXPECT_EQ(to_host(d_count, 1)[0], static_cast<int>(even.size()));
  EXPECT_EQ(to_host(d_out, n), partitioned);

  int* d_lengths = poisoned<int>(n);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceRunLengthEncode::Encode(t, b, d_in, d_out, d_lengths, d_count, n);
  });
  std::vector<int> run_items, run_lengths;
  for (int i = 0; i < n; ++i) {
    if (i == 0 || in[i] != in[i - 1]) {
      run_items.push_back(in[i]);
      run_lengths.push_back(0);
    }
    ++run_lengths.back();
  }
  ASSERT_EQ(to_host(d_count, 1)[0], static_cast<int>(run_items.size()));
  EXPECT_EQ(to_host(d_out, run_items.size()), run_items);
  EXPECT_EQ(to_host(d_lengths, run_lengths.size()), run_lengths);
  for (void* p : {(void*)d_in, (void*)d_flags, (void*)d_out, (void*)d_count, (void*)d_lengths})
    CUDA_CHECK(cudaFree(p));
}

TEST(Cub, DeviceHistogramSegmentsAndMergeSort) {
  const int n = 4099;
  std::mt19937 gen(kSeed);
  std::uniform_real_distribution<float> d(-0.5f, 10.5f);
  std::vector<float> samples(n);
  for (float& s : samples) s = d(gen);
  samples[0] = 0.0f, samples[1] = 10.0f, samples[2] = 2.5f;  // on edges
  float* d_samples = to_device(samples);
  int* d_histogram = poisoned<int>(4);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceHistogram::HistogramEven(t, b, d_samples, d_histogram, 5, 0.0f, 10.0f, n);
  });
  std::vector<int> bins(4, 0);
  for (float s : samples)
    if (s >= 0.0f && s < 10.0f) ++bins[static_cast<int>((s - 0.0f) * (1.0f / 2.5f))];
  EXPECT_EQ(to_host(d_histogram, 4), bins);

  // Segments [0, 10), [10, 10) (empty) and [10, n).
  const auto in = random_ints(n, kSeed + 1);
  const std::vector<int> offsets = {0, 10, 10, n};
  int* d_in = to_device(in);
  int* d_offsets = to_device(offsets);
  int* d_sums = poisoned<int>(3);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceSegmentedReduce::Sum(t, b, d_in, d_sums, 3, d_offsets, d_offsets + 1);
  });
  EXPECT_EQ(to_host(d_sums, 3),
            (std::vector<int>{std::accumulate(in.begin(), in.begin() + 10, 0), 0,
                              std::accumulate(in.begin() + 10, in.end(), 0)}));

  int* d_keys = to_device(in);
  int* d_segment_sorted = poisoned<int>(n);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceSegmentedRadixSort::SortKeys(t, b, d_in, d_segment_sorted, n, 3, d_offsets,
                                                   d_offsets + 1);
  });
  auto segment_sorted = in;
  std::sort(segment_sorted.begin(), segment_sorted.begin() + 10);
  std::sort(segment_sorted.begin() + 10, segment_sorted.end());
  EXPECT_EQ(to_host(d_segment_sorted, n), segment_sorted);

  std::vector<int> items(n);
  std::iota(items.begin(), items.end(), 0);
  int* d_items = to_device(items);
  with_temp_storage([&](void* t, size_t& b) {
    return cub::DeviceMergeSort::StableSortPairs(t, b, d_keys, d_items, n, Less());
  });
  std::vector<int> order = items;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return in[a] < in[b]; });
  EXPECT_EQ(to_host(d_items, n), order);
  for (void* p : {(void*)d_samples, (void*)d_histogram, (void*)d_in, (void*)d_offsets,
                  (void*)d_sums, (void*)d_keys, (void*)d_segment_sorted, (void*)d_items})
    CUDA_CHECK(cudaFree(p));
}
