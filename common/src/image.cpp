#include "cudalab/image.h"

#include <cctype>
#include <fstream>
#include <limits>

namespace cudalab {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ImageError(path + ": " + what);
}

// The next header number, skipping white space and # comments.
int header_number(std::istream& in, const std::string& path, const char* what) {
  for (;;) {
    int c = in.peek();
    if (c == '#') {
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    } else if (c != EOF && std::isspace(c)) {
      in.get();
    } else {
      break;
    }
  }
  long value = -1;
  if (!(in >> value) || value < 0 || value > 1 << 20)
    fail(path, std::string("bad or missing ") + what + " in the header");
  return static_cast<int>(value);
}

}  // namespace

Image read_pnm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  char magic[2] = {};
  in.read(magic, 2);
  Image img;
  if (magic[0] == 'P' && magic[1] == '5') {
    img.channels = 1;
  } else if (magic[0] == 'P' && magic[1] == '6') {
    img.channels = 3;
  } else {
    fail(path, "not a binary PGM (P5) or PPM (P6) file");
  }
  img.width = header_number(in, path, "width");
  img.height = header_number(in, path, "height");
  int maxval = header_number(in, path, "maximum value");
  if (maxval != 255) fail(path, "maximum value " + std::to_string(maxval) + " (only 255 is read)");
  if (!std::isspace(in.get())) fail(path, "no white space after the header");
  img.pixels.resize(static_cast<size_t>(img.width) * img.height * img.channels);
  in.read(reinterpret_cast<char*>(img.pixels.data()),
          static_cast<std::streamsize>(img.pixels.size()));
  if (static_cast<size_t>(in.gcount()) != img.pixels.size())
    fail(path, "the pixel data ends after " + std::to_string(in.gcount()) + " of " +
                   std::to_string(img.pixels.size()) + " bytes");
  return img;
}

void write_pnm(const std::string& path, const Image& img) {
  if (img.channels != 1 && img.channels != 3) fail(path, "an image has 1 or 3 channels");
  if (img.pixels.size() != static_cast<size_t>(img.width) * img.height * img.channels)
    fail(path, "pixel count does not match width x height x channels");
  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, "cannot create");
  out << (img.channels == 1 ? "P5" : "P6") << "\n" << img.width << " " << img.height << "\n255\n";
  out.write(reinterpret_cast<const char*>(img.pixels.data()),
            static_cast<std::streamsize>(img.pixels.size()));
  if (!out) fail(path, "write failed");
}

}  // namespace cudalab
