// cub::DeviceSegmentedRadixSort for the emu backend: CUB 1.17's interface, each segment sorted as
// DeviceRadixSort sorts (device_radix_sort.cuh), in one launch on the stream.
#pragma once

#include "device_radix_sort.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceSegmentedRadixSort {
#define CUB_EMU_SEGMENTED_SORT(Name, descending)                                                   \
  template <typename KeyT, typename ValueT, typename BeginOffsetIteratorT,                         \
            typename EndOffsetIteratorT>                                                           \
  static cudaError_t Name(void* d_temp_storage, size_t& temp_storage_bytes, const KeyT* d_keys_in, \
                          KeyT* d_keys_out, const ValueT* d_values_in, ValueT* d_values_out,       \
                          int num_items, int num_segments, BeginOffsetIteratorT d_begin_offsets,   \
                          EndOffsetIteratorT d_end_offsets, int begin_bit = 0,                     \
                          int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0, bool = false,   \
                          emu_detail::Where where = emu_detail::Where::current()) {                \
    return sort("cub::DeviceSegmentedRadixSort::" #Name, d_temp_storage, temp_storage_bytes,       \
                d_keys_in, d_keys_out, d_values_in, d_values_out, num_items, num_segments,         \
                d_begin_offsets, d_end_offsets, begin_bit, end_bit, descending, stream, where);    \
  }                                                                                                \
  template <typename KeyT, typename ValueT, typename BeginOffsetIteratorT,                         \
            typename EndOffsetIteratorT>                                                           \
  static cudaError_t Name(void* d_temp_storage, size_t& temp_storage_bytes,                        \
                          DoubleBuffer<KeyT>& d_keys, DoubleBuffer<ValueT>& d_values,              \
                          int num_items, int num_segments, BeginOffsetIteratorT d_begin_offsets,   \
                          EndOffsetIteratorT d_end_offsets, int begin_bit = 0,                     \
                          int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0, bool = false,   \
                          emu_detail::Where where = emu_detail::Where::current()) {                \
    return sort("cub::DeviceSegmentedRadixSort::" #Name, d_temp_storage, temp_storage_bytes,       \
                d_keys.Current(), d_keys.Current(), d_values.Current(), d_values.Current(),        \
                num_items, num_segments, d_begin_offsets, d_end_offsets, begin_bit, end_bit,       \
                descending, stream, where);                                                        \
  }
#define CUB_EMU_SEGMENTED_SORT_KEYS(Name, descending)                                              \
  template <typename KeyT, typename BeginOffsetIteratorT, typename EndOffsetIteratorT>             \
  static cudaError_t Name(void* d_temp_storage, size_t& temp_storage_bytes, const KeyT* d_keys_in, \
                          KeyT* d_keys_out, int num_items, int num_segments,                       \
                          BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,  \
                          int begin_bit = 0, int end_bit = sizeof(KeyT) * 8,                       \
                          cudaStream_t stream = 0, bool = false,                                   \
                          emu_detail::Where where = emu_detail::Where::current()) {                \
    return sort("cub::DeviceSegmentedRadixSort::" #Name, d_temp_storage, temp_storage_bytes,       \
                d_keys_in, d_keys_out, static_cast<const NullType*>(nullptr),                      \
                static_cast<NullType*>(nullptr), num_items, num_segments, d_begin_offsets,         \
                d_end_offsets, begin_bit, end_bit, descending, stream, where);                     \
  }                                                                                                \
  template <typename KeyT, typename BeginOffsetIteratorT, typename EndOffsetIteratorT>             \
  static cudaError_t Name(                                                                         \
      void* d_temp_storage, size_t& temp_storage_bytes, DoubleBuffer<KeyT>& d_keys, int num_items, \
      int num_segments, BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,    \
      int begin_bit = 0, int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0, bool = false,    \
      emu_detail::Where where = emu_detail::Where::current()) {                                    \
    return sort("cub::DeviceSegmentedRadixSort::" #Name, d_temp_storage, temp_storage_bytes,       \
                d_keys.Current(), d_keys.Current(), static_cast<const NullType*>(nullptr),         \
                static_cast<NullType*>(nullptr), num_items, num_segments, d_begin_offsets,         \
                d_end_offsets, begin_bit, end_bit, descending, stream, where);                     \
  }
  CUB_EMU_SEGMENTED_SORT(SortPairs, false)
  CUB_EMU_SEGMENTED_SORT(SortPairsDescending, true)
  CUB_EMU_SEGMENTED_SORT_KEYS(SortKeys, false)
  CUB_EMU_SEGMENTED_SORT_KEYS(SortKeysDescending, true)
#undef CUB_EMU_SEGMENTED_SORT
#undef CUB_EMU_SEGMENTED_SORT_KEYS

 private:
  // Each segment [begin_offsets[s], end_offsets[s]) sorted on its own; what lies between segments
  // is left as it is.
  template <typename KeyT, typename ValueT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT>
  static cudaError_t sort(const char* algorithm, void* d_temp_storage, size_t& temp_storage_bytes,
                          const KeyT* keys_in, KeyT* keys_out, const ValueT* values_in,
                          ValueT* values_out, int, int num_segments,
                          BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                          int begin_bit, int end_bit, bool descending, cudaStream_t stream,
                          const emu_detail::Where& where) {
    if (begin_bit < 0 || end_bit > static_cast<int>(sizeof(KeyT) * 8) || begin_bit > end_bit)
      return cudaErrorInvalidValue;
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](const KeyT* ki, KeyT* ko, const ValueT* vi, ValueT* vo, int segments,
           BeginOffsetIteratorT begins, EndOffsetIteratorT ends, int begin, int end, bool down) {
          constexpr bool kKeysOnly = std::is_same_v<ValueT, NullType>;
          for (int s = 0; s < segments; ++s) {
            const long long first = begins[s], last = ends[s];
            if (last <= first) continue;
            emu_detail::radix_sort(ki + first, ko + first, kKeysOnly ? vi : vi + first,
                                   kKeysOnly ? vo : vo + first, last - first, begin, end, down);
          }
        },
        keys_in, keys_out, values_in, values_out, num_segments, d_begin_offsets, d_end_offsets,
        begin_bit, end_bit, descending);
  }
};

CUB_NAMESPACE_END
