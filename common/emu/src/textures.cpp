// Textures and surfaces of the emu backend (see cudalab/emu/textures.h): CUDA arrays are host
// buffers of texels, texture and surface objects are numbered descriptions of where the texels
// are and how to read them, and a fetch computes what the GPU's texture unit returns.
#include "cudalab/emu/textures.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <vector>

#include "block.h"
#include "errors.h"
#include "memory.h"
#include "replay.h"
#include "symbolize.h"

struct cudaArray {
  cudaChannelFormatDesc desc;
  size_t width, height, depth;  // depth: 3D depth, or the layers (6 per cube)
  unsigned flags;
  size_t texel;  // bytes per texel
  std::vector<unsigned char> data;
  size_t row() const { return width * texel; }
  size_t slice() const { return row() * std::max<size_t>(height, 1); }
};

namespace cudalab::emu {
namespace {

// Where a texture's or surface's texels are, and how they are laid out.
struct Texels {
  unsigned char* base = nullptr;
  cudaChannelFormatDesc desc{};
  size_t texel = 0, width = 0, height = 1, depth = 1, layers = 1, pitch = 0, slice = 0;
};
struct TextureObject {
  Texels t;
  cudaTextureDesc desc{};
  bool live = true;
};
std::deque<TextureObject> objects;  // texture and surface objects; handle = index + 1

size_t texel_bytes(const cudaChannelFormatDesc& d) { return (d.x + d.y + d.z + d.w) / 8; }

bool valid_format(const cudaChannelFormatDesc& d) {
  for (int bits : {d.x, d.y, d.z, d.w})
    if (bits != 0 && bits != 8 && bits != 16 && bits != 32) return false;
  return d.x > 0 && texel_bytes(d) > 0 && d.f != cudaChannelFormatKindNone;
}

Texels texels_of(const cudaResourceDesc& r, bool& ok) {
  Texels t;
  ok = true;
  switch (r.resType) {
    case cudaResourceTypeArray: {
      cudaArray* a = r.res.array.array;
      if (a == nullptr) break;
      t = {a->data.data(), a->desc,   a->texel, a->width, std::max<size_t>(a->height, 1), 1, 1,
           a->row(),       a->slice()};
      if (a->flags & (cudaArrayLayered | cudaArrayCubemap))
        t.layers = std::max<size_t>(a->depth, 1);
      else
        t.depth = std::max<size_t>(a->depth, 1);
      return t;
    }
    case cudaResourceTypeLinear: {
      const auto& l = r.res.linear;
      if (l.devPtr == nullptr || !valid_format(l.desc)) break;
      t = {static_cast<unsigned char*>(l.devPtr), l.desc, texel_bytes(l.desc), 0, 1, 1, 1, 0, 0};
      t.width = l.sizeInBytes / t.texel;
      t.pitch = t.slice = l.sizeInBytes;
      return t;
    }
    case cudaResourceTypePitch2D: {
      const auto& p = r.res.pitch2D;
      if (p.devPtr == nullptr || !valid_format(p.desc) || p.pitchInBytes < p.width) break;
      t = {static_cast<unsigned char*>(p.devPtr),
           p.desc,
           texel_bytes(p.desc),
           p.width,
           p.height,
           1,
           1,
           p.pitchInBytes,
           p.pitchInBytes * p.height};
      return t;
    }
    default:
      break;
  }
  ok = false;
  return t;
}

// A fetch or surface access that a GPU would fault on: stops the kernel (or, outside one, the
// program) with the message.
[[noreturn]] void illegal(const std::string& message) {
  if (BlockState* b = current_block)
    stop_thread(cudaErrorIllegalAddress,
                in_kernel(*b->config, b->block, ::threadIdx, {}, "texture", message));
  diagnose(message);
  std::abort();
}

TextureObject& object(unsigned long long handle, const char* what) {
  if (handle == 0 || handle > objects.size() || !objects[handle - 1].live)
    illegal(std::string(what) +
            " of a texture or surface object that does not exist (never created, or destroyed)");
  return objects[handle - 1];
}

// Channel k of the texel at `p`, as a double; normalised if asked (8 and 16-bit integers).
double channel(const Texels& t, const unsigned char* p, int k, bool normalized) {
  const int bits[4] = {t.desc.x, t.desc.y, t.desc.z, t.desc.w};
  if (bits[k] == 0) return 0;
  size_t offset = 0;
  for (int i = 0; i < k; ++i) offset += bits[i] / 8;
  p += offset;
  const bool is_signed = t.desc.f == cudaChannelFormatKindSigned;
  double v = 0;
  switch (bits[k]) {
    case 8:
      v = is_signed ? double(*reinterpret_cast<const int8_t*>(p)) : double(*p);
      break;
    case 16: {
      uint16_t u;
      std::memcpy(&u, p, 2);
      v = is_signed ? double(static_cast<int16_t>(u)) : double(u);
      break;
    }
    case 32: {
      if (t.desc.f == cudaChannelFormatKindFloat) {
        float f;
        std::memcpy(&f, p, 4);
        v = f;
      } else {
        uint32_t u;
        std::memcpy(&u, p, 4);
        v = is_signed ? double(static_cast<int32_t>(u)) : double(u);
      }
      break;
    }
  }
  if (normalized && bits[k] < 32 && t.desc.f != cudaChannelFormatKindFloat) {
    const double top = is_signed ? std::ldexp(1.0, bits[k] - 1) - 1 : std::ldexp(1.0, bits[k]) - 1;
    v = std::max(v / top, -1.0);
  }
  return v;
}

// Texel index `i` of `n` under an address mode; -1 for "outside" (border).
long long address(long long i, long long n, cudaTextureAddressMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case cudaAddressModeWrap:
      return ((i % n) + n) % n;
    case cudaAddressModeMirror: {
      long long period = ((i % (2 * n)) + 2 * n) % (2 * n);
      return period < n ? period : 2 * n - 1 - period;
    }
    case cudaAddressModeBorder:
      return -1;
    default:
      return std::clamp<long long>(i, 0, n - 1);
  }
}

// Wrap and mirror need normalised coordinates; with texel coordinates a GPU clamps instead.
cudaTextureAddressMode mode(const cudaTextureDesc& d, int axis) {
  const cudaTextureAddressMode m = d.addressMode[axis];
  if (!d.normalizedCoords && (m == cudaAddressModeWrap || m == cudaAddressModeMirror))
    return cudaAddressModeClamp;
  return m;
}

Texel read(const TextureObject& o, long long x, long long y, long long z, long long layer) {
  const Texels& t = o.t;
  const cudaTextureDesc& d = o.desc;
  const long long ix = address(x, t.width, mode(d, 0));
  const long long iy = address(y, t.height, mode(d, 1));
  const long long iz = address(z, t.depth, mode(d, 2));
  Texel r{};
  if (ix < 0 || iy < 0 || iz < 0) {
    for (int k = 0; k < 4; ++k) r.c[k] = d.borderColor[k];
    return r;
  }
  const unsigned char* p = t.base + (layer * t.depth + iz) * t.slice + iy * t.pitch + ix * t.texel;
  for (int k = 0; k < 4; ++k) r.c[k] = channel(t, p, k, d.readMode == cudaReadModeNormalizedFloat);
  return r;
}

// The weight of linear filtering: 8 fractional bits, as the texture unit keeps.
double weight(double f) { return std::round(f * 256.0) / 256.0; }

}  // namespace

Texel fetch(cudaTextureObject_t tex, int dims, float x, float y, float z, int layer) {
  const TextureObject& o = object(tex, "a fetch");
  const Texels& t = o.t;
  const long long l = layer < 0 ? 0 : std::clamp<long long>(layer, 0, t.layers - 1);
  double u[3] = {x, dims > 1 ? y : 0.0, dims > 2 ? z : 0.0};
  const size_t size[3] = {t.width, t.height, t.depth};
  for (int i = 0; i < dims; ++i) {
    if (!o.desc.normalizedCoords) continue;
    double c = u[i];
    if (o.desc.addressMode[i] == cudaAddressModeWrap) c -= std::floor(c);
    if (o.desc.addressMode[i] == cudaAddressModeMirror) {
      const double f = std::floor(c);
      c = (static_cast<long long>(f) % 2 == 0) ? c - f : 1.0 - (c - f);
    }
    u[i] = c * static_cast<double>(size[i]);
  }
  if (o.desc.filterMode == cudaFilterModePoint)
    return read(o, static_cast<long long>(std::floor(u[0])),
                dims > 1 ? static_cast<long long>(std::floor(u[1])) : 0,
                dims > 2 ? static_cast<long long>(std::floor(u[2])) : 0, l);
  // Linear: the 2, 4 or 8 texels around the point, weighted.
  long long base[3] = {0, 0, 0};
  double a[3] = {0, 0, 0};
  for (int i = 0; i < dims; ++i) {
    const double b = u[i] - 0.5;
    base[i] = static_cast<long long>(std::floor(b));
    a[i] = weight(b - std::floor(b));
  }
  Texel r{};
  for (int corner = 0; corner < (1 << dims); ++corner) {
    double w = 1;
    long long at[3] = {base[0], base[1], base[2]};
    for (int i = 0; i < dims; ++i) {
      const bool high = corner >> i & 1;
      at[i] += high;
      w *= high ? a[i] : 1.0 - a[i];
    }
    if (w == 0) continue;
    const Texel v = read(o, at[0], at[1], at[2], l);
    for (int k = 0; k < 4; ++k) r.c[k] += w * v.c[k];
  }
  return r;
}

Texel fetch_element(cudaTextureObject_t tex, long long i) {
  const TextureObject& o = object(tex, "a fetch");
  if (i < 0 || static_cast<size_t>(i) >= o.t.width) return Texel{};  // 0 outside, as a GPU
  const unsigned char* p = o.t.base + i * o.t.texel;
  Texel r{};
  for (int k = 0; k < 4; ++k)
    r.c[k] = channel(o.t, p, k, o.desc.readMode == cudaReadModeNormalizedFloat);
  return r;
}

// The face of a cube (0..5: +x, -x, +y, -y, +z, -z) and the point on it, as CUDA defines them.
Texel fetch_cubemap(cudaTextureObject_t tex, float x, float y, float z, int layer) {
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  int face;
  float sc, tc, ma;
  if (ax >= ay && ax >= az)
    face = x >= 0 ? 0 : 1, sc = x >= 0 ? -z : z, tc = -y, ma = ax;
  else if (ay >= az)
    face = y >= 0 ? 2 : 3, sc = x, tc = y >= 0 ? z : -z, ma = ay;
  else
    face = z >= 0 ? 4 : 5, sc = z >= 0 ? x : -x, tc = -y, ma = az;
  TextureObject& o = object(tex, "a fetch");
  cudaTextureDesc saved = o.desc;
  o.desc.normalizedCoords = 1;
  o.desc.addressMode[0] = o.desc.addressMode[1] = cudaAddressModeClamp;
  const Texel r =
      fetch(tex, 2, (sc / ma + 1) / 2, (tc / ma + 1) / 2, 0, face + 6 * std::max(layer, 0));
  o.desc = saved;
  return r;
}

void surface_access(cudaSurfaceObject_t surf, long long x_bytes, long long y, long long z,
                    int layer, void* texel, size_t bytes, bool store,
                    cudaSurfaceBoundaryMode mode) {
  TextureObject& o = object(surf, "a surface access");
  const Texels& t = o.t;
  long long x = x_bytes;
  const bool outside = x < 0 || static_cast<size_t>(x) + bytes > t.width * t.texel || y < 0 ||
                       static_cast<size_t>(y) >= t.height || z < 0 ||
                       static_cast<size_t>(z) >= t.depth;
  if (outside) {
    if (mode == cudaBoundaryModeZero) {
      if (!store) std::memset(texel, 0, bytes);
      return;
    }
    if (mode == cudaBoundaryModeTrap)
      illegal("a surface " + std::string(store ? "write" : "read") + " outside the surface: byte " +
              std::to_string(x_bytes) + " of row " + std::to_string(y) +
              " (surfaces address x in bytes: x * sizeof(texel))");
    x = std::clamp<long long>(x, 0, static_cast<long long>(t.width * t.texel - bytes));
    y = std::clamp<long long>(y, 0, static_cast<long long>(t.height) - 1);
    z = std::clamp<long long>(z, 0, static_cast<long long>(t.depth) - 1);
  }
  const long long l = layer < 0 ? 0 : layer;
  unsigned char* p = t.base + (l * t.depth + z) * t.slice + y * t.pitch + x;
  if (store && current_block != nullptr && current_block->replay != nullptr)
    current_block->replay->give_up();  // (texels the checks do not see: no replay undoes them)
  if (store)
    std::memcpy(p, texel, bytes);
  else
    std::memcpy(texel, p, bytes);
}

}  // namespace cudalab::emu

using namespace cudalab::emu;

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return {x, y, z, w, f};
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width,
                            size_t height, unsigned flags) {
  return cudaMalloc3DArray(array, desc, make_cudaExtent(width, height, 0), flags);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                              cudaExtent extent, unsigned flags) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (array == nullptr || desc == nullptr || !valid_format(*desc) || extent.width == 0)
    return set_last_error(cudaErrorInvalidValue);
  if ((flags & cudaArrayCubemap) &&
      (extent.width != extent.height || extent.depth == 0 || extent.depth % 6 != 0))
    return set_last_error(cudaErrorInvalidValue);
  auto* a = new cudaArray{
      *desc, extent.width, extent.height, extent.depth, flags, texel_bytes(*desc), {}};
  a->data.assign(a->slice() * std::max<size_t>(extent.depth, 1), 0);
  *array = a;
  return cudaSuccess;
}

cudaError_t cudaFreeArray(cudaArray_t array) {
  delete array;
  return cudaSuccess;
}

cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned* flags,
                             cudaArray_t array) {
  if (array == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  if (desc) *desc = array->desc;
  if (extent) *extent = {array->width, array->height, array->depth};
  if (flags) *flags = array->flags;
  return cudaSuccess;
}

namespace {
// Rows of `width` bytes between an array (at byte x, row y, slice z) and linear memory.
cudaError_t copy_rows(cudaArray* a, size_t x, size_t y, size_t z, unsigned char* linear,
                      size_t pitch, size_t width, size_t height, size_t depth, size_t slice_pitch,
                      bool to_array) {
  if (a == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  if (x + width > a->row() || y + height > std::max<size_t>(a->height, 1) ||
      z + depth > std::max<size_t>(a->depth, 1)) {
    diagnose("a copy of " + std::to_string(width) + " bytes x " + std::to_string(height) +
             " rows does not fit in the CUDA array (" + std::to_string(a->row()) + " bytes x " +
             std::to_string(std::max<size_t>(a->height, 1)) + " rows)");
    return set_last_error(cudaErrorInvalidValue);
  }
  for (size_t s = 0; s < depth; ++s)
    for (size_t r = 0; r < height; ++r) {
      unsigned char* in_array = a->data.data() + (z + s) * a->slice() + (y + r) * a->row() + x;
      unsigned char* in_linear = linear + s * slice_pitch + r * pitch;
      if (to_array)
        std::memcpy(in_array, in_linear, width);
      else
        std::memcpy(in_linear, in_array, width);
    }
  return cudaSuccess;
}
}  // namespace

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                size_t spitch, size_t width, size_t height, cudaMemcpyKind) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (width > spitch) return set_last_error(cudaErrorInvalidPitchValue);
  return copy_rows(dst, wOffset, hOffset, 0, static_cast<unsigned char*>(const_cast<void*>(src)),
                   spitch, width, height, 1, 0, true);
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                     const void* src, size_t spitch, size_t width, size_t height,
                                     cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                  size_t hOffset, size_t width, size_t height, cudaMemcpyKind) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (width > dpitch) return set_last_error(cudaErrorInvalidPitchValue);
  return copy_rows(const_cast<cudaArray*>(src), wOffset, hOffset, 0,
                   static_cast<unsigned char*>(dst), dpitch, width, height, 1, 0, false);
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                              size_t count, cudaMemcpyKind kind) {
  if (dst == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, dst->row(), std::min(count, dst->row()),
                             (count + dst->row() - 1) / dst->row(), kind);
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                size_t count, cudaMemcpyKind kind) {
  if (src == nullptr) return set_last_error(cudaErrorInvalidResourceHandle);
  return cudaMemcpy2DFromArray(dst, src->row(), src, wOffset, hOffset, std::min(count, src->row()),
                               (count + src->row() - 1) / src->row(), kind);
}

cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  if (cudaError_t e = sticky_error()) return set_last_error(e);
  if (p == nullptr) return set_last_error(cudaErrorInvalidValue);
  const cudaExtent& e = p->extent;
  const size_t depth = std::max<size_t>(e.depth, 1), height = std::max<size_t>(e.height, 1);
  if (p->dstArray != nullptr && p->srcArray == nullptr) {  // linear -> array (width in texels)
    const cudaPitchedPtr& s = p->srcPtr;
    const size_t texel = p->dstArray->texel;
    auto* src = static_cast<unsigned char*>(s.ptr) + p->srcPos.z * s.pitch * s.ysize +
                p->srcPos.y * s.pitch + p->srcPos.x;
    return copy_rows(p->dstArray, p->dstPos.x * texel, p->dstPos.y, p->dstPos.z, src, s.pitch,
                     e.width * texel, height, depth, s.pitch * s.ysize, true);
  }
  if (p->srcArray != nullptr && p->dstArray == nullptr) {  // array -> linear
    const cudaPitchedPtr& d = p->dstPtr;
    const size_t texel = p->srcArray->texel;
    auto* dst = static_cast<unsigned char*>(d.ptr) + p->dstPos.z * d.pitch * d.ysize +
                p->dstPos.y * d.pitch + p->dstPos.x;
    return copy_rows(p->srcArray, p->srcPos.x * texel, p->srcPos.y, p->srcPos.z, dst, d.pitch,
                     e.width * texel, height, depth, d.pitch * d.ysize, false);
  }
  if (p->srcArray == nullptr && p->dstArray == nullptr) {  // linear -> linear (width in bytes)
    // Slice by slice, as cudaMemcpy2D copies (its checks of both ends, and the destination's
    // bytes counted as written).
    const cudaPitchedPtr &s = p->srcPtr, &d = p->dstPtr;
    for (size_t z = 0; z < depth; ++z) {
      void* to = static_cast<char*>(d.ptr) + (p->dstPos.z + z) * d.pitch * d.ysize +
                 p->dstPos.y * d.pitch + p->dstPos.x;
      const void* from = static_cast<const char*>(s.ptr) + (p->srcPos.z + z) * s.pitch * s.ysize +
                         p->srcPos.y * s.pitch + p->srcPos.x;
      if (cudaError_t error = cudaMemcpy2D(to, d.pitch, from, s.pitch, e.width, height, p->kind))
        return error;
    }
    return cudaSuccess;
  }
  diagnose("cudaMemcpy3D from one CUDA array to another is not supported by the emu backend");
  return set_last_error(cudaErrorNotSupported);
}

cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t) { return cudaMemcpy3D(p); }

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* tex, const cudaResourceDesc* res,
                                    const cudaTextureDesc* desc, const cudaResourceViewDesc*) {
  if (tex == nullptr || res == nullptr || desc == nullptr)
    return set_last_error(cudaErrorInvalidValue);
  bool ok = false;
  Texels t = texels_of(*res, ok);
  if (!ok) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> device(device_mutex());
  objects.push_back({t, *desc, true});
  *tex = objects.size();
  return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t tex) {
  std::lock_guard<std::recursive_mutex> device(device_mutex());
  if (tex == 0 || tex > objects.size() || !objects[tex - 1].live)
    return set_last_error(cudaErrorInvalidResourceHandle);
  objects[tex - 1].live = false;
  return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surf, const cudaResourceDesc* res) {
  if (surf == nullptr || res == nullptr || res->resType != cudaResourceTypeArray)
    return set_last_error(cudaErrorInvalidValue);
  cudaTextureDesc desc{};
  return cudaCreateTextureObject(surf, res, &desc);
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surf) {
  return cudaDestroyTextureObject(surf);
}
