// cub::DeviceReduce for the emu backend: CUB 1.17's interface, each call one sequential pass on
// the stream (emu_algorithm.cuh says how and what differs from a GPU).
#pragma once

#include <thrust/reduce.h>

#include "../iterator/arg_index_input_iterator.cuh"
#include "../thread/thread_operators.cuh"
#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceReduce {
  template <typename InputIteratorT, typename OutputIteratorT, typename ReductionOpT, typename T>
  static cudaError_t Reduce(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, int num_items, ReductionOpT reduction_op, T init,
                            cudaStream_t stream = 0, bool = false,
                            emu_detail::Where where = emu_detail::Where::current()) {
    return reduce("cub::DeviceReduce::Reduce", d_temp_storage, temp_storage_bytes, d_in, d_out,
                  num_items, reduction_op, init, stream, where);
  }

  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t Sum(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                         OutputIteratorT d_out, int num_items, cudaStream_t stream = 0,
                         bool = false, emu_detail::Where where = emu_detail::Where::current()) {
    using OutputT = emu_detail::output_value_t<OutputIteratorT, InputIteratorT>;
    return reduce("cub::DeviceReduce::Sum", d_temp_storage, temp_storage_bytes, d_in, d_out,
                  num_items, cub::Sum(), OutputT(), stream, where);
  }

  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t Min(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                         OutputIteratorT d_out, int num_items, cudaStream_t stream = 0,
                         bool = false, emu_detail::Where where = emu_detail::Where::current()) {
    using InputT = cub::detail::value_t<InputIteratorT>;
    return reduce("cub::DeviceReduce::Min", d_temp_storage, temp_storage_bytes, d_in, d_out,
                  num_items, cub::Min(), Traits<InputT>::Max(), stream, where);
  }

  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t Max(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                         OutputIteratorT d_out, int num_items, cudaStream_t stream = 0,
                         bool = false, emu_detail::Where where = emu_detail::Where::current()) {
    using InputT = cub::detail::value_t<InputIteratorT>;
    return reduce("cub::DeviceReduce::Max", d_temp_storage, temp_storage_bytes, d_in, d_out,
                  num_items, cub::Max(), Traits<InputT>::Lowest(), stream, where);
  }

  // The first item of least (greatest) value and its offset, as a KeyValuePair; an empty input
  // gives {1, the type's greatest (least) value}, as CUB does.
  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t ArgMin(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, int num_items, cudaStream_t stream = 0,
                            bool = false, emu_detail::Where where = emu_detail::Where::current()) {
    using InputValueT = cub::detail::value_t<InputIteratorT>;
    return arg_reduce("cub::DeviceReduce::ArgMin", d_temp_storage, temp_storage_bytes, d_in, d_out,
                      num_items, cub::ArgMin(), Traits<InputValueT>::Max(), stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t ArgMax(void* d_temp_storage, size_t& temp_storage_bytes, InputIteratorT d_in,
                            OutputIteratorT d_out, int num_items, cudaStream_t stream = 0,
                            bool = false, emu_detail::Where where = emu_detail::Where::current()) {
    using InputValueT = cub::detail::value_t<InputIteratorT>;
    return arg_reduce("cub::DeviceReduce::ArgMax", d_temp_storage, temp_storage_bytes, d_in, d_out,
                      num_items, cub::ArgMax(), Traits<InputValueT>::Lowest(), stream, where);
  }

  template <typename KeysInputIteratorT, typename UniqueOutputIteratorT,
            typename ValuesInputIteratorT, typename AggregatesOutputIteratorT,
            typename NumRunsOutputIteratorT, typename ReductionOpT>
  static cudaError_t ReduceByKey(void* d_temp_storage, size_t& temp_storage_bytes,
                                 KeysInputIteratorT d_keys_in, UniqueOutputIteratorT d_unique_out,
                                 ValuesInputIteratorT d_values_in,
                                 AggregatesOutputIteratorT d_aggregates_out,
                                 NumRunsOutputIteratorT d_num_runs_out, ReductionOpT reduction_op,
                                 int num_items, cudaStream_t stream = 0, bool = false,
                                 emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceReduce::ReduceByKey", d_temp_storage, temp_storage_bytes, stream, where,
        [](KeysInputIteratorT keys, UniqueOutputIteratorT unique, ValuesInputIteratorT values,
           AggregatesOutputIteratorT aggregates, NumRunsOutputIteratorT runs, ReductionOpT op,
           int n) {
          const auto ends = thrust::reduce_by_key(thrust::seq, keys, keys + n, values, unique,
                                                  aggregates, cub::Equality(), op);
          *runs = static_cast<int>(ends.first - unique);
        },
        d_keys_in, d_unique_out, d_values_in, d_aggregates_out, d_num_runs_out, reduction_op,
        num_items);
  }

 private:
  template <typename InputIteratorT, typename OutputIteratorT, typename ReductionOpT, typename T>
  static cudaError_t reduce(const char* algorithm, void* d_temp_storage, size_t& temp_storage_bytes,
                            InputIteratorT d_in, OutputIteratorT d_out, int num_items,
                            ReductionOpT reduction_op, T init, cudaStream_t stream,
                            const emu_detail::Where& where) {
    using OutputT = emu_detail::output_value_t<OutputIteratorT, InputIteratorT>;
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, int n, ReductionOpT op, T first) {
          *out = thrust::reduce(thrust::seq, in, in + n, static_cast<OutputT>(first), op);
        },
        d_in, d_out, num_items, reduction_op, init);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename ArgOp, typename ValueT>
  static cudaError_t arg_reduce(const char* algorithm, void* d_temp_storage,
                                size_t& temp_storage_bytes, InputIteratorT d_in,
                                OutputIteratorT d_out, int num_items, ArgOp op, ValueT empty,
                                cudaStream_t stream, const emu_detail::Where& where) {
    using InputValueT = cub::detail::value_t<InputIteratorT>;
    using OutputTupleT =
        cub::detail::non_void_value_t<OutputIteratorT, KeyValuePair<int, InputValueT>>;
    using OutputValueT = typename OutputTupleT::Value;
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, int n, ArgOp arg_op, ValueT none) {
          OutputTupleT best(1, static_cast<OutputValueT>(none));
          for (int i = 0; i < n; ++i)
            best = arg_op(best, OutputTupleT(i, static_cast<OutputValueT>(in[i])));
          *out = best;
        },
        d_in, d_out, num_items, op, empty);
  }
};

CUB_NAMESPACE_END
