// The CPU references of the workbook's formulas, in double precision: each formula written once,
// for the labs' tests, the fast kernels' tests and the benchmarks. Inputs are float (what the
// kernels read), results double (what the kernels are compared with). Arrays are row-major.
// The SpMV reference, y = A x, is cudalab::multiply in sparse.h.
#pragma once

#include <vector>

namespace cudalab::reference {

// P (I x K) = M (I x J) * N (J x K).
std::vector<double> matmul(const std::vector<float>& M, const std::vector<float>& N, int I, int J,
                           int K);

// P[i] = sum over j of N[i - n + j] * M[j], n = Mask_Width / 2, elements outside N taken as 0
// (Mask_Width = M.size()).
std::vector<double> convolution_1d(const std::vector<float>& N, const std::vector<float>& M);

// P[r][c] = sum over i, j of N[r - n + i][c - n + j] * M[i][j], n = Mask_Width / 2, pixels
// outside the height x width image N taken as 0.
std::vector<double> convolution_2d(const std::vector<float>& N, const std::vector<float>& M,
                                   int Mask_Width, int height, int width);

// One Jacobi sweep of the ny x nx grid u: each inner point becomes the mean of its four
// neighbours, the boundary stays as it is.
std::vector<double> jacobi_sweep(const std::vector<float>& u, int ny, int nx);

// The sum over all points of (v - u)^2: how far a sweep moved the grid (u and v the same size).
double squared_difference(const std::vector<float>& u, const std::vector<float>& v);

}  // namespace cudalab::reference
