// cub::DeviceScan for the emu backend: CUB 1.17's interface, each call one sequential pass on the
// stream (emu_algorithm.cuh says how and what differs from a GPU). Scans may be in place.
#pragma once

#include <thrust/scan.h>

#include "../thread/thread_operators.cuh"
#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN

struct DeviceScan {
  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t ExclusiveSum(void* d_temp_storage, size_t& temp_storage_bytes,
                                  InputIteratorT d_in, OutputIteratorT d_out, int num_items,
                                  cudaStream_t stream = 0, bool = false,
                                  emu_detail::Where where = emu_detail::Where::current()) {
    using OutputT = emu_detail::output_value_t<OutputIteratorT, InputIteratorT>;
    return exclusive("cub::DeviceScan::ExclusiveSum", d_temp_storage, temp_storage_bytes, d_in,
                     d_out, cub::Sum(), OutputT(), num_items, stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename ScanOpT,
            typename InitValueT>
  static cudaError_t ExclusiveScan(void* d_temp_storage, size_t& temp_storage_bytes,
                                   InputIteratorT d_in, OutputIteratorT d_out, ScanOpT scan_op,
                                   InitValueT init_value, int num_items, cudaStream_t stream = 0,
                                   bool = false,
                                   emu_detail::Where where = emu_detail::Where::current()) {
    return exclusive("cub::DeviceScan::ExclusiveScan", d_temp_storage, temp_storage_bytes, d_in,
                     d_out, scan_op, init_value, num_items, stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT>
  static cudaError_t InclusiveSum(void* d_temp_storage, size_t& temp_storage_bytes,
                                  InputIteratorT d_in, OutputIteratorT d_out, int num_items,
                                  cudaStream_t stream = 0, bool = false,
                                  emu_detail::Where where = emu_detail::Where::current()) {
    return inclusive("cub::DeviceScan::InclusiveSum", d_temp_storage, temp_storage_bytes, d_in,
                     d_out, cub::Sum(), num_items, stream, where);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename ScanOpT>
  static cudaError_t InclusiveScan(void* d_temp_storage, size_t& temp_storage_bytes,
                                   InputIteratorT d_in, OutputIteratorT d_out, ScanOpT scan_op,
                                   int num_items, cudaStream_t stream = 0, bool = false,
                                   emu_detail::Where where = emu_detail::Where::current()) {
    return inclusive("cub::DeviceScan::InclusiveScan", d_temp_storage, temp_storage_bytes, d_in,
                     d_out, scan_op, num_items, stream, where);
  }

  // By key: the scan starts again where a key differs from the one before it.
  template <typename KeysInputIteratorT, typename ValuesInputIteratorT,
            typename ValuesOutputIteratorT, typename EqualityOpT = Equality>
  static cudaError_t ExclusiveSumByKey(void* d_temp_storage, size_t& temp_storage_bytes,
                                       KeysInputIteratorT d_keys_in,
                                       ValuesInputIteratorT d_values_in,
                                       ValuesOutputIteratorT d_values_out, int num_items,
                                       EqualityOpT equality_op = EqualityOpT(),
                                       cudaStream_t stream = 0, bool = false,
                                       emu_detail::Where where = emu_detail::Where::current()) {
    using OutputT = emu_detail::output_value_t<ValuesOutputIteratorT, ValuesInputIteratorT>;
    return ExclusiveScanByKey(d_temp_storage, temp_storage_bytes, d_keys_in, d_values_in,
                              d_values_out, cub::Sum(), OutputT(), num_items, equality_op, stream,
                              false, where);
  }
  template <typename KeysInputIteratorT, typename ValuesInputIteratorT,
            typename ValuesOutputIteratorT, typename ScanOpT, typename InitValueT,
            typename EqualityOpT = Equality>
  static cudaError_t ExclusiveScanByKey(void* d_temp_storage, size_t& temp_storage_bytes,
                                        KeysInputIteratorT d_keys_in,
                                        ValuesInputIteratorT d_values_in,
                                        ValuesOutputIteratorT d_values_out, ScanOpT scan_op,
                                        InitValueT init_value, int num_items,
                                        EqualityOpT equality_op = EqualityOpT(),
                                        cudaStream_t stream = 0, bool = false,
                                        emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceScan::ExclusiveScanByKey", d_temp_storage, temp_storage_bytes, stream, where,
        [](KeysInputIteratorT keys, ValuesInputIteratorT in, ValuesOutputIteratorT out, ScanOpT op,
           InitValueT init, int n, EqualityOpT equal) {
          thrust::exclusive_scan_by_key(thrust::seq, keys, keys + n, in, out, init, equal, op);
        },
        d_keys_in, d_values_in, d_values_out, scan_op, init_value, num_items, equality_op);
  }
  template <typename KeysInputIteratorT, typename ValuesInputIteratorT,
            typename ValuesOutputIteratorT, typename EqualityOpT = Equality>
  static cudaError_t InclusiveSumByKey(void* d_temp_storage, size_t& temp_storage_bytes,
                                       KeysInputIteratorT d_keys_in,
                                       ValuesInputIteratorT d_values_in,
                                       ValuesOutputIteratorT d_values_out, int num_items,
                                       EqualityOpT equality_op = EqualityOpT(),
                                       cudaStream_t stream = 0, bool = false,
                                       emu_detail::Where where = emu_detail::Where::current()) {
    return InclusiveScanByKey(d_temp_storage, temp_storage_bytes, d_keys_in, d_values_in,
                              d_values_out, cub::Sum(), num_items, equality_op, stream, false,
                              where);
  }
  template <typename KeysInputIteratorT, typename ValuesInputIteratorT,
            typename ValuesOutputIteratorT, typename ScanOpT, typename EqualityOpT = Equality>
  static cudaError_t InclusiveScanByKey(void* d_temp_storage, size_t& temp_storage_bytes,
                                        KeysInputIteratorT d_keys_in,
                                        ValuesInputIteratorT d_values_in,
                                        ValuesOutputIteratorT d_values_out, ScanOpT scan_op,
                                        int num_items, EqualityOpT equality_op = EqualityOpT(),
                                        cudaStream_t stream = 0, bool = false,
                                        emu_detail::Where where = emu_detail::Where::current()) {
    return emu_detail::run(
        "cub::DeviceScan::InclusiveScanByKey", d_temp_storage, temp_storage_bytes, stream, where,
        [](KeysInputIteratorT keys, ValuesInputIteratorT in, ValuesOutputIteratorT out, ScanOpT op,
           int n, EqualityOpT equal) {
          thrust::inclusive_scan_by_key(thrust::seq, keys, keys + n, in, out, equal, op);
        },
        d_keys_in, d_values_in, d_values_out, scan_op, num_items, equality_op);
  }

 private:
  template <typename InputIteratorT, typename OutputIteratorT, typename ScanOpT,
            typename InitValueT>
  static cudaError_t exclusive(const char* algorithm, void* d_temp_storage,
                               size_t& temp_storage_bytes, InputIteratorT d_in,
                               OutputIteratorT d_out, ScanOpT scan_op, InitValueT init_value,
                               int num_items, cudaStream_t stream, const emu_detail::Where& where) {
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, ScanOpT op, InitValueT init, int n) {
          thrust::exclusive_scan(thrust::seq, in, in + n, out, init, op);
        },
        d_in, d_out, scan_op, init_value, num_items);
  }
  template <typename InputIteratorT, typename OutputIteratorT, typename ScanOpT>
  static cudaError_t inclusive(const char* algorithm, void* d_temp_storage,
                               size_t& temp_storage_bytes, InputIteratorT d_in,
                               OutputIteratorT d_out, ScanOpT scan_op, int num_items,
                               cudaStream_t stream, const emu_detail::Where& where) {
    return emu_detail::run(
        algorithm, d_temp_storage, temp_storage_bytes, stream, where,
        [](InputIteratorT in, OutputIteratorT out, ScanOpT op, int n) {
          thrust::inclusive_scan(thrust::seq, in, in + n, out, op);
        },
        d_in, d_out, scan_op, num_items);
  }
};

CUB_NAMESPACE_END
