// Which bytes of a program's output kernels computed: a lab's test passes only if the device did
// the work (an answer computed on the host and copied to the device earns nothing).
//
// Device memory says it through its shadow (memory.h: who wrote each byte last), which only the
// checks keep: the answer is known where the kernels are instrumented (a lab's code always is).
// A cudaMemcpy between arrays carries the writers along with the bytes. Host memory has no
// shadow: each copy from device to host memory is remembered instead (where it went, the bytes
// it brought, which of them kernels wrote), and a host byte counts as a kernel's when the newest
// copy that covers it brought it from a kernel and the host has not changed it since.
//
// Who stored an element (element_store, for the report of a wrong result) follows the same path:
// a word's writer is a block of a launch (the launches are remembered with their stamps), its store
// mark the thread and the store's line; a copy to host memory keeps, per word it brought, the
// writer and the mark it had, and the launch that stored into the array last.
#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "checks.h"
#include "cudalab/compare.h"
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
  // Per 4 bytes from `to` on: the writer and the store mark of the device word of the first.
  std::vector<uint32_t> writers, marks;
  uint32_t array_launch;  // the last launch that stored into the array copied from (its stamp)
  size_t held() const { return bytes.size() + 2 * writers.size() * sizeof(uint32_t); }
};
std::mutex mutex;
std::deque<Delivery> deliveries;              // oldest first
size_t delivered_bytes = 0;                   // the memory they hold
constexpr size_t kDeliveryLimit = 256 << 20;  // older copies are forgotten beyond this
// The buffers of the copy forgotten last, for the next (a program that copies the same large
// array back again and again would otherwise have each copy's pages faulted in and zeroed anew).
Delivery spare;

// The code addresses of kernel stores, by site (site 0: none).
std::mutex sites_mutex;
std::vector<const void*> site_pcs{nullptr};
std::unordered_map<const void*, uint32_t> site_of_pc;
constexpr size_t kSites = size_t{1} << (32 - StoreMark::kThreadBits);

// The launches whose stamps the shadows may still hold, newest last.
struct LaunchRecord {
  uint32_t first_stamp;
  unsigned long long blocks;
  std::string kernel;
  records::SourceLine line;
  dim3 grid, block;
  FirstThreadsLoads first_threads{};  // (checks.h)
};
std::deque<LaunchRecord> launches;
constexpr size_t kLaunchesKept = 4096;

const LaunchRecord* launch_of(uint32_t stamp) {
  stamp &= ~kAtomicBit;
  for (auto l = launches.rbegin(); l != launches.rend(); ++l)
    if (stamp >= l->first_stamp && stamp - l->first_stamp < l->blocks) return &*l;
  return nullptr;
}

Dim3 dim3_of(dim3 d) { return {d.x, d.y, d.z}; }
Dim3 index_in(unsigned long long rank, dim3 d) {
  return {static_cast<unsigned>(rank % d.x), static_cast<unsigned>(rank / d.x % d.y),
          static_cast<unsigned>(rank / (1ull * d.x * d.y))};
}

// What the writer and mark of a word say, from launch records (held under `mutex`).
std::optional<ElementStore> store_of(uint32_t writer, StoreMark mark, uint32_t array_launch) {
  if (writer == kEarlierKernelStamp) return std::nullopt;  // a launch no longer remembered
  const bool stored = writer > kEarlierKernelStamp;
  const LaunchRecord* l = launch_of(stored ? writer : array_launch);
  if (l == nullptr) return std::nullopt;
  ElementStore e{.kernel = l->kernel,
                 .launch = l->line,
                 .grid = dim3_of(l->grid),
                 .block = dim3_of(l->block),
                 .stored = stored};
  if (!stored) return e;
  e.atomic = (writer & kAtomicBit) != 0;
  e.block_index = index_in((writer & ~kAtomicBit) - l->first_stamp, l->grid);
  e.thread_index = index_in(mark.thread(), l->block);
  if (const void* pc = store_site_pc(mark.site())) e.store = source_line(pc);
  if (e.block_index.x + e.block_index.y + e.block_index.z == 0 &&
      mark.thread() < FirstThreadsLoads::kThreads) {
    const LoadSites& sites = l->first_threads.thread[mark.thread()];
    std::set<records::SourceLine> lines;  // each load's line, and the calls it was inlined into
    for (unsigned i = 0; i < sites.count; ++i)
      for (const records::SourceLine& line : source_lines(sites.pcs[i])) lines.insert(line);
    e.loads.assign(lines.begin(), lines.end());
  }
  return e;
}

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
  if (const Allocation* from = shadowed(src, count)) {
    shadow.copy(offset_in(*to, dst), from->shadow, offset_in(*from, src), count);
    // (bytes nobody wrote may come: what was seen written is looked at again)
    __atomic_store_n(&to->seen_written, 0, __ATOMIC_RELAXED);
    // The launch that stored into the source counts as the copy's (never one that runs later).
    __atomic_store_n(&to->stored_in_launch,
                     __atomic_load_n(&from->stored_in_launch, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  } else {  // a writer not known: not held against anyone, and no kernel's work
    const size_t offset = offset_in(*to, dst);
    shadow.set(offset, count, kHostStamp);
    note_written(*to, (offset + 3) / 4, (offset + count) / 4);
  }
}

// A delivery's writers (of each word's first byte) and the bytes that kernels wrote, from the
// shadow of the array it came from (its bytes from `first` on, a word's start): a word at a time.
void note_writers_by_word(Delivery& d, const Shadow& shadow, size_t first) {
  const size_t count = d.bytes.size();
  size_t run = 0;  // the bytes from `run` on are, or are not, a kernel's: `kernels`
  bool kernels = false;
  const auto byte_is = [&](size_t at, bool by_kernels) {
    if (by_kernels == kernels) return;
    if (kernels) std::fill(d.by_kernels.begin() + run, d.by_kernels.begin() + at, true);
    run = at;
    kernels = by_kernels;
  };
  for (size_t w = 0; w < d.writers.size(); ++w) {
    uint32_t writer = __atomic_load_n(shadow.words + first / 4 + w, __ATOMIC_ACQUIRE);
    while (writer == kBusy)
      writer = __atomic_load_n(shadow.words + first / 4 + w, __ATOMIC_ACQUIRE);
    if (writer != kMixed) {
      d.writers[w] = writer;
      byte_is(4 * w, by_kernel(writer));
      continue;
    }
    d.writers[w] = shadow.writer(first + 4 * w);
    for (size_t b = 4 * w; b < std::min(4 * w + 4, count); ++b)
      byte_is(b, by_kernel(shadow.writer(first + b)));
  }
  byte_is(count, !kernels);  // (the last run)
}

// The same where the delivery starts inside a word: runs of bytes that kernels wrote, found a
// whole word at a time where its bytes have one writer, and set at once.
void note_writers_by_byte(Delivery& d, const Shadow& shadow, size_t first) {
  const size_t count = d.bytes.size();
  for (size_t i = 0; i < count;) {
    const bool kernels = by_kernel(shadow.writer(first + i));
    size_t end = i + 1;
    while (end < count) {
      const uint32_t writer = __atomic_load_n(shadow.words + (first + end) / 4, __ATOMIC_ACQUIRE);
      if ((first + end) % 4 == 0 && count - end >= 4 && writer != kMixed && writer != kBusy) {
        if (by_kernel(writer) != kernels) break;
        end += 4;
      } else {
        if (by_kernel(shadow.writer(first + end)) != kernels) break;
        ++end;
      }
    }
    if (kernels) std::fill(d.by_kernels.begin() + i, d.by_kernels.begin() + end, true);
    i = end;
  }
  for (size_t w = 0; w < d.writers.size(); ++w) d.writers[w] = shadow.writer(first + 4 * w);
}

void remember_delivery(void* dst, const void* src, size_t count) {
  const Allocation* from = shadowed(src, count);
  if (from == nullptr || count > kDeliveryLimit) return;
  Delivery d;
  {
    std::lock_guard<std::mutex> lock(mutex);
    d = std::move(spare);
  }
  d.to = static_cast<const char*>(dst);
  d.array_launch = __atomic_load_n(&from->stored_in_launch, __ATOMIC_RELAXED);
  d.bytes.resize(count);  // (each is written whole below)
  d.by_kernels.assign(count, false);
  d.writers.resize((count + 3) / 4);
  d.marks.resize((count + 3) / 4);
  std::memcpy(d.bytes.data(), src, count);
  const size_t first = offset_in(*from, src);
  if (first % 4 == 0) {
    note_writers_by_word(d, from->shadow, first);
    std::memcpy(d.marks.data(), from->shadow.stores + first / 4, d.marks.size() * 4);
  } else {
    note_writers_by_byte(d, from->shadow, first);
    for (size_t w = 0; w < d.marks.size(); ++w)
      d.marks[w] = from->shadow.store_mark(first + 4 * w).value;
  }
  std::lock_guard<std::mutex> lock(mutex);
  delivered_bytes += d.held();
  deliveries.push_back(std::move(d));
  while (delivered_bytes > kDeliveryLimit) {
    delivered_bytes -= deliveries.front().held();
    spare = std::move(deliveries.front());
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
  spare = {};
}

uint32_t store_site(const void* pc) {
  std::lock_guard<std::mutex> lock(sites_mutex);
  const auto [it, added] = site_of_pc.try_emplace(pc, static_cast<uint32_t>(site_pcs.size()));
  if (added && site_pcs.size() == kSites) {  // no number left: the store goes without a line
    site_of_pc.erase(it);
    return 0;
  }
  if (added) site_pcs.push_back(pc);
  return it->second;
}

const void* store_site_pc(uint32_t site) {
  std::lock_guard<std::mutex> lock(sites_mutex);
  return site < site_pcs.size() ? site_pcs[site] : nullptr;
}

void remember_launch(const LaunchConfig& config, uint32_t first_stamp) {
  std::lock_guard<std::mutex> lock(mutex);
  if (first_stamp == kEarlierKernelStamp + 1) launches.clear();  // the stamps start again
  launches.push_back({first_stamp, 1ull * config.grid.x * config.grid.y * config.grid.z,
                      config.kernel, place(config.file, config.line), config.grid, config.block});
  if (launches.size() > kLaunchesKept) launches.pop_front();
  first_threads_loads = &launches.back().first_threads;  // (a deque's elements stay put)
}

std::optional<ElementStore> element_store(const void* p, size_t bytes) {
  if (bytes == 0) return std::nullopt;
  if (arena().contains(p)) {
    const Allocation* r = shadowed(p, bytes);
    if (r == nullptr) return std::nullopt;
    const size_t offset = offset_in(*r, p);
    std::lock_guard<std::mutex> lock(mutex);
    return store_of(r->shadow.writer(offset), r->shadow.store_mark(offset),
                    __atomic_load_n(&r->stored_in_launch, __ATOMIC_RELAXED));
  }
  const auto* host = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(mutex);
  for (auto d = deliveries.rbegin(); d != deliveries.rend(); ++d) {  // the newest copy of it
    if (host < d->to || host + bytes > d->to + d->bytes.size()) continue;
    const size_t j = host - d->to;
    if (std::memcmp(d->bytes.data() + j, host, bytes) != 0) return std::nullopt;  // changed since
    return store_of(d->writers[j / 4], {d->marks[j / 4]}, d->array_launch);
  }
  return std::nullopt;
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
