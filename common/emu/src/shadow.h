// Internal header of the emu runtime (not for programs): who wrote each byte of a device array
// last (shadow.cpp).
//
// Algorithm: the writer is kept per 4-byte word while the word's four bytes share it, which is
// the common case (floats and ints are written whole, and copies write whole arrays): one stamp
// per word, as much memory as the array itself, read and written by the checks' fast path with
// one access. A word whose bytes have different writers (a char array whose bytes several blocks
// write, a byte written into a float) is marked kMixed and its bytes' writers are kept in a second
// table, per byte; it is reserved with the array and costs memory only on the pages used. A word
// goes mixed when a write covers part of it with another writer (the worker that makes it mixed
// holds it as kBusy meanwhile, so that two workers writing different bytes of one word lose
// neither) and whole again when a write leaves its four bytes with one writer.
//
// Writers are stamps (memory.h): 0 nobody, kHostStamp the host, a block of a launch, with
// kAtomicBit for an atomic; kMixed and kBusy are never writers (stamps stop below kBusy).
//
// Beside the writer, each word keeps the mark of the last kernel store into it (StoreMark: the
// store's line and the thread of its block), for the report of a wrong result (provenance.cpp).
// It is read only where the word's writer is a kernel's block; reserved like the byte table, it
// costs memory only on the pages kernels store into.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudalab::emu {

constexpr uint32_t kMixed = 0x7FFFFFFFu;  // a word whose bytes have different writers
constexpr uint32_t kBusy = 0x7FFFFFFEu;   // a word being made mixed

// A kernel store's mark: the store's site (store_site, provenance.cpp) and the thread of the block
// that made it (running_thread(): fewer than 1024).
struct StoreMark {
  static constexpr unsigned kThreadBits = 10;
  uint32_t value = 0;  // 0: no mark
  static uint32_t site_part(uint32_t site) { return site << kThreadBits; }
  uint32_t site() const { return value >> kThreadBits; }
  unsigned thread() const { return value & ((1u << kThreadBits) - 1); }
};

struct Shadow {
  uint32_t* words = nullptr;   // per 4-byte word: its writer, or kMixed
  uint32_t* bytes = nullptr;   // per byte: its writer, where its word is kMixed
  uint32_t* stores = nullptr;  // per 4-byte word: the StoreMark of the last kernel store
  size_t size = 0;             // bytes of the array

  // A shadow of `size` bytes, all written by `writer`; empty (false) when memory is short.
  static Shadow make(size_t size, uint32_t writer);
  void release();
  explicit operator bool() const { return words != nullptr; }

  // The writer of byte `offset`.
  uint32_t writer(size_t offset) const {
    uint32_t w = __atomic_load_n(words + offset / 4, __ATOMIC_ACQUIRE);
    while (w == kBusy) w = __atomic_load_n(words + offset / 4, __ATOMIC_ACQUIRE);
    return w == kMixed ? __atomic_load_n(bytes + offset, __ATOMIC_RELAXED) : w;
  }
  // Bytes [offset, offset + count) were written by `writer`.
  void set(size_t offset, size_t count, uint32_t writer);
  // Bytes [offset, offset + count) take the writers of `from`'s bytes from `from_offset` on
  // (a copy between arrays carries its writers).
  void copy(size_t offset, const Shadow& from, size_t from_offset, size_t count);
  // A kernel stored bytes [offset, offset + count): `mark` (a StoreMark's value).
  void mark_store(size_t offset, size_t count, uint32_t mark) {
    for (size_t w = offset / 4; w < (offset + count + 3) / 4; ++w)
      __atomic_store_n(stores + w, mark, __ATOMIC_RELAXED);
  }
  StoreMark store_mark(size_t offset) const {
    return {__atomic_load_n(stores + offset / 4, __ATOMIC_RELAXED)};
  }
  // Every byte a kernel wrote counts as written by kEarlierKernelStamp (the stamps start again).
  void forget_kernels();
  // Whether every byte of words [first_word, end_word) has a writer (none is nobody's).
  bool written(size_t first_word, size_t end_word) const;

 private:
  void set_part(size_t word, size_t from, size_t to, uint32_t writer);
};

}  // namespace cudalab::emu
