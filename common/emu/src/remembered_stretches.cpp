// The proofs of shared-memory stretches a worker remembers (remembered_stretches.h).
//
// Algorithm: each worker keeps a table of kEntries shapes, a stretch's call (its file, loops and
// accesses, each access's subscripts, whether a thread returned) with the block's dimensions, the
// worker's shared space and the launch's dynamic shared bytes: all that the proof's
// block-independent part reads. A call hashes a few of its numbers (the first access's line, x
// bound and first constant, the loops' bounds) to a pair of entries, one of which answers only
// where every number of the call equals its shape's; a proof to remember takes the pair's empty
// entry, or else its first. A tree reduction's steps (`if (tid < s) sdata[tid] += sdata[tid +
// s]`, one call per value of `s`) then find their proofs in entries of their own, most of them.
//
// Limitations: a stretch with more than Shape::kMostAccesses accesses or kMostSubscripts
// subscripts in all, or whose proof looks at more than RememberedProof::kMostRuns runs or records
// more than kMostRows rows, is proven in full in every block.
#include "remembered_stretches.h"

#include <algorithm>

namespace cudalab::emu {
namespace {

struct Shape {
  static constexpr unsigned kMostAccesses = 6, kMostSubscripts = 8;
  struct Access {
    const void* array;
    Space space;
    bool store, sometimes;
    int line;
    long long x_end;
    unsigned x_every, enclosing, subscripts;
  };
  const char* file = nullptr;  // nullptr: no shape
  const SharedSpace* shared = nullptr;
  uint3 block{};
  size_t shared_bytes = 0;
  bool returned = false;
  unsigned loop_count = 0, access_count = 0;
  ProvenLoop loops[kProvenLoops];
  Access accesses[kMostAccesses];
  ProvenSubscript subscripts[kMostSubscripts];
  RememberedProof proof;
};

constexpr unsigned kEntryBits = 6, kEntries = 1u << kEntryBits;

bool same_loop(const ProvenLoop& p, const ProvenLoop& q) {
  return p.first == q.first && p.end == q.end && p.step == q.step;
}

bool same_subscript(const ProvenSubscript& p, const ProvenSubscript& q) {
  return p.constant == q.constant && p.x == q.x && p.y == q.y && p.z == q.z &&
         p.extent == q.extent && p.stride == q.stride &&
         std::equal(p.counters, p.counters + kProvenLoops, q.counters);
}

// Whether `shape` is the call's, in block `b`.
bool same(const Shape& shape, const BlockState& b, const char* file,
          std::initializer_list<ProvenLoop> loops, std::initializer_list<StretchAccess> accesses,
          const bool* returned) {
  const uint3 d = ::blockDim;
  if (shape.file != file || shape.shared != b.shared || shape.block.x != d.x ||
      shape.block.y != d.y || shape.block.z != d.z ||
      shape.shared_bytes != b.config->shared_bytes || shape.returned != (returned != nullptr) ||
      shape.loop_count != loops.size() || shape.access_count != accesses.size())
    return false;
  unsigned k = 0;
  for (const ProvenLoop& loop : loops)
    if (!same_loop(shape.loops[k++], loop)) return false;
  unsigned a = 0, s = 0;
  for (const StretchAccess& access : accesses) {
    const Shape::Access& kept = shape.accesses[a++];
    if (kept.array != access.array || kept.space != access.space || kept.store != access.store ||
        kept.sometimes != access.sometimes || kept.line != access.line ||
        kept.x_end != access.x_end || kept.x_every != access.x_every ||
        kept.enclosing != access.enclosing || kept.subscripts != access.subscripts.size())
      return false;
    for (const ProvenSubscript& subscript : access.subscripts)
      if (!same_subscript(shape.subscripts[s++], subscript)) return false;
  }
  return true;
}

// The worker's table (zeros until used: no call to make it).
thread_local Shape table[kEntries];

// The first of the call's two entries (the other: its neighbour, index ^ 1): by the first
// access's line, x bound and first constant, and the loops' bounds.
Shape* entries_of(std::initializer_list<ProvenLoop> loops,
                  std::initializer_list<StretchAccess> accesses) {
  uint64_t h = 0;
  // (Fibonacci hashing: the product's top bits depend on every bit of what was mixed in)
  const auto mix = [&](long long v) {
    h = (h ^ static_cast<uint64_t>(v)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
  };
  for (const ProvenLoop& loop : loops) mix(loop.first), mix(loop.end);
  if (accesses.size() != 0) {
    const StretchAccess& first = *accesses.begin();
    mix(first.line);
    mix(first.x_end);
    if (first.subscripts.size() != 0) mix(first.subscripts.begin()->constant);
  }
  return table + ((h * 0x9E3779B97F4A7C15ull) >> (64 - kEntryBits) & ~1ull);
}

}  // namespace

const RememberedProof* remembered_proof(const BlockState& b, const char* file,
                                        std::initializer_list<ProvenLoop> loops,
                                        std::initializer_list<StretchAccess> accesses,
                                        const bool* returned) {
  const Shape* entries = entries_of(loops, accesses);
  for (unsigned i = 0; i < 2; ++i)
    if (same(entries[i], b, file, loops, accesses, returned)) return &entries[i].proof;
  return nullptr;
}

void remember_proof(const BlockState& b, const char* file, std::initializer_list<ProvenLoop> loops,
                    std::initializer_list<StretchAccess> accesses, const bool* returned,
                    const RememberedProof& proof) {
  unsigned subscripts = 0;
  for (const StretchAccess& access : accesses)
    subscripts += static_cast<unsigned>(access.subscripts.size());
  if (loops.size() > kProvenLoops || accesses.size() > Shape::kMostAccesses ||
      subscripts > Shape::kMostSubscripts)
    return;
  Shape* entries = entries_of(loops, accesses);
  Shape& shape = entries[entries[0].file != nullptr && entries[1].file == nullptr];
  shape.file = file;
  shape.shared = b.shared;
  shape.block = ::blockDim;
  shape.shared_bytes = b.config->shared_bytes;
  shape.returned = returned != nullptr;
  shape.loop_count = static_cast<unsigned>(loops.size());
  shape.access_count = static_cast<unsigned>(accesses.size());
  unsigned k = 0;
  for (const ProvenLoop& loop : loops) shape.loops[k++] = loop;
  unsigned a = 0, s = 0;
  for (const StretchAccess& access : accesses) {
    shape.accesses[a++] = {
        access.array,     access.space,     access.store,
        access.sometimes, access.line,      access.x_end,
        access.x_every,   access.enclosing, static_cast<unsigned>(access.subscripts.size())};
    for (const ProvenSubscript& subscript : access.subscripts) shape.subscripts[s++] = subscript;
  }
  shape.proof = proof;
}

}  // namespace cudalab::emu
