// cub::DeviceRunLengthEncode for the emu backend: CUB 1.17's interface, each call one sequential
// pass on the stream (emu_algorithm.cuh says how).
#pragma once

#include <thrust/iterator/constant_iterator.h>
#include <thrust/reduce.h>

#include "../thread/thread_operators.cuh"
#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceRunLengthEncode {
  // Each run of equal items: its item and its length.
  template <typename InputIteratorT, typename UniqueOutputIteratorT,
            typename LengthsOutputIteratorT, typename NumRunsOutputIteratorT>
  static cudaError_t Encode(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            UniqueOutputIteratorT d_unique_out, LengthsOutputIteratorT d_counts_out,
                            NumRunsOutputIteratorT d_num_runs_out, int num_items,
                            cudaStream_t stream = 0, bool = false,
                            emu_detail::Where where = emu_detail::Where::current()) {
    using LengthT = cub::detail::non_void_value_t<LengthsOutputIteratorT, int>;
    return emu_detail::run(
        "cub::DeviceRunLengthEncode::Encode", d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, UniqueOutputIteratorT unique, LengthsOutputIteratorT counts,
           NumRunsOutputIteratorT runs, int n) {
          const auto ends = thrust::reduce_by_key(thrust::seq, in, in + n,
                                                  thrust::make_constant_iterator(LengthT(1)),
                                                  unique, counts, cub::Equality());
          *runs = static_cast<int>(ends.first - unique);
        },
        d_in, d_unique_out, d_counts_out, d_num_runs_out, num_items);
  }
  // Each run of two or more equal items: its offset and its length.
  template <typename InputIteratorT, typename OffsetsOutputIteratorT,
            typename LengthsOutputIteratorT, typename NumRunsOutputIteratorT>
  static cudaError_t NonTrivialRuns(void* d_temp_storage, size_t& temp_storage_bytes,
                                    InputIteratorT d_in, OffsetsOutputIteratorT d_offsets_out,
                                    LengthsOutputIteratorT d_lengths_out,
                                    NumRunsOutputIteratorT d_num_runs_out, int num_items,
                                    cudaStream_t stream = 0, bool = false,
                                    emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceRunLengthEncode::NonTrivialRuns", d_temp_storage, temp_storage_bytes, stream,
        where,
        [](InputIteratorT in, OffsetsOutputIteratorT offsets, LengthsOutputIteratorT lengths,
           NumRunsOutputIteratorT runs, int n) {
          int count = 0;
          for (int start = 0, end = 0; start < n; start = end) {
            const auto item = in[start];
            for (end = start + 1; end < n && cub::Equality()(in[end], item);) ++end;
            if (end - start > 1) {
              offsets[count] = start;
              lengths[count] = end - start;
              ++count;
            }
          }
          *runs = count;
        },
        d_in, d_offsets_out, d_lengths_out, d_num_runs_out, num_items);
  }
};

CUB_NAMESPACE_END
