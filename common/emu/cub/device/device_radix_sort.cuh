// cub::DeviceRadixSort for the emu backend: CUB 1.17's interface, each call one stable sort on the
// stream (emu_algorithm.cuh says how). The order is CUDA 13's CUB's: keys compared by the bits
// [begin_bit, end_bit) of their radix form (cub::Traits<KeyT>::TwiddleIn: negative numbers before
// positive ones), -0.0 as +0.0 (CUB 1.17 put -0.0 first; CUDA 13's CUB, on an H200, keeps the
// two in their input order), equal keys in their input order, descending sorts by the
// complemented bits. A DoubleBuffer's result is left in its current buffer.
#pragma once

#include <thrust/sort.h>

#include <cstring>
#include <vector>

#include "../util_type.cuh"
#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN
namespace emu_detail {

// Sorts the n keys (and values, unless ValueT is NullType) from keys_in/values_in into
// keys_out/values_out, which may be the same arrays.
template <typename KeyT, typename ValueT>
void radix_sort(const KeyT* keys_in, KeyT* keys_out, const ValueT* values_in, ValueT* values_out,
                long long n, int begin_bit, int end_bit, bool descending) {
  using UnsignedBits = typename Traits<KeyT>::UnsignedBits;
  constexpr int kBits = static_cast<int>(sizeof(KeyT) * 8);
  const int bits = end_bit - begin_bit;
  const UnsignedBits mask =
      bits >= kBits ? ~UnsignedBits(0) : static_cast<UnsignedBits>((UnsignedBits(1) << bits) - 1);
  std::vector<UnsignedBits> radix(static_cast<std::size_t>(n));
  std::vector<long long> order(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) {
    KeyT value = keys_in[i];  // (a read the checks see: memcpy's are not)
    if constexpr (Traits<KeyT>::CATEGORY == FLOATING_POINT)
      if (value == KeyT(0)) value = KeyT(0);  // -0.0 sorts as +0.0
    UnsignedBits key;
    std::memcpy(&key, &value, sizeof key);
    key = Traits<KeyT>::TwiddleIn(key);
    if (descending) key = static_cast<UnsignedBits>(~key);
    radix[i] = static_cast<UnsignedBits>((key >> begin_bit) & mask);
    order[i] = i;
  }
  thrust::stable_sort_by_key(thrust::seq, radix.begin(), radix.end(), order.begin());
  std::vector<KeyT> keys(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) keys[i] = keys_in[order[i]];
  for (long long i = 0; i < n; ++i) keys_out[i] = keys[i];
  if constexpr (!std::is_same_v<ValueT, NullType>) {
    std::vector<ValueT> values(static_cast<std::size_t>(n));
    for (long long i = 0; i < n; ++i) values[i] = values_in[order[i]];
    for (long long i = 0; i < n; ++i) values_out[i] = values[i];
  }
}

}  // namespace emu_detail

struct DeviceRadixSort {
  template <typename KeyT, typename ValueT, typename NumItemsT>
  static cudaError_t SortPairs(void* d_temp_storage, size_t& temp_storage_bytes,
                               const KeyT* d_keys_in, KeyT* d_keys_out, const ValueT* d_values_in,
                               ValueT* d_values_out, NumItemsT num_items, int begin_bit = 0,
                               int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0,
                               bool = false,
                               emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortPairs", d_temp_storage, temp_storage_bytes, d_keys_in,
                d_keys_out, d_values_in, d_values_out, num_items, begin_bit, end_bit, false, stream,
                where);
  }
  template <typename KeyT, typename ValueT, typename NumItemsT>
  static cudaError_t SortPairs(void* d_temp_storage, size_t& temp_storage_bytes,
                               DoubleBuffer<KeyT>& d_keys, DoubleBuffer<ValueT>& d_values,
                               NumItemsT num_items, int begin_bit = 0,
                               int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0,
                               bool = false,
                               emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortPairs", d_temp_storage, temp_storage_bytes,
                d_keys.Current(), d_keys.Current(), d_values.Current(), d_values.Current(),
                num_items, begin_bit, end_bit, false, stream, where);
  }
  template <typename KeyT, typename ValueT, typename NumItemsT>
  static cudaError_t SortPairsDescending(void* d_temp_storage, size_t& temp_storage_bytes,
                                         const KeyT* d_keys_in, KeyT* d_keys_out,
                                         const ValueT* d_values_in, ValueT* d_values_out,
                                         NumItemsT num_items, int begin_bit = 0,
                                         int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0,
                                         bool = false,
                                         emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortPairsDescending", d_temp_storage, temp_storage_bytes,
                d_keys_in, d_keys_out, d_values_in, d_values_out, num_items, begin_bit, end_bit,
                true, stream, where);
  }
  template <typename KeyT, typename ValueT, typename NumItemsT>
  static cudaError_t SortPairsDescending(void* d_temp_storage, size_t& temp_storage_bytes,
                                         DoubleBuffer<KeyT>& d_keys, DoubleBuffer<ValueT>& d_values,
                                         NumItemsT num_items, int begin_bit = 0,
                                         int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0,
                                         bool = false,
                                         emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortPairsDescending", d_temp_storage, temp_storage_bytes,
                d_keys.Current(), d_keys.Current(), d_values.Current(), d_values.Current(),
                num_items, begin_bit, end_bit, true, stream, where);
  }
  template <typename KeyT, typename NumItemsT>
  static cudaError_t SortKeys(void* d_temp_storage, size_t& temp_storage_bytes,
                              const KeyT* d_keys_in, KeyT* d_keys_out, NumItemsT num_items,
                              int begin_bit = 0, int end_bit = sizeof(KeyT) * 8,
                              cudaStream_t stream = 0, bool = false,
                              emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortKeys", d_temp_storage, temp_storage_bytes, d_keys_in,
                d_keys_out, static_cast<const NullType*>(nullptr), static_cast<NullType*>(nullptr),
                num_items, begin_bit, end_bit, false, stream, where);
  }
  template <typename KeyT, typename NumItemsT>
  static cudaError_t SortKeys(void* d_temp_storage, size_t& temp_storage_bytes,
                              DoubleBuffer<KeyT>& d_keys, NumItemsT num_items, int begin_bit = 0,
                              int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0, bool = false,
                              emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortKeys", d_temp_storage, temp_storage_bytes,
                d_keys.Current(), d_keys.Current(), static_cast<const NullType*>(nullptr),
                static_cast<NullType*>(nullptr), num_items, begin_bit, end_bit, false, stream,
                where);
  }
  template <typename KeyT, typename NumItemsT>
  static cudaError_t SortKeysDescending(void* d_temp_storage, size_t& temp_storage_bytes,
                                        const KeyT* d_keys_in, KeyT* d_keys_out,
                                        NumItemsT num_items, int begin_bit = 0,
                                        int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0,
                                        bool = false,
                                        emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortKeysDescending", d_temp_storage, temp_storage_bytes,
                d_keys_in, d_keys_out, static_cast<const NullType*>(nullptr),
                static_cast<NullType*>(nullptr), num_items, begin_bit, end_bit, true, stream,
                where);
  }
  template <typename KeyT, typename NumItemsT>
  static cudaError_t SortKeysDescending(void* d_temp_storage, size_t& temp_storage_bytes,
                                        DoubleBuffer<KeyT>& d_keys, NumItemsT num_items,
                                        int begin_bit = 0, int end_bit = sizeof(KeyT) * 8,
                                        cudaStream_t stream = 0, bool = false,
                                        emu_detail::Where where = emu_detail::Where::current()) {
    return sort("cub::DeviceRadixSort::SortKeysDescending", d_temp_storage, temp_storage_bytes,
                d_keys.Current(), d_keys.Current(), static_cast<const NullType*>(nullptr),
                static_cast<NullType*>(nullptr), num_items, begin_bit, end_bit, true, stream,
                where);
  }

 private:
  template <typename KeyT, typename ValueT, typename NumItemsT>
  static cudaError_t sort(const char* algorithm, void* d_temp_storage, size_t& temp_storage_bytes,
                          const KeyT* keys_in, KeyT* keys_out, const ValueT* values_in,
                          ValueT* values_out, NumItemsT num_items, int begin_bit, int end_bit,
                          bool descending, cudaStream_t stream, const emu_detail::Where& where) {
    if (begin_bit < 0 || end_bit > static_cast<int>(sizeof(KeyT) * 8) || begin_bit > end_bit)
      return cudaErrorInvalidValue;
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](const KeyT* ki, KeyT* ko, const ValueT* vi, ValueT* vo, long long n, int begin, int end,
           bool down) { emu_detail::radix_sort(ki, ko, vi, vo, n, begin, end, down); },
        keys_in, keys_out, values_in, values_out, static_cast<long long>(num_items), begin_bit,
        end_bit, descending);
  }
};

CUB_NAMESPACE_END
