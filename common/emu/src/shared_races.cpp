// The checks of shared memory: an access must not read what this block never wrote, and between
// two barriers a word that one thread wrote must not be read by another, nor written with another
// value (the missing __syncthreads(); threads that store the same value, as a warp's lanes storing
// their reduction's result, leave the same memory whichever comes last: overwrites.cpp judges such
// a write once its store has happened). Each word remembers its last writer and readers, with the
// barrier epoch.
#include <cstdint>
#include <string>

#include "checks.h"
#include "errors.h"

namespace cudalab::emu {

void SharedSpace::access(BlockState& b, uintptr_t a, unsigned size, bool store, bool atomic,
                         const void* pc) {
  settle_race_checks();  // (this thread's previous write, if it waits to be judged by its value)
  const uintptr_t offset = a - base_;
  const uint16_t me = static_cast<uint16_t>(running_thread());
  uint32_t overwritten = 0;  // bytes of this write over another thread's (bit i: byte a + i)
  uint16_t first_writer = kNobody;
  const void* first_pc = nullptr;
  const char* verb = access_verb(store, atomic);
  checked_epoch_ = b.epoch;
  for (uintptr_t w = offset / 4; w <= (offset + size - 1) / 4; ++w) {
    Word& s = words_[w];
    const uint8_t bytes = bytes_touched(4 * w, offset, size);
    if (s.region == 0)
      fault(b, pc, cudaErrorIllegalAddress, "shared_out_of_bounds",
            std::string(verb) + " shared memory " + describe_outside(offset, size) +
                ". Check the index against the array's size (and the dynamic size given at the "
                "launch).");
    auto other = [&](uint16_t t, const void* their_pc, const char* did) {
      std::string them = t == kNobody ? "an atomic of another thread" : thread_named(b, t);
      std::string line = t == kNobody ? std::string() : " at " + at(their_pc);
      const std::string fix = "Put a __syncthreads() between the write and the reads.";
      return them + " " + did + " the same shared word" + line +
             " with no __syncthreads() in between: the result depends on which thread runs "
             "first. " +
             (t == kNobody ? fix : race_fix(t, me, fix));
    };
    if (atomic) {
      if (!written_in_block(b, w) && !atomic_overwrites)
        fault(b, pc, cudaErrorLaunchFailure, "shared_unwritten_read",
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
      if (!written_in_block(b, w) && b.unwritten_read.empty()) {
        const std::string what = std::string(verb) +
                                 " shared memory that no thread of this block wrote (shared "
                                 "memory starts as garbage in every block): the value read is "
                                 "undefined";
        if (unwritten_reads_stop())
          b.unwritten_read = found_here(b, place_of(pc), "shared_unwritten_read", what);
        else
          warn_once(b, pc, "shared_unwritten_read", what);
      }
      if (s.write_epoch == b.epoch && s.writer != me && (s.write_bytes & bytes))
        fault(b, pc, cudaErrorLaunchFailure, "shared_race",
              std::string(verb) + " shared memory that " + other(s.writer, s.write_pc, "wrote"));
      s.note_read(b.epoch, me, bytes, pc);
      continue;
    }
    if (s.write_epoch == b.epoch && s.writer != me && (s.write_bytes & bytes)) {
      // Two threads store one element of a 2D array at one line, and its rows are narrower than
      // the block: subscripts past a dimension (whatever the values), not a missing barrier.
      const unsigned wide = b.config->block.x;
      if (s.write_pc == pc && s.writer != kNobody)
        if (const auto e = element_at(4 * w); e && e->row_length < wide && e->rank > 1)
          fault(b, pc, cudaErrorLaunchFailure, "shared_race",
                std::string(verb) + " '" + e->name + e->subscripts + "' (__shared__ array '" +
                    e->name + e->declared + "' declared at " + e->where + "), which " +
                    thread_named(b, s.writer) +
                    " also wrote at the same line: the two threads' subscripts land on one "
                    "element. A row of '" +
                    e->name + "' holds " + std::to_string(e->row_length) +
                    " elements and the block is " + std::to_string(wide) +
                    " threads wide: compare each subscript with the array's declared dimensions "
                    "(one at or past its dimension reaches into the next row), or declare the "
                    "array as large as the block.");
      if (s.writer == kNobody || size > 32)  // over an atomic's result; a wide store
        fault(
            b, pc, cudaErrorLaunchFailure, "shared_race",
            std::string(verb) + " shared memory that " + other(s.writer, s.write_pc, "also wrote"));
      for (unsigned k = 0; k < 4; ++k)
        if (s.write_bytes & bytes & (1u << k)) overwritten |= 1u << (4 * w + k - offset);
      first_writer = s.writer;
      first_pc = s.write_pc;
    }
    if (s.read_epoch == b.epoch && s.reader != me && (s.read_bytes & bytes))
      fault(b, pc, cudaErrorLaunchFailure, "shared_race",
            std::string(verb) + " shared memory that " + other(s.reader, s.read_pc, "read"));
    if (s.read_epoch == b.epoch && s.other_reader != kNobody && s.other_reader != me &&
        (s.other_bytes & bytes))
      fault(b, pc, cudaErrorLaunchFailure, "shared_race",
            std::string(verb) + " shared memory that " + other(s.other_reader, s.other_pc, "read"));
    s.note_write(b.epoch, me, bytes, pc);
  }
  if (overwritten != 0)
    wait_for_overwrite(b, nullptr, a, size, overwritten, {first_writer, first_pc}, pc);
}

}  // namespace cudalab::emu
