// Textures and surfaces on the emu backend: CUDA arrays (cudaMallocArray, cudaMalloc3DArray,
// layered and cubemap), texture objects over arrays, linear and pitched memory, and the fetches
// (tex1Dfetch, tex1D, tex2D, tex3D, tex2DLayered, texCubemap, surf2Dread/write). A fetch follows
// the GPU's rules: coordinates normalised or not, wrap/clamp/mirror/border addressing, point or
// linear filtering with the weight rounded to 1/256 as the texture unit does, and 8- and 16-bit
// integers read as normalised floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cudalab/emu/types.h"

enum cudaChannelFormatKind {
  cudaChannelFormatKindSigned = 0,
  cudaChannelFormatKindUnsigned = 1,
  cudaChannelFormatKindFloat = 2,
  cudaChannelFormatKindNone = 3,
};
struct cudaChannelFormatDesc {
  int x, y, z, w;
  enum cudaChannelFormatKind f;
};
struct cudaArray;
typedef cudaArray* cudaArray_t;
typedef const cudaArray* cudaArray_const_t;
typedef cudaArray* cudaMipmappedArray_t;
#define cudaArrayDefault 0x00
#define cudaArrayLayered 0x01
#define cudaArraySurfaceLoadStore 0x02
#define cudaArrayCubemap 0x04
#define cudaArrayTextureGather 0x08

enum cudaResourceType {
  cudaResourceTypeArray = 0,
  cudaResourceTypeMipmappedArray = 1,
  cudaResourceTypeLinear = 2,
  cudaResourceTypePitch2D = 3,
};
struct cudaResourceDesc {
  enum cudaResourceType resType;
  union {
    struct {
      cudaArray_t array;
    } array;
    struct {
      cudaMipmappedArray_t mipmap;
    } mipmap;
    struct {
      void* devPtr;
      struct cudaChannelFormatDesc desc;
      size_t sizeInBytes;
    } linear;
    struct {
      void* devPtr;
      struct cudaChannelFormatDesc desc;
      size_t width;
      size_t height;
      size_t pitchInBytes;
    } pitch2D;
  } res;
  unsigned int flags;
};
enum cudaTextureAddressMode {
  cudaAddressModeWrap = 0,
  cudaAddressModeClamp = 1,
  cudaAddressModeMirror = 2,
  cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
struct cudaTextureDesc {
  enum cudaTextureAddressMode addressMode[3];
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};
struct cudaResourceViewDesc;
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
enum cudaSurfaceBoundaryMode {
  cudaBoundaryModeZero = 0,
  cudaBoundaryModeClamp = 1,
  cudaBoundaryModeTrap = 2,
};

struct cudaPos {
  size_t x, y, z;
};
inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return {x, y, z}; }
struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  struct cudaPos srcPos;
  struct cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  struct cudaPos dstPos;
  struct cudaPitchedPtr dstPtr;
  struct cudaExtent extent;
  enum cudaMemcpyKind kind;
};

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);
namespace cudalab::emu {
template <class T>
struct Channels;  // the channel format of a texel type
#define CUDALAB_CHANNELS(T, kind)                                                \
  template <>                                                                    \
  struct Channels<T> {                                                           \
    static constexpr int bits = 8 * sizeof(T);                                   \
    static constexpr cudaChannelFormatKind format = cudaChannelFormatKind##kind; \
  };
CUDALAB_CHANNELS(char, Signed)
CUDALAB_CHANNELS(signed char, Signed)
CUDALAB_CHANNELS(unsigned char, Unsigned)
CUDALAB_CHANNELS(short, Signed)
CUDALAB_CHANNELS(unsigned short, Unsigned)
CUDALAB_CHANNELS(int, Signed)
CUDALAB_CHANNELS(unsigned int, Unsigned)
CUDALAB_CHANNELS(float, Float)
#undef CUDALAB_CHANNELS
template <class V>
struct Vector {  // a scalar, or a vector type's element and count
  using type = V;
  static constexpr int count = 1;
};
#define CUDALAB_VECTOR(name, T)     \
  template <>                       \
  struct Vector<name##1> {          \
    using type = T;                 \
    static constexpr int count = 1; \
  };                                \
  template <>                       \
  struct Vector<name##2> {          \
    using type = T;                 \
    static constexpr int count = 2; \
  };                                \
  template <>                       \
  struct Vector<name##4> {          \
    using type = T;                 \
    static constexpr int count = 4; \
  };
CUDALAB_VECTOR(char, signed char)
CUDALAB_VECTOR(uchar, unsigned char)
CUDALAB_VECTOR(short, short)
CUDALAB_VECTOR(ushort, unsigned short)
CUDALAB_VECTOR(int, int)
CUDALAB_VECTOR(uint, unsigned int)
CUDALAB_VECTOR(float, float)
#undef CUDALAB_VECTOR
}  // namespace cudalab::emu
template <class T>
cudaChannelFormatDesc cudaCreateChannelDesc() {
  using V = cudalab::emu::Vector<T>;
  using C = cudalab::emu::Channels<typename V::type>;
  const int b = C::bits;
  return cudaCreateChannelDesc(b, V::count > 1 ? b : 0, V::count > 2 ? b : 0, V::count > 3 ? b : 0,
                               C::format);
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width,
                            size_t height = 0, unsigned flags = 0);
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                              cudaExtent extent, unsigned flags = 0);
cudaError_t cudaFreeArray(cudaArray_t array);
cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned* flags,
                             cudaArray_t array);
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                size_t spitch, size_t width, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                     const void* src, size_t spitch, size_t width, size_t height,
                                     cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                  size_t hOffset, size_t width, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                              size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p);
cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream = nullptr);
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* tex, const cudaResourceDesc* res,
                                    const cudaTextureDesc* desc,
                                    const cudaResourceViewDesc* view = nullptr);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t tex);
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surf, const cudaResourceDesc* res);
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surf);

namespace cudalab::emu {
// A fetch: the texel's channels as doubles (normalised if the texture reads so), filtered.
struct Texel {
  double c[4];
};
Texel fetch(cudaTextureObject_t tex, int dims, float x, float y, float z, int layer);
Texel fetch_element(cudaTextureObject_t tex, long long i);  // tex1Dfetch: no filtering
Texel fetch_cubemap(cudaTextureObject_t tex, float x, float y, float z, int layer);
// Surfaces address bytes in x; they read and write whole texels.
void surface_access(cudaSurfaceObject_t surf, long long x_bytes, long long y, long long z,
                    int layer, void* texel, size_t bytes, bool store, cudaSurfaceBoundaryMode mode);

template <class T>
inline T to_texel(const Texel& t) {
  using V = Vector<T>;
  using E = typename V::type;
  T out{};
  E* e = reinterpret_cast<E*>(&out);
  for (int i = 0; i < V::count; ++i) e[i] = static_cast<E>(t.c[i]);
  return out;
}
}  // namespace cudalab::emu

template <class T>
inline T tex1Dfetch(cudaTextureObject_t tex, int x) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch_element(tex, x));
}
template <class T>
inline T tex1D(cudaTextureObject_t tex, float x) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch(tex, 1, x, 0, 0, -1));
}
template <class T>
inline T tex2D(cudaTextureObject_t tex, float x, float y) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch(tex, 2, x, y, 0, -1));
}
template <class T>
inline T tex2DLod(cudaTextureObject_t tex, float x, float y, float) {
  return tex2D<T>(tex, x, y);
}
template <class T>
inline T tex3D(cudaTextureObject_t tex, float x, float y, float z) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch(tex, 3, x, y, z, -1));
}
template <class T>
inline T tex1DLayered(cudaTextureObject_t tex, float x, int layer) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch(tex, 1, x, 0, 0, layer));
}
template <class T>
inline T tex2DLayered(cudaTextureObject_t tex, float x, float y, int layer) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch(tex, 2, x, y, 0, layer));
}
template <class T>
inline T texCubemap(cudaTextureObject_t tex, float x, float y, float z) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch_cubemap(tex, x, y, z, -1));
}
template <class T>
inline T texCubemapLayered(cudaTextureObject_t tex, float x, float y, float z, int layer) {
  return cudalab::emu::to_texel<T>(cudalab::emu::fetch_cubemap(tex, x, y, z, layer));
}
template <class T>
inline void surf2Dwrite(T data, cudaSurfaceObject_t surf, int x, int y,
                        cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudalab::emu::surface_access(surf, x, y, 0, -1, &data, sizeof(T), true, mode);
}
template <class T>
inline T surf2Dread(cudaSurfaceObject_t surf, int x, int y,
                    cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T data{};
  cudalab::emu::surface_access(surf, x, y, 0, -1, &data, sizeof(T), false, mode);
  return data;
}
template <class T>
inline void surf2Dread(T* data, cudaSurfaceObject_t surf, int x, int y,
                       cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *data = surf2Dread<T>(surf, x, y, mode);
}
template <class T>
inline void surf1Dwrite(T data, cudaSurfaceObject_t surf, int x,
                        cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudalab::emu::surface_access(surf, x, 0, 0, -1, &data, sizeof(T), true, mode);
}
template <class T>
inline T surf1Dread(cudaSurfaceObject_t surf, int x,
                    cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T data{};
  cudalab::emu::surface_access(surf, x, 0, 0, -1, &data, sizeof(T), false, mode);
  return data;
}
template <class T>
inline void surf3Dwrite(T data, cudaSurfaceObject_t surf, int x, int y, int z,
                        cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudalab::emu::surface_access(surf, x, y, z, -1, &data, sizeof(T), true, mode);
}
template <class T>
inline void surf2DLayeredwrite(T data, cudaSurfaceObject_t surf, int x, int y, int layer,
                               cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudalab::emu::surface_access(surf, x, y, 0, layer, &data, sizeof(T), true, mode);
}
