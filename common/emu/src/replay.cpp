// Races on global memory judged by their result. Threads of one block that touch the same global
// word with no barrier between them, or blocks of one launch that do (global_races.cpp,
// global_checks.cpp, overwrites.cpp), race: on a GPU the result may depend on which runs first.
// Some such programs are correct all the same: in NVIDIA's segmentationTreeThrust, the two threads
// of a two-vertex cycle both make the smaller vertex its own successor, and whichever runs first,
// the other then finds the cycle gone or breaks it the same way. Reporting those is a false alarm;
// so the first race the checks find is put off, and the launch is run again with its blocks, and
// the threads of each block, in the opposite order. If both runs leave the same bytes wherever
// they stored, the order did not matter for this run and nothing is reported; otherwise the first
// run's race is reported as it was found (thread, line, element). No order of whole threads shows
// a lost update (threads that read, change and write back one element, which on a GPU run at once):
// the write back of another value is told at once (report_lost_update), and told instead of a race
// put off.
//
// Algorithm: before a launch's first store into a page (4 KiB) of device memory, the page's bytes
// are kept. Every checked store that is a thread's first to its word takes a call of the race
// checks (log_fresh_store, check_global_race) or of check_global, which keeps the page; a run of
// fresh stores that the fast path extends without a call leaves the fast path where it reaches a
// new page. A bit per page of the arena says which pages the launch kept. When the first run ends
// with a race put off, what it left in the kept pages is set aside, the pages get their bytes from
// before the launch back, and the launch runs again: the last block first, the last thread of
// each first, race checks quiet, output sent nowhere, under a time limit of its own (threads in
// another order may wait for each other forever: past it, the runs differ; a loop form's
// stretches run their threads last first too, BlockThreads::run). Then the pages
// are compared; where any differs, the pages get the first run's bytes back and the race stops the
// launch. Blocks whose accesses the code proves (proven_blocks.cpp) keep nothing: they load only
// what was written before the launch and store elements no other block touches, so both runs store
// the same bytes there.
//
// Limitations: the judgement is of this run's data (an in-place shift of an array of zeros leaves
// zeros in either order: no race reported there); two orders are compared, not all of them (a
// loop form's stretch that reads a down shuffle where its source is kept runs in order in both); no
// replay when the launch stores into a __device__ or static variable, allocates or frees with the
// device runtime, launches kernels, writes a surface, is cooperative, runs with the counters on,
// has a host pointer among its arguments, or stores into more than 512 MiB of pages: the race is
// reported as found. Stores that the checks' instrumentation does not see (a library's memcpy in
// device code) are not undone.
#include "replay.h"

#include <fcntl.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <utility>

#include "checks.h"

namespace cudalab::emu {

std::atomic<uint64_t>* LaunchReplay::kept_pages = nullptr;

LaunchReplay::LaunchReplay() : arena_(arena().base) {
  if (kept_pages == nullptr) {  // (zero pages until touched: 64 GiB of arena, 2 MiB of bits)
    void* bits = mmap(nullptr, arena().size / kKeptPage / 8 + 8, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (bits == MAP_FAILED) {
      possible_ = false;
      return;
    }
    kept_pages = static_cast<std::atomic<uint64_t>*>(bits);
  }
}

bool LaunchReplay::wanted(const LaunchConfig& config, bool host_pointer_args) {
  return checked_code_linked() && !counting() && !config.cooperative && !host_pointer_args;
}

void LaunchReplay::put_off(Diagnostic race) {
  if (again_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (race_waits()) return;
  race_ = std::move(race);
  race_waits_ = true;
}

void LaunchReplay::tell_instead(Diagnostic race) {
  std::lock_guard<std::mutex> lock(mutex_);
  race_ = std::move(race);
  race_waits_ = true;
}

void LaunchReplay::keep_page(uintptr_t page) {
  if (!possible()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::atomic<uint64_t>& bits = kept_pages[page / 64];
  if (!possible() || (bits.load(std::memory_order_relaxed) >> page % 64 & 1)) return;
  if ((pages_.size() + 1) * kKeptPage > kBudget) {
    possible_ = false;
    return;
  }
  const char* bytes = reinterpret_cast<const char*>(arena_ + page * kKeptPage);
  pages_.push_back(page);
  before_.insert(before_.end(), bytes, bytes + kKeptPage);
  bits.fetch_or(uint64_t{1} << page % 64, std::memory_order_release);  // (the copy is made)
}

namespace {
// The kept page number `k`'s bytes in `copies` (a page after another).
char* kept_copy(std::vector<char>& copies, size_t k) { return copies.data() + k * kKeptPage; }
}  // namespace

void LaunchReplay::start_second_run() {
  std::lock_guard<std::mutex> lock(mutex_);
  again_ = true;
  kept_in_first_run_ = pages_.size();
  first_result_.resize(before_.size());
  for (size_t k = 0; k < pages_.size(); ++k) {
    char* page = reinterpret_cast<char*>(arena_ + pages_[k] * kKeptPage);
    std::memcpy(kept_copy(first_result_, k), page, kKeptPage);
    std::memcpy(page, kept_copy(before_, k), kKeptPage);
  }
}

bool LaunchReplay::same_result(bool second_run_failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  // What the first run left in each page: set aside, or (a page only the second run stored into)
  // there when the second run kept it.
  const auto first_run_left = [&](size_t k) {
    return k < kept_in_first_run_ ? kept_copy(first_result_, k) : kept_copy(before_, k);
  };
  bool same = !second_run_failed && possible();
  for (size_t k = 0; same && k < pages_.size(); ++k)
    same = std::memcmp(reinterpret_cast<char*>(arena_ + pages_[k] * kKeptPage), first_run_left(k),
                       kKeptPage) == 0;
  if (!same)
    for (size_t k = 0; k < pages_.size(); ++k)
      std::memcpy(reinterpret_cast<char*>(arena_ + pages_[k] * kKeptPage), first_run_left(k),
                  kKeptPage);
  return same;
}

void LaunchReplay::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (uintptr_t page : pages_) kept_pages[page / 64].store(0, std::memory_order_relaxed);
  pages_.clear();
  before_.clear();
  first_result_.clear();
  possible_ = false;
}

void put_off_race(const BlockState& b, const void* pc, const char* check, const std::string& what) {
  b.replay->put_off(found_here(b, place_of(pc), check, what));
}

void note_store_outside_arrays(BlockState& b, uintptr_t a) {
  if (b.replay == nullptr || !program_global(reinterpret_cast<const void*>(a))) return;
  b.replay->give_up();
  if (!b.replay->second_run()) b.replay = nullptr;  // (the fast path's stores need no look now)
}

// The output goes to /dev/null; where a file may not be opened for writing (the grader's runner:
// common/remote/src/system_call_filter.cpp), to /dev/null opened for reading, where every write
// fails and what stdio kept of it is dropped at the end.
QuietOutput::QuietOutput() {
  std::fflush(stdout);
  std::fflush(stderr);
  saved_out_ = dup(STDOUT_FILENO);
  saved_err_ = dup(STDERR_FILENO);
  int nowhere = open("/dev/null", O_WRONLY);
  if (nowhere < 0) nowhere = open("/dev/null", O_RDONLY);
  dup2(nowhere, STDOUT_FILENO);
  dup2(nowhere, STDERR_FILENO);
  close(nowhere);
}

QuietOutput::~QuietOutput() {
  for (FILE* stream : {stdout, stderr}) {
    std::fflush(stream);
    __fpurge(stream);  // (what a failed write left in the buffer)
    clearerr(stream);
  }
  dup2(saved_out_, STDOUT_FILENO);
  dup2(saved_err_, STDERR_FILENO);
  close(saved_out_);
  close(saved_err_);
}

}  // namespace cudalab::emu
