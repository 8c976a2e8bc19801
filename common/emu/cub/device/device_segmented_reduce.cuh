// cub::DeviceSegmentedReduce for the emu backend: CUB 1.17's interface, each call one sequential
// pass on the stream (emu_algorithm.cuh says how). Segment i is [begin_offsets[i],
// end_offsets[i]); an empty one gives the initial value (Arg*: {1, the initial value}).
#pragma once

#include "../thread/thread_operators.cuh"
#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceSegmentedReduce {
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT, typename ReductionOp, typename T>
  static cudaError_t Reduce(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, int num_segments,
                            BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                            ReductionOp reduction_op, T initial_value, cudaStream_t stream = 0,
                            bool = false, emu_detail::Where where = emu_detail::Where::current()) {
    return reduce("cub::DeviceSegmentedReduce::Reduce", d_temp_storage, temp_storage_bytes, d_in,
                  d_out, num_segments, d_begin_offsets, d_end_offsets, reduction_op, initial_value,
                  stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT>
  static cudaError_t Sum(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                         OutputIteratorT d_out, int num_segments,
                         BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                         cudaStream_t stream = 0, bool = false,
                         emu_detail::Where where = emu_detail::Where::current()) {
    using OutputT = emu_detail::output_value_t<OutputIteratorT, InputIteratorT>;
    return reduce("cub::DeviceSegmentedReduce::Sum", d_temp_storage, temp_storage_bytes, d_in,
                  d_out, num_segments, d_begin_offsets, d_end_offsets, cub::Sum(), OutputT(),
                  stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT>
  static cudaError_t Min(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                         OutputIteratorT d_out, int num_segments,
                         BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                         cudaStream_t stream = 0, bool = false,
                         emu_detail::Where where = emu_detail::Where::current()) {
    using InputT = cub::detail::value_t<InputIteratorT>;
    return reduce("cub::DeviceSegmentedReduce::Min", d_temp_storage, temp_storage_bytes, d_in,
                  d_out, num_segments, d_begin_offsets, d_end_offsets, cub::Min(),
                  Traits<InputT>::Max(), stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT>
  static cudaError_t Max(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                         OutputIteratorT d_out, int num_segments,
                         BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                         cudaStream_t stream = 0, bool = false,
                         emu_detail::Where where = emu_detail::Where::current()) {
    using InputT = cub::detail::value_t<InputIteratorT>;
    return reduce("cub::DeviceSegmentedReduce::Max", d_temp_storage, temp_storage_bytes, d_in,
                  d_out, num_segments, d_begin_offsets, d_end_offsets, cub::Max(),
                  Traits<InputT>::Lowest(), stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT>
  static cudaError_t ArgMin(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, int num_segments,
                            BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                            cudaStream_t stream = 0, bool = false,
                            emu_detail::Where where = emu_detail::Where::current()) {
    using InputT = cub::detail::value_t<InputIteratorT>;
    return arg_reduce("cub::DeviceSegmentedReduce::ArgMin", d_temp_storage, temp_storage_bytes,
                      d_in, d_out, num_segments, d_begin_offsets, d_end_offsets, cub::ArgMin(),
                      Traits<InputT>::Max(), stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT>
  static cudaError_t ArgMax(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, int num_segments,
                            BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                            cudaStream_t stream = 0, bool = false,
                            emu_detail::Where where = emu_detail::Where::current()) {
    using InputT = cub::detail::value_t<InputIteratorT>;
    return arg_reduce("cub::DeviceSegmentedReduce::ArgMax", d_temp_storage, temp_storage_bytes,
                      d_in, d_out, num_segments, d_begin_offsets, d_end_offsets, cub::ArgMax(),
                      Traits<InputT>::Lowest(), stream, where);
  }

 private:
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT, typename ReductionOp, typename T>
  static cudaError_t reduce(const char* algorithm, void* d_temp_storage, size_t& temp_storage_bytes,
                            InputIteratorT d_in, OutputIteratorT d_out, int num_segments,
                            BeginOffsetIteratorT d_begin_offsets, EndOffsetIteratorT d_end_offsets,
                            ReductionOp reduction_op, T initial, cudaStream_t stream,
                            const emu_detail::Where& where) {
    using OutputT = emu_detail::output_value_t<OutputIteratorT, InputIteratorT>;
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, int segments, BeginOffsetIteratorT begins,
           EndOffsetIteratorT ends, ReductionOp op, T first) {
          for (int s = 0; s < segments; ++s) {
            OutputT total = static_cast<OutputT>(first);
            for (auto i = begins[s]; i < ends[s]; ++i) total = op(total, in[i]);
            out[s] = total;
          }
        },
        d_in, d_out, num_segments, d_begin_offsets, d_end_offsets, reduction_op, initial);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename BeginOffsetIteratorT,
            typename EndOffsetIteratorT, typename ArgOp, typename ValueT>
  static cudaError_t arg_reduce(const char* algorithm, void* d_temp_storage,
                                size_t& temp_storage_bytes, InputIteratorT d_in,
                                OutputIteratorT d_out, int num_segments,
                                BeginOffsetIteratorT d_begin_offsets,
                                EndOffsetIteratorT d_end_offsets, ArgOp op, ValueT empty,
                                cudaStream_t stream, const emu_detail::Where& where) {
    using InputValueT = cub::detail::value_t<InputIteratorT>;
    using OutputTupleT =
        cub::detail::non_void_value_t<OutputIteratorT, KeyValuePair<int, InputValueT>>;
    using OutputValueT = typename OutputTupleT::Value;
    using OffsetT = typename OutputTupleT::Key;
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, int segments, BeginOffsetIteratorT begins,
           EndOffsetIteratorT ends, ArgOp arg_op, ValueT none) {
          for (int s = 0; s < segments; ++s) {
            OutputTupleT best(1, static_cast<OutputValueT>(none));
            const auto begin = begins[s];
            for (auto i = begin; i < ends[s]; ++i)  // offsets within the segment
              best = arg_op(best, OutputTupleT(static_cast<OffsetT>(i - begin),
                                               static_cast<OutputValueT>(in[i])));
            out[s] = best;
          }
        },
        d_in, d_out, num_segments, d_begin_offsets, d_end_offsets, op, empty);
  }
};

CUB_NAMESPACE_END
