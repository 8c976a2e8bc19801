// cub::DevicePartition for the emu backend: CUB 1.17's interface, each call one sequential pass
// on the stream (emu_algorithm.cuh says how). As CUB does, the selected items come first in their
// order and the others fill the output from its end, so they end up in reverse order.
#pragma once

#include <thrust/iterator/reverse_iterator.h>
#include <thrust/partition.h>

#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DevicePartition {
  template <typename InputIteratorT, typename FlagIterator, typename OutputIteratorT,
            typename NumSelectedIteratorT>
  static cudaError_t Flagged(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                             FlagIterator d_flags, OutputIteratorT d_out,
                             NumSelectedIteratorT d_num_selected_out, int num_items,
                             cudaStream_t stream = 0, bool = false,
                             emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DevicePartition::Flagged", d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, FlagIterator flags, OutputIteratorT out,
           NumSelectedIteratorT selected, int n) {
          const auto ends = thrust::partition_copy(thrust::seq, in, in + n, flags, out,
                                                   thrust::make_reverse_iterator(out + n),
                                                   [](const auto& flag) { return bool(flag); });
          *selected = static_cast<int>(ends.first - out);
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
        "cub::DevicePartition::If", d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, NumSelectedIteratorT selected, int n,
           SelectOp op) {
          const auto ends = thrust::partition_copy(thrust::seq, in, in + n, out,
                                                   thrust::make_reverse_iterator(out + n), op);
          *selected = static_cast<int>(ends.first - out);
        },
        d_in, d_out, d_num_selected_out, num_items, select_op);
  }
};

CUB_NAMESPACE_END
