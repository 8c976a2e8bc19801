// Binary PGM (P5, grey) and PPM (P6, RGB) images with 8-bit samples: enough to run a lab's kernel
// on a real picture and look at the result in any image viewer.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cudalab {

struct Image {
  int width = 0, height = 0;
  int channels = 1;                   // 1: grey (PGM), 3: interleaved RGB (PPM)
  std::vector<unsigned char> pixels;  // row-major, channels bytes per pixel
};

// Any problem with a file: the message names the file and what is wrong.
struct ImageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Image read_pnm(const std::string& path);
void write_pnm(const std::string& path, const Image& image);

}  // namespace cudalab
