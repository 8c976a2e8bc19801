// Which bytes of a program's output kernels computed: a lab's test passes only if the device did
// the work (an answer computed on the host and copied to the device earns nothing).
//
// Device memory says it through its shadow (memory.h: who wrote each byte last), which only the
// checks keep: the answer is known where the kernels are instrumented (a lab's code always is).
// A cudaMemcpy between arrays carries the writers along with the bytes. Host memory has no
// shadow: each copy from device to host memory is remembered instead (where it went, the bytes
// it brought, which of them kernels wrote), and a host byte counts as a kernel's when the newest
// copy that covers it brought it from a kernel and the host has not changed it since.
#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "cudalab/emu/inspect.h"
#include "errors.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

struct Delivery {
  const char* to;                // host memory
  std::vector<char> bytes;       // what the copy brought
  std::vector<bool> by_kernels;  // per byte: a kernel wrote it in device memory
};
std::mutex mutex;
std::deque<Delivery> deliveries;              // oldest first
size_t delivered_bytes = 0;                   // the bytes they hold
constexpr size_t kDeliveryLimit = 256 << 20;  // older copies are forgotten beyond this

UploadCheck upload_check = nullptr;

bool by_kernel(uint32_t writer) { return writer > kHostStamp; }

// The live array holding [p, p + count) with a shadow, or nullptr.
const Allocation* shadowed(const void* p, size_t count) {
  const Allocation* r = containing(p, false);
  if (r == nullptr || !r->shadow || static_cast<const char*>(p) + count > r->base + r->bytes)
    return nullptr;
  return r;
}
size_t offset_in(const Allocation& r, const void* p) {
  return static_cast<const char*>(p) - r.base;
}

void copy_writers(void* dst, const void* src, size_t count) {
  const Allocation* to = shadowed(dst, count);
  if (to == nullptr) return;
  Shadow shadow = to->shadow;
  if (const Allocation* from = shadowed(src, count))
    shadow.copy(offset_in(*to, dst), from->shadow, offset_in(*from, src), count);
  else  // a writer not known: not held against anyone, and no kernel's work
    shadow.set(offset_in(*to, dst), count, kHostStamp);
}

void remember_delivery(void* dst, const void* src, size_t count) {
  const Allocation* from = shadowed(src, count);
  if (from == nullptr || count > kDeliveryLimit) return;
  Delivery d{static_cast<const char*>(dst), std::vector<char>(count), std::vector<bool>(count)};
  std::memcpy(d.bytes.data(), src, count);
  const size_t first = offset_in(*from, src);
  for (size_t i = 0; i < count; ++i) d.by_kernels[i] = by_kernel(from->shadow.writer(first + i));
  std::lock_guard<std::mutex> lock(mutex);
  delivered_bytes += count;
  deliveries.push_back(std::move(d));
  while (delivered_bytes > kDeliveryLimit) {
    delivered_bytes -= deliveries.front().bytes.size();
    deliveries.pop_front();
  }
}

}  // namespace

void note_copy_writers(void* dst, const void* src, size_t count) {
  if (arena().contains(dst)) {
    if (arena().contains(src))
      copy_writers(dst, src, count);
    else {
      mark_written(dst, count, kHostStamp);
      if (upload_check != nullptr) upload_check(src, count);
    }
  } else if (arena().contains(src)) {
    remember_delivery(dst, src, count);
  }
}

void set_upload_check(UploadCheck check) { upload_check = check; }

void forget_deliveries() {
  std::lock_guard<std::mutex> lock(mutex);
  deliveries.clear();
  delivered_bytes = 0;
}

DeviceWork device_work(const void* p, size_t bytes) {
  DeviceWork work{bytes, 0};
  if (bytes == 0) return work;
  if (arena().contains(p)) {  // managed memory, read by the host where it lies
    if (const Allocation* r = shadowed(p, bytes)) {
      const size_t first = offset_in(*r, p);
      for (size_t i = 0; i < bytes; ++i) work.by_kernels += by_kernel(r->shadow.writer(first + i));
    }
    return work;
  }
  const auto* host = static_cast<const char*>(p);
  std::vector<char> decided(bytes, 0);
  std::lock_guard<std::mutex> lock(mutex);
  for (auto d = deliveries.rbegin(); d != deliveries.rend(); ++d) {  // newest first
    const char* lo = std::max(host, d->to);
    const char* hi = std::min(host + bytes, d->to + d->bytes.size());
    for (const char* c = lo; c < hi; ++c) {
      const size_t i = c - host, j = c - d->to;
      if (decided[i]) continue;
      decided[i] = 1;
      if (d->by_kernels[j] && d->bytes[j] == *c) ++work.by_kernels;
    }
  }
  return work;
}

}  // namespace cudalab::emu
