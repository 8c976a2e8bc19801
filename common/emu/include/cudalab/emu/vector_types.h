// CUDA's vector types (char1 ... double4, dim3) and their make_* functions, with the GPU's sizes
// and alignments: a float4 is 16 bytes aligned to 16, an int2 8 aligned to 8, a uchar3 3 bytes.
#pragma once

#define CUDALAB_VECTOR_TYPES(T, name, a2, a4)                                  \
  struct name##1 {                                                             \
    T x;                                                                       \
  };                                                                           \
  struct alignas(a2) name##2 {                                                 \
    T x, y;                                                                    \
  };                                                                           \
  struct name##3 {                                                             \
    T x, y, z;                                                                 \
  };                                                                           \
  struct alignas(a4) name##4 {                                                 \
    T x, y, z, w;                                                              \
  };                                                                           \
  inline constexpr name##1 make_##name##1(T x) { return {x}; }                 \
  inline constexpr name##2 make_##name##2(T x, T y) { return {x, y}; }         \
  inline constexpr name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; } \
  inline constexpr name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }
// clang-format off
CUDALAB_VECTOR_TYPES(signed char, char, 2, 4)
CUDALAB_VECTOR_TYPES(unsigned char, uchar, 2, 4)
CUDALAB_VECTOR_TYPES(short, short, 4, 8)
CUDALAB_VECTOR_TYPES(unsigned short, ushort, 4, 8)
CUDALAB_VECTOR_TYPES(int, int, 8, 16)
CUDALAB_VECTOR_TYPES(unsigned int, uint, 8, 16)
CUDALAB_VECTOR_TYPES(long, long, 2 * sizeof(long), 16)
CUDALAB_VECTOR_TYPES(unsigned long, ulong, 2 * sizeof(long), 16)
CUDALAB_VECTOR_TYPES(long long, longlong, 16, 16)
CUDALAB_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
CUDALAB_VECTOR_TYPES(float, float, 8, 16)
CUDALAB_VECTOR_TYPES(double, double, 16, 16)
// clang-format on
#undef CUDALAB_VECTOR_TYPES

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};
