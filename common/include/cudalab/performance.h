// Performance checks of the lab harnesses. A grade is never an absolute time: on a GPU it is a
// ratio to a baseline measured in the same run (the device's copy bandwidth, a reference kernel the
// harness carries); on the emu backend it is a count of memory traffic (common/emu counters).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "cudalab/counters.h"
#include "cudalab/cuda_check.h"
#include "cudalab/records.h"
#ifdef CUDALAB_EMU
#include "cudalab/emu/inspect.h"
#endif

namespace cudalab::performance {

// The median time of `repeats` runs of `work` (which launches on the default stream), after two
// warm-up runs, and the spread of the runs: (slowest quarter - fastest quarter) / median.
struct Timing {
  double ms = 0, spread = 0;
};

template <class Work>
Timing time_once(Work work, int repeats) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 2; ++i) work();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start));
    work();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  return {median, (ms[ms.size() * 3 / 4] - ms[ms.size() / 4]) / median};
}

// Repeats that disagree by more than this are not graded: a busy or throttling GPU would give
// wrong points, so it gives none, and says why.
constexpr double kMaxSpread = 0.25;

// time_once, tried up to three times while the repeats disagree (another process on the GPU).
template <class Work>
Timing time(Work work, int repeats = 21) {
  Timing best = time_once(work, repeats);
  for (int attempt = 1; attempt < 3 && best.spread > kMaxSpread; ++attempt) {
    Timing again = time_once(work, repeats);
    if (again.spread < best.spread) best = again;
  }
  return best;
}

// How many elements of `got` differ from `baseline` by more than tolerance * (1 + |baseline|): a
// timing test first checks that the kernel it times agrees with its baseline.
inline size_t disagreements(const std::vector<float>& got, const std::vector<float>& baseline,
                            float tolerance) {
  size_t wrong = got.size() == baseline.size() ? 0 : std::max(got.size(), baseline.size());
  for (size_t i = 0; i < std::min(got.size(), baseline.size()); ++i)
    wrong += std::abs(got[i] - baseline[i]) <= tolerance * (1 + std::abs(baseline[i])) ? 0 : 1;
  return wrong;
}

// Checks that `work` runs at least `ratio` times as fast as `baseline` (or as `ratio` of it when
// below 1), both timed now. `what` names both in the message.
//
// A timing is graded only if it is plausible (so that work which skips its job once it has been
// checked earns nothing):
//   - no run of `work` may be faster than the least it must do, `floor` (bytes it must move and
//     FLOPs it must compute), at the GPU's peak rates (peak_rates): the roofline. The bytes count
//     only when they are more than twice the L2 cache, which could serve a smaller working set
//     from one run to the next (the tests' arrays are larger);
//   - `output`, the device array that `work` writes, is poisoned before the timed runs and must
//     hold after them what the first run left (floats within 1e-4, other types exactly).
struct Floor {
  double bytes = 0, flops = 0;
};

// The FLOPs of each formula of the workbook (a roofline's operations), for make bench's floors and
// the counting tests' roofline points.
namespace flops {
inline double vector_add(double n) { return n; }
inline double grayscale(double pixels) { return 5 * pixels; }  // 3 products and 2 sums
inline double matmul(double rows, double inner, double cols) {
  return 2 * rows * inner * cols;  // a product and a sum per term
}
inline double convolution(double outputs, double mask_elements) {
  return 2 * outputs * mask_elements;  // a product and a sum per mask element
}
inline double spmv(double entries) { return 2 * entries; }  // a product and a sum per entry
inline double averaging(double elements, double steps) {
  return 3 * elements * steps;  // 2 sums and a division per element and step
}
inline double jacobi(double points) { return 4 * points; }  // 3 sums and a product per point
}  // namespace flops
template <class T>
struct Output {
  const T* device = nullptr;
  size_t count = 0;
};

// The GPU's peak rates, from its attributes: DRAM bandwidth (two transfers per memory clock over
// the bus) and FP32 FLOP/s on CUDA cores (128 lanes per multiprocessor, an FMA counting 2), times
// 16 for tensor cores (dense FP16 on Hopper is about 15 times FP32); and its L2 cache.
struct PeakRates {
  double bytes_per_s = 0, flops_per_s = 0, l2_bytes = 0;
};
inline PeakRates peak_rates() {
  int device = 0, memory_khz = 0, bus_bits = 0, sms = 0, core_khz = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&core_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return {2.0 * memory_khz * 1e3 * bus_bits / 8, 16 * 2.0 * 128 * sms * core_khz * 1e3, double(l2)};
}
// The time below which no run of work that must do `floor` can be (ms).
inline double floor_ms(Floor floor) {
  const PeakRates peak = peak_rates();
  const double bytes = floor.bytes > 2 * peak.l2_bytes ? floor.bytes : 0;
  return 1e3 * std::max(bytes / peak.bytes_per_s, floor.flops / peak.flops_per_s);
}

template <class T>
std::vector<T> download(Output<T> output) {
  std::vector<T> host(output.count);
  CUDA_CHECK(
      cudaMemcpy(host.data(), output.device, output.count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}
// How many elements of `got` differ from `first`: floats by more than 1e-4 relative (a sum of
// atomics changes its order), other types at all.
template <class T>
size_t changed(const std::vector<T>& got, const std::vector<T>& first) {
  if constexpr (std::is_same_v<T, float>) {
    return disagreements(got, first, 1e-4f);
  } else {
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) wrong += got[i] == first[i] ? 0 : 1;
    return wrong;
  }
}

template <class Work, class Baseline, class T = float>
void expect_speed(const std::string& what, Work work, Baseline baseline, double ratio, Floor floor,
                  Output<T> output = {}) {
  std::vector<T> first;
  if (output.device) {
    work();
    first = download(output);
    CUDA_CHECK(cudaMemset(const_cast<T*>(output.device), 0xFF, output.count * sizeof(T)));
  }
  Timing mine = time(work), base = time(baseline);
  const double speed = base.ms / mine.ms, least = floor_ms(floor);
  std::printf("[ PERF     ] %s: %.4f ms vs baseline %.4f ms: %.2fx (needed %.2fx), floor %.4f ms\n",
              what.c_str(), mine.ms, base.ms, speed, ratio, least);
  // For the grader's gradebook and plots, in the report the checker writes.
  ::testing::Test::RecordProperty("speed_ratio", std::to_string(speed));
  ::testing::Test::RecordProperty("needed_ratio", std::to_string(ratio));
  if (output.device) {
    const size_t wrong = changed(download(output), first);
    if (wrong > 0)
      FAIL() << "not graded: after the timed runs, " << wrong << " of " << output.count
             << " elements of the output differ from what the first run wrote (it was poisoned "
                "before them): the timed work must compute its result every time it runs";
  }
  if (mine.ms < least)
    FAIL() << "not graded: " << what << " took " << mine.ms << " ms, less than the " << least
           << " ms that moving " << floor.bytes << " bytes and computing " << floor.flops
           << " FLOPs take at this GPU's peak rates: the work cannot all have been done";
  if (mine.spread > kMaxSpread || base.spread > kMaxSpread)
    FAIL()
        << "not graded: repeated timings of " << what << " differ by "
        << int(100 * std::max(mine.spread, base.spread))
        << "% (more than 25%), so the GPU is busy or changing its clock. Run again on an idle GPU.";
  EXPECT_GE(speed, ratio) << what << ": " << speed << "x the baseline, needs " << ratio << "x";
}

// The time a device-to-device cudaMemcpy of `bytes` takes: the baseline of memory-bound kernels
// (a kernel that reads and writes `bytes` each should come close to it).
inline auto device_copy(void* to, const void* from, size_t bytes) {
  return [=] { CUDA_CHECK(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToDevice)); };
}

}  // namespace cudalab::performance

// Skips a timing test on the emu backend, and a counting test on a GPU.
#ifdef CUDALAB_EMU
#define CUDALAB_TIMING_TEST() \
  GTEST_SKIP() << "a timing test: it runs on a GPU (on emu, the traffic tests grade performance)"
#define CUDALAB_COUNTING_TEST()
#else
#define CUDALAB_TIMING_TEST()
#define CUDALAB_COUNTING_TEST() \
  GTEST_SKIP() << "counts memory traffic on the emu backend (on a GPU, the timing tests grade it)"
#endif

namespace cudalab::performance {
// A counting test's kernel on the report page's roofline (make check): the name the lab's
// interface gives it, and the FLOPs its formula does at the test's size (flops::...).
struct RooflineWork {
  const char* name = nullptr;
  double flops = 0;
};

// The counters of every launch that `work` makes (emu; on a GPU the counting tests skip first).
// With `roofline`, and when the launches are of one kernel, a record gives its FLOPs and the
// sectors its launches moved (records.h; cudalab_tools/report.py draws the point).
template <class Work>
std::vector<LaunchCounters> count(Work work, RooflineWork roofline = {}) {
#ifdef CUDALAB_EMU
  emu::start_counting();
  work();
  std::vector<LaunchCounters> launches = emu::stop_counting();
  const bool one_kernel =
      !launches.empty() && std::all_of(launches.begin(), launches.end(), [&](const auto& c) {
        return c.kernel == launches[0].kernel;
      });
  if (roofline.flops > 0 && one_kernel) {
    unsigned long long sectors = 0;
    for (const LaunchCounters& c : launches)
      sectors += c.global_load_sectors + c.global_store_sectors;
    records::write(records::Record("roofline")
                       .text("name", roofline.name)
                       .number("flops", roofline.flops)
                       .count("sectors", sectors)
                       .count("launches", launches.size())
                       .text("kernel", launches[0].kernel));
  }
  return launches;
#else
  (void)roofline;
  work();
  return {};
#endif
}
}  // namespace cudalab::performance
