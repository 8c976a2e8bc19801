// The CPU references (reference.h).
#include "cudalab/reference.h"

#include <cstddef>

namespace cudalab::reference {

std::vector<double> matmul(const std::vector<float>& M, const std::vector<float>& N, int I, int J,
                           int K) {
  std::vector<double> P(size_t(I) * K, 0.0);
  for (int i = 0; i < I; ++i)
    for (int j = 0; j < J; ++j)
      for (int k = 0; k < K; ++k)
        P[size_t(i) * K + k] += double(M[size_t(i) * J + j]) * N[size_t(j) * K + k];
  return P;
}

std::vector<double> convolution_1d(const std::vector<float>& N, const std::vector<float>& M) {
  const int width = int(N.size()), mask_width = int(M.size()), n = mask_width / 2;
  std::vector<double> P(width, 0.0);
  for (int i = 0; i < width; ++i)
    for (int j = 0; j < mask_width; ++j)
      if (i - n + j >= 0 && i - n + j < width) P[i] += double(N[i - n + j]) * M[j];
  return P;
}

std::vector<double> convolution_2d(const std::vector<float>& N, const std::vector<float>& M,
                                   int Mask_Width, int height, int width) {
  const int n = Mask_Width / 2;
  std::vector<double> P(size_t(height) * width, 0.0);
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c)
      for (int i = 0; i < Mask_Width; ++i)
        for (int j = 0; j < Mask_Width; ++j) {
          const int rr = r - n + i, cc = c - n + j;
          if (rr >= 0 && rr < height && cc >= 0 && cc < width)
            P[size_t(r) * width + c] += double(N[size_t(rr) * width + cc]) * M[i * Mask_Width + j];
        }
  return P;
}

std::vector<double> jacobi_sweep(const std::vector<float>& u, int ny, int nx) {
  std::vector<double> v(u.begin(), u.end());
  for (int i = 1; i < ny - 1; ++i)
    for (int j = 1; j < nx - 1; ++j)
      v[size_t(i) * nx + j] =
          0.25 * (double(u[size_t(i - 1) * nx + j]) + u[size_t(i + 1) * nx + j] +
                  u[size_t(i) * nx + j - 1] + u[size_t(i) * nx + j + 1]);
  return v;
}

double squared_difference(const std::vector<float>& u, const std::vector<float>& v) {
  double sum = 0;
  for (size_t k = 0; k < u.size(); ++k) sum += (double(v[k]) - u[k]) * (double(v[k]) - u[k]);
  return sum;
}

}  // namespace cudalab::reference
