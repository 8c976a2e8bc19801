// Where __shared__ variables lie: each gets a region of the block's shared space the first time a
// kernel uses it (256 bytes apart, so that a small overrun lands in no variable), poisoned; the
// dynamic array comes first. describe_outside names the variable an access missed.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "checks.h"
#include "cudalab/poison.h"
#include "errors.h"
#include "memory.h"

namespace cudalab::emu {

namespace {
constexpr unsigned kDynamicRegion = 1;

struct Region {
  std::string name, where;
  size_t offset, bytes;
  SharedShape shape{};
};
std::mutex regions_mutex;
std::vector<Region> regions = {{"", "", 0, 0}, {"the dynamic (extern __shared__) array", "", 0, 0}};
size_t next_static = SharedSpace::kDynamicSpace;
}  // namespace

SharedSpace::SharedSpace() {
  void* p = mmap(nullptr, kSpace, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void* w = mmap(nullptr, kSpace / 4 * sizeof(Word), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void* proven = mmap(nullptr, kSpace / 4 / 64 * sizeof(ProvenWritten), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED || w == MAP_FAILED || proven == MAP_FAILED) throw std::bad_alloc();
  base_ = reinterpret_cast<uintptr_t>(p);
  words_ = static_cast<Word*>(w);
  proven_written_ = static_cast<ProvenWritten*>(proven);  // (zeros: no block's epoch is 0)
}

SharedSpace::~SharedSpace() {
  munmap(reinterpret_cast<void*>(base_), kSpace);
  munmap(words_, kSpace / 4 * sizeof(Word));
  munmap(proven_written_, kSpace / 4 / 64 * sizeof(ProvenWritten));
}

void SharedSpace::start_launch(size_t bytes) {
  // The dynamic array: poisoned, and its words (only those) belong to it.
  const size_t old_words = (dynamic_bytes_ + 3) / 4, new_words = (bytes + 3) / 4;
  for (size_t w = new_words; w < old_words; ++w) words_[w].region = 0;
  for (size_t w = 0; w < new_words; ++w) words_[w].region = kDynamicRegion;
  cudalab::fill_with_poison(dynamic(), 4 * new_words);
  dynamic_bytes_ = bytes;
}

void SharedSpace::learn(unsigned region) {
  std::lock_guard<std::mutex> lock(regions_mutex);
  const Region& r = regions[region];
  for (size_t w = r.offset / 4; w < (r.offset + r.bytes + 3) / 4; ++w) words_[w].region = region;
  cudalab::fill_with_poison(reinterpret_cast<char*>(base_) + r.offset, r.bytes);
  if (known_.size() <= region) known_.resize(region + 1);
  known_[region] = true;
  if (region < 64) shared_space_view.known |= uint64_t{1} << region;
}

SharedSpaceView SharedSpace::view() const {
  SharedSpaceView v{reinterpret_cast<char*>(base_), 0};
  for (unsigned r = 0; r < known_.size() && r < 64; ++r)
    if (known_[r]) v.known |= uint64_t{1} << r;
  return v;
}

char* SharedSpace::address_of(SharedSlot& slot, size_t bytes, size_t align,
                              const SharedShape& shape) {
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
      regions.push_back({slot.name, site(slot.file, slot.line), offset, bytes, shape});
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

std::optional<SharedSpace::Element> SharedSpace::element_at(uintptr_t offset) const {
  std::lock_guard<std::mutex> lock(regions_mutex);
  const Region& r = regions[words_[offset / 4].region];
  const SharedShape& shape = r.shape;
  if (shape.rank == 0 || shape.element == 0 || offset < r.offset) return std::nullopt;
  Element e{r.name, "", "", r.where, shape.extents[shape.rank - 1], shape.rank};
  size_t element = (offset - r.offset) / shape.element;
  for (unsigned d = shape.rank; d-- > 0;) {
    e.subscripts = "[" + std::to_string(element % shape.extents[d]) + "]" + e.subscripts;
    e.declared = "[" + std::to_string(shape.extents[d]) + "]" + e.declared;
    element /= shape.extents[d];
  }
  return e;
}

char* shared_address(SharedSlot& slot, size_t bytes, size_t align, const SharedShape& shape) {
  BlockState* b = current_block;
  if (b == nullptr || b->shared == nullptr) {
    diagnose("__shared__ variable '" + std::string(slot.name) + "' at " +
             site(slot.file, slot.line) + " used outside a kernel");
    std::abort();
  }
  // (a fault inside, on the strings that name the variable, would leave the block with the lock of
  // the variables' places held)
  const EmuCodeRuns placing;
  return b->shared->address_of(slot, bytes, align, shape);
}

}  // namespace cudalab::emu
