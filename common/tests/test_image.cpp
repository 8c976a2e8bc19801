// PGM/PPM reading and writing, and the errors a student sees for a bad file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "cudalab/image.h"

namespace {

std::string temp_path(const std::string& name) { return ::testing::TempDir() + name; }

void write_text(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string error_of(const std::string& path) {
  try {
    cudalab::read_pnm(path);
  } catch (const cudalab::ImageError& e) {
    return e.what();
  }
  return "";
}

TEST(Image, RoundTripGreyAndColour) {
  for (int channels : {1, 3}) {
    cudalab::Image img{5, 3, channels, {}};
    for (int i = 0; i < 5 * 3 * channels; ++i)
      img.pixels.push_back(static_cast<unsigned char>(i * 7));
    std::string path = temp_path("round_trip.pnm");
    cudalab::write_pnm(path, img);
    cudalab::Image back = cudalab::read_pnm(path);
    EXPECT_EQ(back.width, 5);
    EXPECT_EQ(back.height, 3);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, img.pixels);
  }
}

TEST(Image, HeaderCommentsAreSkipped) {
  std::string path = temp_path("comment.pgm");
  write_text(path, std::string("P5\n# made by hand\n2 1\n255\n") + char(10) + char(200));
  cudalab::Image img = cudalab::read_pnm(path);
  EXPECT_EQ(img.pixels, (std::vector<unsigned char>{10, 200}));
}

TEST(Image, ErrorsNameTheFileAndTheProblem) {
  std::string path = temp_path("bad.pgm");
  write_text(path, "P3\n1 1\n255\n0");
  EXPECT_EQ(error_of(path), path + ": not a binary PGM (P5) or PPM (P6) file");
  write_text(path, "P5\n2 2\n255\nabc");
  EXPECT_EQ(error_of(path), path + ": the pixel data ends after 3 of 4 bytes");
  write_text(path, "P5\n2 x\n255\n");
  EXPECT_EQ(error_of(path), path + ": bad or missing height in the header");
  write_text(path, "P5\n1 1\n65535\n");
  EXPECT_EQ(error_of(path), path + ": maximum value 65535 (only 255 is read)");
  EXPECT_EQ(error_of(temp_path("missing.pgm")), temp_path("missing.pgm") + ": cannot open");
}

}  // namespace
