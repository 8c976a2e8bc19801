// cub::DeviceMergeSort for the emu backend: CUB 1.17's interface, each call one stable sort on the
// stream (emu_algorithm.cuh says how). Every sort here is stable (CUB's SortPairs may not be).
#pragma once

#include <thrust/copy.h>
#include <thrust/sort.h>

#include <type_traits>

#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceMergeSort {
  template <typename KeyIteratorT, typename ValueIteratorT, typename OffsetT, typename CompareOpT>
  static cudaError_t SortPairs(void* d_temp_storage, std::size_t& temp_storage_bytes,
                               KeyIteratorT d_keys, ValueIteratorT d_items, OffsetT num_items,
                               CompareOpT compare_op, cudaStream_t stream = 0, bool = false,
                               emu_detail::Where where = emu_detail::Where::current()) {
    return pairs("cub::DeviceMergeSort::SortPairs", d_temp_storage, temp_storage_bytes, d_keys,
                 d_items, d_keys, d_items, num_items, compare_op, stream, where);
  }
  template <typename KeyInputIteratorT, typename ValueInputIteratorT, typename KeyIteratorT,
            typename ValueIteratorT, typename OffsetT, typename CompareOpT>
  static cudaError_t SortPairsCopy(void* d_temp_storage, std::size_t& temp_storage_bytes,
                                   KeyInputIteratorT d_input_keys,
                                   ValueInputIteratorT d_input_items, KeyIteratorT d_output_keys,
                                   ValueIteratorT d_output_items, OffsetT num_items,
                                   CompareOpT compare_op, cudaStream_t stream = 0, bool = false,
                                   emu_detail::Where where = emu_detail::Where::current()) {
    return pairs("cub::DeviceMergeSort::SortPairsCopy", d_temp_storage, temp_storage_bytes,
                 d_input_keys, d_input_items, d_output_keys, d_output_items, num_items, compare_op,
                 stream, where);
  }
  template <typename KeyIteratorT, typename OffsetT, typename CompareOpT>
  static cudaError_t SortKeys(void* d_temp_storage, std::size_t& temp_storage_bytes,
                              KeyIteratorT d_keys, OffsetT num_items, CompareOpT compare_op,
                              cudaStream_t stream = 0, bool = false,
                              emu_detail::Where where = emu_detail::Where::current()) {
    return keys("cub::DeviceMergeSort::SortKeys", d_temp_storage, temp_storage_bytes, d_keys,
                d_keys, num_items, compare_op, stream, where);
  }
  template <typename KeyInputIteratorT, typename KeyIteratorT, typename OffsetT,
            typename CompareOpT>
  static cudaError_t SortKeysCopy(void* d_temp_storage, std::size_t& temp_storage_bytes,
                                  KeyInputIteratorT d_input_keys, KeyIteratorT d_output_keys,
                                  OffsetT num_items, CompareOpT compare_op, cudaStream_t stream = 0,
                                  bool = false,
                                  emu_detail::Where where = emu_detail::Where::current()) {
    return keys("cub::DeviceMergeSort::SortKeysCopy", d_temp_storage, temp_storage_bytes,
                d_input_keys, d_output_keys, num_items, compare_op, stream, where);
  }
  template <typename KeyIteratorT, typename ValueIteratorT, typename OffsetT, typename CompareOpT>
  static cudaError_t StableSortPairs(void* d_temp_storage, std::size_t& temp_storage_bytes,
                                     KeyIteratorT d_keys, ValueIteratorT d_items, OffsetT num_items,
                                     CompareOpT compare_op, cudaStream_t stream = 0, bool = false,
                                     emu_detail::Where where = emu_detail::Where::current()) {
    return pairs("cub::DeviceMergeSort::StableSortPairs", d_temp_storage, temp_storage_bytes,
                 d_keys, d_items, d_keys, d_items, num_items, compare_op, stream, where);
  }
  template <typename KeyIteratorT, typename OffsetT, typename CompareOpT>
  static cudaError_t StableSortKeys(void* d_temp_storage, std::size_t& temp_storage_bytes,
                                    KeyIteratorT d_keys, OffsetT num_items, CompareOpT compare_op,
                                    cudaStream_t stream = 0, bool = false,
                                    emu_detail::Where where = emu_detail::Where::current()) {
    return keys("cub::DeviceMergeSort::StableSortKeys", d_temp_storage, temp_storage_bytes, d_keys,
                d_keys, num_items, compare_op, stream, where);
  }

 private:
  template <typename KeysIn, typename ItemsIn, typename KeysOut, typename ItemsOut,
            typename OffsetT, typename CompareOpT>
  static cudaError_t pairs(const char* algorithm, void* d_temp_storage,
                           std::size_t& temp_storage_bytes, KeysIn keys_in, ItemsIn items_in,
                           KeysOut keys_out, ItemsOut items_out, OffsetT num_items,
                           CompareOpT compare_op, cudaStream_t stream,
                           const emu_detail::Where& where) {
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](KeysIn ki, ItemsIn ii, KeysOut ko, ItemsOut io, OffsetT n, CompareOpT less) {
          if constexpr (!std::is_same_v<KeysIn, KeysOut> || !std::is_same_v<ItemsIn, ItemsOut>) {
            thrust::copy(thrust::seq, ki, ki + n, ko);
            thrust::copy(thrust::seq, ii, ii + n, io);
          } else if (ki != ko || ii != io) {
            thrust::copy(thrust::seq, ki, ki + n, ko);
            thrust::copy(thrust::seq, ii, ii + n, io);
          }
          thrust::stable_sort_by_key(thrust::seq, ko, ko + n, io, less);
        },
        keys_in, items_in, keys_out, items_out, num_items, compare_op);
  }
  template <typename KeysIn, typename KeysOut, typename OffsetT, typename CompareOpT>
  static cudaError_t keys(const char* algorithm, void* d_temp_storage,
                          std::size_t& temp_storage_bytes, KeysIn keys_in, KeysOut keys_out,
                          OffsetT num_items, CompareOpT compare_op, cudaStream_t stream,
                          const emu_detail::Where& where) {
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](KeysIn ki, KeysOut ko, OffsetT n, CompareOpT less) {
          if constexpr (!std::is_same_v<KeysIn, KeysOut>)
            thrust::copy(thrust::seq, ki, ki + n, ko);
          else if (ki != ko)
            thrust::copy(thrust::seq, ki, ki + n, ko);
          thrust::stable_sort(thrust::seq, ko, ko + n, less);
        },
        keys_in, keys_out, num_items, compare_op);
  }
};

CUB_NAMESPACE_END
