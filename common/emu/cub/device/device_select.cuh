// cub::DeviceSelect for the emu backend: CUB 1.17's interface, each call one sequential pass on
// the stream (emu_algorithm.cuh says how). The selected items keep their order.
#pragma once

#include <thrust/copy.h>
#include <thrust/unique.h>

#include "../thread/thread_operators.cuh"
#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceSelect {
  template <typename InputIteratorT, typename FlagIterator, typename OutputIteratorT,
            typename NumSelectedIteratorT>
  static cudaError_t Flagged(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                             FlagIterator d_flags, OutputIteratorT d_out,
                             NumSelectedIteratorT d_num_selected_out, int num_items,
                             cudaStream_t stream = 0, bool = false,
                             emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceSelect::Flagged", d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, FlagIterator flags, OutputIteratorT out,
           NumSelectedIteratorT selected, int n) {
          const auto end = thrust::copy_if(thrust::seq, in, in + n, flags, out,
                                           [](const auto& flag) { return bool(flag); });
          *selected = static_cast<int>(end - out);
        },
        d_in, d_flags, d_out, d_num_selected_out, num_items);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename NumSelectedIteratorT,
            typename SelectOp>
  static cudaError_t If(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                        OutputIteratorT d_out, NumSelectedIteratorT d_num_selected_out,
                        int num_items, SelectOp select_op, cudaStream_t stream = 0, bool = false,
                        emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceSelect::If", d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, NumSelectedIteratorT selected, int n,
           SelectOp op) {
          const auto end = thrust::copy_if(thrust::seq, in, in + n, out, op);
          *selected = static_cast<int>(end - out);
        },
        d_in, d_out, d_num_selected_out, num_items, select_op);
  }
  // The first item of each run of equal items.
  template <typename InputIteratorT, typename OutputIteratorT, typename NumSelectedIteratorT>
  static cudaError_t Unique(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, NumSelectedIteratorT d_num_selected_out,
                            int num_items, cudaStream_t stream = 0, bool = false,
                            emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceSelect::Unique", d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, NumSelectedIteratorT selected, int n) {
          const auto end = thrust::unique_copy(thrust::seq, in, in + n, out, cub::Equality());
          *selected = static_cast<int>(end - out);
        },
        d_in, d_out, d_num_selected_out, num_items);
  }
  template <typename KeyInputIteratorT, typename ValueInputIteratorT, typename KeyOutputIteratorT,
            typename ValueOutputIteratorT, typename NumSelectedIteratorT>
  static cudaError_t UniqueByKey(void* d_temp_storage, size_t& temp_storage_bytes,
                                 KeyInputIteratorT d_keys_in, ValueInputIteratorT d_values_in,
                                 KeyOutputIteratorT d_keys_out, ValueOutputIteratorT d_values_out,
                                 NumSelectedIteratorT d_num_selected_out, int num_items,
                                 cudaStream_t stream = 0, bool = false,
                                 emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceSelect::UniqueByKey", d_temp_storage, temp_storage_bytes, stream, where,
        [](KeyInputIteratorT keys, ValueInputIteratorT values, KeyOutputIteratorT keys_out,
           ValueOutputIteratorT values_out, NumSelectedIteratorT selected, int n) {
          const auto ends = thrust::unique_by_key_copy(thrust::seq, keys, keys + n, values,
                                                       keys_out, values_out, cub::Equality());
          *selected = static_cast<int>(ends.first - keys_out);
        },
        d_keys_in, d_values_in, d_keys_out, d_values_out, d_num_selected_out, num_items);
  }
};

CUB_NAMESPACE_END
