// Internal header of the emu runtime (not for programs): the proofs of shared-memory stretches a
// worker remembers, so that the next block that runs the same stretch with the same arguments
// skips the part of the proof that no block changes (remembered_stretches.cpp).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "block.h"
#include "cudalab/emu/thread_loops.h"

namespace cudalab::emu {

// A run of bytes [first, end) of a `__shared__` array that a stretch loads or stores, whose words
// the proof looks at in each block (SharedSpace::loads_fine, stores_fine).
struct SharedRun {
  uintptr_t first, end;
  bool store;
};
// A row of a stretch's shared stores, as SharedSpace::record_stores records them.
struct SharedRow {
  uintptr_t at;
  unsigned element, count;
  long long step;
};

// What a proof of a stretch whose accesses all lie in shared memory keeps for the next block:
// the runs whose words it looked at and the rows its stores recorded; the rest of the proof (the
// subscripts within their dimensions, one element per thread for a store, stores apart from the
// other accesses) depends only on the stretch's arguments, the block's dimensions and the
// launch's dynamic shared bytes.
struct RememberedProof {
  static constexpr unsigned kMostRuns = 8, kMostRows = 8;
  SharedRun runs[kMostRuns];
  SharedRow rows[kMostRows];
  unsigned run_count = 0, row_count = 0;
};

// The proof this worker remembers for stretch_fine's arguments in block `b` (the same file,
// loops, accesses, whether a thread returned; the same block dimensions, shared space and
// dynamic shared bytes), or nullptr.
const RememberedProof* remembered_proof(const BlockState& b, const char* file,
                                        std::initializer_list<ProvenLoop> loops,
                                        std::initializer_list<StretchAccess> accesses,
                                        const bool* returned);
// Remembers `proof` for those arguments, where they fit (a few accesses and subscripts).
void remember_proof(const BlockState& b, const char* file, std::initializer_list<ProvenLoop> loops,
                    std::initializer_list<StretchAccess> accesses, const bool* returned,
                    const RememberedProof& proof);

}  // namespace cudalab::emu
