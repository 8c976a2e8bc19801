// The loads of one watched thread (inspect.h: watch_thread): what the thread that stored a wrong
// element read, for the report of a wrong result. The harness runs the same launch again with the
// thread watched; while a thread is watched, every access of instrumented code takes the full
// check (fast_path.h), which hands the watched thread's global loads here.
#include <map>
#include <mutex>
#include <vector>

#include "checks.h"
#include "cudalab/emu/inspect.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

std::mutex mutex;
uint3 watched_block{}, watched_thread{};
struct Load {
  uintptr_t address;
  unsigned bytes;
  const void* pc;
};
std::vector<Load> loads;
constexpr size_t kMostLoads = size_t{1} << 20;  // a thread's loads kept (a loop's may be many)

}  // namespace

void note_watched_load(const BlockState& b, uintptr_t a, unsigned size, const void* pc) {
  const uint3 t = ::threadIdx;
  std::lock_guard<std::mutex> lock(mutex);
  if (b.block.x != watched_block.x || b.block.y != watched_block.y ||
      b.block.z != watched_block.z || t.x != watched_thread.x || t.y != watched_thread.y ||
      t.z != watched_thread.z || loads.size() >= kMostLoads)
    return;
  loads.push_back({a, size, pc});
}

void watch_thread(Dim3 block, Dim3 thread) {
  std::lock_guard<std::mutex> lock(mutex);
  watched_block = {block.x, block.y, block.z};
  watched_thread = {thread.x, thread.y, thread.z};
  loads.clear();
  watching_a_thread.store(true, std::memory_order_relaxed);
}

std::vector<WatchedLoad> watched_loads() {
  watching_a_thread.store(false, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex);
  std::map<const void*, records::SourceLine> lines;  // each code address symbolized once
  std::vector<WatchedLoad> said;
  for (const Load& l : loads) {
    auto line = lines.find(l.pc);
    if (line == lines.end()) line = lines.emplace(l.pc, source_line(l.pc)).first;
    said.push_back({reinterpret_cast<const void*>(l.address), l.bytes, line->second});
  }
  loads.clear();
  return said;
}

}  // namespace cudalab::emu
