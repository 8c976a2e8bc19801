// Counters of instrumented kernels: each access is filed under its warp's request (same code
// address, same n-th visit since the last barrier); when the block reaches a barrier or ends, each
// request is priced as the GPU would (sectors, bank wavefronts) and added to its source line.
// Atomics are counted per line (not priced), and barriers per line as the blocks pass them; the
// report at exit prints both beside the lines' requests.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "block.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/records.h"
#include "errors.h"
#include "memory.h"
#include "symbolize.h"

namespace cudalab::emu {
using cudalab::AccessSite;
using cudalab::LaunchCounters;
namespace {

struct SiteKey {
  const void* pc;
  bool shared, store;
  uint64_t code() const { return reinterpret_cast<uintptr_t>(pc) * 4 + store * 2 + shared; }
  bool operator<(const SiteKey& o) const {
    return std::tie(pc, shared, store) < std::tie(o.pc, o.shared, o.store);
  }
};

// A table from a 64-bit key to a 32-bit count, emptied at once (a new generation makes every slot
// free) and kept across blocks: open addressing, no allocation per key (a node per key of
// std::unordered_map, and its malloc and free, were half of what counting cost).
class CountTable {
 public:
  // The count of `key`, 0 when it is new.
  uint32_t& operator[](uint64_t key) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    for (size_t i = mix(key);; ++i) {
      Slot& s = slots_[i & (slots_.size() - 1)];
      if (s.generation != generation_) {
        s = {key, 0, generation_};
        ++used_;
        return s.count;
      }
      if (s.key == key) return s.count;
    }
  }
  void clear() {
    ++generation_;
    used_ = 0;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t count = 0, generation = 0;
  };
  static size_t mix(uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 32; }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const uint32_t generation = generation_;
    clear();
    for (const Slot& s : old)
      if (s.generation == generation) (*this)[s.key] = s.count;
  }
  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  uint32_t generation_ = 1;
  size_t used_ = 0;
};

// A warp's request: the accesses of its lanes at one code address, the n-th visit of each (so at
// most one access per lane; their addresses: WorkerCounts).
struct Request {
  SiteKey site;
  unsigned size;
};
// A lane's address in a request it made no access in (no access ends at the address space's end).
constexpr uintptr_t kNoAccess = ~uintptr_t{0};

// A warp's lanes make their accesses one lane after another (a lane runs until it stops), and in
// converged code each lane makes the same sequence of sites. A warp's stream is that sequence with
// each access's request, extended by whichever lane gets furthest first: a lane that follows it
// finds its requests by position, without a look in the tables. A lane that leaves it (a branch
// only some lanes take) goes on through the tables (visits, request_of), which first learn its
// accesses so far. Either way an access joins the same request, so the prices are the same.
struct WarpStream {
  std::vector<std::pair<uint64_t, uint32_t>> steps;  // (site, 1 + index in requests)
};
struct Lane {
  uint32_t generation = 0;  // the lane's position is this round's when it equals the worker's
  uint32_t position = 0;    // its next access is the stream's step `position`
  bool diverged = false;    // it left the stream: the tables hold its visits
};

// A request's price: the sectors (global) or wavefronts (shared) it takes, and the fewest the
// same bytes would need.
struct Price {
  unsigned long long transactions, ideal;
};

// One worker's requests in flight and its totals for the launch.
struct WorkerCounts {
  CountTable visits;         // (site, thread) -> visits since the barrier, of lanes that diverged
  CountTable stream_visits;  // (site, warp) -> the visits of its stream's steps
  CountTable request_of;     // (site, warp, visit) -> 1 + index in requests
  WarpStream streams[32];    // per warp of the block
  Lane lanes[1024];          // per thread of the block
  uint32_t generation = 1;   // of the requests in flight
  std::vector<Request> requests;
  std::vector<uintptr_t> lane_addresses;  // 32 per request: lane l's in request r at 32r + l
  CountTable site_index;                  // site -> 1 + index in sites
  std::vector<std::pair<SiteKey, AccessSite>> sites;     // summed over requests
  std::map<const void*, unsigned long long> atomics_at;  // code address -> operations
  std::map<std::pair<const char*, int>, unsigned long long> barriers_at;  // line -> block passes
  // Requests counted from a proof (count_proven_requests): the prices of a few patterns of lanes,
  // by the place of the first lane's address in the period (warps of one shape repeat them).
  struct Pattern {
    const void* marker = nullptr;
    bool shared = false, store = false;
    unsigned size = 0, lanes = 0;
    long long offsets[32];  // each lane's address from the first lane's
    Price prices[128];
    bool priced[128];
  };
  Pattern patterns[8];
  unsigned next_pattern = 0;  // the one to forget next
};
// This worker's counts: a thread_local with a constructor is reached through a call that checks
// it was made (__tls_init, a sixth of counting's time when each access called it); the pointer
// to it needs none, and the call that makes them is out of line.
constinit thread_local WorkerCounts* my_counts = nullptr;
[[gnu::noinline]] WorkerCounts& make_counts() {
  static thread_local WorkerCounts storage;
  return *(my_counts = &storage);
}
WorkerCounts& counts() { return my_counts != nullptr ? *my_counts : make_counts(); }

uint64_t mix(uint64_t a, uint64_t b) {
  return a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6));
}

// The request (1 + index) of the warp's visit-th access at this site, made at the first one.
uint32_t request_of(WorkerCounts& w, uint64_t site, unsigned warp, unsigned visit,
                    const SiteKey& key, unsigned size) {
  uint32_t& request = w.request_of[mix(mix(site, warp), visit)];
  if (request == 0) {
    w.requests.push_back({key, size});
    w.lane_addresses.resize(32 * w.requests.size(), kNoAccess);
    request = static_cast<uint32_t>(w.requests.size());
  }
  return request;
}

// The request of an access that does not follow its warp's stream: it extends the stream, or its
// lane leaves the stream (or left it before) and goes on through the tables. Out of line: the
// common case (counted in count_access) needs none of this.
[[gnu::noinline]] uint32_t request_off_stream(WorkerCounts& w, Lane& lane, uint64_t site,
                                              unsigned thread, const SiteKey& key, unsigned size) {
  const unsigned warp = thread / 32;
  WarpStream& stream = w.streams[warp];
  if (!lane.diverged && lane.position == stream.steps.size()) {
    const uint32_t request =
        request_of(w, site, warp, w.stream_visits[mix(site, warp)]++, key, size);
    stream.steps.emplace_back(site, request);
    ++lane.position;
    return request;
  }
  if (!lane.diverged) {  // it leaves the stream here: the tables learn its visits so far
    for (uint32_t step = 0; step < lane.position; ++step)
      ++w.visits[mix(stream.steps[step].first, thread)];
    lane.diverged = true;
  }
  return request_of(w, site, warp, w.visits[mix(site, thread)]++, key, size);
}

// Prices a request from its lanes' addresses (sorted here, in place): global memory moves 32-byte
// sectors; shared memory serves in one wavefront at most one distinct 4-byte word per bank (32
// banks). With the addresses in order, the units (sectors, words) and the distinct bytes come out
// of one pass: every access has the request's size, so the units come in order too.
Price price_of(bool shared, unsigned size, uintptr_t* addresses, unsigned accesses) {
  uintptr_t* const end = addresses + accesses;
  if (!std::is_sorted(addresses, end)) std::sort(addresses, end);  // lanes in order: often sorted
  const unsigned unit_bits = shared ? 2 : 5;                       // 4-byte words, 32-byte sectors
  unsigned long long units = 0, distinct_bytes = 0;
  // Shared words per bank: 16 bits are enough, as shared memory holds at most 57,344 words (and an
  // array of 32 of them is cleared in two stores, 32 unsigned ints by a slow `rep stos`).
  uint16_t per_bank[32] = {};
  uintptr_t next_unit = 0, covered_to = 0;  // the first unit not yet counted, byte not yet covered
  for (const uintptr_t* a = addresses; a != end; ++a) {
    const uintptr_t last = (*a + size - 1) >> unit_bits;
    for (uintptr_t u = std::max(*a >> unit_bits, next_unit); u <= last; ++u) {
      ++units;
      if (shared) ++per_bank[u % 32];
    }
    next_unit = last + 1;
    const uintptr_t to = *a + size;
    if (to > std::max(*a, covered_to)) distinct_bytes += to - std::max(*a, covered_to);
    covered_to = std::max(covered_to, to);
  }
  if (shared) return {*std::max_element(per_bank, per_bank + 32), (units + 31) / 32};
  return {units, (distinct_bytes + 31) / 32};  // the distinct bytes asked for, in whole sectors
}

// Adds `requests` requests of `accesses` lanes of `size` bytes, each priced `p`, to a site's
// totals.
void add_requests(AccessSite& t, Price p, unsigned size, unsigned accesses,
                  unsigned long long requests = 1) {
  t.requests += requests;
  t.transactions += requests * p.transactions;
  t.ideal_transactions += requests * p.ideal;
  t.bytes += requests * size * accesses;
  t.max_degree = std::max<unsigned>(
      t.max_degree, static_cast<unsigned>((p.transactions + p.ideal - 1) / p.ideal));
}

// The totals of `site` on this worker.
AccessSite& totals_of(WorkerCounts& w, const SiteKey& site) {
  uint32_t& index = w.site_index[site.code()];
  if (index == 0) {
    w.sites.emplace_back(site, AccessSite{});
    index = static_cast<uint32_t>(w.sites.size());
  }
  return w.sites[index - 1].second;
}

// Prices the requests in flight: each request's addresses in lane order, priced and added to its
// site.
void flush() {
  WorkerCounts& w = counts();
  for (size_t r = 0; r < w.requests.size(); ++r) {
    const uintptr_t* by_lane = w.lane_addresses.data() + 32 * r;
    uintptr_t addresses[32];
    unsigned accesses = 0;
    for (unsigned lane = 0; lane < 32; ++lane)
      if (by_lane[lane] != kNoAccess) addresses[accesses++] = by_lane[lane];
    const Request& request = w.requests[r];
    add_requests(totals_of(w, request.site),
                 price_of(request.site.shared, request.size, addresses, accesses), request.size,
                 accesses);
  }
  w.requests.clear();
  w.lane_addresses.clear();
  w.request_of.clear();
  w.visits.clear();
  w.stream_visits.clear();
  for (WarpStream& s : w.streams) s.steps.clear();
  if (++w.generation == 0) {  // (after 2^32 rounds: no lane may look current by chance)
    for (Lane& lane : w.lanes) lane = {};
    w.generation = 1;
  }
}

std::mutex launches_mutex;
std::vector<LaunchCounters> launches;        // since start_counting(): for the tests' questions
std::vector<LaunchCounters> reported;        // every launch: for the report at exit
std::map<SiteKey, AccessSite> launch_sites;  // of the launch running now, merged from the workers
std::map<const void*, unsigned long long> launch_atomics_at;  // the launch's, summed (as above)
std::map<std::pair<const char*, int>, unsigned long long> launch_barriers_at;
// For the report at exit, per kernel: the lines' barrier passes and atomic operations.
struct LineEvents {
  unsigned long long barrier_passes = 0, atomics = 0;
};
std::map<std::string, std::map<records::SourceLine, LineEvents>> reported_events;

// An access of global or shared memory, filed under its warp's request (atomics: counted per line).
[[gnu::always_inline]] inline void count_access(uintptr_t a, unsigned size, bool store, bool shared,
                                                bool atomic, const void* pc) {
  WorkerCounts& w = counts();
  if (atomic) {
    // Each read-modify-write (a GPU's atomic instruction); not the atomic load with which the
    // emu's compare-and-swap loops (atomicAdd on float, atomicMin ...) start. A swap that another
    // worker's atomic made fail is tried, and counted, again.
    if (store) ++w.atomics_at[pc];
    return;  // atomics are counted, not priced
  }
  const unsigned thread = running_thread();  // thread_rank(), kept by the checked code that counts
  const SiteKey key{pc, shared, store};
  const uint64_t site = key.code();
  Lane& lane = w.lanes[thread];
  if (lane.generation != w.generation) lane = {w.generation, 0, false};
  const WarpStream& stream = w.streams[thread / 32];
  const uint32_t request =
      !lane.diverged && lane.position < stream.steps.size() &&
              stream.steps[lane.position].first == site
          ? stream.steps[lane.position++].second  // the common case: it follows the stream
          : request_off_stream(w, lane, site, thread, key, size);
  w.lane_addresses[32 * (request - 1) + thread % 32] = a;
}

void print_report();
const bool report_at_exit = counters_on && std::atexit(print_report) == 0;

}  // namespace

void count_checked_access(uintptr_t a, unsigned size, bool store, bool atomic, const void* pc) {
  const BlockState& b = *current_block;
  if (reserved_arena.contains(reinterpret_cast<const void*>(a)))  // (reserved before any access)
    count_access(a, size, store, false, atomic, pc);
  else if (b.shared != nullptr && b.shared->contains(a))
    count_access(a, size, store, true, atomic, pc);
}

void count_proven_requests(const void* marker, bool shared, bool store, unsigned size,
                           const long long* offsets, unsigned lanes, const uintptr_t* bases,
                           size_t requests) {
  // A request's price depends on its first lane's address only through the address's place in a
  // period: 128 bytes (the 32 banks' words) in shared memory, a 32-byte sector in global memory.
  // The requests are counted by place, and each place of a pattern of lanes is priced once.
  WorkerCounts& w = counts();
  const unsigned period = shared ? 128 : 32;
  long long from_first[32];
  for (unsigned l = 0; l < lanes; ++l) from_first[l] = offsets[l] - offsets[0];
  const auto same = [&](const WorkerCounts::Pattern& p) {
    return p.marker == marker && p.shared == shared && p.store == store && p.size == size &&
           p.lanes == lanes && std::equal(from_first, from_first + lanes, p.offsets);
  };
  WorkerCounts::Pattern* pattern = std::find_if(w.patterns, std::end(w.patterns), same);
  if (pattern == std::end(w.patterns)) {
    pattern = &w.patterns[w.next_pattern++ % std::size(w.patterns)];
    pattern->marker = marker;
    pattern->shared = shared;
    pattern->store = store;
    pattern->size = size;
    pattern->lanes = lanes;
    std::copy(from_first, from_first + lanes, pattern->offsets);
    std::fill_n(pattern->priced, 128, false);
  }
  unsigned long long at_place[128] = {};
  for (size_t r = 0; r < requests; ++r) ++at_place[(bases[r] + offsets[0]) % period];
  AccessSite& t = totals_of(w, SiteKey{marker, shared, store});
  for (unsigned place = 0; place < period; ++place) {
    if (at_place[place] == 0) continue;
    if (!pattern->priced[place]) {
      // (lifted by a multiple of the period, so that no lane's address lies below 0)
      constexpr uintptr_t kLift = uintptr_t{1} << 40;
      uintptr_t addresses[32];
      for (unsigned l = 0; l < lanes; ++l) addresses[l] = kLift + place + from_first[l];
      pattern->prices[place] = price_of(shared, size, addresses, lanes);
      pattern->priced[place] = true;
    }
    add_requests(t, pattern->prices[place], size, lanes, at_place[place]);
  }
}

void count_barrier(const char* file, int line) {
  if (!counting()) return;
  ++counts().barriers_at[{file, line}];
  flush();
}

void count_block_end() {
  if (!counting()) return;
  flush();
}

// Called by each worker when the launch's blocks are done: its totals join the launch's.
void count_worker_done() {
  if (!counting()) return;
  WorkerCounts& w = counts();
  std::lock_guard<std::mutex> lock(launches_mutex);
  for (auto& [key, t] : w.sites) launch_sites[key].add(t);
  for (auto& [pc, n] : w.atomics_at) launch_atomics_at[pc] += n;
  for (auto& [where, n] : w.barriers_at) launch_barriers_at[where] += n;
  // The requests in flight were priced and emptied at the end of the worker's last block
  // (count_block_end); only the launch's totals are left to clear.
  w.sites.clear();
  w.site_index.clear();
  w.atomics_at.clear();
  w.barriers_at.clear();
}

void count_launch_end(const LaunchConfig& config) {
  if (!counting()) return;
  std::lock_guard<std::mutex> lock(launches_mutex);
  LaunchCounters c;
  c.kernel = config.kernel;
  c.where = site(config.file, config.line);
  for (auto& [where, n] : launch_barriers_at) c.barriers += n;
  for (auto& [pc, n] : launch_atomics_at) c.atomics += n;
  for (auto& [key, t] : launch_sites) {
    AccessSite s = t;
    s.where = source_line(key.pc);
    s.shared = key.shared;
    s.store = key.store;
    if (key.shared) {
      (key.store ? c.shared_store_requests : c.shared_load_requests) += t.requests;
      c.shared_wavefronts += t.transactions;
      c.shared_ideal_wavefronts += t.ideal_transactions;
    } else {
      (key.store ? c.global_store_requests : c.global_load_requests) += t.requests;
      (key.store ? c.global_store_sectors : c.global_load_sectors) += t.transactions;
      (key.store ? c.global_store_bytes : c.global_load_bytes) += t.bytes;
    }
    // Two code addresses of one source line (an unrolled loop) are one line to the student.
    auto same = std::find_if(c.sites.begin(), c.sites.end(), [&](const AccessSite& o) {
      return o.where == s.where && o.shared == s.shared && o.store == s.store;
    });
    if (same == c.sites.end() || !s.where.known()) {
      c.sites.push_back(s);
    } else {
      same->add(s);
    }
  }
  if (report_at_exit) {
    reported.push_back(c);  // a test's start_counting() must not empty it
    auto& lines = reported_events[c.kernel];
    for (auto& [pc, n] : launch_atomics_at) lines[source_line(pc)].atomics += n;
    for (auto& [where, n] : launch_barriers_at)
      lines[code_place(where.first, where.second)].barrier_passes += n;
  }
  launches.push_back(std::move(c));
  launch_sites.clear();
  launch_atomics_at.clear();
  launch_barriers_at.clear();
}

namespace {
void print_report() {
  std::lock_guard<std::mutex> lock(launches_mutex);
  if (reported.empty()) return;
  std::map<std::string, std::pair<unsigned, std::map<std::string, AccessSite>>> kernels;
  for (const LaunchCounters& c : reported) {
    auto& [count, sites] = kernels[c.kernel];
    ++count;
    for (const AccessSite& s : c.sites) {
      std::string key =
          s.where.text() + (s.shared ? " shared " : " global ") + (s.store ? "store" : "load");
      auto [it, added] = sites.try_emplace(key, s);
      if (!added) it->second.add(s);
    }
  }
  std::fprintf(stderr, "\ncudalab emu report (CUDALAB_REPORT): memory requests per source line\n");
  for (auto& [name, entry] : kernels) {
    std::fprintf(stderr, "\nkernel %s, %u launch(es)\n", name.c_str(), entry.first);
    std::fprintf(stderr, "  %-26s %-13s %12s %14s %14s %10s\n", "line", "access", "requests",
                 "sectors/wavef.", "per request", "efficiency");
    for (auto& [key, s] : entry.second) {
      const std::string access =
          std::string(s.shared ? "shared " : "global ") + (s.store ? "store" : "load");
      records::write(records::Record("counters")
                         .text("kernel", name)
                         .count("launches", entry.first)
                         .site("at", s.where)
                         .text("access", access)
                         .count("requests", s.requests)
                         .count("units", s.transactions)
                         .count("ideal_units", s.ideal_transactions));
      std::fprintf(stderr, "  %-26s %-13s %12llu %14llu %14.2f %9.0f%%\n",
                   s.where.known() ? s.where.text().c_str() : "?", access.c_str(), s.requests,
                   s.transactions, double(s.transactions) / double(s.requests),
                   100.0 * double(s.ideal_transactions) / double(s.transactions));
    }
    for (auto& [where, e] : reported_events[name]) {
      const std::string line = where.known() ? where.text() : "?";
      const std::pair<const char*, unsigned long long> events[] = {{"barrier", e.barrier_passes},
                                                                   {"atomics", e.atomics}};
      for (auto [event, count] : events) {
        if (count == 0) continue;
        records::write(records::Record("events")
                           .text("kernel", name)
                           .count("launches", entry.first)
                           .site("at", where)
                           .text("event", event)
                           .count("count", count));
        std::fprintf(stderr, "  %-26s %-13s %12llu %s\n", line.c_str(), event, count,
                     event == std::string_view("barrier") ? "block passes" : "operations");
      }
    }
  }
  std::fprintf(
      stderr,
      "\nefficiency: the fewest sectors (global) or wavefronts (shared) the same bytes "
      "need, per one used. Below 100%%: uncoalesced (global) or bank conflicts (shared).\n");
}
}  // namespace

void start_counting() {
  std::lock_guard<std::mutex> lock(launches_mutex);
  launches.clear();
  counters_on = true;
}

std::vector<cudalab::LaunchCounters> stop_counting() {
  std::lock_guard<std::mutex> lock(launches_mutex);
  counters_on = std::getenv("CUDALAB_REPORT") != nullptr;
  return std::exchange(launches, {});
}

}  // namespace cudalab::emu
