// Lab 02 tests: picture scaling, RGB to grey and box blur against CPU references.
// Points per test are in rubric.toml. Inputs are random from a printed seed; every output array
// has poisoned slack behind it, so that a thread writing past the image is caught.
#include <cmath>
#include <vector>

#include "cudalab/device_array.h"
#include "cudalab/performance.h"
#include "cudalab/testing.h"
#include "thread_indexing.h"

namespace {

using cudalab::DeviceArray;
using cudalab::testing::test_seed;

constexpr int kSlack = 64;                 // elements behind each output
constexpr unsigned char kByteMark = 0xAD;  // fill of a byte output's slack
constexpr const char* kHowToIndex =
    "Row = blockIdx.y * blockDim.y + threadIdx.y; Col = blockIdx.x * blockDim.x + threadIdx.x; "
    "the pixel is at Row * width + Col, and only threads with Row < height and Col < width work.";

template <class T>
int stray_writes(const std::vector<T>& out, size_t n, T mark) {
  int stray = 0;
  for (size_t i = n; i < out.size(); ++i) stray += (out[i] == mark) ? 0 : 1;
  return stray;
}

std::vector<unsigned char> random_bytes(size_t n, uint64_t seed) {
  std::vector<unsigned char> v;
  for (int x : cudalab::random_ints(n, seed, 0, 255)) v.push_back(static_cast<unsigned char>(x));
  return v;
}

// --- picture scaling -------------------------------------------------------------------------

void check_scale(int n, int m) {
  size_t pixels = size_t(n) * m;
  std::vector<float> in = cudalab::random_floats(pixels, test_seed(), -100.0f, 100.0f);
  std::vector<double> expected(pixels);
  for (size_t i = 0; i < pixels; ++i) expected[i] = 2.0 * in[i];
  DeviceArray<float> d_in(in);
  DeviceArray<float> d_out(std::vector<float>(pixels, cudalab::poison_float()), kSlack,
                           cudalab::poison_float());
  cudaError_t err = scalePicture(d_in.get(), d_out.get(), n, m);
  if (err != cudaSuccess)
    FAIL() << "scalePicture(" << n << " x " << m << ") returned " << cudalab::error_text(err);
  std::vector<float> out = d_out.to_host();
  EXPECT_MATCHES("Pout", out.data(), expected.data(), pixels, {0.0, 0.0}, {size_t(m), size_t(n)})
      << kHowToIndex;
  EXPECT_COMPUTED_ON_DEVICE("Pout", out.data(), pixels);
  int stray = 0;
  for (size_t i = pixels; i < out.size(); ++i) stray += cudalab::is_poison(out[i]) ? 0 : 1;
  EXPECT_EQ(stray, 0) << "pictureKernel wrote " << stray << " elements past the end of a " << n
                      << " x " << m << " picture: threads outside it must not write.";
}

TEST(Picture, CourseExample76x62) { check_scale(76, 62); }  // 5 x 4 blocks, four regions
TEST(Picture, OnePixel) { check_scale(1, 1); }
TEST(Picture, OneRow) { check_scale(300, 1); }
TEST(Picture, OneColumn) { check_scale(1, 300); }
TEST(Picture, Rectangular) { check_scale(123, 45); }

TEST(Picture, Empty) {
  DeviceArray<float> d(1, 1.0f);
  cudaError_t err = scalePicture(d.get(), d.get(), 0, 5);
  EXPECT_EQ(err, cudaSuccess) << "an empty picture must launch nothing (a grid with 0 blocks is "
                                 "refused), but scalePicture returned "
                              << cudalab::error_text(err);
}

// --- RGB to grey -------------------------------------------------------------------------------

// The reference: the weighted sum in double precision, truncated like the conversion to a byte.
std::vector<long long> grey_reference(const std::vector<unsigned char>& rgb, size_t pixels) {
  std::vector<long long> grey(pixels);
  for (size_t p = 0; p < pixels; ++p)
    grey[p] =
        static_cast<long long>(0.21 * rgb[3 * p] + 0.71 * rgb[3 * p + 1] + 0.07 * rgb[3 * p + 2]);
  return grey;
}

void check_grey(int width, int height, const std::vector<unsigned char>& rgb) {
  size_t pixels = size_t(width) * height;
  DeviceArray<unsigned char> d_rgb(rgb);
  DeviceArray<unsigned char> d_grey(std::vector<unsigned char>(pixels, kByteMark), kSlack,
                                    kByteMark);
  cudaError_t err = colorToGrayscale(d_grey.get(), d_rgb.get(), width, height);
  if (err != cudaSuccess)
    FAIL() << "colorToGrayscale(" << width << " x " << height << ") returned "
           << cudalab::error_text(err);
  std::vector<unsigned char> grey = d_grey.to_host();
  std::vector<long long> expected = grey_reference(rgb, pixels);
  // The GPU computes in float: near a whole number, its truncation may land one lower or higher.
  EXPECT_COMPUTED_ON_DEVICE("Pout", grey.data(), pixels);
  EXPECT_MATCHES("Pout", grey.data(), expected.data(), pixels, 1, {size_t(height), size_t(width)})
      << "grey = 0.21 red + 0.71 green + 0.07 blue, where the pixel's bytes are at 3 * (Row * "
         "width "
         "+ Col) + 0, 1 and 2. "
      << kHowToIndex;
  EXPECT_EQ(stray_writes(grey, pixels, kByteMark), 0)
      << "colorToGrayscaleKernel wrote past the image";
}

TEST(Grayscale, ChannelOrder) {
  // Pure red, green, blue, white and black: each channel's weight on its own.
  std::vector<unsigned char> rgb = {255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0};
  check_grey(5, 1, rgb);
}
TEST(Grayscale, CourseExample76x62) { check_grey(76, 62, random_bytes(76 * 62 * 3, test_seed())); }
TEST(Grayscale, OnePixel) { check_grey(1, 1, {10, 200, 30}); }
TEST(Grayscale, Rectangular) { check_grey(37, 91, random_bytes(37 * 91 * 3, test_seed())); }

// --- blur --------------------------------------------------------------------------------------

std::vector<long long> blur_reference(const std::vector<unsigned char>& in, int w, int h) {
  std::vector<long long> out(size_t(w) * h);
  for (int row = 0; row < h; ++row)
    for (int col = 0; col < w; ++col) {
      long long sum = 0, count = 0;
      for (int r = std::max(0, row - BLUR_SIZE); r <= std::min(h - 1, row + BLUR_SIZE); ++r)
        for (int c = std::max(0, col - BLUR_SIZE); c <= std::min(w - 1, col + BLUR_SIZE); ++c) {
          sum += in[size_t(r) * w + c];
          ++count;
        }
      out[size_t(row) * w + col] = sum / count;
    }
  return out;
}

void check_blur(int w, int h, const std::vector<unsigned char>& in) {
  size_t pixels = size_t(w) * h;
  DeviceArray<unsigned char> d_in(in);
  DeviceArray<unsigned char> d_out(std::vector<unsigned char>(pixels, kByteMark), kSlack,
                                   kByteMark);
  cudaError_t err = blur(d_in.get(), d_out.get(), w, h);
  if (err != cudaSuccess)
    FAIL() << "blur(" << w << " x " << h << ") returned " << cudalab::error_text(err);
  std::vector<unsigned char> out = d_out.to_host();
  std::vector<long long> expected = blur_reference(in, w, h);
  EXPECT_COMPUTED_ON_DEVICE("out", out.data(), pixels);
  EXPECT_MATCHES("out", out.data(), expected.data(), pixels, 0, {size_t(h), size_t(w)})
      << "Each pixel is the integer average of the pixels of its (2 * BLUR_SIZE + 1)^2 box that "
         "lie "
         "inside the image: count only those (at an edge or a corner the box has fewer).";
  EXPECT_EQ(stray_writes(out, pixels, kByteMark), 0) << "blurKernel wrote past the image";
}

TEST(Blur, OnePixel) { check_blur(1, 1, {77}); }
TEST(Blur, Corners) {
  // 3 x 3 ones around a 255 in the corner: the corner's box has 4 pixels, the centre's 9.
  check_blur(3, 3, {255, 1, 1, 1, 1, 1, 1, 1, 1});
}
TEST(Blur, CourseExample76x62) { check_blur(76, 62, random_bytes(76 * 62, test_seed())); }
TEST(Blur, NarrowerThanTheBox) { check_blur(2, 50, random_bytes(2 * 50, test_seed())); }
TEST(Blur, Rectangular) { check_blur(131, 29, random_bytes(131 * 29, test_seed())); }

// Performance. On emu: with threadIdx.x choosing the column, a warp's reads and writes fall in a
// few neighbouring sectors. A warp of a 16 x 16 block covers two rows of 16 pixels: each of its
// byte loads (r, g or b, 3 bytes apart) uses about a quarter of the sectors it touches, each byte
// store about half. With x and y swapped every thread touches its own sector: 1/32 used.
TEST(GrayscalePerformance, NeighbouringThreadsNeighbouringPixels) {
  CUDALAB_COUNTING_TEST();
  const int width = 256, height = 64;
  DeviceArray<unsigned char> d_in(random_bytes(width * height * 3, 1)),
      d_out(std::vector<unsigned char>(width * height));
  auto launches = cudalab::performance::count(
      [&] { ASSERT_EQ(colorToGrayscale(d_out.get(), d_in.get(), width, height), cudaSuccess); },
      {"colorToGrayscale", cudalab::performance::flops::grayscale(width * height)});
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_GT(launches[0].global_store_requests, 0u);
  std::printf("[ COUNTED  ] used per sector moved: loads %.2f, stores %.2f\n",
              launches[0].load_efficiency(), launches[0].store_efficiency());
  EXPECT_GE(launches[0].load_efficiency(), 0.15)
      << "neighbouring threads (threadIdx.x) should read neighbouring pixels: col from x, row from "
         "y. "
      << launches[0].worst_line(false);
  EXPECT_GE(launches[0].store_efficiency(), 0.25)
      << "neighbouring threads (threadIdx.x) should write neighbouring pixels: col from x, row "
         "from y. "
      << launches[0].worst_line(false);
}

// On a GPU: grey conversion of an 8192 x 8192 picture (192 MiB in, 64 MiB out) against a
// device copy of the same 256 MiB. The teaching kernel's byte loads, 3 bytes apart, reached 0.44x
// on an H100 (docs/benchmarks.md); the test asks for 0.3x.
TEST(GrayscalePerformance, NearCopyBandwidth) {
  CUDALAB_TIMING_TEST();
  const int width = 8192, height = 8192;
  const size_t pixels = size_t(width) * height;
  DeviceArray<unsigned char> d_in(random_bytes(pixels * 3, 1)),
      d_out{std::vector<unsigned char>(pixels)};
  ASSERT_NO_FATAL_FAILURE(check_grey(64, 64, random_bytes(64 * 64 * 3, 2)));
  DeviceArray<unsigned char> from{std::vector<unsigned char>(pixels * 2)},
      to{std::vector<unsigned char>(pixels * 2)};
  cudalab::performance::expect_speed(
      "colorToGrayscale vs a device copy of the same bytes",
      [&] { colorToGrayscale(d_out.get(), d_in.get(), width, height); },
      cudalab::performance::device_copy(to.get(), from.get(), pixels * 2), 0.3,
      {.bytes = 4.0 * pixels}, cudalab::performance::Output<unsigned char>{d_out.get(), pixels});
}

}  // namespace
