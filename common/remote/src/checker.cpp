// The checker's CUDA runtime: every call goes to the runner (include/cudalab/remote/checker.h).
//
// Algorithm: the first request starts the runner (CUDALAB_RUNNER: the lab's test program, which
// gets one end of a socket pair as --serve 3) or uses a runner that the grader started in its
// sandbox (CUDALAB_RUNNER_FD: the socket's end). Each request waits for its answer. The checker
// follows its own heap blocks (operator new and delete below) so that a host pointer can travel as
// the block that holds it; it reserves, in its own address space, the runner's device memory, so
// that a pointer into it can never be one of its own. What the runner sends is bounded by what
// the request asked for; a runner that breaks that, or goes, ends the checker with the reason.
//
// Limitations: the calls the nine harnesses make (cudaMalloc, cudaFree, cudaMemcpy, cudaMemset,
// cudaMemcpyToSymbol, synchronisation, last error, events, two device queries) and the emu's
// questions (inspect.h); a harness that makes another call does not link.
#include "cudalab/remote/checker.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <source_location>
#include <string>
#include <vector>

#include "array_names.h"
#include "cudalab/emu/inspect.h"
#include "cudalab/emu/runtime.h"

namespace cudalab::remote {
namespace {

// ---- the checker's heap blocks -------------------------------------------------------------
// A map that allocates with malloc, so that following the heap does not follow itself.
template <class T>
struct MallocAllocator {
  using value_type = T;
  MallocAllocator() = default;
  template <class U>
  MallocAllocator(const MallocAllocator<U>&) {}
  T* allocate(size_t n) {
    if (void* p = std::malloc(n * sizeof(T))) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t) { std::free(p); }
  bool operator==(const MallocAllocator&) const { return true; }
};
template <class K, class V>
using MallocMap = std::map<K, V, std::less<K>, MallocAllocator<std::pair<const K, V>>>;

std::mutex heap_mutex;
MallocMap<uintptr_t, size_t>& heap_blocks() {
  static auto* blocks =
      new (std::malloc(sizeof(MallocMap<uintptr_t, size_t>))) MallocMap<uintptr_t, size_t>();
  return *blocks;
}
MallocMap<uintptr_t, bool>& twinned() {  // blocks the runner holds a twin of
  static auto* blocks =
      new (std::malloc(sizeof(MallocMap<uintptr_t, bool>))) MallocMap<uintptr_t, bool>();
  return *blocks;
}
std::vector<uint64_t, MallocAllocator<uint64_t>> forgotten;  // twins to drop, with the next request

struct Block {
  uintptr_t base;
  size_t size;
};
// The range of `ranges` (start -> size) that holds p, or end().
auto range_holding(MallocMap<uintptr_t, size_t>& ranges, const void* p) {
  auto a = reinterpret_cast<uintptr_t>(p);
  auto it = ranges.upper_bound(a);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return a - it->first < std::max<size_t>(it->second, 1) ? it : ranges.end();
}

// The heap block that holds p, if any.
bool heap_block(const void* p, Block& b) {
  std::lock_guard<std::mutex> lock(heap_mutex);
  auto it = range_holding(heap_blocks(), p);
  if (it == heap_blocks().end()) return false;
  b = {it->first, it->second};
  twinned()[it->first] = true;
  return true;
}

// ---- the runner ----------------------------------------------------------------------------
int runner_fd = -1;
pid_t runner_pid = -1;
MallocMap<uintptr_t, size_t> device_ranges;  // the runner's device memory, reserved here too
uint64_t reply_budget = 0;                   // the bytes the current request may bring back

[[noreturn]] void runner_gone(const std::string& why) {
  std::fflush(stdout);
  int status = 0;
  if (runner_pid > 0) {
    kill(runner_pid, SIGKILL);  // (it may be alive but broken)
    if (waitpid(runner_pid, &status, 0) == runner_pid && WIFSIGNALED(status) &&
        WTERMSIG(status) != SIGKILL) {
      std::fprintf(stderr, "the code under test crashed (signal %d: %s) %s\n", WTERMSIG(status),
                   strsignal(WTERMSIG(status)), why.c_str());
      std::_Exit(128 + WTERMSIG(status));
    }
    if (WIFEXITED(status)) {
      std::fprintf(stderr,
                   "the code under test ended the program (exit status %d) %s: a kernel's "
                   "host code must return to its caller, not exit\n",
                   WEXITSTATUS(status), why.c_str());
      std::_Exit(1);
    }
  }
  std::fprintf(stderr,
               "the code under test ended its process %s (an exit, a crash or a limit): a lab's "
               "functions must return to their caller\n",
               why.c_str());
  std::_Exit(1);
}

void start_runner() {
  if (const char* fd = std::getenv("CUDALAB_RUNNER_FD")) {
    runner_fd = std::atoi(fd);
    return;
  }
  const char* path = std::getenv("CUDALAB_RUNNER");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr,
                 "this checker runs the student's code in a program of its own: set "
                 "CUDALAB_RUNNER to the lab's test program (make check does)\n");
    std::exit(2);
  }
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    std::perror("socketpair");
    std::exit(2);
  }
  std::fflush(nullptr);
  runner_pid = fork();
  if (runner_pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(ends[1], 3);  // (dup2 clears close-on-exec)
    execl(path, path, "--serve", "3", static_cast<char*>(nullptr));
    std::fprintf(stderr, "cannot start the runner %s: %s\n", path, std::strerror(errno));
    std::_Exit(127);
  }
  close(ends[1]);
  runner_fd = ends[0];
}

void connect_runner() {
  // A reply that does not read as it should ends the test (WireError, not caught elsewhere).
  std::set_terminate([] { runner_gone("(it answered with a broken message)"); });
  start_runner();
  widen_buffers(runner_fd);
  request(Op::hello, Message());  // the runner is there before the test goes on
}

// Reserves the runner's device memory [p, p + size) here too, so that it is never host memory of
// the checker's. (A GPU's runtime may place small arrays in the same page: the pages already
// reserved are skipped.)
MallocMap<uintptr_t, uintptr_t> reserved_pages;  // start -> end

void reserve_device_range(uintptr_t p, size_t size) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  uintptr_t at = p / page * page;
  const uintptr_t end = (p + std::max<size_t>(size, 1) + page - 1) / page * page;
  while (at < end) {
    auto next = reserved_pages.upper_bound(at);
    if (next != reserved_pages.begin() && std::prev(next)->second > at) {
      at = std::prev(next)->second;  // already ours
      continue;
    }
    const uintptr_t gap_end = next == reserved_pages.end() ? end : std::min(end, next->first);
    void* got = mmap(reinterpret_cast<void*>(at), gap_end - at, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED) {
      std::fprintf(stderr,
                   "the runner's device memory at %p lies where the checker has memory of its "
                   "own: run the test again\n",
                   reinterpret_cast<void*>(p));
      std::exit(2);
    }
    reserved_pages[at] = gap_end;
    at = gap_end;
  }
  device_ranges[p] = std::max<size_t>(size, 1);
}

bool is_device(const void* p) { return range_holding(device_ranges, p) != device_ranges.end(); }

// A host pointer: the block that holds it (outside the heap: the `bytes` bytes at p), with the
// `count` bytes from `from` (an offset into the block) that travel along.
enum class Send { nothing, block, from_pointer };
Block put_host(Message& m, const void* p, size_t bytes, Send send, size_t count = 0) {
  Block b{reinterpret_cast<uintptr_t>(p), bytes};
  if (!heap_block(p, b)) {
    std::lock_guard<std::mutex> lock(heap_mutex);
    twinned()[b.base] = true;
  }
  const size_t offset = reinterpret_cast<uintptr_t>(p) - b.base;
  const size_t from = send == Send::from_pointer ? offset : 0;
  count = send == Send::nothing ? 0
          : send == Send::block ? b.size
                                : std::min(count, b.size - offset);
  m.put(PointerKind::host);
  for (uint64_t v :
       {uint64_t(b.base), uint64_t(b.size), uint64_t(offset), uint64_t(from), uint64_t(count)})
    m.put(v);
  m.put_bytes(reinterpret_cast<const char*>(b.base) + from, count);
  return b;
}

// The blocks a host function may write, as sent: they come back after the call.
MallocMap<uintptr_t, size_t> expected_blocks;

MallocMap<const void*, const char*>& symbol_names() {
  static MallocMap<const void*, const char*> names;
  return names;
}

void put_site(Message& m, const std::source_location& where) {
  m.put(std::string(where.file_name()));
  m.put<int>(int(where.line()));
}

// A count of items in a reply, each of which travels in at least `item_bytes` bytes: what the
// checker allocates for them is bounded by the reply's size, never by the runner's claim.
size_t count(Message& reply, size_t item_bytes) {
  auto n = reply.get<uint64_t>();
  if (n > reply.left() / item_bytes) throw WireError("more items than the reply has bytes for");
  return n;
}
// The least bytes an item of each list travels in (its numbers, and 8 for each string's length).
constexpr size_t kAllocationBytes = 8 + 8;
constexpr size_t kLaunchBytes = 8 + 8 + 12 * 8 + 8;
constexpr size_t kSiteBytes = 8 + 4 + 2 + 4 * 8 + 4;

cudaError_t plain(Op op, const Message& m = Message()) { return request(op, m).get<cudaError_t>(); }

}  // namespace

Message request(Op op, const Message& m) {
  if (runner_fd < 0 && op != Op::hello) connect_runner();
  flush_output();
  std::vector<uint64_t, MallocAllocator<uint64_t>> drop;
  {
    std::lock_guard<std::mutex> lock(heap_mutex);
    drop.swap(forgotten);
  }
  for (uint64_t id : drop) {  // twins of blocks the checker has freed
    Message f;
    f.put(Op::forget_host_block);
    f.put(id);
    Message ignored;
    if (!send(runner_fd, f) || !receive(runner_fd, ignored, 64)) runner_gone("");
  }
  Message out;
  out.put(op);
  out.put_bytes(m.bytes().data(), m.bytes().size());
  if (!answered(op)) {  // sent now, answered with the next request's answer
    if (!send(runner_fd, out)) runner_gone("during the test");
    return Message();
  }
  Message reply;
  const uint64_t limit = reply_budget + (uint64_t{16} << 20);
  reply_budget = 0;
  if (!send(runner_fd, out) || !receive(runner_fd, reply, limit)) runner_gone("during the test");
  try {
    if (reply.get<uint8_t>() != 0) {
      std::fprintf(stderr, "the runner could not do what the test asked: %s\n",
                   reply.get_string().c_str());
      std::exit(1);
    }
  } catch (const WireError&) {
    runner_gone("(it answered with a broken message)");
  }
  return reply;
}

void put_pointer(Message& m, const void* p, bool writable, size_t element_bytes) {
  if (p == nullptr) {
    m.put(PointerKind::null);
  } else if (is_device(p)) {
    m.put(PointerKind::device);
    m.put(reinterpret_cast<uintptr_t>(p));
  } else {
    // Outside the heap (a local variable), one element is all the checker knows of: the
    // harnesses pass arrays as vectors, and a scalar's address only for a scalar.
    Block b = put_host(m, p, element_bytes, Send::block);
    if (writable) {
      expected_blocks[b.base] = b.size;
      reply_budget += b.size + 64;
    }
  }
}

void receive_blocks(Message& reply) {
  try {
    auto count = reply.get<uint64_t>();
    for (uint64_t i = 0; i < count; ++i) {
      auto id = reply.get<uint64_t>(), size = reply.get<uint64_t>();
      auto it = expected_blocks.find(id);
      if (it == expected_blocks.end() || it->second != size)
        throw WireError("a block the test did not send");
      reply.get_bytes(reinterpret_cast<void*>(id), size);
    }
  } catch (const WireError& e) {
    runner_gone(std::string("(it answered with a broken message: ") + e.what() + ")");
  }
  expected_blocks.clear();
}

SymbolNames::SymbolNames(std::initializer_list<std::pair<const char*, const void*>> symbols) {
  for (const auto& [name, address] : symbols) symbol_names()[address] = name;
}

// The facts a test asked the runner for and cannot check itself, because the student's code in the
// runner could answer them (docs/instructor-guide.md, "Untrusted code"): recorded in the test's
// report as the property runner_reported, a comma-separated list, for the grader to show.
namespace {
std::set<std::string> runner_reported_facts;  // of the running test, emptied as each test starts
}  // namespace

void note_runner_reported(const char* fact) {
  if (::testing::UnitTest::GetInstance()->current_test_info() == nullptr) return;
  if (!runner_reported_facts.insert(fact).second) return;
  std::string list;
  for (const std::string& f : runner_reported_facts) list += (list.empty() ? "" : ",") + f;
  ::testing::Test::RecordProperty("runner_reported", list);
}

}  // namespace cudalab::remote

// ---- the heap, followed ----------------------------------------------------------------------
namespace {
void* follow(void* p, size_t n) {
  if (p == nullptr) throw std::bad_alloc();
  std::lock_guard<std::mutex> lock(cudalab::remote::heap_mutex);
  cudalab::remote::heap_blocks()[reinterpret_cast<uintptr_t>(p)] = n;
  return p;
}
void unfollow(void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(cudalab::remote::heap_mutex);
  auto a = reinterpret_cast<uintptr_t>(p);
  cudalab::remote::heap_blocks().erase(a);
  if (cudalab::remote::twinned().erase(a)) cudalab::remote::forgotten.push_back(a);
}
}  // namespace

void* operator new(size_t n) { return follow(std::malloc(n ? n : 1), n); }
void* operator new[](size_t n) { return follow(std::malloc(n ? n : 1), n); }
void* operator new(size_t n, std::align_val_t a) {
  return follow(std::aligned_alloc(size_t(a), (n + size_t(a) - 1) / size_t(a) * size_t(a)), n);
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept {
  unfollow(p);
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { operator delete(p); }

// ---- the CUDA runtime, forwarded ---------------------------------------------------------------
using cudalab::remote::Message;
using cudalab::remote::Op;
namespace remote = cudalab::remote;

cudaError_t cudaMalloc(void** devPtr, size_t size, std::source_location where) {
  if (devPtr == nullptr) return cudaErrorInvalidValue;
  Message m;
  remote::put_site(m, where);
  // The array's name, read here: in the grader's sandbox the runner cannot read this file.
  m.put(cudalab::emu::array_name(where.file_name(), int(where.line())));
  m.put<uint64_t>(size);
  Message reply = remote::request(Op::malloc, m);
  auto err = reply.get<cudaError_t>();
  auto p = reply.get<uintptr_t>();
  if (err == cudaSuccess && p != 0) remote::reserve_device_range(p, size);
  *devPtr = err == cudaSuccess ? reinterpret_cast<void*>(p) : nullptr;
  return err;
}

cudaError_t cudaFree(void* devPtr, std::source_location where) {
  Message m;
  remote::put_site(m, where);
  m.put(reinterpret_cast<uintptr_t>(devPtr));
  return remote::plain(Op::free, m);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                       std::source_location where) {
  Message m;
  remote::put_site(m, where);
  m.put(kind);
  m.put<uint64_t>(count);
  const bool host_dst = dst != nullptr && !remote::is_device(dst);
  if (host_dst)
    remote::put_host(m, dst, count, remote::Send::nothing);
  else
    remote::put_pointer(m, dst, false, 1);
  if (src != nullptr && !remote::is_device(src))
    remote::put_host(m, src, count, remote::Send::from_pointer, count);
  else
    remote::put_pointer(m, src, false, 1);
  m.put<uint8_t>(host_dst);
  if (host_dst) remote::reply_budget += count;
  Message reply = remote::request(Op::memcpy, m);
  auto err = reply.get<cudaError_t>();
  if (host_dst && err == cudaSuccess) reply.get_bytes(dst, count);
  return err;
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count, std::source_location where) {
  Message m;
  remote::put_site(m, where);
  m.put(reinterpret_cast<uintptr_t>(devPtr));
  m.put(value);
  m.put<uint64_t>(count);
  return remote::plain(Op::memset, m);
}

cudaError_t cudaDeviceSynchronize() { return remote::plain(Op::synchronize); }
cudaError_t cudaGetLastError() { return remote::plain(Op::get_last_error); }
cudaError_t cudaPeekAtLastError() { return remote::plain(Op::peek_at_last_error); }

cudaError_t cudaGetDevice(int* device) {
  Message reply = remote::request(Op::get_device, Message());
  auto err = reply.get<cudaError_t>();
  *device = reply.get<int>();
  return err;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  Message m;
  m.put(attr);
  m.put(device);
  Message reply = remote::request(Op::device_attribute, m);
  auto err = reply.get<cudaError_t>();
  *value = reply.get<int>();
  return err;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  Message reply = remote::request(Op::event_create, Message());
  auto err = reply.get<cudaError_t>();
  *event = reinterpret_cast<cudaEvent_t>(reply.get<uintptr_t>());
  return err;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  return cudaEventCreate(event);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Message m;
  m.put(reinterpret_cast<uintptr_t>(event));
  return remote::plain(Op::event_destroy, m);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Message m;
  m.put(reinterpret_cast<uintptr_t>(event));
  m.put(reinterpret_cast<uintptr_t>(stream));
  remote::request(Op::event_record, m);  // unanswered: an error surfaces at the next call
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Message m;
  m.put(reinterpret_cast<uintptr_t>(event));
  return remote::plain(Op::event_synchronize, m);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  remote::note_runner_reported("timings");
  Message m;
  m.put(reinterpret_cast<uintptr_t>(start));
  m.put(reinterpret_cast<uintptr_t>(end));
  Message reply = remote::request(Op::event_elapsed_time, m);
  auto err = reply.get<cudaError_t>();
  *ms = reply.get<float>();
  return err;
}

namespace cudalab::emu {

cudaError_t copy_symbol(void* dst, const void* src, size_t count, size_t offset, size_t,
                        bool to_symbol) {
  auto name = remote::symbol_names().find(to_symbol ? dst : src);
  if (!to_symbol || name == remote::symbol_names().end()) {
    std::fprintf(stderr, "the checker knows no such symbol, or copies from one: not forwarded\n");
    std::exit(2);
  }
  Message m;
  m.put(std::string(name->second));
  m.put<uint64_t>(offset);
  m.put<uint64_t>(count);
  m.put_bytes(src, count);
  return remote::plain(Op::memcpy_to_symbol, m);
}

std::vector<AllocationInfo> live_allocations() {
  remote::note_runner_reported("live_allocations");
  Message reply = remote::request(Op::live_allocations, Message());
  std::vector<AllocationInfo> live(remote::count(reply, remote::kAllocationBytes));
  for (AllocationInfo& a : live) {
    a.bytes = reply.get<uint64_t>();
    a.where = reply.get_string();
  }
  return live;
}

void fail_malloc_after(unsigned successes, cudaError_t error) {
  Message m;
  m.put(successes);
  m.put(error);
  remote::request(Op::fail_malloc_after, m);
}

namespace {
// A question about `bytes` bytes at p (the checker's host memory, or device memory): the block
// or pointer they lie in, then their count.
Message about_bytes(const void* p, size_t bytes) {
  Message m;
  if (p != nullptr && !remote::is_device(p))
    remote::put_host(m, p, bytes, remote::Send::nothing);
  else
    remote::put_pointer(m, p, false, 1);
  m.put<uint64_t>(bytes);
  return m;
}
}  // namespace

DeviceWork device_work(const void* p, size_t bytes) {
  remote::note_runner_reported("device_work");
  Message reply = remote::request(Op::device_work, about_bytes(p, bytes));
  DeviceWork work{};
  work.bytes = reply.get<uint64_t>();
  work.by_kernels = reply.get<uint64_t>();
  return work;
}

// Words for a wrong result's report, from the runner: never part of a verdict (no
// note_runner_reported), so a runner that lies misleads only its own explanation.
std::optional<ElementStore> element_store(const void* p, size_t bytes) {
  Message reply = remote::request(Op::element_store, about_bytes(p, bytes));
  return remote::get_store(reply);
}

void watch_thread(Dim3 block, Dim3 thread) {
  Message m;
  m.put(block);
  m.put(thread);
  remote::request(Op::watch_thread, m);
}

std::vector<WatchedLoad> watched_loads() {
  Message reply = remote::request(Op::watched_loads, Message());
  std::vector<WatchedLoad> loads(remote::count(reply, 8 + 4 + 8 + 4));
  for (WatchedLoad& l : loads) {
    l.address = reinterpret_cast<const void*>(reply.get<uint64_t>());
    l.bytes = reply.get<unsigned>();
    l.at.file = reply.get_string();
    l.at.line = reply.get<unsigned>();
  }
  return loads;
}

void start_counting() { remote::request(Op::start_counting, Message()); }

std::vector<LaunchCounters> stop_counting() {
  remote::note_runner_reported("counters");
  Message reply = remote::request(Op::stop_counting, Message());
  std::vector<LaunchCounters> launches(remote::count(reply, remote::kLaunchBytes));
  for (LaunchCounters& c : launches) {
    c.kernel = reply.get_string();
    c.where = reply.get_string();
    for (auto* v : remote::counts_of(c)) *v = reply.get<unsigned long long>();
    c.sites.resize(remote::count(reply, remote::kSiteBytes));
    for (AccessSite& s : c.sites) {
      s.where.file = reply.get_string();
      s.where.line = reply.get<unsigned>();
      s.shared = reply.get<bool>();
      s.store = reply.get<bool>();
      for (auto* v : remote::counts_of(s)) *v = reply.get<unsigned long long>();
      s.max_degree = reply.get<unsigned>();
    }
  }
  return launches;
}

}  // namespace cudalab::emu

// What the runner counts for the device-work check, from each test's start: on a GPU, which does
// not say who wrote memory, its launches (common/src/launch_count.cpp counts them there); on both
// backends, the bytes uploaded to the device that the checker did not give (runner.cpp). Each
// test starts with no fact taken from the runner (note_runner_reported).
namespace cudalab::testing {
namespace {
unsigned long long asked(Op op) { return cudalab::remote::request(op, Message()).get<uint64_t>(); }
unsigned long long launches_before_this_test = 0, foreign_before_this_test = 0;
class CountsPerTest : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    remote::runner_reported_facts.clear();
#ifdef CUDALAB_CHECKER_OF_CUDA
    launches_before_this_test = asked(Op::launches);
#endif
    foreign_before_this_test = asked(Op::foreign_upload_bytes);
  }
};
const bool listening = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new CountsPerTest);
  return true;
}();
}  // namespace

#ifdef CUDALAB_CHECKER_OF_CUDA
unsigned long long launches_in_this_test() {
  (void)listening;
  remote::note_runner_reported("device_work");
  return asked(Op::launches) - launches_before_this_test;
}
#endif

unsigned long long foreign_uploads_in_this_test() {
  (void)listening;
  remote::note_runner_reported("device_work");
  return asked(Op::foreign_upload_bytes) - foreign_before_this_test;
}
}  // namespace cudalab::testing
