// Internal header of the remote runner (not for programs): the messages between the checker (the
// test program that decides, holding no student code) and the runner (the student's code, in its
// own process and sandbox). A message is a length and that many bytes; values are written in
// order and read back in the same order. (C++17: the runner's table is compiled by nvcc.) (C++17:
// the runner's table is compiled by nvcc.)
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/counters.h"

namespace cudalab::remote {

// What the checker asks the runner to do.
enum class Op : uint32_t {
  hello,  // the runner's backend; the first message
  malloc,
  free,
  memcpy,
  memset,
  memcpy_to_symbol,
  synchronize,
  get_last_error,
  peek_at_last_error,
  event_create,
  event_destroy,
  event_record,
  event_synchronize,
  event_elapsed_time,
  device_attribute,
  get_device,
  launch,
  call,  // a host function of the lab's interface
  forget_host_block,
  live_allocations,
  fail_malloc_after,
  device_work,
  start_counting,
  stop_counting,
  launches,              // kernel launches so far (the check that the device did the work)
  foreign_upload_bytes,  // bytes uploaded to the device so far that the checker did not give
  element_store,         // who stored an element (a wrong result's report: words, no verdict)
  watch_thread,          // ... and what that thread reads when the launch runs again
  watched_loads,
};

// Requests that get no answer: the checker sends them with the next request that does, so that a
// kernel and the events around it reach the GPU back to back, as in one process. Their errors
// surface as CUDA's do, through cudaGetLastError() and the next synchronising call.
inline bool answered(Op op) { return op != Op::launch && op != Op::event_record; }

// A host pointer as the checker sends it: which of its memory blocks, and where in the block.
enum class PointerKind : uint8_t { null, device, host };

// The runner's contract with the checker was broken (a truncated or malformed message).
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Message {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "a value travels as its bytes");
    put_bytes(&value, sizeof(T));
  }
  void put(const std::string& s) {
    put<uint64_t>(s.size());
    put_bytes(s.data(), s.size());
  }
  void put_bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    bytes_.insert(bytes_.end(), c, c + n);
  }

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>, "a value travels as its bytes");
    T value;
    get_bytes(&value, sizeof(T));
    return value;
  }
  std::string get_string() {
    auto n = get<uint64_t>();
    if (n > left()) throw WireError("a string longer than its message");
    std::string s(bytes_.data() + read_, n);
    read_ += n;
    return s;
  }
  void get_bytes(void* to, size_t n) {
    if (n > left()) throw WireError("a message shorter than its contents");
    if (n) std::memcpy(to, bytes_.data() + read_, n);
    read_ += n;
  }
  size_t left() const { return bytes_.size() - read_; }

  std::vector<char>& bytes() { return bytes_; }
  const std::vector<char>& bytes() const { return bytes_; }

 private:
  std::vector<char> bytes_;
  size_t read_ = 0;
};

// The name under which both sides know a host function: its name and its type (overloads differ).
template <class F>
std::string function_key(const char* name) {
  return std::string(name) + "|" + typeid(F).name();
}

// The counts of a launch and of one of its lines, in the order they travel.
inline auto counts_of(LaunchCounters& c) {
  return std::array{&c.global_load_requests,
                    &c.global_store_requests,
                    &c.global_load_sectors,
                    &c.global_store_sectors,
                    &c.global_load_bytes,
                    &c.global_store_bytes,
                    &c.shared_load_requests,
                    &c.shared_store_requests,
                    &c.shared_wavefronts,
                    &c.shared_ideal_wavefronts,
                    &c.barriers,
                    &c.atomics};
}
inline auto counts_of(AccessSite& s) {
  return std::array{&s.requests, &s.transactions, &s.ideal_transactions, &s.bytes};
}

// An ElementStore (compare.h) as it travels: a flag, then its fields.
inline void put_store(Message& m, const std::optional<ElementStore>& s) {
  m.put<uint8_t>(s.has_value());
  if (!s) return;
  m.put(s->kernel);
  m.put(s->launch.file);
  m.put(s->launch.line);
  for (const Dim3& d : {s->grid, s->block, s->block_index, s->thread_index}) m.put(d);
  m.put<uint8_t>(s->stored);
  m.put<uint8_t>(s->atomic);
  m.put(s->store.file);
  m.put(s->store.line);
  m.put<uint64_t>(s->loads.size());
  for (const records::SourceLine& l : s->loads) {
    m.put(l.file);
    m.put(l.line);
  }
}
inline std::optional<ElementStore> get_store(Message& m) {
  if (m.get<uint8_t>() == 0) return std::nullopt;
  ElementStore s;
  s.kernel = m.get_string();
  s.launch.file = m.get_string();
  s.launch.line = m.get<unsigned>();
  for (Dim3* d : {&s.grid, &s.block, &s.block_index, &s.thread_index}) *d = m.get<Dim3>();
  s.stored = m.get<uint8_t>() != 0;
  s.atomic = m.get<uint8_t>() != 0;
  s.store.file = m.get_string();
  s.store.line = m.get<unsigned>();
  const auto loads = m.get<uint64_t>();
  if (loads > m.left() / (8 + 4)) throw WireError("more loads than the reply has bytes for");
  s.loads.resize(loads);
  for (records::SourceLine& l : s.loads) {
    l.file = m.get_string();
    l.line = m.get<unsigned>();
  }
  return s;
}

// Flushes what the process printed (C and C++ streams), so that the checker's and the runner's
// output appear in the order they were written.
void flush_output();
// Gives a socket buffers for large arrays (a runner's outputs of tens of MiB).
void widen_buffers(int fd);
// Sends one message on a socket; false if the other side has gone.
bool send(int fd, const Message& m);
// Receives one message of at most `limit` bytes; false if the other side has gone (or sent more).
bool receive(int fd, Message& m, uint64_t limit);

}  // namespace cudalab::remote
