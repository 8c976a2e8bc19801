// Lab 02: mapping threads to 2D data. Fill in the TODOs; README.md explains the steps.
#include "thread_indexing.h"

__global__ void pictureKernel(const float* d_Pin, float* d_Pout, int n, int m) {
  // TODO: compute Row (from the y coordinates) and Col (from the x coordinates) of this thread;
  // if the pixel lies inside the picture, store twice its value at Row * n + Col.
}

cudaError_t scalePicture(const float* d_Pin, float* d_Pout, int n, int m) {
  // TODO: a 2D grid of BLOCK_WIDTH x BLOCK_WIDTH blocks that covers n columns and m rows
  // (nothing to launch for an empty picture); launch pictureKernel; return cudaGetLastError().
  return cudaErrorNotYetImplemented;
}

__global__ void colorToGrayscaleKernel(unsigned char* Pout, const unsigned char* Pin, int width,
                                       int height) {
  // TODO: one thread per pixel. The grey pixel is at Row * width + Col; its red, green and blue
  // bytes are the three bytes starting at 3 times that offset.
}

cudaError_t colorToGrayscale(unsigned char* d_Pout, const unsigned char* d_Pin, int width,
                             int height) {
  // TODO: launch colorToGrayscaleKernel over the whole image, as in scalePicture.
  return cudaErrorNotYetImplemented;
}

__global__ void blurKernel(const unsigned char* in, unsigned char* out, int w, int h) {
  // TODO: one thread per pixel: sum the pixels of the box from -BLUR_SIZE to +BLUR_SIZE around it
  // that lie inside the image, count them, and store sum / count.
}

cudaError_t blur(const unsigned char* d_in, unsigned char* d_out, int w, int h) {
  // TODO: launch blurKernel over the whole image.
  return cudaErrorNotYetImplemented;
}
