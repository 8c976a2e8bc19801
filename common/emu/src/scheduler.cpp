// How the emu backend runs a grid: blocks in parallel on a pool of worker threads (Workers); inside
// a block, GPU threads as fibers (fiber_switch.h) that switch only where a GPU's threads must meet.
//
// The algorithm, per block (BlockRunner::run). A round runs fibers one after another; a fiber takes
// a row of threads not yet started (threadIdx.x up to blockDim.x, one y and z) and runs them one
// after another, in a loop compiled with the kernel (Launch::run_rows), until the thread it runs
// stops: at a __syncthreads() (BarrierSites writes down where) or at a warp-level call such as a
// shuffle (WarpMeetings keeps what the lane published). The row then ends after that thread, the
// threads after it are left to other fibers, and from then on the block's fibers take one thread
// at a time (a row would end after its first thread anyway). A stopping fiber switches straight
// to the next fiber of the round, or to a new one while threads are left to start: one context
// switch per thread and meeting (a tail call of the barrier's: the resumed thread returns from the
// switch into its kernel), and a kernel without barriers costs one fiber per block and a loop
// iteration per thread. When every thread has stopped, the round ends and the runner decides:
//   - lanes waiting at warp-level calls whose warps are complete go on alone in the next round
//     (WarpMeetings::ready); if no warp can, the block is stuck: warp divergence;
//   - otherwise the barrier opens if every thread that has not finished waits at the same
//     __syncthreads() as the first to arrive since the last opening (BarrierSites::opens); if
//     not, the block could never finish on a GPU (it hangs or misbehaves), and here it ends with
//     an error that names the threads and lines (BarrierSites::divergence);
//   - a block ends when all its threads have finished; its fibers park for the worker's next block.
// A check that stops a thread (stop_thread) fails the block: the thread's fiber gets a new context
// on its stack (its frames are given up, no destructor runs, as on a GPU), the round goes on, and
// at its end the fibers of the threads still waiting start afresh too.
//
// Unchecked code runs a kernel that the translator gave a loop form (thread_loops.h) once per
// block, on one fiber (run_thread_loops): its own loops run the threads between the barriers,
// and its barriers and shuffles come here for the same bookkeeping and errors (loops_barrier,
// loops_warp_divergence). Every other kernel runs on fibers, checked or not.
//
// Limitations: threads of a block never run at the same time, so a race shows only through the
// checks (checks.cpp), never as a torn value; a spin-wait on another thread of the same block
// without a barrier never ends (the watchdog stops it); a worker runs a few consecutive blocks
// of a large grid one after another (BlockQueue), so a block that waits for a later block of its
// grid without a cooperative launch may wait forever (a GPU need not run them at once either);
// more than 1024 threads per block are refused.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <boost/container/static_vector.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "block.h"
#include "checks.h"
#include "cudalab/emu/device.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"
#include "cudalab/emu/thread_loops.h"
#include "device_limits.h"
#include "errors.h"
#include "fiber_switch.h"
#include "launches.h"
#include "memory.h"
#include "proven_blocks.h"
#include "replay.h"
#include "stores_in_flight.h"
#include "symbolize.h"

namespace cudalab::emu {
namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr unsigned kNoThread = ~0u;  // a fiber's thread before the first of its row stops

// Fiber stacks of one worker, reused by every block it runs. Each has a guard page below it so
// that a stack overflow faults instead of overwriting another thread's stack.
class StackPool {
 public:
  ~StackPool() {
    for (void* top : free_)
      munmap(static_cast<char*>(top) - kStackBytes - page(), kStackBytes + page());
  }
  void* allocate() {  // a stack's top (stacks grow down)
    if (free_.empty()) {
      void* base = mmap(nullptr, kStackBytes + page(), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED) throw std::bad_alloc();
      mprotect(base, page(), PROT_NONE);
      free_.push_back(static_cast<char*>(base) + page() + kStackBytes);
    }
    void* top = free_.back();
    free_.pop_back();
    return top;
  }
  void deallocate(void* top) { free_.push_back(top); }

 private:
  static size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
  std::vector<void*> free_;  // stack tops
};

// "threads 0-15, 32" with the first one's (x,y,z): short and enough to find them.
std::string describe_threads(const std::vector<unsigned>& ids, dim3 block) {
  std::ostringstream s;
  s << (ids.size() == 1 ? "thread " : "threads ");
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (i > 0) s << ", ";
    s << ids[i];
    if (j > i) s << "-" << ids[j];
    i = j + 1;
  }
  unsigned t = ids.front();
  s << " (the first is threadIdx (" << t % block.x << "," << t / block.x % block.y << ","
    << t / (block.x * block.y) << "))";
  return s.str();
}

// Where a block's threads wait at __syncthreads(), and whether the barrier may open: every thread
// that has not finished waits at the same one. The threads that arrive between two openings (in
// one round, or in several when warps went on alone from warp-level calls) are compared with the
// first of them; only a thread that waits somewhere else is written down, so that the common case
// stays cheap.
class BarrierSites {
 public:
  void start_block(unsigned threads) {
    // Cleared only after a block that wrote in it: most blocks meet at one site or none.
    if (written_ || elsewhere_.size() != threads) elsewhere_.assign(threads, {nullptr, 0, 0});
    written_ = false;
    interval_ = 0;
    opened();
  }
  // The barrier opened (or the block started): the next arrivals wait at the next one.
  void opened() {
    ++interval_;
    arrived_ = 0;
    same_site_ = true;
  }
  struct Site {
    const char* file;
    int line;
  };
  // Where the barrier that opens now is (every waiting thread waits there).
  Site opening() const { return first_; }

  void arrive(unsigned thread, const char* file, int line) {
    if (arrived_++ == 0) {
      first_ = {file, line};
    } else if (line != first_.line || file != first_.file) {
      same_site_ = false;
      written_ = true;
      elsewhere_[thread] = {file, line, interval_};
    }
  }

  // Whether the barrier opens with nothing to look at: no thread has finished, and every thread
  // waits at the first one's barrier.
  bool opens(unsigned finished) const { return finished == 0 && same_site_; }

  // Every thread has stopped at a barrier or finished (done[t]), and the barrier cannot open (not
  // opens()): the block could never finish on a GPU, and the text says why, comparing each
  // waiting thread with the first (by number) of them.
  std::string divergence(const std::vector<uint8_t>& done, const LaunchConfig& config) const {
    const auto threads = static_cast<unsigned>(done.size());
    const auto site_of = [&](unsigned t) {
      const Elsewhere& e = elsewhere_[t];
      return e.interval == interval_ ? Site{e.file, e.line} : first_;
    };
    std::vector<unsigned> here, elsewhere, gone;
    Site first{nullptr, 0};
    for (unsigned t = 0; t < threads; ++t) {
      if (done[t]) {
        gone.push_back(t);
        continue;
      }
      const Site s = site_of(t);
      if (first.file == nullptr) first = s;
      (s.line == first.line && s.file == first.file ? here : elsewhere).push_back(t);
    }
    std::ostringstream s;
    s << "barrier divergence in " << launch_site(config) << ", block (" << ::blockIdx.x << ","
      << ::blockIdx.y << "," << ::blockIdx.z << "): " << describe_threads(here, config.block)
      << " wait at __syncthreads() at " << site(first.file, first.line) << ", but ";
    if (!gone.empty()) {
      s << describe_threads(gone, config.block)
        << " finished without reaching it, so the block can never go on. Every thread of a block "
           "must reach every __syncthreads(): do not return early or put the barrier in a branch "
           "that only some threads take.";
    } else {
      const Site other = site_of(elsewhere.front());
      s << describe_threads(elsewhere, config.block) << " wait at a different __syncthreads() at "
        << site(other.file, other.line)
        << ". All threads of a block must meet at the same barrier.";
    }
    return s.str();
  }

 private:
  struct Elsewhere {  // a thread waiting at another barrier than first_, arrived in `interval`
    const char* file;
    int line;
    unsigned interval;
  };
  Site first_{nullptr, 0};  // where the first thread to arrive since the last opening waits
  std::vector<Elsewhere> elsewhere_;
  unsigned interval_ = 0;  // openings so far in this block, and one
  unsigned arrived_ = 0;
  bool same_site_ = true, written_ = false;
};

// Why thread `t`, waiting at a warp-level call at file:line, can never go on: the lanes `missing`
// of its mask never get there.
std::string never_met(unsigned t, const std::vector<unsigned>& missing, const char* file, int line,
                      dim3 block) {
  return describe_threads({t}, block) +
         " waits at a warp-level call (shuffle, vote or __syncwarp) at " + site(file, line) +
         ", but " + describe_threads(missing, block) +
         " of its warp, named in the mask, never get there (they finished, or wait at "
         "__syncthreads()). Every lane of the mask must make the same call.";
}

// The warp-level calls (shuffles, votes, __syncwarp, coalesced_threads) of a block's threads: what
// each lane published, double-buffered so that a lane may publish again before its warp has read
// the last values, and which warps may go on; and the same buffers for the collectives of tiles
// larger than a warp, which meet at block barriers.
class WarpMeetings {
 public:
  void start_block(unsigned threads) {
    threads_ = threads;
    waiting_ = 0;
    // Cleared only after a block that made warp-level calls: most blocks make none.
    if (!used_ && wait_.size() == threads) return;
    wait_.assign(threads, {0, nullptr, 0, false});
    waiting_lanes_.assign((threads + 31) / 32, 0);
    published_.assign(threads, 0);
    block_published_.assign(threads, 0);
    used_ = false;
  }
  unsigned waiting() const { return waiting_; }
  bool waits(unsigned t) const { return wait_[t].mask != 0; }
  bool used() const { return used_; }  // a lane of the block published or waited

  // Lane `t` publishes `value` at a call for the lanes of `mask`; returns the buffer its warp's
  // values go to.
  unsigned publish(unsigned t, unsigned mask, uint64_t value, const char* file, int line) {
    if (mask == 0) mask = 1;  // (a mask of 0 in wait_ means "waits at no call")
    used_ = true;
    const unsigned parity = published_[t]++ % 2;
    values_[parity][t] = value;
    wait_[t] = {mask, file, line, false};
    waiting_lanes_[t / 32] |= 1u << t % 32;
    ++waiting_;
    return parity;
  }
  // Lane `t` waits at coalesced_threads(): its group is the lanes that wait at the same line.
  void wait_coalesced(unsigned t, const char* file, int line) {
    used_ = true;
    wait_[t] = {0xffffffffu, file, line, true};
    waiting_lanes_[t / 32] |= 1u << t % 32;
    ++waiting_;
  }
  const uint64_t* warp_values(unsigned parity, unsigned t) const {
    return &values_[parity][t / 32 * 32];
  }
  unsigned coalesced_mask(unsigned t) const { return coalesced_[t]; }

  // The same for a collective of a tile beyond a warp (a block barrier follows).
  unsigned publish_to_block(unsigned t, uint64_t value) {
    used_ = true;
    const unsigned parity = block_published_[t]++ % 2;
    block_values_[parity][t] = value;
    return parity;
  }
  const uint64_t* block_values(unsigned parity) const { return block_values_[parity]; }

  // Whether the call lane `t` waits at may complete now, `missing` being the lanes of its warp that
  // exist and do not wait: its mask names none of them (at coalesced_threads(), the lanes waiting
  // at the same line form its group, and it may).
  bool ready(unsigned t, uint32_t missing) {
    if (!wait_[t].coalesced) return (wait_[t].mask & missing) == 0;
    const unsigned first = t / 32 * 32;
    unsigned group = 0;
    for (unsigned lane = 0; lane < 32 && first + lane < threads_; ++lane) {
      const Wait& w = wait_[first + lane];
      if (w.mask != 0 && w.coalesced && w.line == wait_[t].line && w.file == wait_[t].file)
        group |= 1u << lane;
    }
    coalesced_[t] = group;
    return true;
  }
  // Why lane `t` can never go on: the lanes of its mask that never reach its call.
  std::string stuck(unsigned t, dim3 block) const {
    return never_met(t, missing_lanes(t), wait_[t].file, wait_[t].line, block);
  }
  // Every thread has stopped, some at warp-level calls: marks the lanes of the warps whose lanes
  // (those of the mask that exist) all wait there, which may go on (goes_on[t]; whoever starts
  // them calls go_on); the rest keep waiting. If no lane can go on, none is marked, and the text
  // says why the first of them never can (empty: some go on).
  std::string release(std::vector<uint8_t>& goes_on, dim3 block) {
    std::string never;
    bool any = false;
    for (unsigned warp = 0; warp < waiting_lanes_.size(); ++warp) {
      const uint32_t lanes = waiting_lanes_[warp];
      if (lanes == 0) continue;
      const uint32_t missing = warp_calls::lanes_that_exist(threads_, warp * 32) & ~lanes;
      for (uint32_t l = lanes; l != 0; l &= l - 1) {
        const unsigned t = warp * 32 + static_cast<unsigned>(std::countr_zero(l));
        if (ready(t, missing))
          goes_on[t] = any = true;
        else if (never.empty())
          never = stuck(t, block);
      }
    }
    return any ? std::string() : never;
  }

  // Lane `t`, marked by release(), goes on: it waits no more.
  void go_on(unsigned t) {
    wait_[t] = {0, nullptr, 0, false};
    waiting_lanes_[t / 32] &= ~(1u << t % 32);
    --waiting_;
  }

 private:
  std::vector<unsigned> missing_lanes(unsigned t) const {
    const unsigned first = t / 32 * 32;
    std::vector<unsigned> missing;
    for (unsigned lane = 0; lane < 32 && first + lane < threads_; ++lane)
      if ((wait_[t].mask >> lane & 1u) && wait_[first + lane].mask == 0)
        missing.push_back(first + lane);
    return missing;
  }
  struct Wait {
    unsigned mask;  // 0: not waiting at a warp-level call
    const char* file;
    int line;
    bool coalesced;  // at coalesced_threads(): the mask is found when the block stops
  };
  unsigned threads_ = 0, waiting_ = 0;
  bool used_ = false;  // a lane of this block published or waited
  std::vector<Wait> wait_;
  std::vector<uint32_t> waiting_lanes_;  // per warp, bit l: lane l waits (wait_[...].mask != 0)
  std::vector<unsigned> published_, block_published_;  // calls per thread: pick the buffer
  uint64_t values_[2][1024] = {}, block_values_[2][1024] = {};
  unsigned coalesced_[1024] = {};
};

// The memory of a loop form's block (thread_loops.h's block_memory): one piece after another, in
// chunks that the worker keeps for its next blocks (a bump of a pointer per piece; a block's
// pieces lie together in memory).
class BlockMemory {
 public:
  void start_block() {
    chunk_ = 0;
    block_chunk = chunks_.empty() ? BlockChunk{} : chunks_[0].whole();
  }
  // A piece of `bytes` (a multiple of kBlockMemoryGrain) that does not fit in what is left of the
  // current chunk (block_memory takes those that fit): the next chunk's first.
  void* allocate(size_t bytes) {
    do {
      ++chunk_;
    } while (chunk_ < chunks_.size() && chunks_[chunk_].bytes < bytes);
    if (chunk_ >= chunks_.size())
      chunk_ = (chunks_.emplace_back(std::max(bytes, kChunkBytes)), chunks_.size() - 1);
    block_chunk = chunks_[chunk_].whole();
    void* piece = block_chunk.next;
    block_chunk.next += bytes;
    return piece;
  }

 private:
  static constexpr size_t kChunkBytes = 1 << 20;
  struct Chunk {
    explicit Chunk(size_t size) : bytes(size), memory(new std::byte[size]) {}
    BlockChunk whole() const { return {memory.get(), memory.get() + bytes}; }
    size_t bytes;
    std::unique_ptr<std::byte[]> memory;
  };
  std::vector<Chunk> chunks_;
  size_t chunk_ = 0;  // the chunk that block_chunk is the rest of
};

class BlockRunner;
extern thread_local BlockRunner* runner;  // the worker's (defined below)

// Runs the blocks a worker is given, one at a time: a block's threads on fibers, in rounds that
// each end when every thread has stopped (at a barrier, at a warp-level call, or finished).
class BlockRunner {
 public:
  ~BlockRunner() {
    for (auto& f : fibers_) stacks_.deallocate(f->stack);
  }

  // Runs the block that `state` names; on failure returns the error and its explanation.
  std::pair<cudaError_t, Diagnostic> run(const LaunchConfig& config, ThreadFn fn,
                                         BlockState& state) {
    config_ = &config;
    fn_ = fn;
    ::blockIdx = state.block;
    state.block_epoch = ++state.epoch;
    state.unwritten_read.clear();
    threads_ = config.block.x * config.block.y * config.block.z;
    next_ = 0;
    next_index_ = {0, 0, 0};
    reversed_ = state.reversed;
    threads_stop_ = reversed_;  // (the threads of a reversed block start one at a time)
    waiting_fibers_ = 0;
    barrier_.start_block(threads_);
    // Each thread's mark and vote goes back to 0 when it is used; only a block that failed
    // between the two leaves some, and only a block that made warp-level calls or votes can (most
    // blocks make none: a memset per block was 3% of an unchecked vector add).
    if (goes_on_.size() != threads_ || warps_.used()) goes_on_.assign(threads_, 0);
    if (vote_.size() != threads_ || votes_used_) vote_.assign(threads_, 0);
    warps_.start_block(threads_);
    votes_used_ = grid_wait_ = false;
    error_.clear();
    error_code_ = cudaErrorLaunchFailure;
    // Round 0 starts every thread, on the fibers earlier blocks parked and on new ones; each later
    // round releases one barrier.
    idle_.clear();
    for (auto& f : fibers_) idle_.push_back(f.get());
    idle_pos_ = 0;
    live_.clear();
    live_complete_ = true;
    run_round();
    while (no_unwritten_read(state) && finished() < threads_) {
      if (warps_.waiting() > 0) {  // warps meet at a shuffle or __syncwarp(): they go on alone
        if (!release_warps()) break;
        ++state.epoch;  // the shared-memory checks treat it as ordering (see docs/diagnostics.md)
        run_round();
        continue;
      }
      if (!barrier_.opens(finished())) {
        error_ = {"barrier_divergence", barrier_.divergence(finished_flags(), *config_)};
        break;
      }
      count_votes();
      if (grid_wait_) {  // grid.sync(): this block has arrived; wait for the others
        grid_wait_ = false;
        publish_store(0);  // (its last store has landed: nobody waits for this worker to go on)
        state.grid->arrive_and_wait();
        state.launch_stamp = grid_phase_stamp;
        state.stamp = state.launch_stamp + state.block_rank;
      }
      ++state.epoch;  // the barrier opens: what was written before it is safe to read
      count_barrier(barrier_.opening().file, barrier_.opening().line);
      barrier_.opened();
      if (!live_complete_) {
        live_.clear();
        for (auto& f : fibers_)
          if (!f->parked) live_.push_back(f.get());
        live_complete_ = true;
      }
      run_round();
    }
    no_unwritten_read(state);
    if (error_.empty() && !state.blocks_agree.empty() && !state.threads_overwrote)
      error_ = state.blocks_agree;
    count_block_end();
    if (!error_.empty()) restart_fibers();  // gives up the threads of the failed block
    return {error_code_, error_};
  }

  // __syncthreads() of the thread that runs now. Only a thread that waits somewhere else than the
  // round's first one is written down: the common case stays cheap. (Inlined into its callers, as
  // runner_for is: a frame less on every fiber's stack at its switch, 5-7% of a barrier kernel.)
  [[gnu::always_inline]] void arrive(const char* file, int line) {
    Fiber& me = stopping();
    barrier_.arrive(me.thread, file, line);
    switch_to(me, next_in_round(), true);
  }

  // __syncthreads_count(): a barrier that also counts the threads whose predicate holds.
  int arrive_and_count(bool predicate, const char* file, int line) {
    vote(stopping().thread, predicate);
    arrive(file, line);
    return vote_total_;
  }
  void vote(unsigned t, bool predicate) {
    vote_[t] = predicate;
    votes_used_ = true;
  }
  // The barrier opens: the votes at it are counted, once for every thread.
  void count_votes() {
    if (!votes_used_) return;
    vote_total_ = 0;
    for (unsigned t = 0; t < threads_; ++t) vote_total_ += std::exchange(vote_[t], 0);
    votes_used_ = false;
  }

  // grid.sync(): a barrier of the block, after which the block waits for the grid's others.
  void arrive_for_grid(const char* file, int line) {
    grid_wait_ = true;
    arrive(file, line);
  }

  // A warp-level call (shuffle, vote, __syncwarp) of the running thread: publishes `value`, waits
  // for the lanes of `mask`, and returns what the warp's 32 lanes published.
  const uint64_t* warp_exchange(unsigned mask, uint64_t value, const char* file, int line) {
    Fiber& me = stopping();
    const unsigned parity = warps_.publish(me.thread, mask, value, file, line);
    // (Where the warp's values will be is known now: the switch returns it, as a tail call.)
    return static_cast<const uint64_t*>(
        switch_to(me, next_in_round(), true, warps_.warp_values(parity, me.thread)));
  }

  // A collective of a tile larger than a warp: publishes `value` at a block barrier, and returns
  // what the block's threads published (double-buffered, as warp_exchange is).
  const uint64_t* block_exchange(uint64_t value, const char* file, int line) {
    const unsigned parity = warps_.publish_to_block(stopping().thread, value);
    arrive(file, line);
    return warps_.block_values(parity);
  }

  // coalesced_threads(): the lanes of the running thread's warp that reach this call together
  // (those waiting at the same line when the block's threads have all stopped).
  unsigned coalesce(const char* file, int line) {
    Fiber& me = stopping();
    warps_.wait_coalesced(me.thread, file, line);
    switch_to(me, next_in_round(), true);
    return warps_.coalesced_mask(me.thread);
  }

 private:
  // Every thread has stopped; some wait at a warp-level call. The warps whose lanes all wait there
  // go on in the next round (WarpMeetings::release), the rest keep waiting; false if none can
  // (warps_go_on).
  bool release_warps() {
    if (!warps_go_on()) return false;
    live_.clear();
    live_complete_ = false;
    for (auto& f : fibers_)
      if (!f->parked && std::exchange(goes_on_[f->thread], 0)) {
        warps_.go_on(f->thread);
        live_.push_back(f.get());
      }
    const auto by_thread = [](Fiber* a, Fiber* b) { return a->thread < b->thread; };
    if (!std::is_sorted(live_.begin(), live_.end(), by_thread))
      std::sort(live_.begin(), live_.end(), by_thread);
    return true;
  }

  // The lanes that go on from warp-level calls are marked in goes_on_ (release_warps and
  // clears each mark, and lets its lane go on, as it starts it); false if none can,
  // with the block stuck and error_ saying where.
  bool warps_go_on() {
    const std::string never = warps_.release(goes_on_, config_->block);
    if (never.empty()) return true;
    error_ = warp_divergence(never);
    return false;
  }
  // The error of a block whose warp can never go on (`never`: WarpMeetings::stuck's why).
  Diagnostic warp_divergence(const std::string& never) const {
    std::ostringstream s;
    s << "warp divergence in " << launch_site(*config_) << ", block (" << ::blockIdx.x << ","
      << ::blockIdx.y << "," << ::blockIdx.z << "): " << never;
    return {"warp_divergence", s.str()};
  }

  // No error so far, and no thread read shared memory that no thread wrote before the barrier?
  bool no_unwritten_read(BlockState& state) {
    if (error_.empty() && !state.unwritten_read.empty()) error_ = state.unwritten_read;
    return error_.empty();
  }

  struct Fiber {
    fiber_switch::Context context = nullptr;  // where it goes on, while it is suspended
    void* stack = nullptr;                    // its stack's top (none for the worker's own)
    unsigned thread = 0;  // the GPU thread it runs now, written down when the thread first stops
    uint3 index{};        // and that thread's threadIdx
    unsigned thread_base = 0;  // thread less threadIdx.x, known from the start (running_thread())
    ThreadRow row{};           // the row of threads it runs
    unsigned row_y = 0, row_z = 0;  // its threadIdx.y and .z
    bool in_call = false;           // it was suspended in a GPU thread's call (switch_to)
    bool parked = false;            // it has no thread: its block has none left to start
  };

 public:
  // The running fiber's next row of threads (its last row has finished), or nullptr when no thread
  // is left to start: from the next thread not started to the end of its row (a whole row of
  // threadIdx.x at a time, counted on without divisions).
  const ThreadRow* take_row() {
    Fiber& f = *current_;
    if (next_ == threads_ || !error_.empty() || threads_stop_) return nullptr;
    const uint3 first = next_index_;
    const dim3& b = config_->block;
    f.row = {first.x, b.x, &::threadIdx};
    running_thread_base = f.thread_base = next_ - first.x;
    f.row_y = first.y;
    f.row_z = first.z;
    f.thread = kNoThread;
    next_ += b.x - first.x;
    next_index_.x = 0;
    if (++next_index_.y == b.y) {
      next_index_.y = 0;
      ++next_index_.z;
    }
    ::threadIdx = first;
    return &f.row;
  }

 private:
  // The next thread to start, alone: once a block's threads stop (at barriers or warp-level
  // calls), a row would end after its first thread anyway, and a thread started by the fiber's
  // own loop costs less than a row (the kernel's body is called last, so it returns straight to
  // this loop: one return fewer after each switch back).
  void take_thread(Fiber& f) {
    if (reversed_) return take_thread_from_the_end(f);
    const uint3 i = next_index_;
    f.thread = next_++;
    f.index = i;
    const dim3& b = config_->block;
    if (++next_index_.x == b.x) {
      next_index_.x = 0;
      if (++next_index_.y == b.y) {
        next_index_.y = 0;
        ++next_index_.z;
      }
    }
    ::threadIdx = i;
    running_thread_base = f.thread_base = f.thread - i.x;
  }

  // The same for a reversed block (a replay's second run, replay.cpp): the last thread not
  // started.
  void take_thread_from_the_end(Fiber& f) {
    f.thread = threads_ - 1 - next_++;
    f.index = index_of(f.thread, config_->block);
    ::threadIdx = f.index;
    running_thread_base = f.thread_base = f.thread - f.index.x;
  }

  // The running thread stops (at a barrier or a warp-level call): its fiber writes down which
  // thread it runs (its row's base plus threadIdx.x), and the row ends after it (the threads after
  // it start on other fibers, in order, as if the row had not been taken).
  Fiber& stopping() {
    Fiber& me = *current_;
    if (me.thread != kNoThread) return me;  // it stopped before, or was started alone
    if (fn_.run_block != nullptr) waits_outside_the_kernels_body();
    // (threadIdx.x is read alone: it was just written alone, and reading it with .y as one word
    // would stall the processor until that store is done.)
    const unsigned x = ::threadIdx.x;
    me.thread = me.thread_base + x;
    me.index = {x, me.row_y, me.row_z};
    if (ThreadRow& row = me.row; me.index.x + 1 < row.end) {
      next_ = me.thread + 1;
      next_index_ = {me.index.x + 1, me.index.y, me.index.z};
      row.end = me.index.x + 1;
      threads_stop_ = true;  // the rest of the block: a thread at a time (take_thread)
    }
    return me;
  }

  // A thread of a loop form waits at a barrier or a warp-level call that the form does not make
  // (in a function the kernel calls). The translator gives a kernel a loop form only where it
  // finds no such wait, so this is the translator's error, said as such; the checked build runs
  // the kernel on fibers.
  [[noreturn]] void waits_outside_the_kernels_body() {
    std::ostringstream s;
    s << "thread (" << ::threadIdx.x << "," << ::threadIdx.y << "," << ::threadIdx.z
      << ") of block (" << ::blockIdx.x << "," << ::blockIdx.y << "," << ::blockIdx.z << ") in "
      << launch_site(*config_)
      << " waits at a barrier or warp-level call inside a function that the kernel calls. The "
         "emu runs this kernel's threads as loops between its barriers, which can wait only in "
         "the kernel's own body; the translator found no other wait, wrongly (please report "
         "this program).";
    stop_running_thread(cudaErrorLaunchFailure, s.str());
  }

  // When every thread has stopped: the threads started and not waiting on a fiber have finished.
  unsigned finished() const { return next_ - waiting_fibers_; }
  const std::vector<uint8_t>& finished_flags() {
    finished_flag_.assign(threads_, 0);
    std::fill_n(reversed_ ? finished_flag_.end() - next_ : finished_flag_.begin(), next_, 1);
    for (auto& f : fibers_)
      if (!f->parked) finished_flag_[f->thread] = 0;
    return finished_flag_;
  }

  // Runs live_ in order, and new fibers while threads are left to start; returns when all stopped.
  void run_round() {
    pos_ = 0;
    switch_to(scheduler_, next_in_round(), false);
  }

  // Where a stopping context goes: the round's next fiber, a new one, or back to the scheduler.
  Fiber& next_in_round() {
    if (pos_ < live_.size()) {
      Fiber& to = *live_[pos_++];
      if (pos_ + 1 < live_.size()) prefetch_stack(*live_[pos_ + 1]);  // the one after next
      // (and the record of the one after that, whose saved context the next switch reads to
      // prefetch its stack: waiting for it was a quarter of the barrier's time on an EPYC VM)
      if (pos_ + 2 < live_.size()) __builtin_prefetch(live_[pos_ + 2], 1, 3);
      return to;
    }
    if (next_ < threads_ && error_.empty()) {
      live_.push_back(idle_pos_ < idle_.size() ? idle_[idle_pos_++] : &start_fiber());
      return *live_[pos_++];
    }
    return scheduler_;
  }

  // Brings into the cache the stack that a suspended fiber goes on with: its saved registers and
  // the kernel's frame above them, while the two fibers before it run. Why: a block's fibers
  // together touch more stack than the L1 cache holds, so each switch back used to wait for its
  // stack (a quarter of the tiled matmul's time, on the instructions just after a barrier). What
  // a fiber stopped at __syncthreads() touches first lies in the first kPrefetchLines lines from
  // its saved registers (the barrier's call is a tail call: fiber_switch.h); those are fetched
  // (one fiber ahead, 2, 4, 6 or 8 lines: no faster; a prefetch past the stack's top does not
  // fault). Inlined: GCC drops a call to a function that only prefetches (a prefetch has no
  // effect that a compiler must keep).
  [[gnu::always_inline]] static void prefetch_stack(const Fiber& f) {
    const auto saved = reinterpret_cast<uintptr_t>(f.context);
    for (int line = 0; line < kPrefetchLines; ++line)
      __builtin_prefetch(reinterpret_cast<const void*>(saved + 64 * line), 1, 3);
  }
  static constexpr int kPrefetchLines = 3;

  // Suspends context `me` and resumes `to`; returns `result` when some context switches back to
  // `me`. `to` is made the running fiber before the switch, so that nothing is left to do after it
  // (a barrier's call ends with the switch: fiber_switch.h). `in_call`: `me` stops in a GPU
  // thread's call (a barrier, a warp-level call); switching between two such contexts takes the
  // switch that returns.
  [[gnu::always_inline]] const void* switch_to(Fiber& me, Fiber& to, bool in_call,
                                               const void* result = nullptr) {
    me.in_call = in_call;
    current_ = &to;
    ::threadIdx = to.index;
    running_thread_base = to.thread_base;
    if (in_call && to.in_call) return fiber_switch::return_to(to.context, &me.context, result);
    return fiber_switch::jump(to.context, &me.context, result);
  }

  // A new fiber, on a stack of the pool; it starts in fiber_main when first resumed.
  Fiber& start_fiber() {
    Fiber& f = *fibers_.emplace_back(std::make_unique<Fiber>());
    f.stack = stacks_.allocate();
    f.context = fiber_switch::make(f.stack, kStackBytes, fiber_main);
    return f;
  }
  // A fiber's life: it runs threads (see run_threads); a check that stops its thread, or a failed
  // block, gives it a new context on the same stack (stop_running_thread, restart_fibers).
  static void fiber_main(fiber_switch::Transfer t) {
    fiber_switch::arrived(t);
    runner->run_threads(*runner->current_);
  }
  // A fiber runs threads of the current block until none is left to start, then parks until a
  // later block needs it: fibers and their stacks are made once per worker, not once per block.
  [[noreturn]] void run_threads(Fiber& f) {
    for (;;) {
      f.parked = false;
      ++waiting_fibers_;
      if (fn_.run_block != nullptr) {
        run_thread_loops(f);
      } else {
        // Rows of threads until none is left or threads stop (once they stop, a row would end
        // after its first thread), then one thread at a time.
        if (!threads_stop_) fn_.run_rows(fn_.ctx);
        while (next_ < threads_ && error_.empty()) {
          take_thread(f);
          fn_.run_thread(fn_.ctx);
          settle_race_checks();
        }
      }
      park(f);
      switch_to(f, next_in_round(), false);
    }
  }
  // The block as a kernel's loop form runs it (thread_loops.h): once, on fiber f, which takes every
  // thread; its memory comes from block_memory_ (thread_loops.h's block_memory). A check that
  // stops a thread gives up this fiber, and with it the block (stop_running_thread).
  [[gnu::noinline]] void run_thread_loops(Fiber& f) {
    f.thread = kNoThread;
    next_ = threads_;
    block_memory_.start_block();
    fn_.run_block(fn_.ctx);
  }

 public:
  // A loop form's warp-level call that lanes of a waiting thread's mask never reach (they
  // returned).
  [[noreturn]] void loops_warp_divergence(unsigned thread, uint32_t missing, const char* file,
                                          int line) {
    std::vector<unsigned> lanes;
    for (unsigned l = 0; l < 32; ++l)
      if (missing >> l & 1u) lanes.push_back(thread / 32 * 32 + l);
    stop_running_thread(cudaErrorLaunchFailure,
                        warp_divergence(never_met(thread, lanes, file, line, config_->block)));
  }

  // A loop form's barrier (thread_loops.h): every thread that has not returned has arrived.
  void loops_barrier(const char* file, int line, const bool* returned) {
    if (returned != nullptr) {
      finished_flag_.assign(returned, returned + threads_);
      const auto waiting = std::find(finished_flag_.begin(), finished_flag_.end(), 0);
      if (waiting == finished_flag_.end()) return;  // all returned: nothing waits
      barrier_.arrive(static_cast<unsigned>(waiting - finished_flag_.begin()), file, line);
      const EmuCodeRuns composing;  // (the message; the thread stops)
      stop_running_thread(cudaErrorLaunchFailure,
                          {"barrier_divergence", barrier_.divergence(finished_flag_, *config_)});
    }
    ++current_block->epoch;
    count_barrier(file, line);
  }

 private:
 public:
  void* more_block_memory(size_t bytes) { return block_memory_.allocate(bytes); }

 private:
  void park(Fiber& f) {
    f.parked = true;
    --waiting_fibers_;
    live_complete_ = false;
  }
  // Fiber f starts afresh when next resumed: its thread's frames are given up where they are.
  void restart(Fiber& f) {
    f.context = fiber_switch::make(f.stack, kStackBytes, fiber_main);
    f.in_call = false;
  }

 public:
  // A check stopped the running thread (stop_thread): the block fails with the first such message,
  // the thread's fiber starts afresh, and the round goes on with the next fiber.
  [[noreturn]] void stop_running_thread(cudaError_t code, Diagnostic found) {
    emu_code_runs = false;  // (the check that stopped the thread never returns)
    if (error_.empty()) {
      error_ = std::move(found);
      error_code_ = code;
    }
    Fiber& me = *current_;
    park(me);
    restart(me);  // (it writes at the stack's top, which only this thread's first frames used)
    switch_to(given_up_, next_in_round(), false);
    __builtin_unreachable();
  }

 private:
  // The block failed: every fiber whose thread waits (at a barrier, a warp-level call) parks and
  // starts afresh when next resumed.
  void restart_fibers() {
    for (auto& f : fibers_)
      if (!f->parked) {
        park(*f);
        restart(*f);
      }
  }

  StackPool stacks_;  // declared first: destroyed after the fibers that use it
  const LaunchConfig* config_ = nullptr;
  ThreadFn fn_{};
  unsigned threads_ = 0, next_ = 0;     // threads: in the block, started
  uint3 next_index_{};                  // threadIdx of the next thread to start
  bool threads_stop_ = false;           // a thread of this block stopped before the end of its row
  bool reversed_ = false;               // its threads start last first (BlockState::reversed)
  unsigned waiting_fibers_ = 0;         // not parked: each has a thread that has not finished
  std::vector<uint8_t> finished_flag_;  // finished_flags()
  std::vector<std::unique_ptr<Fiber>> fibers_;  // fibers hold references to their own records
  std::vector<Fiber*> idle_;                    // parked fibers, for round 0
  size_t idle_pos_ = 0;                         // idle_[idle_pos_] is taken next
  // The fibers of this round, in order (a fixed capacity: no call to grow it on the hot path).
  boost::container::static_vector<Fiber*, device_limits::kThreadsPerBlock> live_;
  bool live_complete_ = true;  // live_ is every fiber not parked, as fibers_ orders them
  size_t pos_ = 0;             // live_[pos_] runs next
  Fiber scheduler_;            // the worker's own context
  Fiber given_up_;             // where a stopped thread's context is put (stop_running_thread)
  Fiber* current_ = nullptr;
  BarrierSites barrier_;
  WarpMeetings warps_;
  BlockMemory block_memory_;      // a loop form's, for the running block
  std::vector<uint8_t> goes_on_;  // each thread's: it goes on from a warp-level call
  std::vector<int> vote_;         // the predicates of __syncthreads_count()
  int vote_total_ = 0;
  bool votes_used_ = false, grid_wait_ = false;
  Diagnostic error_;
  cudaError_t error_code_ = cudaErrorLaunchFailure;
};

thread_local BlockRunner* runner = nullptr;

// A fixed pool of worker threads; the launching thread works too.
class Workers {
 public:
  Workers() {
    unsigned n = std::thread::hardware_concurrency();
    if (const char* env = std::getenv("CUDALAB_EMU_THREADS")) n = std::strtoul(env, nullptr, 10);
    n = std::max(1u, n);
    for (unsigned i = 1; i < n; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  unsigned size() const { return static_cast<unsigned>(threads_.size()) + 1; }

  // Runs job() on every worker and waits for all of them.
  void run(const std::function<void()>& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
      busy_ = static_cast<unsigned>(threads_.size());
    }
    wake_.notify_all();
    job();
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  void loop() {
    unsigned long seen = 0;
    for (;;) {
      const std::function<void()>* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      (*job)();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) idle_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  const std::function<void()>* job_ = nullptr;
  unsigned long generation_ = 0;
  unsigned busy_ = 0;
  bool stop_ = false;
};

Workers& workers() {
  static Workers pool;
  return pool;
}

// The checks a GPU makes before it runs a launch (device_limits.h). CUDA 13
// refuses every such launch with cudaErrorInvalidValue (seen on an H100, driver 580; older CUDA
// said cudaErrorInvalidConfiguration for the thread and grid limits).
cudaError_t validate(const LaunchConfig& c, std::string& why) {
  using namespace device_limits;
  const dim3 &g = c.grid, &b = c.block;
  unsigned long long threads = 1ull * b.x * b.y * b.z;
  std::ostringstream s;
  if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
    s << "a grid or block dimension is 0 (grid (" << g.x << "," << g.y << "," << g.z << "), block ("
      << b.x << "," << b.y << "," << b.z << "))";
  else if (threads > kThreadsPerBlock)
    s << threads << " threads per block exceed the limit of " << kThreadsPerBlock;
  else if (b.x > kBlockDim[0] || b.y > kBlockDim[1] || b.z > kBlockDim[2])
    s << "block (" << b.x << "," << b.y << "," << b.z << ") exceeds the limits (" << kBlockDim[0]
      << "," << kBlockDim[1] << "," << kBlockDim[2] << ")";
  else if (g.x > kGridDim[0] || g.y > kGridDim[1] || g.z > kGridDim[2])
    s << "grid (" << g.x << "," << g.y << "," << g.z << ") exceeds the limits (2^31-1,"
      << kGridDim[1] << "," << kGridDim[2] << ")";
  else if (const size_t allowed =  // kernel names are looked up only past the default
           c.shared_bytes > kSharedPerBlock ? allowed_dynamic_shared(c.kernel) : kSharedPerBlock;
           c.shared_bytes > allowed)
    s << c.shared_bytes << " bytes of dynamic shared memory exceed the " << allowed / 1024
      << " KiB a launch of this kernel may ask for"
      << (allowed == kSharedPerBlock
              ? " (more needs cudaFuncSetAttribute(kernel, "
                "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), up to " +
                    std::to_string(kSharedPerBlockOptIn / 1024) + " KiB)"
              : "");
  why = s.str();
  return why.empty() ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

namespace {
[[noreturn, gnu::cold, gnu::noinline]] void called_outside_kernel(const char* what,
                                                                  const char* file, int line) {
  diagnose(std::string(what) + " called outside a kernel at " + site(file, line));
  std::abort();
}
// The running block's scheduler; outside a kernel, a message and the end of the program (out of
// line: the message's strings would otherwise take stack in every barrier's frame, between the
// switch's saved registers and the kernel's frame, which a switch back waits for).
[[gnu::always_inline]] inline BlockRunner& runner_for(const char* what, const char* file,
                                                      int line) {
  if (runner == nullptr) called_outside_kernel(what, file, line);
  settle_race_checks();  // the thread stops: what its race checks left waiting is done now
  return *runner;
}

// Block b of a launch writes global memory with stamp launch_stamp + b (see checks.cpp).
uint32_t take_stamps(unsigned long long blocks) {
  static uint32_t next_stamp = kEarlierKernelStamp + 1;
  if (next_stamp + blocks >= kBusy) {  // stamps stay below the shadow's marks (shadow.h)
    forget_writers();
    next_stamp = kEarlierKernelStamp + 1;
  }
  const uint32_t first = next_stamp;
  next_stamp += static_cast<uint32_t>(blocks);
  return first;
}

unsigned long long grid_blocks = 0;  // of the cooperative launch that runs

// Consecutive blocks of a launch, by number (blockIdx.x first): [first, end).
struct BlockRange {
  unsigned long long first = 0, end = 0;
};

// A launch's blocks, handed to the workers in order, a few consecutive blocks at a time. Why not
// one at a time: a take is an atomic add on a counter all workers share, and a block of a kernel
// like vector add runs in a microsecond, so workers taking blocks one by one waited for that
// counter's cache line (vector add 2^24 on 16 workers: 9.3-9.8 ms, then 4.0-5.0 with takes of 64
// blocks; bench_foundation on the GPU machine's CPU cores). A take holds about kThreadsPerTake
// threads, and each worker still gets at least kTakesPerWorker takes, so that the last ones balance
// the workers' loads. In order: every block is taken after the blocks numbered before it (a kernel
// whose blocks wait for earlier blocks' results, as a single-pass scan does, still ends).
class BlockQueue {
 public:
  BlockQueue(unsigned long long blocks, unsigned threads_per_block, unsigned workers)
      : blocks_(blocks),
        per_take_(std::clamp<unsigned long long>(
            kThreadsPerTake / threads_per_block, 1,
            std::max<unsigned long long>(1, blocks / (1ull * workers * kTakesPerWorker)))) {}
  // The next blocks for a worker; false when none is left.
  bool take(BlockRange& range) {
    const unsigned long long first = next_.fetch_add(per_take_, std::memory_order_relaxed);
    if (first >= blocks_) return false;
    range = {first, std::min(first + per_take_, blocks_)};
    return true;
  }

 private:
  static constexpr unsigned kThreadsPerTake = 1 << 14, kTakesPerWorker = 64;
  const unsigned long long blocks_, per_take_;
  std::atomic<unsigned long long> next_{0};
};

// Runs blocks of a launch on the calling thread until `take` gives none; the first error wins.
struct LaunchRun {
  const LaunchConfig& config;
  ThreadFn fn;
  uint32_t launch_stamp;
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::pair<cudaError_t, Diagnostic> error{cudaSuccess, {}};
  std::barrier<void (*)() noexcept>* grid = nullptr;
  std::unique_ptr<std::atomic<bool>[]> fenced;  // blocks that made a __threadfence()
  LaunchReplay* replay = nullptr;               // (replay.h)
  bool reversed = false;                        // the replay's second run

  template <class Take>
  void run_blocks(Take take) {
    static thread_local BlockRunner local;
    static thread_local SharedSpace shared;
    static thread_local uint32_t epoch = 0;  // of this worker, across launches
    runner = &local;
    shared.start_launch(config.shared_bytes);
    builtins.dynamic_shared = reinterpret_cast<unsigned char*>(shared.dynamic());
    shared_space_view = shared.view();
    ::blockDim = config.block;
    ::gridDim = config.grid;
    BlockState state;
    state.config = &config;
    state.epoch = epoch;
    state.shared = &shared;
    state.grid = grid;
    state.fenced = fenced.get();
    claim_store_in_flight();
    state.host_pointer_args =
        std::any_of(config.pointers, config.pointers + config.pointer_count, host_pointer);
    state.replay = replay;
    state.reversed = reversed;
    const ProvenLaunch proven = proven_launch(config, fn.proven, state.host_pointer_args);
    current_block = &state;
    const dim3 g = config.grid;
    const unsigned long long last = 1ull * g.x * g.y * g.z - 1;
    for (BlockRange blocks; !failed && take(blocks);) {
      unsigned long long taken = blocks.first;
      for (; taken < blocks.end && !failed; ++taken) {
        const unsigned long long b = reversed ? last - taken : taken;  // (a replay: the last first)
        state.block = {static_cast<unsigned>(b % g.x), static_cast<unsigned>(b / g.x % g.y),
                       static_cast<unsigned>(b / (1ull * g.x * g.y))};
        state.launch_stamp = launch_stamp;
        state.block_rank = static_cast<uint32_t>(b);
        state.stamp = launch_stamp + static_cast<uint32_t>(b);
        state.made_atomic = false;
        state.writes_over_other_blocks = {};
        state.blocks_agree.clear();
        state.threads_overwrote = false;
        auto e = local.run(config, proven_block(proven, state) ? fn.proven->copy : fn, state);
        publish_store(0);  // (its last store has landed, or a check stopped it before)
        if (!e.second.empty()) record_error(e.first, std::move(e.second));
      }
      blocks_finished(taken - blocks.first);
    }
    if (grid != nullptr) grid->arrive_and_drop();  // this block needs no more grid barriers
    epoch = state.epoch;
    current_block = nullptr;
    shared_space_view = {};
    runner = nullptr;
    count_worker_done();
  }

  void record_error(cudaError_t code, Diagnostic found) {
    if (failed.exchange(true)) return;
    std::lock_guard<std::mutex> lock(error_mutex);
    error = {code, std::move(found)};
  }
};
}  // namespace

const uint64_t* warp_exchange(unsigned mask, uint64_t value, const char* file, int line) {
  return runner_for("a warp-level call", file, line).warp_exchange(mask, value, file, line);
}

const uint64_t* block_exchange(uint64_t value, const char* file, int line) {
  return runner_for("a collective of a tile larger than a warp", file, line)
      .block_exchange(value, file, line);
}

const ThreadRow* take_row() { return runner->take_row(); }

void* more_block_memory(size_t bytes) { return runner->more_block_memory(bytes); }

void loops_warp_divergence(unsigned thread, uint32_t missing, const char* file, int line) {
  const EmuCodeRuns composing;  // (the message; the thread stops)
  runner->loops_warp_divergence(thread, missing, file, line);
}

void loops_barrier(const char* file, int line, const bool* returned) {
  runner->loops_barrier(file, line, returned);
}

uint3 next_loop_thread(unsigned x) {
  settle_race_checks();  // (the thread before: threadIdx is still its own)
  ::threadIdx.x = x;
  return {x, ::threadIdx.y, ::threadIdx.z};
}

void next_loop_row(unsigned y, unsigned z, unsigned first_thread) {
  settle_race_checks();
  running_thread_base = first_thread;
  ::threadIdx.y = y;
  ::threadIdx.z = z;
}

void end_loop_row() { settle_race_checks(); }

bool block_runs_reversed() { return current_block->reversed; }

void stop_thread(cudaError_t code, Diagnostic found) {
  runner->stop_running_thread(code, std::move(found));
}

void syncthreads(const char* file, int line) {
  runner_for("__syncthreads()", file, line).arrive(file, line);
}

int syncthreads_count(int predicate, const char* file, int line) {
  return runner_for("__syncthreads_count()", file, line).arrive_and_count(predicate, file, line);
}

unsigned coalesce(const char* file, int line) {
  return runner_for("coalesced_threads()", file, line).coalesce(file, line);
}

bool cooperative_launch() { return current_block != nullptr && current_block->grid != nullptr; }

void grid_sync(const char* file, int line) {
  BlockRunner& r = runner_for("grid.sync()", file, line);
  if (!cooperative_launch()) {
    const EmuCodeRuns composing;  // (the message; the thread stops)
    fault_at(*current_block, place(file, line), cudaErrorLaunchFailure, "grid_sync",
             "grid.sync() in a kernel not launched with cudaLaunchCooperativeKernel: the blocks of "
             "a <<<>>> launch need not all run at once, so a grid-wide barrier could wait forever");
  }
  r.arrive_for_grid(file, line);
}

[[noreturn]] void unsupported(const char* what) {
  diagnose(std::string("not supported by the emu backend: ") + what);
  std::abort();
}

void bad_shuffle_width(int width, const char* file, int line) {
  const EmuCodeRuns composing;  // (the message; the thread stops)
  if (BlockState* b = current_block)
    fault_at(*b, place(file, line), cudaErrorLaunchFailure, "shuffle_width",
             "a shuffle of width " + std::to_string(width) +
                 ": the width must be a power of two from 1 to 32 (on a GPU the result of any "
                 "other is undefined)");
  unsupported("a shuffle outside a kernel");
}

void assert_failed(const char* expression, const char* file, int line, const char* function) {
  if (std::strncmp(function, kLoopFormPrefix, sizeof kLoopFormPrefix - 1) == 0)
    function += sizeof kLoopFormPrefix - 1;  // the kernel's name, not its loop form's
  const EmuCodeRuns composing;               // (the message; the thread stops)
  if (BlockState* b = current_block) {
    const uint3 k = b->block, t = ::threadIdx;
    std::fprintf(stderr,
                 "%s:%d: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file,
                 line, function, k.x, k.y, k.z, t.x, t.y, t.z, expression);
    fault_at(*b, place(file, line), cudaErrorAssert, "assert",
             std::string("assert(") + expression + ") failed (cudaErrorAssert)");
  }
  std::fprintf(stderr, "%s:%d: %s: Assertion `%s' failed.\n", file, line, function, expression);
  std::abort();
}

void trapped(const char* file, int line) {
  const EmuCodeRuns composing;  // (the message; the thread stops)
  if (BlockState* b = current_block)
    fault_at(*b, place(file, line), cudaErrorLaunchFailure, "trap",
             "__trap() was called: the kernel stops, as a GPU's trap instruction stops it "
             "(cudaErrorLaunchFailure)");
  unsupported("__trap() outside a kernel");
}

unsigned worker_count() { return workers().size(); }

bool in_kernel() { return current_block != nullptr; }

namespace {
// A launch's blocks on the pool of workers.
void run_on_workers(LaunchRun& launch, unsigned long long blocks) {
  const dim3& b = launch.config.block;
  BlockQueue queue(blocks, b.x * b.y * b.z, worker_count());
  workers().run([&] { launch.run_blocks([&](BlockRange& range) { return queue.take(range); }); });
}

// The first run of `launch` put a race off (replay.cpp): the launch runs again, its blocks and
// each block's threads last first, and the race stops the launch unless both runs leave the same
// bytes. Without a second run (the launch did what it cannot undo, or failed another check: the
// race came first), the race is told.
void judge_race(LaunchRun& launch, LaunchReplay& replay, uint32_t allocations_at_start,
                std::chrono::steady_clock::duration first_run) {
  const auto told = [&] { launch.error = {cudaErrorLaunchFailure, replay.race()}; };
  // (a kernel's own cudaMalloc or cudaFree changes the arrays: not undone)
  if (!launch.error.second.empty() || !replay.possible() ||
      allocations_changed.load() != allocations_at_start)
    return told();
  const LaunchConfig& config = launch.config;
  const dim3 g = config.grid;
  const unsigned long long blocks = 1ull * g.x * g.y * g.z;
  replay.start_second_run();
  LaunchRun again{config, launch.fn, take_stamps(blocks)};
  remember_launch(config, again.launch_stamp);
  if (launch.fenced) again.fenced = std::make_unique<std::atomic<bool>[]>(blocks);
  again.replay = &replay;
  again.reversed = true;
  // A time limit of its own: threads in another order may wait for each other forever (a thread
  // spinning on a flag that a thread after it sets); stopped, the second run counts as different.
  const auto limit =
      std::max(std::chrono::seconds(10), std::chrono::ceil<std::chrono::seconds>(4 * first_run));
  watch_launch(config, blocks, limit);
  {
    QuietOutput quiet;  // (the kernel's printf, told once in the first run)
    run_on_workers(again, blocks);
  }
  launch_finished();
  const bool failed =
      !again.error.second.empty() || allocations_changed.load() != allocations_at_start;
  if (!replay.same_result(failed)) told();
}
}  // namespace

void execute(const LaunchConfig& config, ThreadFn fn) {
  if (cudaError_t e = sticky_error()) {
    skipped_after_error();
    set_last_error(e);
    return;
  }
  std::string why;
  if (cudaError_t e = validate(config, why)) {
    diagnose(launch_site(config) + " was refused: " + why + " (" + cudaGetErrorName(e) + ")");
    set_last_error(e);
    return;
  }
  std::lock_guard<std::recursive_mutex> device(device_mutex());  // one launch at a time
  make_room_for_kernel_allocations();
  const dim3 g = config.grid;
  const unsigned long long blocks = 1ull * g.x * g.y * g.z;
  LaunchRun launch{config, fn, take_stamps(blocks)};
  remember_launch(config, launch.launch_stamp);
  if (blocks <= (1u << 24)) launch.fenced = std::make_unique<std::atomic<bool>[]>(blocks);
  LaunchReplay replay;
  if (replay.possible() &&
      LaunchReplay::wanted(
          config,
          std::any_of(config.pointers, config.pointers + config.pointer_count, host_pointer)))
    launch.replay = &replay;
  const uint32_t allocations_at_start = allocations_changed.load();
  const auto started = std::chrono::steady_clock::now();

  watch_launch(config, blocks);
  if (config.cooperative) {
    // Every block at once, each on a thread of its own, as many as the device could hold.
    const unsigned threads = config.block.x * config.block.y * config.block.z;
    const unsigned long long resident =
        1ull * active_blocks_per_sm(static_cast<int>(threads), config.shared_bytes) *
        worker_count();
    if (blocks > resident) {
      launch_finished();
      diagnose(launch_site(config) + " was refused: a cooperative launch of " +
               std::to_string(blocks) + " blocks, but the device holds at most " +
               std::to_string(resident) + " blocks of " + std::to_string(threads) +
               " threads at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor times the " +
               "multiprocessors) (cudaErrorCooperativeLaunchTooLarge)");
      set_last_error(cudaErrorCooperativeLaunchTooLarge);
      return;
    }
    grid_blocks = blocks;
    grid_phase_stamp = launch.launch_stamp;
    std::barrier<void (*)() noexcept> grid(static_cast<std::ptrdiff_t>(blocks), []() noexcept {
      grid_phase_stamp = take_stamps(grid_blocks);
    });
    launch.grid = &grid;
    std::vector<std::thread> block_threads;
    for (unsigned long long b = 0; b < blocks; ++b)
      block_threads.emplace_back([&launch, b] {
        bool taken = false;
        launch.run_blocks([&](BlockRange& range) {
          range = {b, b + 1};
          return !std::exchange(taken, true);
        });
      });
    for (auto& t : block_threads) t.join();
  } else {
    run_on_workers(launch, blocks);
  }
  launch_finished();
  count_launch_end(config);
  if (replay.race_waits())
    judge_race(launch, replay, allocations_at_start, std::chrono::steady_clock::now() - started);
  replay.end();

  if (!launch.error.second.empty()) return fail(launch.error.first, launch.error.second);
  if (std::string overrun = check_redzones(config); !overrun.empty())
    return fail(cudaErrorIllegalAddress, overrun);
  run_child_grids();
}

}  // namespace cudalab::emu
