// The checks of global memory: an access must lie inside a live cudaMalloc array, must not read
// bytes that nobody wrote, and two blocks of one launch must not write the same byte without
// atomics. Each array's shadow (memory.h) says who wrote each byte last.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "checks.h"
#include "errors.h"
#include "fast_path.h"
#include "memory.h"
#include "replay.h"
#include "stores_in_flight.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

// Most accesses hit the array of the one before. An index, not a pointer: allocations only grow
// (cudaMalloc appends; cudaDeviceReset clears), and a pointer would dangle when the vector grows.
thread_local size_t last_record = 0;

// The record whose span (array, red zone, rest of the page) holds `a`, or nullptr.
const Allocation* span_holding(uintptr_t a) {
  auto& all = allocations();
  if (last_record < all.size() &&
      a - reinterpret_cast<uintptr_t>(all[last_record].base) < all[last_record].span)
    return &all[last_record];
  auto it = first_allocation_after(a);
  if (it == all.begin()) return nullptr;
  --it;
  if (a - reinterpret_cast<uintptr_t>(it->base) >= it->span) return nullptr;
  last_record = static_cast<size_t>(it - all.begin());
  return &*it;
}

// Where an access outside every array went: "element 103 of the 100-element array allocated at
// f.cu:9: 3 past its last element", or before the first element of the next array.
std::string missed(const Allocation* r, uintptr_t a, unsigned size) {
  auto& all = allocations();
  auto next = first_allocation_after(a);
  const size_t before = next == all.end() ? SIZE_MAX : reinterpret_cast<uintptr_t>(next->base) - a;
  std::ostringstream s;
  if (r != nullptr && a - (reinterpret_cast<uintptr_t>(r->base) + r->bytes) < before) {
    const auto base = reinterpret_cast<uintptr_t>(r->base);
    const size_t elements = r->bytes / size;
    s << "element " << (a - base) / size << " of the " << elements << "-element array (" << r->bytes
      << " bytes, counted in " << bytes_of(size) << ") allocated at " << r->where << ": "
      << (a - base) / size - elements + 1 << " past its last element";
  } else if (next != all.end()) {
    s << (before + size - 1) / size << " element(s) of " << bytes_of(size)
      << " before the first element of the array allocated at " << next->where
      << " (a negative index?)";
  } else {
    s << "no array lies near it";
  }
  return s.str();
}

// Where each array was written in the running launch (distinct code addresses), so that a race
// between blocks names the other block's line too. A block records a store only when it differs
// from its last one: a loop's stores cost a comparison.
struct StoreSite {
  uint32_t launch_stamp;
  const Allocation* array;
  const void* pc;
};
std::mutex store_sites_mutex;
std::vector<StoreSite> store_sites;

// The last stores this worker recorded, with their site parts: a block whose threads alternate
// between a few stores (removeCycles' two branches) finds them here, without the two locks.
struct RecordedStore {
  StoreSite store;
  uint32_t site_part;
};
thread_local RecordedStore recorded_stores[8];
thread_local unsigned next_recorded_store = 0;

}  // namespace

void record_new_store(BlockState& b, const Allocation* r, const void* pc) {
  b.last_store_pc = pc;
  b.last_store_array = r;
  b.last_store_launch = b.launch_stamp;
  for (const RecordedStore& e : recorded_stores)
    if (e.store.launch_stamp == b.launch_stamp && e.store.array == r && e.store.pc == pc) {
      b.last_store_site = e.site_part;
      return;
    }
  b.last_store_site = StoreMark::site_part(store_site(pc));
  recorded_stores[next_recorded_store++ % std::size(recorded_stores)] = {{b.launch_stamp, r, pc},
                                                                         b.last_store_site};
  if (r != nullptr) note_store_in_launch(*r, b.launch_stamp);
  std::lock_guard<std::mutex> lock(store_sites_mutex);
  if (!store_sites.empty() && store_sites.back().launch_stamp != b.launch_stamp)
    store_sites.clear();  // a new launch
  for (const StoreSite& s : store_sites)
    if (s.array == r && s.pc == pc) return;
  if (store_sites.size() < 64) store_sites.push_back({b.launch_stamp, r, pc});
}

std::string element_of(const Allocation& r, uintptr_t a, unsigned size) {
  return "element " + std::to_string((a - reinterpret_cast<uintptr_t>(r.base)) / size) +
         " of the array allocated at " + r.where;
}

namespace {

// Waits until no other worker has a store to bytes [a, a + size) in flight (stores_in_flight.h);
// false if one is still in flight after a second (a worker stopped between its check and its
// store: the bytes' value is not known). This worker's own store is withdrawn meanwhile (two
// workers storing to the same bytes would wait for each other); nobody waits for it yet, since
// its stamp is set after this.
bool wait_for_landing(uintptr_t a, unsigned size) {
  publish_store(0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  bool landed = true;
  const unsigned workers = std::min(stores_claimed.load(std::memory_order_acquire), kMaxWorkers);
  for (const StoreInFlight& other : std::span(stores_in_flight, workers)) {
    for (unsigned spins = 0; landed; ++spins) {
      const uintptr_t s = other.address.load(std::memory_order_acquire);
      if (s == 0 || s + 32 <= a || s >= a + size) break;  // (a store is at most 32 bytes)
      if (spins % 64 == 63) {
        landed = std::chrono::steady_clock::now() < deadline;
        std::this_thread::yield();
      }
    }
  }
  publish_store(a);
  return landed;
}

// " (the kernel writes that array at planted_bugs.cu:136)", or "" when none were recorded.
std::string other_writes(const BlockState& b, const Allocation* r) {
  std::vector<const void*> pcs;
  {
    std::lock_guard<std::mutex> lock(store_sites_mutex);
    for (const StoreSite& s : store_sites)
      if (s.launch_stamp == b.launch_stamp && s.array == r) pcs.push_back(s.pc);
  }
  std::string lines;
  for (const void* pc : pcs)
    if (std::string line = source_line(pc).text();
        !line.empty() && lines.find(line) == std::string::npos)
      lines += (lines.empty() ? "" : ", ") + line;
  return lines.empty() ? "" : " (the kernel writes that array at " + lines + ")";
}

// "element 5 of the array allocated at x.cu:12 (d_A), which block (1,0,0) also wrote in this
// launch (the kernel writes that array at x.cu:20)": what a race between blocks is about.
std::string written_by_another_block(const BlockState& b, const Allocation& r, uintptr_t a,
                                     unsigned size, uint32_t writer) {
  return element_of(r, a, size) + ", which block " +
         dim(index_of(writer - b.launch_stamp, b.config->grid)) + " also wrote in this launch" +
         other_writes(b, &r);
}

}  // namespace

bool global_bytes_fine(BlockState& b, const Allocation& r, uintptr_t a, unsigned size, bool store,
                       const void* pc) {
  Shadow shadow = r.shadow;
  const size_t offset = a - reinterpret_cast<uintptr_t>(r.base);
  bool own = false;  // this block wrote the first byte (check_global's test for the race table)
  for (unsigned i = 0; i < size; ++i) {
    const uint32_t writer = shadow.writer(offset + i);
    if (writer == 0 && !store) return false;  // unwritten
    if (plain_write_in_launch(writer, b.launch_stamp) && writer != b.stamp)
      return false;  // another block's
    if (i == 0) own = writer == b.stamp;
  }
  if ((store || own || reads_watched(b.launch_stamp, r)) && !rewrites_last_word(b, a, size))
    check_global_race(b, r, a, size, store, pc);
  if (!store) return true;
  record_store(b, &r, pc);
  shadow.set(offset, size, b.stamp);
  shadow.mark_store(offset, size, b.last_store_site | running_thread());
  return true;
}

namespace {
// Whether host code may touch the arena's address a: managed or page-locked memory, which the
// host's fast path then passes (host_access_fine); device memory it may not.
bool host_array_holds(uintptr_t a) {
  HostArrays& recent = host_arrays;
  const uint32_t changes = allocations_changed.load(std::memory_order_relaxed);
  if (recent.changes != changes) recent = HostArrays{.changes = changes};
  const Allocation* r = span_holding(a);
  if (r == nullptr || r->kind == MemoryKind::device) return false;
  recent.base[recent.next] = reinterpret_cast<uintptr_t>(r->base);
  recent.span[recent.next] = r->span;
  recent.next = (recent.next + 1) % HostArrays::kEntries;
  return true;
}

// Host code of a translated file touches the arena: managed and page-locked memory are its to
// touch, device memory is not.
void check_host_code(uintptr_t a, bool store, bool atomic, const void* pc) {
  if (host_array_holds(a)) return;
  const Allocation* r = span_holding(a);
  const char* verb = access_verb(store, atomic);
  diagnose(std::string("host code at ") + at(pc) + " makes " + verb + " device memory" +
           (r ? " (the array allocated at " + r->where + ")" : std::string()) +
           ". The host cannot touch device memory (on a GPU this is a segmentation fault): copy it "
           "with cudaMemcpy, or do the work in a kernel.");
  std::abort();
}
}  // namespace

bool thrust_device::host_may_touch(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return host_access_fine(a) || host_array_holds(a);
}

void check_global(BlockState* b, uintptr_t a, unsigned size, bool store, bool atomic,
                  const void* pc) {
  if (b == nullptr) return check_host_code(a, store, atomic, pc);  // the student's host code
  b->checked_global_epoch = b->epoch;
  const Allocation* r = span_holding(a);
  const char* verb = access_verb(store, atomic);
  if (r == nullptr || a - reinterpret_cast<uintptr_t>(r->base) + size > r->bytes)
    fault(*b, pc, cudaErrorIllegalAddress, "global_out_of_bounds",
          std::string(verb) + " memory outside every array: " + missed(r, a, size) +
              ". Guard the access with a bounds check (if (i < n)) or fix the index.");
  const auto base = reinterpret_cast<uintptr_t>(r->base);
  if (r->freed)
    fault(*b, pc, cudaErrorIllegalAddress, "use_after_free",
          std::string(verb) + " the array allocated at " + r->where + " after cudaFree at " +
              r->freed_where + " released it");
  if (store && (atomic || !r->shadow)) keep_before_store(*b, a, size);  // (others: races')
  if (!r->shadow) return;
  Shadow shadow = r->shadow;
  const size_t offset = a - base;
  uint32_t other_blocks_bytes = 0;  // bytes of this write over another block's (bit i: a + i)
  FirstWrite other_block_write;
  for (unsigned i = 0; i < size; ++i) {
    const uint32_t writer = shadow.writer(offset + i);
    if ((!store || (atomic && !atomic_overwrites)) && writer == 0) {
      const std::string what = std::string(verb) + " " + element_of(*r, a, size) +
                               ", which nobody wrote since cudaMalloc: copy the input there with "
                               "cudaMemcpy (or cudaMemset it) before the kernel reads it";
      if (unwritten_reads_stop()) fault(*b, pc, cudaErrorLaunchFailure, "unwritten_read", what);
      warn_once(*b, pc, "unwritten_read", what);
      shadow.set(offset, size, kHostStamp);  // told: the same bytes are not checked again
      break;
    }
    // Another block of this launch wrote the byte (not with an atomic, and without a
    // __threadfence() that would publish it): a read sees it only if that block happened to run
    // first, and a write of this block's own overwrites it in whatever order the blocks ran.
    const bool other_block = plain_write_in_launch(writer, b->launch_stamp) && writer != b->stamp;
    const bool fenced = b->fenced && other_block && b->fenced[writer - b->launch_stamp].load();
    if (!store && !atomic && other_block && !fenced) {
      b->raced_read = {.word = a & ~uintptr_t{3},
                       .epoch = b->epoch,
                       .thread = running_thread(),
                       .other_block = writer,
                       .read_pc = pc};
      race_found(*b, pc, "race_between_blocks", [&] {
        return "a read of " + written_by_another_block(*b, *r, a, size, writer) +
               ": blocks run in any order (and at once), so the read sees the old or the new "
               "value by chance. Read what another block writes in the next launch (or after "
               "grid.sync()), or write the result to a second array.";
      });
      break;  // (put off for the replay: replay.cpp)
    }
    // Blocks that store the same value leave the same memory whichever runs last (a flag that
    // many threads set): such a write is judged by value once its store has happened
    // (overwrites.cpp), against what the other block left (once its store has landed:
    // stores_in_flight.h). But a block whose writes over other blocks' are mostly the same
    // thread's at the same line is the mark of an index without blockIdx (planted bugs
    // index_without_block, grid_stride_by_block, whose blocks agree): named whatever the values
    // when the block ends, unless its threads also wrote over each other's elements
    // (BlockState::blocks_agree).
    // (Threads that meet by chance, as a graph's frontier does, are a few among many.)
    if (store && !atomic && other_block && !(b->made_atomic && fenced)) {
      const StoreMark mark = shadow.store_mark(offset + i);
      const bool same_thread =
          mark.site() != 0 && mark.thread() == running_thread() && mark.site() == store_site(pc);
      // (a write back of what the thread read there is judged by value, as a lost update)
      const bool writes_back = writes_back_a_raced_read(*b, a & ~uintptr_t{3});
      if (!writes_back && b->writes_over_other_blocks.count(same_thread, a) &&
          b->blocks_agree.empty())
        b->blocks_agree = found_here(
            *b, place_of(pc), "race_between_blocks",
            "a write to " + written_by_another_block(*b, *r, a, size, writer) +
                ", by the same thread at the same line, as most of this block's writes over "
                "other blocks' were: the blocks write the same elements, so the index leaves "
                "out blockIdx (i = blockIdx.x * blockDim.x + threadIdx.x) or a grid-stride "
                "loop steps by blockDim.x instead of gridDim.x * blockDim.x. If the blocks add "
                "into one result, use atomicAdd.");
      if (!wait_for_landing(a, size)) break;
      for (unsigned j = i; j < std::min(size, 32u); ++j)
        if (const uint32_t w = shadow.writer(offset + j);
            plain_write_in_launch(w, b->launch_stamp) && w != b->stamp)
          other_blocks_bytes |= 1u << j;
      other_block_write = {mark.thread(), store_site_pc(mark.site()), writer, writes_back};
      break;
    }
  }
  if (!atomic && (store || shadow.writer(offset) == b->stamp || reads_watched(b->launch_stamp, *r)))
    check_global_race(*b, *r, a, size, store, pc);
  if (other_blocks_bytes != 0)  // (after check_global_race, which judges what waited before)
    wait_for_overwrite(*b, r, a, size, other_blocks_bytes, other_block_write, pc);
  if (store && !atomic) record_store(*b, r, pc);
  if (store || atomic) {
    shadow.set(offset, size, atomic ? (b->stamp | kAtomicBit) : b->stamp);
    const uint32_t site = atomic ? StoreMark::site_part(store_site(pc)) : b->last_store_site;
    shadow.mark_store(offset, size, site | running_thread());
  }
  remember_array(*r);
}

}  // namespace cudalab::emu
