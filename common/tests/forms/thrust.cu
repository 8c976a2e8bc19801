// Thrust: device vectors sorted, transformed and reduced (Thrust's own algorithms; on emu its C++
// system over managed memory).
// expect: sorted: 1 2 3 5 8
// expect: sum of squares: 103
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <cstdio>

struct Square {
  __host__ __device__ int operator()(int x) const { return x * x; }
};

int main() {
  const int values[] = {5, 3, 8, 1, 2};
  thrust::device_vector<int> v(values, values + 5);
  thrust::sort(v.begin(), v.end());
  std::printf("sorted: %d %d %d %d %d\n", int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]));
  const int squares =
      thrust::transform_reduce(v.begin(), v.end(), Square(), 0, thrust::plus<int>());
  std::printf("sum of squares: %d\n", squares);
  return 0;
}
