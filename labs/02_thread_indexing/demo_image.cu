// Runs your colorToGrayscale and blur on a picture and writes the results as images you can open.
//   build/<backend>/labs/02_thread_indexing-demo [input.ppm] [output prefix]
// Default input: labs/02_thread_indexing/picture.ppm; outputs: <prefix>gray.pgm, <prefix>blur.pgm.
#include <cstdio>
#include <string>

#include "cudalab/device_array.h"
#include "cudalab/image.h"
#include "thread_indexing.h"

int main(int argc, char** argv) {
  std::string input = argc > 1 ? argv[1] : CUDALAB_LAB_DIR "/picture.ppm";
  std::string prefix = argc > 2 ? argv[2] : "";
  try {
    cudalab::Image rgb = cudalab::read_pnm(input);
    if (rgb.channels != 3) throw cudalab::ImageError(input + ": needs a colour (P6) picture");
    cudalab::Image grey{rgb.width, rgb.height, 1, {}}, blurred = grey;
    size_t pixels = size_t(rgb.width) * rgb.height;
    cudalab::DeviceArray<unsigned char> d_rgb(rgb.pixels), d_grey(pixels, 0), d_blur(pixels, 0);
    CUDA_CHECK(colorToGrayscale(d_grey.get(), d_rgb.get(), rgb.width, rgb.height));
    CUDA_CHECK(blur(d_grey.get(), d_blur.get(), rgb.width, rgb.height));
    grey.pixels = d_grey.to_host();
    blurred.pixels = d_blur.to_host();
    cudalab::write_pnm(prefix + "gray.pgm", grey);
    cudalab::write_pnm(prefix + "blur.pgm", blurred);
    std::printf("%s (%d x %d) -> %sgray.pgm, %sblur.pgm\n", input.c_str(), rgb.width, rgb.height,
                prefix.c_str(), prefix.c_str());
  } catch (const cudalab::ImageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
