// Internal header of the emu runtime (not for programs): blocks of a kernel whose accesses its code
// proves, checked once per block (proven_blocks.cpp).
#pragma once

#include <cstdint>

#include "block.h"
#include "cudalab/emu/launch.h"
#include "memory.h"

namespace cudalab::emu {

// What a worker keeps of a launch's proven ranges (ProvenRanges, launch.h) while it runs blocks.
struct ProvenLaunch {
  const ProvenRanges* ranges = nullptr;  // nullptr: every block runs checked
  const Allocation* arrays[8] = {};      // each access's array
  uint32_t sites[8] = {};                // each store's StoreMark site part
  bool written[8] = {};                  // each load's array has no byte nobody wrote
  const void* visit_lines[16] = {};      // counters on: each visit's line (line_marker)
};

// Whether no word of `writers` (an array's shadow) was written by a plain write in the launch of
// `launch_stamp` (but by the block whose stamp is `own`, where not 0), nor holds bytes of several
// writers, nor for a load (`store` false) is nobody's: the checks' verdict on a block's loads or
// stores of those words, in bulk.
bool words_fine(const uint32_t* writers, size_t words, uint32_t launch_stamp, bool store,
                uint32_t own = 0);

// The worker's view of a launch of `proven` (nullptr: none): where every block of the launch would
// run checked (counters on where a thread may skip a load, a host pointer among the arguments, a
// grid or block that is not a row, arrays that are not live device arrays, a store whose elements
// overlap another parameter's), a ProvenLaunch without ranges.
ProvenLaunch proven_launch(const LaunchConfig& config, const ProvenKernel* proven,
                           bool host_pointer_args);

// Whether block `b` may run the kernel's copy without checks: its ranges lie inside their arrays,
// every element it loads was written before this launch and none it stores was written in it by
// another block. If so, its stores are recorded now, as the checks record them (the elements'
// writer the block, their marks the store's line and each element's thread), and with the counters
// on, its requests are counted from the kernel's visits (ProvenVisit). The launch's first
// block always runs checked (the report of a wrong result keeps what its first threads load), and
// so does any block while a thread is watched or the launch has run past its time.
bool proven_block(const ProvenLaunch& launch, BlockState& b);

}  // namespace cudalab::emu
