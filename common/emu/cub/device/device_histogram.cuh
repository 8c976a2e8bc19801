// cub::DeviceHistogram for the emu backend: CUB 1.17's interface for one channel, each call one
// sequential pass on the stream (emu_algorithm.cuh says how). A sample's bin is computed as
// CUB computes it (its dispatch's ScaleTransform and SearchTransform), so samples near a bin's
// edge fall in the bin a GPU puts them in. The histogram's counters are zeroed first, as CUB's.
// Multi-channel histograms are refused.
#pragma once

#include <type_traits>

#include "emu_algorithm.cuh"

CUB_NAMESPACE_BEGIN
namespace emu_detail {

// CUB's evenly-spaced bins: scale = (upper - lower) / bins in LevelT; a floating-point LevelT
// keeps its reciprocal; a float or double sample is multiplied by it, any other divided.
template <typename LevelT>
struct EvenBins {
  int bins;
  LevelT lower, upper, scale;
  EvenBins(int num_levels, LevelT lower_level, LevelT upper_level)
      : bins(num_levels - 1), lower(lower_level), upper(upper_level) {
    scale = static_cast<LevelT>((upper - lower) / bins);
    if constexpr (std::is_floating_point_v<LevelT>) scale = LevelT(1.0) / scale;
  }
  template <typename SampleT>
  int operator()(SampleT sample) const {
    const LevelT level = static_cast<LevelT>(sample);
    if (!(level >= lower && level < upper)) return -1;
    if constexpr (std::is_same_v<SampleT, float> || std::is_same_v<SampleT, double>)
      return static_cast<int>((level - lower) * scale);
    else
      return static_cast<int>((level - lower) / scale);
  }
};

// Counts each sample of num_rows rows of num_row_samples (rows row_stride_bytes apart) in its bin.
template <typename SampleIteratorT, typename CounterT, typename OffsetT, typename Bin>
void histogram(SampleIteratorT samples, CounterT* histogram, int bins, OffsetT num_row_samples,
               OffsetT num_rows, size_t row_stride_bytes, const Bin& bin_of) {
  using SampleT = cub::detail::value_t<SampleIteratorT>;
  for (int b = 0; b < bins; ++b) histogram[b] = 0;
  const size_t row_stride = row_stride_bytes / sizeof(SampleT);
  for (OffsetT row = 0; row < num_rows; ++row)
    for (OffsetT i = 0; i < num_row_samples; ++i) {
      const int b = bin_of(samples[row * row_stride + i]);
      if (b >= 0 && b < bins) ++histogram[b];
    }
}

}  // namespace emu_detail

struct DeviceHistogram {
  template <typename SampleIteratorT, typename CounterT, typename LevelT, typename OffsetT>
  static cudaError_t HistogramEven(void* d_temp_storage, size_t& temp_storage_bytes,
                                   SampleIteratorT d_samples, CounterT* d_histogram, int num_levels,
                                   LevelT lower_level, LevelT upper_level, OffsetT num_samples,
                                   cudaStream_t stream = 0, bool = false,
                                   emu_detail::Where where = emu_detail::Where::current()) {
    using SampleT = cub::detail::value_t<SampleIteratorT>;
    return HistogramEven(d_temp_storage, temp_storage_bytes, d_samples, d_histogram, num_levels,
                         lower_level, upper_level, num_samples, OffsetT(1),
                         sizeof(SampleT) * num_samples, stream, false, where);
  }
  template <typename SampleIteratorT, typename CounterT, typename LevelT, typename OffsetT>
  static cudaError_t HistogramEven(void* d_temp_storage, size_t& temp_storage_bytes,
                                   SampleIteratorT d_samples, CounterT* d_histogram, int num_levels,
                                   LevelT lower_level, LevelT upper_level, OffsetT num_row_samples,
                                   OffsetT num_rows, size_t row_stride_bytes,
                                   cudaStream_t stream = 0, bool = false,
                                   emu_detail::Where where = emu_detail::Where::current()) {
    if (num_levels < 2) return cudaErrorInvalidValue;
    return emu_detail::run(
        "cub::DeviceHistogram::HistogramEven", d_temp_storage, temp_storage_bytes, stream, where,
        [](SampleIteratorT samples, CounterT* histogram, int levels, LevelT lower, LevelT upper,
           OffsetT row_samples, OffsetT rows, size_t stride) {
          emu_detail::histogram(samples, histogram, levels - 1, row_samples, rows, stride,
                                emu_detail::EvenBins<LevelT>(levels, lower, upper));
        },
        d_samples, d_histogram, num_levels, lower_level, upper_level, num_row_samples, num_rows,
        row_stride_bytes);
  }
  template <typename SampleIteratorT, typename CounterT, typename LevelT, typename OffsetT>
  static cudaError_t HistogramRange(void* d_temp_storage, size_t& temp_storage_bytes,
                                    SampleIteratorT d_samples, CounterT* d_histogram,
                                    int num_levels, LevelT* d_levels, OffsetT num_samples,
                                    cudaStream_t stream = 0, bool = false,
                                    emu_detail::Where where = emu_detail::Where::current()) {
    using SampleT = cub::detail::value_t<SampleIteratorT>;
    return HistogramRange(d_temp_storage, temp_storage_bytes, d_samples, d_histogram, num_levels,
                          d_levels, num_samples, OffsetT(1), sizeof(SampleT) * num_samples, stream,
                          false, where);
  }
  // Bin i holds the samples in [levels[i], levels[i + 1]).
  template <typename SampleIteratorT, typename CounterT, typename LevelT, typename OffsetT>
  static cudaError_t HistogramRange(void* d_temp_storage, size_t& temp_storage_bytes,
                                    SampleIteratorT d_samples, CounterT* d_histogram,
                                    int num_levels, LevelT* d_levels, OffsetT num_row_samples,
                                    OffsetT num_rows, size_t row_stride_bytes,
                                    cudaStream_t stream = 0, bool = false,
                                    emu_detail::Where where = emu_detail::Where::current()) {
    if (num_levels < 2) return cudaErrorInvalidValue;
    return emu_detail::run(
        "cub::DeviceHistogram::HistogramRange", d_temp_storage, temp_storage_bytes, stream, where,
        [](SampleIteratorT samples, CounterT* histogram, int levels, LevelT* edges,
           OffsetT row_samples, OffsetT rows, size_t stride) {
          const auto bin_of = [&](auto sample) {
            const LevelT level = static_cast<LevelT>(sample);
            if (!(level >= edges[0] && level < edges[levels - 1])) return -1;
            int bin = 0;  // the last edge not above the sample
            while (bin + 1 < levels - 1 && !(level < edges[bin + 1])) ++bin;
            return bin;
          };
          emu_detail::histogram(samples, histogram, levels - 1, row_samples, rows, stride, bin_of);
        },
        d_samples, d_histogram, num_levels, d_levels, num_row_samples, num_rows, row_stride_bytes);
  }
  CUB_EMU_UNSUPPORTED(DeviceHistogram, MultiHistogramEven, "histograms of several channels")
  CUB_EMU_UNSUPPORTED(DeviceHistogram, MultiHistogramRange, "histograms of several channels")
};

CUB_NAMESPACE_END
