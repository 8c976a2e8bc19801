// Lab 02: mapping threads to 2D data, reference solution.
#include "thread_indexing.h"

// Enough BLOCK_WIDTH x BLOCK_WIDTH blocks to cover `columns` x `rows` pixels.
static dim3 gridFor(int columns, int rows) {
  return dim3((columns + BLOCK_WIDTH - 1) / BLOCK_WIDTH, (rows + BLOCK_WIDTH - 1) / BLOCK_WIDTH);
}

__global__ void pictureKernel(const float* d_Pin, float* d_Pout, int n, int m) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < m && Col < n) d_Pout[Row * n + Col] = 2 * d_Pin[Row * n + Col];
}

cudaError_t scalePicture(const float* d_Pin, float* d_Pout, int n, int m) {
  if (n == 0 || m == 0) return cudaSuccess;  // a grid of 0 blocks would be refused
  pictureKernel<<<gridFor(n, m), dim3(BLOCK_WIDTH, BLOCK_WIDTH)>>>(d_Pin, d_Pout, n, m);
  return cudaGetLastError();
}

__global__ void colorToGrayscaleKernel(unsigned char* Pout, const unsigned char* Pin, int width,
                                       int height) {
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  if (Col < width && Row < height) {
    int greyOffset = Row * width + Col;
    int rgbOffset = greyOffset * 3;  // three bytes per colour pixel
    unsigned char r = Pin[rgbOffset];
    unsigned char g = Pin[rgbOffset + 1];
    unsigned char b = Pin[rgbOffset + 2];
    Pout[greyOffset] = 0.21f * r + 0.71f * g + 0.07f * b;
  }
}

cudaError_t colorToGrayscale(unsigned char* d_Pout, const unsigned char* d_Pin, int width,
                             int height) {
  if (width == 0 || height == 0) return cudaSuccess;
  colorToGrayscaleKernel<<<gridFor(width, height), dim3(BLOCK_WIDTH, BLOCK_WIDTH)>>>(d_Pout, d_Pin,
                                                                                     width, height);
  return cudaGetLastError();
}

__global__ void blurKernel(const unsigned char* in, unsigned char* out, int w, int h) {
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  if (Col < w && Row < h) {
    int pixVal = 0;
    int pixels = 0;
    for (int blurRow = -BLUR_SIZE; blurRow <= BLUR_SIZE; ++blurRow) {
      for (int blurCol = -BLUR_SIZE; blurCol <= BLUR_SIZE; ++blurCol) {
        int curRow = Row + blurRow;
        int curCol = Col + blurCol;
        if (curRow >= 0 && curRow < h && curCol >= 0 && curCol < w) {  // inside the image only
          pixVal += in[curRow * w + curCol];
          ++pixels;
        }
      }
    }
    out[Row * w + Col] = (unsigned char)(pixVal / pixels);
  }
}

cudaError_t blur(const unsigned char* d_in, unsigned char* d_out, int w, int h) {
  if (w == 0 || h == 0) return cudaSuccess;
  blurKernel<<<gridFor(w, h), dim3(BLOCK_WIDTH, BLOCK_WIDTH)>>>(d_in, d_out, w, h);
  return cudaGetLastError();
}
