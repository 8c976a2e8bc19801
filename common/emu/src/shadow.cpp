// Who wrote each byte of a device array last: one stamp per 4-byte word, per byte where a word's
// bytes have different writers (the algorithm: shadow.h).
#include "shadow.h"

#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "memory.h"

namespace cudalab::emu {
namespace {

size_t words_of(size_t size) { return (size + 3) / 4; }

void* reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

Shadow Shadow::make(size_t size, uint32_t writer) {
  Shadow s;
  s.size = size;
  s.words = static_cast<uint32_t*>(reserve(words_of(size) * sizeof(uint32_t)));
  s.bytes = static_cast<uint32_t*>(reserve(size * sizeof(uint32_t)));
  s.stores = static_cast<uint32_t*>(reserve(words_of(size) * sizeof(uint32_t)));
  if (s.words == nullptr || s.bytes == nullptr || s.stores == nullptr) {
    s.release();
    return {};
  }
  if (writer != 0) std::fill_n(s.words, words_of(size), writer);
  return s;
}

void Shadow::release() {
  if (words != nullptr) munmap(words, words_of(size) * sizeof(uint32_t));
  if (bytes != nullptr) munmap(bytes, size * sizeof(uint32_t));
  if (stores != nullptr) munmap(stores, words_of(size) * sizeof(uint32_t));
  *this = {};
}

void Shadow::set(size_t offset, size_t count, uint32_t writer) {
  const size_t end = offset + count;
  for (size_t i = offset; i < end;) {
    const size_t word = i / 4, word_end = std::min(end, 4 * word + 4);
    if (i == 4 * word && word_end == 4 * word + 4)
      __atomic_store_n(words + word, writer, __ATOMIC_RELEASE);  // the whole word
    else
      set_part(word, i, word_end, writer);
    i = word_end;
  }
}

// Bytes [from, to) of `word`, not all four, were written by `writer`.
void Shadow::set_part(size_t word, size_t from, size_t to, uint32_t writer) {
  uint32_t* w = words + word;
  for (uint32_t old = __atomic_load_n(w, __ATOMIC_ACQUIRE); old != kMixed;) {
    if (old == writer) return;  // the word keeps one writer
    if (old == kBusy) {         // another worker is making it mixed
      old = __atomic_load_n(w, __ATOMIC_ACQUIRE);
      continue;
    }
    // Hold the word as kBusy while its writer is copied to its bytes (two workers writing
    // different bytes of one word must not copy the old writer over each other's bytes).
    if (__atomic_compare_exchange_n(w, &old, kBusy, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
      for (size_t b = 4 * word; b < 4 * word + 4 && b < size; ++b)
        __atomic_store_n(bytes + b, old, __ATOMIC_RELAXED);
      __atomic_store_n(w, kMixed, __ATOMIC_RELEASE);
      break;
    }
  }
  for (size_t b = from; b < to; ++b) __atomic_store_n(bytes + b, writer, __ATOMIC_RELAXED);
  // Whole again when the four bytes now have one writer (the last byte of four a block wrote).
  for (size_t b = 4 * word; b < 4 * word + 4 && b < size; ++b)
    if (__atomic_load_n(bytes + b, __ATOMIC_RELAXED) != writer) return;
  uint32_t mixed = kMixed;
  __atomic_compare_exchange_n(w, &mixed, writer, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

void Shadow::copy(size_t offset, const Shadow& from, size_t from_offset, size_t count) {
  // The store marks go with the writers, word for word (a word's mark where words do not align).
  if (from.stores != stores || offset + count <= from_offset || from_offset + count <= offset) {
    for (size_t i = 0; i < count; i += 4)
      __atomic_store_n(stores + (offset + i) / 4, from.store_mark(from_offset + i).value,
                       __ATOMIC_RELAXED);
  }
  if (from.words == words && offset < from_offset + count && from_offset < offset + count) {
    std::vector<uint32_t> writers(count);  // overlapping ranges of one array: read them first
    for (size_t i = 0; i < count; ++i) writers[i] = writer(from_offset + i);
    for (size_t i = 0; i < count; ++i) set(offset + i, 1, writers[i]);
    return;
  }
  size_t i = 0;
  if (offset % 4 == from_offset % 4) {  // word for word, after the bytes before a word starts
    for (; i < count && (offset + i) % 4 != 0; ++i)
      set(offset + i, 1, from.writer(from_offset + i));
    for (; i + 4 <= count; i += 4) {
      const size_t to_word = (offset + i) / 4, from_word = (from_offset + i) / 4;
      const uint32_t w = __atomic_load_n(from.words + from_word, __ATOMIC_ACQUIRE);
      if (w == kMixed)
        for (size_t b = 0; b < 4; ++b)
          __atomic_store_n(bytes + 4 * to_word + b, from.bytes[4 * from_word + b],
                           __ATOMIC_RELAXED);
      __atomic_store_n(words + to_word, w, __ATOMIC_RELEASE);
    }
  }
  for (; i < count; ++i) set(offset + i, 1, from.writer(from_offset + i));
}

bool Shadow::written(size_t first_word, size_t end_word) const {
  // (a chunk of words at a time, in a loop the compiler vectorizes; a mixed word's bytes looked at)
  constexpr size_t kChunk = 1024;
  for (size_t first = first_word; first < end_word; first += kChunk) {
    const size_t end = std::min(first + kChunk, end_word);
    bool nobodys = false, mixed = false;
    for (size_t w = first; w < end; ++w) {
      nobodys |= words[w] == 0;
      mixed |= words[w] >= kBusy;
    }
    if (nobodys) return false;
    for (size_t w = first; mixed && w < end; ++w)
      for (size_t b = 4 * w; b < 4 * w + 4 && b < size; ++b)
        if (writer(b) == 0) return false;
  }
  return true;
}

void Shadow::forget_kernels() {
  auto forget = [](uint32_t& w) {
    if (w > kHostStamp && w != kMixed) w = kEarlierKernelStamp;
  };
  for (size_t word = 0; word < words_of(size); ++word) {
    if (words[word] == kMixed)
      for (size_t b = 4 * word; b < 4 * word + 4 && b < size; ++b) forget(bytes[b]);
    else
      forget(words[word]);
  }
}

}  // namespace cudalab::emu
