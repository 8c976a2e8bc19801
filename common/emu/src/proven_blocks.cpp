// Blocks of a kernel whose accesses its code proves, checked once per block.
//
// Algorithm. The front end (grader/cudalab_tools/proven_accesses.py) proves that every access of
// such a kernel is P[i], with i the thread's global x index under the guard i < limit: block bx
// of a grid of rows touches elements [bx * D, min((bx + 1) * D, limit)) of each P, element
// bx * D + x by its thread x (in a grid-stride loop, that row and each one grid's threads further
// on, up to the limit; in a 2D kernel, the same columns of each of the block's rows y of the
// guard's, elements y * pitch + [bx * D, ...), with a pitch no smaller than the columns the grid's
// threads touch; a kernel without a guard has no limit but the grid's). So
// what the per-access checks would find is decided for the whole block before it runs: an element
// past its array's end, a load of an element nobody wrote, a load or store of an element another
// block of this launch wrote. Where the block's ranges show none of these, its stores are recorded
// in the arrays' shadows (writer and mark, as check_global does), and the block runs the kernel's
// copy without instrumentation; otherwise it runs the checked kernel, which names the thread and
// the line as always. Across blocks nothing is left to check: the blocks' ranges are disjoint, and
// the launch refuses the ranges (proven_launch) where a store's elements overlap another
// parameter's.
//
// A load at another element (`affine`, an index the front end wrote as constant + column * x + row
// * y + step * k: a matrix product's rows and columns, a stencil's neighbours) stores nothing, so
// its elements need only be in the array, written before the launch and by no other block of it:
// the block checks, for each of its rows and each value of the loop's counter, the segment of
// elements its threads' columns read (or, where the counter is the unit step, the segment the loop
// reads), once however many rows share it.
//
// A load's elements need only have been written before the launch: no block of it stores into them
// (proven_launch refuses a store whose elements overlap another parameter's, and a thread's own
// element is stored by that thread alone). So the launch looks at the words of the elements a load
// may read once (span_written), where its array's words are not yet seen written (memory.h:
// seen_written, which a copy of another array's bytes into it forgets), and then its blocks need
// not look at them.
//
// A store in a loop is at the thread's own element, the same however often the loop runs; a launch
// whose loop does not run at all runs its blocks checked (the store is not made).
//
// With the counters on, a block that runs the copy has its requests counted from the front end's
// visits (each access of the kernel's text, its index's terms and its loop's bounds): per warp, the
// offsets of the lanes that pass the guard, one request per value of the loop's counter
// (count_requests). The counts equal those of the checked kernel, access by access
// (Counters.ProvenBlocksCountAsEachAccessDoes).
//
// Limitations: the first block of a launch runs checked (the report of a wrong result keeps what
// its first threads load); a watched thread, arrays without a shadow, and with the counters on a
// load that some threads skip or two visits that may reach one element in a thread
// (visits_distinct: the compiler may have merged them), leave every block checked.
#include "proven_blocks.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "checks.h"
#include "cudalab/emu/inspect.h"
#include "memory.h"
#include "per_worker_count.h"
#include "shadow.h"
#include "symbolize.h"

namespace cudalab::emu {

namespace {

PerWorkerCount blocks_run;

// The columns and rows of elements that the grid's threads may touch (a 1D kernel: one row).
struct GridSize {
  long long columns, rows;
};
GridSize grid_size(const LaunchConfig& config, const ProvenRanges& ranges) {
  return {std::min(ranges.limit, 1ll * config.grid.x * config.block.x),
          ranges.rows >= 0 ? std::min(ranges.rows, 1ll * config.grid.y * config.block.y) : 1};
}

// The elements that the grid's threads may touch: [0, extent).
long long grid_extent(const GridSize& grid, const ProvenRanges& ranges) {
  if (ranges.rows >= 0)
    return grid.rows > 0 && grid.columns > 0 ? (grid.rows - 1) * ranges.pitch + grid.columns : 0;
  return std::max(0ll, ranges.grid_stride ? ranges.limit : grid.columns);
}

// The columns [x0, x1) and rows [y0, y1) of elements that block b's threads touch in one pass (a
// 1D kernel: row 0); empty where the block lies past the limits.
struct BlockBox {
  long long x0, x1, y0, y1;
};
BlockBox block_box(const ProvenRanges& ranges, const BlockState& b) {
  const long long width = b.config->block.x, x0 = b.block.x * width;
  const long long x1 = std::min(x0 + width, ranges.limit);
  if (ranges.rows < 0) return {x0, x1, 0, 1};
  const long long height = b.config->block.y, y0 = b.block.y * height;
  return {x0, x1, y0, std::min(y0 + height, ranges.rows)};
}

// Calls chunk(first, end, thread) for each row of elements [first, end) that block `b`'s threads
// touch, element first + x by the block's thread `thread + x`: one row, in a grid-stride loop one
// per pass of the grid, in a 2D kernel one per row of the block's threads; stops at the first call
// that returns false, and says whether none did.
template <class Chunk>
bool each_row(const ProvenRanges& ranges, const BlockState& b, Chunk chunk) {
  const long long width = b.config->block.x;
  const BlockBox box = block_box(ranges, b);
  if (ranges.rows >= 0) {
    for (long long y = box.y0; y < box.y1 && box.x0 < box.x1; ++y) {
      const long long start = y * ranges.pitch;
      if (!chunk(start + box.x0, start + box.x1, (y - box.y0) * width)) return false;
    }
    return true;
  }
  const long long stride = ranges.grid_stride ? width * b.config->grid.x : 0;
  for (long long first = box.x0; first < ranges.limit; first += stride) {
    if (!chunk(first, std::min(first + width, ranges.limit), 0ll)) return false;
    if (stride == 0) break;
  }
  return true;
}

// The byte of access a's array r where element `element` of P lies.
size_t offset_of(const ProvenAccess& a, const Allocation& r, long long element) {
  return static_cast<const char*>(a.base) - r.base + element * a.element_bytes;
}

// The elements [first, end) of P that access a may touch in the grid (an affine load's from its
// terms' extremes).
struct Span {
  long long first, end;
};
Span span_of(const ProvenAccess& a, long long extent, const GridSize& grid) {
  if (!a.affine) return {0, extent};
  if (grid.columns <= 0 || grid.rows <= 0 || a.end_step <= a.first_step) return {0, 0};
  long long low = a.constant, high = a.constant;
  const auto term = [&](long long coefficient, long long first, long long last) {
    low += std::min(coefficient * first, coefficient * last);
    high += std::max(coefficient * first, coefficient * last);
  };
  term(a.column, 0, grid.columns - 1);
  term(a.row, 0, grid.rows - 1);
  term(a.step, a.first_step, a.end_step - 1);
  return {low, high + 1};
}

bool overlap(const ProvenAccess& a, Span sa, const ProvenAccess& b, Span sb) {
  const auto a0 = reinterpret_cast<intptr_t>(a.base), b0 = reinterpret_cast<intptr_t>(b.base);
  return a0 + sa.first * a.element_bytes < b0 + sb.end * b.element_bytes &&
         b0 + sb.first * b.element_bytes < a0 + sa.end * a.element_bytes;
}

// Whether the elements that block b's threads read through the affine load `a` lie in its array r
// and are fine (no other block of the launch wrote them, and somebody wrote them before).
bool affine_fine(const ProvenAccess& a, const Allocation& r, bool written,
                 const ProvenRanges& ranges, const BlockState& b) {
  auto [x0, x1, y0, y1] = block_box(ranges, b);
  if (x1 <= x0 || y1 <= y0 || a.end_step <= a.first_step) return true;
  const long long base = static_cast<const char*>(a.base) - r.base;
  // Elements [first, first + count * stride) by `stride`, each checked.
  const auto segment = [&](long long first, long long count, long long stride) {
    const long long last = first + (count - 1) * stride;
    const long long low = std::min(first, last), high = std::max(first, last);
    // (an index that a 32-bit int could not hold wraps in the kernel's arithmetic, not here)
    if (low < INT32_MIN || high > INT32_MAX) return false;
    if (base + low * a.element_bytes < 0 ||
        base + (high + 1) * a.element_bytes > static_cast<long long>(r.bytes))
      return false;
    if (written) return true;
    const unsigned per_element = a.element_bytes / 4;
    const uint32_t* words = r.shadow.words + (base + first * a.element_bytes) / 4;
    if (stride == 1) return words_fine(words, count * per_element, b.launch_stamp, false);
    for (long long e = 0; e < count; ++e)
      if (!words_fine(words + e * stride * per_element, per_element, b.launch_stamp, false))
        return false;
    return true;
  };
  // (a term whose coefficient is 0 takes one value: its rows, or columns, share their elements)
  if (a.row == 0) y1 = y0 + 1;
  if (a.column == 0) x1 = x0 + 1;
  const bool along_steps = a.column != 1 && a.step != 0;  // the loop's elements as the segment
  for (long long y = y0; y < y1; ++y) {
    const long long at_row = a.constant + a.row * y;
    if (along_steps) {
      for (long long x = x0; x < x1; ++x)
        if (!segment(at_row + a.column * x + a.step * a.first_step, a.end_step - a.first_step,
                     a.step))
          return false;
    } else {
      for (long long k = a.first_step; k < a.end_step; ++k) {
        if (!segment(at_row + a.column * x0 + a.step * k, x1 - x0, a.column)) return false;
        if (a.step == 0) break;
      }
    }
  }
  return true;
}

// Whether every byte of the load a's elements `span` lies in its array r and has a writer (then its
// blocks need not look at their words: no block of the launch stores into another parameter's
// elements, nor into a thread's own but from that thread, proven_launch's overlap test).
bool span_written(const ProvenAccess& a, const Allocation& r, Span span) {
  if (span.end <= span.first) return false;
  const auto first = static_cast<long long>(offset_of(a, r, span.first)),
             end = static_cast<long long>(offset_of(a, r, span.end));
  return first >= 0 && end <= static_cast<long long>(r.bytes) &&
         look_written(r, static_cast<size_t>(first) / 4, static_cast<size_t>(end) / 4);
}

// Whether in each thread no two visits reach one element, where the compiler may have merged
// them (a load of an element the thread loaded or stored before it, a load or store that does not
// move in its loop), so that the checked kernel's accesses are the visits: each visit in a loop of
// more than one step moves with it, and two visits of one array that move alike with the thread's
// indices reach apart elements, but a load followed by the store of its element (`P[i] += v`).
bool visits_distinct(const ProvenRanges& ranges) {
  const auto least = [](const ProvenVisit& v) {
    return v.constant + std::min(v.step * v.first_step, v.step * (v.end_step - 1));
  };
  const auto greatest = [](const ProvenVisit& v) {
    return v.constant + std::max(v.step * v.first_step, v.step * (v.end_step - 1));
  };
  for (int q = 0; q < ranges.visit_count; ++q) {
    const ProvenVisit& then = ranges.visits[q];
    if (then.end_step <= then.first_step) continue;  // (made no time)
    if (then.step == 0 && then.end_step - then.first_step > 1) return false;
    for (int p = 0; p < q; ++p) {
      const ProvenVisit& first = ranges.visits[p];
      if (first.end_step <= first.first_step || first.base != then.base ||
          first.column != then.column || first.row != then.row)
        continue;
      const bool compound = p + 1 == q && !first.store && then.store &&
                            first.constant == then.constant && first.step == then.step &&
                            first.first_step == then.first_step && first.end_step == then.end_step;
      if (!compound && least(first) <= greatest(then) && least(then) <= greatest(first))
        return false;
    }
  }
  return true;
}

// A block's warps: each one's lanes that pass the guard, the first one's global indices from the
// block's first thread's, and each lane's from the first one's; `end` ends the run of warps from
// this one on whose lanes lie alike (a 1D block's full warps).
struct Warp {
  long long x0, y0;
  unsigned lanes;
  long long dx[32], dy[32];
  size_t end;
};

// The warps of a row of block threads whose first thread's global indices are (x_first, y_first),
// its lanes those below the guard's limits: the same for every block that lies inside the limits,
// kept for the last block shape.
const std::vector<Warp>& warps_of(const ProvenRanges& ranges, const LaunchConfig& config,
                                  long long x_first, long long y_first) {
  thread_local std::vector<Warp> kept, clipped;
  thread_local dim3 kept_shape{0, 0, 0};
  const bool inside = x_first + config.block.x <= ranges.limit &&
                      (ranges.rows < 0 || y_first + config.block.y <= ranges.rows);
  const dim3 shape = config.block;
  if (inside && kept_shape.x == shape.x && kept_shape.y == shape.y) return kept;
  std::vector<Warp>& warps = inside ? kept : clipped;
  if (inside) kept_shape = shape;
  warps.clear();
  const unsigned threads = config.block.x * config.block.y;
  long long x = 0, y = 0;  // the next thread's indices, from the first one's
  for (unsigned warp = 0; warp < threads; warp += 32) {
    Warp& w = warps.emplace_back();
    w.lanes = 0;
    for (unsigned t = warp; t < std::min(warp + 32, threads); ++t) {
      if (x_first + x < ranges.limit && (ranges.rows < 0 || y_first + y < ranges.rows)) {
        if (w.lanes == 0) w.x0 = x, w.y0 = y;
        w.dx[w.lanes] = x - w.x0;
        w.dy[w.lanes++] = y - w.y0;
      }
      if (++x == config.block.x) x = 0, ++y;
    }
    if (w.lanes == 0) warps.pop_back();
  }
  const auto alike = [](const Warp& p, const Warp& q) {
    return p.lanes == q.lanes && std::equal(p.dx, p.dx + p.lanes, q.dx) &&
           std::equal(p.dy, p.dy + p.lanes, q.dy);
  };
  for (size_t first = 0, end; first < warps.size(); first = end) {
    for (end = first + 1; end < warps.size() && alike(warps[end], warps[first]);) ++end;
    warps[first].end = end;
  }
  return warps;
}

// Counts the requests of block b's accesses (the counters are on): for each visit and each warp
// of the block, one request per value of the visit's loop counter (and per pass of a grid-stride
// loop), its lanes the warp's threads that pass the guard. A run of warps whose lanes lie alike
// is counted in one call.
void count_requests(const ProvenLaunch& launch, const BlockState& b) {
  const ProvenRanges& ranges = *launch.ranges;
  const LaunchConfig& config = *b.config;
  const long long stride = ranges.grid_stride ? 1ll * config.block.x * config.grid.x : 0;
  const long long y_first = 1ll * b.block.y * config.block.y;
  thread_local std::vector<uintptr_t> bases;
  for (long long x_first = b.block.x * config.block.x; x_first < ranges.limit; x_first += stride) {
    const std::vector<Warp>& warps = warps_of(ranges, config, x_first, y_first);
    for (int v = 0; v < ranges.visit_count; ++v) {
      const ProvenVisit& visit = ranges.visits[v];
      const long long bytes = visit.element_bytes;
      for (size_t first = 0; first < warps.size(); first = warps[first].end) {
        const Warp& w = warps[first];
        long long offsets[32];
        for (unsigned l = 0; l < w.lanes; ++l)
          offsets[l] = (visit.column * w.dx[l] + visit.row * w.dy[l]) * bytes;
        bases.clear();
        for (size_t u = first; u < w.end; ++u) {
          const long long x = x_first + warps[u].x0, y = y_first + warps[u].y0;
          const auto at = reinterpret_cast<uintptr_t>(visit.base) +
                          (visit.constant + visit.column * x + visit.row * y) * bytes;
          for (long long k = visit.first_step; k < visit.end_step; ++k)
            bases.push_back(at + visit.step * k * bytes);
        }
        count_proven_requests(launch.visit_lines[v], false, visit.store,
                              static_cast<unsigned>(bytes), offsets, w.lanes, bases.data(),
                              bases.size());
      }
    }
    if (stride == 0) break;
  }
}

}  // namespace

// (kMixed and kBusy lie among the stamps of the launch, and are no block's.)
bool words_fine(const uint32_t* writers, size_t words, uint32_t launch_stamp, bool store,
                uint32_t own) {
  const auto refused_write = [&](uint32_t writer) {
    return plain_write_in_launch(writer, launch_stamp) & (writer != own);
  };
  uint32_t refused = 0;
  if (store)
    for (size_t w = 0; w < words; ++w) refused |= refused_write(writers[w]);
  else
    for (size_t w = 0; w < words; ++w) refused |= refused_write(writers[w]) | (writers[w] == 0);
  return refused == 0;
}

ProvenLaunch proven_launch(const LaunchConfig& config, const ProvenKernel* proven,
                           bool host_pointer_args) {
  ProvenLaunch launch;
  if (proven == nullptr || host_pointer_args) return launch;
  const ProvenRanges& ranges = proven->ranges;
  if (counting()) {
    if (ranges.visit_count < 0 || !visits_distinct(ranges)) return launch;
    for (int v = 0; v < ranges.visit_count; ++v)
      launch.visit_lines[v] = line_marker(ranges.file, ranges.visits[v].line);
  }
  // (a 1D kernel's threads of other rows, or a 2D kernel's of other layers, would touch the same
  // elements; rows that overlap, too)
  const bool rows_form = ranges.rows >= 0;
  const GridSize grid = grid_size(config, ranges);
  if (config.block.z != 1 || config.grid.z != 1 ||
      (!rows_form && (config.block.y != 1 || config.grid.y != 1)) ||
      (rows_form && (ranges.pitch < grid.columns || ranges.pitch < 0)))
    return launch;
  const long long extent = grid_extent(grid, ranges);
  for (unsigned k = 0; k < ranges.count; ++k) {
    const ProvenAccess& a = ranges.accesses[k];
    const Allocation* r = extent == 0 ? nullptr : containing(a.base, false);
    if (extent > 0 && (r == nullptr || !r->shadow || a.element_bytes % 4 != 0 ||
                       (reinterpret_cast<uintptr_t>(a.base) & 3) != 0))
      return launch;
    launch.arrays[k] = r;
    if (!a.store) {
      launch.written[k] = r != nullptr && span_written(a, *r, span_of(a, extent, grid));
      continue;
    }
    if (a.end_step <= a.first_step) return launch;  // a store in a loop that does not run
    // Another parameter's elements among the store's (a thread could touch another's element),
    // or another store's (which of the two stores an element's mark names is the thread's order),
    // or elements of the stored array that a load reads at another element than its thread's.
    for (unsigned j = 0; j < ranges.count; ++j) {
      const ProvenAccess& o = ranges.accesses[j];
      const bool own_load =
          !o.store && !o.affine && o.base == a.base && o.element_bytes == a.element_bytes;
      if (j != k && !own_load && overlap(a, span_of(a, extent, grid), o, span_of(o, extent, grid)))
        return launch;
    }
    launch.sites[k] = StoreMark::site_part(store_site(line_marker(ranges.file, a.line)));
  }
  launch.ranges = &ranges;
  return launch;
}

bool proven_block(const ProvenLaunch& launch, BlockState& b) {
  if (launch.ranges == nullptr || b.block_rank == 0 || timed_out() ||
      watching_a_thread.load(std::memory_order_relaxed))
    return false;
  const ProvenRanges& ranges = *launch.ranges;
  // Every range first: a block whose ranges are not all fine runs checked, and records nothing.
  // (Plain loads and stores of the shadows: no other worker touches these words while the block
  // runs, as the blocks' ranges are disjoint; the compiler makes vector loops of them.)
  for (unsigned k = 0; k < ranges.count; ++k)
    if (ranges.accesses[k].affine &&
        !affine_fine(ranges.accesses[k], *launch.arrays[k], launch.written[k], ranges, b))
      return false;
  const bool ranges_fine = each_row(ranges, b, [&](long long first, long long end, long long) {
    for (unsigned k = 0; k < ranges.count; ++k) {
      const ProvenAccess& a = ranges.accesses[k];
      if (a.affine) continue;
      const Allocation& r = *launch.arrays[k];
      const size_t offset = offset_of(a, r, first);
      const size_t words = (end - first) * a.element_bytes / 4;
      if (offset + 4 * words > r.bytes) return false;  // past the array's end
      if (!launch.written[k] &&
          !words_fine(r.shadow.words + offset / 4, words, b.launch_stamp, a.store))
        return false;
    }
    return true;
  });
  if (!ranges_fine) return false;
  for (unsigned k = 0; k < ranges.count; ++k) {
    const ProvenAccess& a = ranges.accesses[k];
    if (!a.store) continue;
    const Allocation& r = *launch.arrays[k];
    note_store_in_launch(r, b.launch_stamp);
    each_row(ranges, b, [&](long long first, long long end, long long thread) {
      const size_t offset = offset_of(a, r, first);
      const unsigned per_element = a.element_bytes / 4;
      std::fill_n(r.shadow.words + offset / 4, (end - first) * per_element, b.stamp);
      uint32_t* marks = r.shadow.stores + offset / 4;
      const uint32_t site = launch.sites[k];
      const auto threads = static_cast<uint32_t>(end - first);  // (a mark names its thread)
      const uint32_t first_mark = site | static_cast<uint32_t>(thread);
      if (per_element == 1)
        for (uint32_t x = 0; x < threads; ++x) marks[x] = first_mark + x;
      else
        for (uint32_t x = 0; x < threads; ++x)
          for (unsigned w = 0; w < per_element; ++w) marks[x * per_element + w] = first_mark + x;
      return true;
    });
  }
  if (counting()) count_requests(launch, b);
  blocks_run.add();
  return true;
}

unsigned long long proven_blocks_run() { return blocks_run.total(); }

}  // namespace cudalab::emu
