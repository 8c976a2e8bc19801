// A plain write over bytes that another thread of the block wrote since the last barrier (global
// memory, global_races.cpp; shared memory, shared_races.cpp), or that another block wrote in the
// launch (global_checks.cpp). Whether it is a race depends on the values: threads that store the
// same value (every thread setting a flag, a vote's result) leave the same memory whichever comes
// last, and that is common and harmless; a different value is a race. (The same thread of two
// blocks storing to the same elements at one line is a missing blockIdx, named by
// global_checks.cpp whatever the values.)
//
// Algorithm: the checks run before each store, so the value the second writer stores is not known
// yet. The check keeps the bytes the first writer left (wait_for_overwrite), and the write is
// judged (finish_race_checks, checks.h) once its store has happened: at the thread's next race
// check, at the next barrier or warp-level call (before the thread stops), or when the thread ends.
//
// Limitations: only a write's first 32 bytes are compared (a wider vector store is judged by
// those); a thread that a check stops leaves its waiting write unjudged.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "checks.h"
#include "errors.h"
#include "memory.h"
#include "replay.h"

namespace cudalab::emu {
namespace {

struct Overwrite {
  bool active = false;
  uint32_t epoch = 0;                 // the block's barrier epoch at the write
  const Allocation* array = nullptr;  // nullptr: shared memory
  uintptr_t address = 0;
  unsigned size = 0;
  uint32_t bytes = 0;  // which bytes of the access the first writer wrote (bit i: address + i)
  unsigned char before[32] = {};  // those bytes as the first writer left them
  FirstWrite first;               // the write this one goes over
  const void* pc = nullptr;
};

thread_local Overwrite waiting;

}  // namespace

void wait_for_overwrite(BlockState& b, const Allocation* r, uintptr_t a, unsigned size,
                        uint32_t bytes, const FirstWrite& first, const void* pc) {
  if (waiting.active || bytes == 0) return;
  race_checks_waiting = true;
  waiting.active = true;
  waiting.epoch = b.epoch;
  waiting.array = r;
  waiting.address = a;
  waiting.size = size;
  waiting.bytes = bytes;
  std::memcpy(waiting.before, reinterpret_cast<const void*>(a), std::min(size, 32u));
  waiting.first = first;
  waiting.pc = pc;
}

bool overwrite_waiting() { return waiting.active; }

void judge_overwrite() {
  if (!waiting.active) return;
  const Overwrite w = std::exchange(waiting, Overwrite{});
  if (!still_in_epoch(w.epoch)) return;  // left by a thread that a check stopped
  const auto* now = reinterpret_cast<const unsigned char*>(w.address);
  for (unsigned i = 0; i < std::min(w.size, 32u); ++i)
    if ((w.bytes >> i & 1u) && now[i] != w.before[i]) {
      if (w.first.lost_update)
        return report_lost_update(*current_block, *w.array, w.address, w.size, w.pc);
      const std::string first = thread_named(*current_block, w.first.thread);
      const std::string where = w.first.pc != nullptr ? " at " + at(w.first.pc) : "";
      if (w.first.other_block != 0) {
        race_found(*current_block, w.pc, "race_between_blocks", [&] {
          return "a write to " + element_of(*w.array, w.address, w.size) + ", which " + first +
                 " of block " +
                 dim(index_of(w.first.other_block - current_block->launch_stamp,
                              current_block->config->grid)) +
                 " also wrote in this launch" + where +
                 " with another value: blocks run in any order, so the element keeps the value "
                 "of whichever block runs last. If each block should have elements of its own, "
                 "the index leaves out blockIdx; if the blocks add into one result, use "
                 "atomicAdd.";
        });
        return;
      }
      if (w.array == nullptr)
        fault(*current_block, w.pc, cudaErrorLaunchFailure, "shared_race",
              "a write to shared memory that " + first + " also wrote the same shared word" +
                  where +
                  " with another value and no __syncthreads() in between: the result depends on "
                  "which thread runs first. Put a __syncthreads() between the write and the "
                  "reads.");
      race_found(*current_block, w.pc, "global_race", [&] {
        return "a write to " + element_of(*w.array, w.address, w.size) + ", which " + first +
               " of this block wrote" + where +
               " with another value and no __syncthreads() in between: the element keeps the "
               "value of whichever thread writes last. Give each element one writer between two "
               "barriers, or combine the values with an atomic.";
      });
      return;
    }
}

}  // namespace cudalab::emu
