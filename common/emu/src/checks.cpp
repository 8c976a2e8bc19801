// The checks behind every device access of instrumented code (the student's kernels): what a GPU
// would corrupt or read as garbage stops the kernel here, with the thread, the line and the array.
//
// Global memory: the access must lie inside a live cudaMalloc array; it must not read bytes that
// nobody wrote; two blocks of one launch must not write the same byte without atomics.
// Shared memory: the access must lie inside a __shared__ variable or the dynamic array; it must
// not read what this block never wrote; and between two barriers, a word that one thread wrote
// must not be read or written by another (the missing __syncthreads()).
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>

#include "block.h"
#include "cudalab/poison.h"
#include "errors.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

std::string dim(uint3 d) {
  std::ostringstream s;
  s << "(" << d.x << "," << d.y << "," << d.z << ")";
  return s.str();
}

std::string at(const void* pc) {
  std::string line = source_line(pc);
  return line.empty() ? std::string("an unknown line (build with -g)") : line;
}

[[noreturn]] void fault(const BlockState& b, const void* pc, cudaError_t code,
                        const std::string& what) {
  throw KernelFault{code, launch_site(*b.config) + ", " + who(b) + ", at " + at(pc) + ": " + what};
}

std::string bytes_of(unsigned size) {
  return std::to_string(size) + (size == 1 ? " byte" : " bytes");
}

// A read of memory nobody wrote stops the kernel (the labs' tests), or, with
// CUDALAB_EMU_UNWRITTEN=warn (as `cudalab run` sets), is told once per source line and the kernel
// goes on: real programs sometimes read garbage they then ignore.
bool unwritten_reads_stop() {
  static const bool stop = [] {
    const char* mode = std::getenv("CUDALAB_EMU_UNWRITTEN");
    return mode == nullptr || std::string(mode) != "warn";
  }();
  return stop;
}

void warn_once(const BlockState& b, const void* pc, const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> told;
  const std::string line = at(pc);
  std::lock_guard<std::mutex> lock(mutex);
  if (!told.insert(line).second) return;
  std::fprintf(stderr, "cudalab emu: warning: %s, %s, at %s: %s (told once per line)\n",
               launch_site(*b.config).c_str(), who(b).c_str(), line.c_str(), what.c_str());
}

// ---- global memory ---------------------------------------------------------------------------

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

void check_global(BlockState* b, uintptr_t a, unsigned size, bool store, bool atomic,
                  const void* pc) {
  const Allocation* r = span_holding(a);
  const char* verb = atomic ? "an atomic on" : store ? "a write to" : "a read of";
  if (b == nullptr) {                                           // host code of the student's file
    if (r != nullptr && r->kind != MemoryKind::device) return;  // managed or page-locked memory
    diagnose(
        std::string("host code at ") + at(pc) + " makes " + verb + " device memory" +
        (r ? " (the array allocated at " + r->where + ")" : std::string()) +
        ". The host cannot touch device memory (on a GPU this is a segmentation fault): copy it "
        "with cudaMemcpy, or do the work in a kernel.");
    std::abort();
  }
  if (r == nullptr || a - reinterpret_cast<uintptr_t>(r->base) + size > r->bytes)
    fault(*b, pc, cudaErrorIllegalAddress,
          std::string(verb) + " memory outside every array: " + missed(r, a, size) +
              ". Guard the access with a bounds check (if (i < n)) or fix the index.");
  const auto base = reinterpret_cast<uintptr_t>(r->base);
  if (r->freed)
    fault(*b, pc, cudaErrorIllegalAddress,
          std::string(verb) + " the array allocated at " + r->where + " after cudaFree at " +
              r->freed_where + " released it");
  if (r->shadow == nullptr) return;
  uint32_t* shadow = r->shadow + (a - base);
  for (unsigned i = 0; i < size; ++i) {
    uint32_t writer = __atomic_load_n(shadow + i, __ATOMIC_RELAXED);
    if ((!store || (atomic && !atomic_overwrites)) && writer == 0) {
      const std::string what = std::string(verb) + " element " + std::to_string((a - base) / size) +
                               " of the array allocated at " + r->where +
                               ", which nobody wrote since cudaMalloc: copy the input there with "
                               "cudaMemcpy (or cudaMemset it) before the kernel reads it";
      if (unwritten_reads_stop()) fault(*b, pc, cudaErrorLaunchFailure, what);
      warn_once(*b, pc, what);
      std::fill_n(shadow, size, kHostStamp);  // told: the same bytes are not checked again
      break;
    }
    if (store && !atomic && writer >= b->launch_stamp && !(writer & kAtomicBit) &&
        writer != b->stamp &&
        !(b->made_atomic && b->fenced && b->fenced[writer - b->launch_stamp].load())) {
      const dim3 g = b->config->grid;
      const uint32_t other = writer - b->launch_stamp;
      const uint3 o{other % g.x, other / g.x % g.y, other / (g.x * g.y)};
      fault(*b, pc, cudaErrorLaunchFailure,
            "a write to element " + std::to_string((a - base) / size) +
                " of the array allocated at " + r->where + ", which block " + dim(o) +
                " also wrote in this launch: blocks run in any order, so the result depends on "
                "which one comes last. Give each element one writer, or use atomics.");
    }
  }
  const uint32_t stamp = atomic ? (b->stamp | kAtomicBit) : b->stamp;
  for (unsigned i = 0; i < size; ++i)
    if (store || atomic) __atomic_store_n(shadow + i, stamp, __ATOMIC_RELAXED);
}

// ---- host memory -----------------------------------------------------------------------------

// A kernel reads memory that is neither device, shared nor its own stack: if it lies behind a
// host pointer given as an argument, name the argument.
void check_host(const BlockState& b, uintptr_t a, const void* pc) {
  const LaunchConfig& c = *b.config;
  if (c.pointer_count == 0) return;
  if (program_global(reinterpret_cast<const void*>(a)))
    return;  // the program's globals (__constant__ and __device__ variables)
  const auto frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (a - (frame - (1 << 20)) < (2u << 20)) return;                        // this thread's stack
  if (a - reinterpret_cast<uintptr_t>(c.params) < c.params_bytes) return;  // the kernel's arguments
  for (unsigned i = 0; i < c.pointer_count; ++i) {
    auto p = reinterpret_cast<uintptr_t>(c.pointers[i]);
    if (p == 0 || arena().contains(c.pointers[i])) continue;
    if (a - p < (64u << 20) && !registered_host_memory(a))
      fault(b, pc, cudaErrorIllegalAddress,
            "a read of host memory through argument " + std::to_string(i + 1) +
                " of the kernel, a host pointer. A kernel can only use device memory: pass the "
                "pointer that cudaMalloc gave (d_...), not the host array (h_...).");
  }
}

}  // namespace

extern "C" char __executable_start[], _end[];  // the linker's: where the program's image lies

bool program_global(const void* p) {
  return reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(__executable_start) <
         static_cast<uintptr_t>(_end - __executable_start);
}

void thread_fence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (BlockState* b = current_block; b != nullptr && b->fenced != nullptr)
    b->fenced[b->block_rank].store(true);
}

std::string who(const BlockState& b) {
  return "block " + dim(b.block) + ", thread " + dim(::threadIdx);
}

void check_access(const void* address, unsigned size, bool store, bool atomic, const void* pc) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  BlockState* b = current_block;
  if (atomic && b != nullptr) b->made_atomic = true;  // on any memory: __device__ counters too
  if (b != nullptr && timed_out())
    fault(*b, pc, cudaErrorLaunchTimeout,
          "the kernel was stopped here: it ran past its time limit (CUDALAB_EMU_TIMEOUT seconds) "
          "or was "
          "interrupted (Ctrl-C). "
          "Look for a loop whose condition never changes (a missing increment, a wrong bound).");
  if (arena().contains(address)) {
    check_global(b, a, size, store, atomic, pc);
    if (counting()) count_access(*b, a, size, store, false, atomic, pc);
  } else if (b != nullptr && b->shared != nullptr && b->shared->contains(a)) {
    b->shared->access(*b, a, size, store, atomic, pc);
    if (counting()) count_access(*b, a, size, store, true, atomic, pc);
  } else if (b != nullptr) {
    check_host(*b, a, pc);
  }
}

// ---- shared memory ---------------------------------------------------------------------------

namespace {
constexpr uint16_t kNobody = 0xFFFF;  // no thread (and, as a writer: an atomic)
constexpr unsigned kDynamicRegion = 1;

struct Region {
  std::string name, where;
  size_t offset, bytes;
};
std::mutex regions_mutex;
std::vector<Region> regions = {{"", "", 0, 0}, {"the dynamic (extern __shared__) array", "", 0, 0}};
size_t next_static = SharedSpace::kDynamicSpace;
}  // namespace

// Which bytes of the word the writer and the readers touched: threads that use different bytes
// of one word (a histogram of uchar counters) do not race.
struct SharedSpace::Word {
  uint32_t write_epoch, read_epoch;
  uint16_t writer, reader, other_reader, region;
  uint8_t write_bytes, read_bytes, other_bytes;
  const void *write_pc, *read_pc, *other_pc;
};

SharedSpace::SharedSpace() {
  void* p = mmap(nullptr, kSpace, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void* w = mmap(nullptr, kSpace / 4 * sizeof(Word), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED || w == MAP_FAILED) throw std::bad_alloc();
  base_ = reinterpret_cast<uintptr_t>(p);
  words_ = static_cast<Word*>(w);
}

SharedSpace::~SharedSpace() {
  munmap(reinterpret_cast<void*>(base_), kSpace);
  munmap(words_, kSpace / 4 * sizeof(Word));
}

void SharedSpace::start_launch(size_t bytes) {
  // The dynamic array: poisoned, and its words (only those) belong to it.
  const size_t old_words = (dynamic_bytes_ + 3) / 4, new_words = (bytes + 3) / 4;
  for (size_t w = new_words; w < old_words; ++w) words_[w].region = 0;
  for (size_t w = 0; w < new_words; ++w) {
    words_[w].region = kDynamicRegion;
    std::memcpy(dynamic() + 4 * w, &cudalab::kPoisonBits, 4);
  }
  dynamic_bytes_ = bytes;
}

void SharedSpace::learn(unsigned region) {
  std::lock_guard<std::mutex> lock(regions_mutex);
  const Region& r = regions[region];
  for (size_t w = r.offset / 4; w < (r.offset + r.bytes + 3) / 4; ++w) words_[w].region = region;
  for (size_t i = 0; i < r.bytes; i += 4)
    std::memcpy(reinterpret_cast<char*>(base_) + r.offset + i, &cudalab::kPoisonBits,
                std::min<size_t>(4, r.bytes - i));
  if (known_.size() <= region) known_.resize(region + 1);
  known_[region] = true;
}

char* SharedSpace::address_of(SharedSlot& slot, size_t bytes, size_t align) {
  unsigned region = __atomic_load_n(&slot.region, __ATOMIC_ACQUIRE);
  if (region == 0) {
    std::lock_guard<std::mutex> lock(regions_mutex);
    if (slot.region == 0) {
      // 256 bytes apart: a small overrun lands in no variable.
      size_t offset = round_up(next_static + 256, align);
      if (offset + bytes > kSpace) {
        diagnose("__shared__ variable '" + std::string(slot.name) + "' at " +
                 site(slot.file, slot.line) +
                 " does not fit: the program's __shared__ variables exceed 1 MiB");
        std::abort();
      }
      next_static = offset + bytes;
      regions.push_back({slot.name, site(slot.file, slot.line), offset, bytes});
      slot.offset = offset;
      __atomic_store_n(&slot.region, static_cast<unsigned>(regions.size() - 1), __ATOMIC_RELEASE);
    }
    region = slot.region;
  }
  if (region >= known_.size() || !known_[region]) learn(region);
  return reinterpret_cast<char*>(base_ + slot.offset);
}

std::string SharedSpace::describe_outside(uintptr_t offset, unsigned size) const {
  std::lock_guard<std::mutex> lock(regions_mutex);
  const Region* nearest = nullptr;
  long distance = 0;
  for (size_t i = 1; i < regions.size(); ++i) {
    const Region& r = regions[i];
    if (i == kDynamicRegion ? dynamic_bytes_ == 0 : (i >= known_.size() || !known_[i])) continue;
    size_t bytes = i == kDynamicRegion ? dynamic_bytes_ : r.bytes;
    long d = offset >= r.offset + bytes ? long(offset - (r.offset + bytes)) / size + 1
                                        : -long((r.offset - offset + size - 1) / size);
    if (nearest == nullptr || std::labs(d) < std::labs(distance)) nearest = &r, distance = d;
  }
  if (nearest == nullptr) return "outside every __shared__ variable";
  std::string name = nearest->name == regions[kDynamicRegion].name
                         ? nearest->name
                         : "__shared__ array '" + nearest->name + "'";
  if (!nearest->where.empty()) name += " (declared at " + nearest->where + ")";
  if (distance > 0)
    return std::to_string(distance) + " element(s) of " + bytes_of(size) + " past the end of " +
           name;
  return std::to_string(-distance) + " element(s) of " + bytes_of(size) + " before the start of " +
         name;
}

void SharedSpace::access(BlockState& b, uintptr_t a, unsigned size, bool store, bool atomic,
                         const void* pc) {
  const uintptr_t offset = a - base_;
  const uint16_t me = static_cast<uint16_t>(thread_rank());
  const char* verb = atomic ? "an atomic on" : store ? "a write to" : "a read of";
  for (uintptr_t w = offset / 4; w <= (offset + size - 1) / 4; ++w) {
    Word& s = words_[w];
    // The bytes of this word that the access touches.
    const uintptr_t first = std::max<uintptr_t>(offset, 4 * w),
                    last = std::min<uintptr_t>(offset + size, 4 * w + 4);
    const uint8_t bytes = static_cast<uint8_t>(((1u << (last - first)) - 1) << (first - 4 * w));
    if (s.region == 0)
      fault(b, pc, cudaErrorIllegalAddress,
            std::string(verb) + " shared memory " + describe_outside(offset, size) +
                ". Check the index against the array's size (and the dynamic size given at the "
                "launch).");
    auto other = [&](uint16_t t, const void* their_pc, const char* did) {
      const dim3 d = b.config->block;
      std::string them = t == kNobody ? "an atomic of another thread"
                                      : "thread (" + std::to_string(t % d.x) + "," +
                                            std::to_string(t / d.x % d.y) + "," +
                                            std::to_string(t / (d.x * d.y)) + ")";
      std::string line = t == kNobody ? std::string() : " at " + at(their_pc);
      return them + " " + did + " the same shared word" + line +
             " with no __syncthreads() in between: the result depends on which thread runs first. "
             "Put a "
             "__syncthreads() between the write and the reads.";
    };
    if (atomic) {
      if (s.write_epoch < b.block_epoch && !atomic_overwrites)
        fault(b, pc, cudaErrorLaunchFailure,
              std::string(verb) +
                  " shared memory that no thread of this block wrote: initialise it (and "
                  "__syncthreads()) first");
      s.write_epoch = b.epoch;
      s.writer = kNobody;
      s.write_bytes = bytes;
      continue;
    }
    if (!store) {
      // Read before any write: a missing barrier if another thread writes it later in this
      // round (reported then), else uninitialised memory (reported when the round ends).
      if (s.write_epoch < b.block_epoch && b.unwritten_read.empty()) {
        const std::string what = std::string(verb) +
                                 " shared memory that no thread of this block wrote (shared "
                                 "memory starts as garbage in every block): the value read is "
                                 "undefined";
        if (unwritten_reads_stop())
          b.unwritten_read =
              launch_site(*b.config) + ", " + who(b) + ", at " + at(pc) + ": " + what;
        else
          warn_once(b, pc, what);
      }
      if (s.write_epoch == b.epoch && s.writer != me && (s.write_bytes & bytes))
        fault(b, pc, cudaErrorLaunchFailure,
              std::string(verb) + " shared memory that " + other(s.writer, s.write_pc, "wrote"));
      if (s.read_epoch != b.epoch) {
        s.read_epoch = b.epoch;
        s.reader = me;
        s.read_pc = pc;
        s.read_bytes = bytes;
        s.other_reader = kNobody;
      } else if (s.reader == me) {
        s.read_bytes |= bytes;
      } else if (s.other_reader == kNobody) {
        s.other_reader = me;
        s.other_pc = pc;
        s.other_bytes = bytes;
      }
      continue;
    }
    if (s.write_epoch == b.epoch && s.writer != me && (s.write_bytes & bytes))
      fault(b, pc, cudaErrorLaunchFailure,
            std::string(verb) + " shared memory that " + other(s.writer, s.write_pc, "also wrote"));
    if (s.read_epoch == b.epoch && s.reader != me && (s.read_bytes & bytes))
      fault(b, pc, cudaErrorLaunchFailure,
            std::string(verb) + " shared memory that " + other(s.reader, s.read_pc, "read"));
    if (s.read_epoch == b.epoch && s.other_reader != kNobody && s.other_reader != me &&
        (s.other_bytes & bytes))
      fault(b, pc, cudaErrorLaunchFailure,
            std::string(verb) + " shared memory that " + other(s.other_reader, s.other_pc, "read"));
    if (s.write_epoch == b.epoch && s.writer == me)
      s.write_bytes |= bytes;
    else
      s.write_bytes = bytes;
    s.write_epoch = b.epoch;
    s.writer = me;
    s.write_pc = pc;
  }
}

char* shared_address(SharedSlot& slot, size_t bytes, size_t align) {
  BlockState* b = current_block;
  if (b == nullptr || b->shared == nullptr) {
    diagnose("__shared__ variable '" + std::string(slot.name) + "' at " +
             site(slot.file, slot.line) + " used outside a kernel");
    std::abort();
  }
  return b->shared->address_of(slot, bytes, align);
}

}  // namespace cudalab::emu
