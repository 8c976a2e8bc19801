// The runner: the lab's test program, started by the checker with --serve FD. It runs no test;
// it reads the checker's requests from socket FD, does each with the CUDA runtime (the GPU's, or
// the emu's) and the student's code, and answers. Started otherwise, it is the test program as it
// always was (GoogleTest's main), for a student who runs it by hand or in a debugger.
//
// Algorithm: one request at a time, in order. Host memory the checker sends (a block of its own,
// an argument of a host function or a cudaMemcpy's host side) lives here in the block's twin,
// keyed by the checker's address of the block, so that a later question about it (did a kernel
// write these bytes?) finds the same memory. What the program prints is flushed before each
// answer, so that it appears in order with the checker's output.
//
// Once set up, the runner installs a system-call filter (system_call_filter.cpp): the student's
// code in it cannot open a socket, write a file, signal or trace another process.
//
// Limitations: streams other than the default stream, graphs and any runtime call the harnesses
// do not make are not forwarded; the checker refuses them at build time (no definition).
#include "cudalab/remote/runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "cudalab/records.h"
#include "system_call_filter.h"

#ifdef CUDALAB_EMU
#include "cudalab/emu/inspect.h"
#endif

#ifndef CUDALAB_EMU
namespace cudalab::testing {
unsigned long long launches_so_far();  // src/launch_count.cpp
}
#endif

namespace cudalab::remote {
namespace {

std::map<std::string, Entry>& table() {
  static std::map<std::string, Entry> entries;
  return entries;
}

std::map<uint64_t, std::vector<char>> twins;  // by the checker's address of the block
std::set<uint64_t> written;                   // twins a host function may have written

// ---- uploads: what the host sends the device, against what the checker gave ------------------
// An answer computed on the host, sent to the device and copied into the output by a kernel,
// would count as device work: each upload is compared with the bytes the checker sent (its host
// blocks and symbol copies), as 4-byte words. A word of an upload is the checker's when a 4-byte
// window at or around it is one of the checker's words (an upload may start anywhere in what the
// checker sent, or copy it with padding); zero words (a reset) are nobody's. The checker's words
// are kept as bits of a hashed 2^28-bit set (32 MiB, a few nanoseconds a word either way): a
// foreign word is taken for the checker's where it collides, so a collision only lowers the
// count. The checker asks for the foreign bytes (Op::foreign_upload_bytes).
class WordSet {
 public:
  void insert(uint32_t w) { bits_[slot(w) / 64] |= uint64_t{1} << (slot(w) % 64); }
  bool contains(uint32_t w) const { return bits_[slot(w) / 64] >> (slot(w) % 64) & 1; }

 private:
  static uint32_t slot(uint32_t w) { return (w * 0x9E3779B1u) >> 4; }  // 28 bits
  std::vector<uint64_t> bits_ = std::vector<uint64_t>((size_t{1} << 28) / 64);
};
WordSet& given_words() {
  static WordSet words;
  return words;
}
uint64_t foreign_upload_bytes = 0;
bool harness_copy = false;  // a copy the checker asked for (Op::memcpy): its bytes are its own

uint32_t word_at(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

void note_given(const char* bytes, size_t count) {
  for (size_t i = 0; i + 4 <= count; i += 4) given_words().insert(word_at(bytes + i));
}

void note_upload(const void* host, size_t bytes) {
  if (harness_copy) return;
  const char* p = static_cast<const char*>(host);
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    if (word_at(p + i) == 0) continue;
    bool given = false;
    for (size_t k = i >= 3 ? i - 3 : 0; !given && k <= i + 3 && k + 4 <= bytes; ++k)
      given = given_words().contains(word_at(p + k));
    if (!given) foreign_upload_bytes += 4;
  }
}

std::vector<char>& twin(uint64_t id, uint64_t size) {
  auto& t = twins[id];
  if (t.size() != size) t.assign(size, 0);
  return t;
}

// A pointer as the checker sent it; a host block's bytes fill its twin when they come along.
void* read_pointer(Message& in, bool writable) {
  switch (in.get<PointerKind>()) {
    case PointerKind::null:
      return nullptr;
    case PointerKind::device:
      return reinterpret_cast<void*>(in.get<uintptr_t>());
    case PointerKind::host: {
      auto id = in.get<uint64_t>(), size = in.get<uint64_t>(), offset = in.get<uint64_t>();
      auto from = in.get<uint64_t>(), count = in.get<uint64_t>();  // the bytes that come along
      std::vector<char>& t = twin(id, size);
      if (offset > size || from > size || count > size - from)
        throw WireError("a host block's bytes do not fit in it");
      in.get_bytes(t.data() + from, count);
      note_given(t.data() + from, count);
      if (writable) written.insert(id);
      return t.data() + offset;
    }
  }
  throw WireError("an unknown kind of pointer");
}

// The checker's line of a host call, read from the request: on emu the call's errors name it, not
// this file's.
struct CallerSite {
  std::string file;
  int line;
  std::string array;  // the name of the array an allocation fills, as the checker read it
  explicit CallerSite(Message& in, bool names_array = false)
      : file(in.get_string()), line(in.get<int>()), array(names_array ? in.get_string() : "") {
#ifdef CUDALAB_EMU
    emu::set_caller_site(file.c_str(), line, array);
#endif
  }
#ifdef CUDALAB_EMU
  ~CallerSite() { emu::set_caller_site(nullptr, 0); }
#endif
};

// The table's entry `key`, a symbol or something to run (a kernel, a host function).
const Entry& entry(const std::string& key, const char* what, bool symbol = false) {
  auto found = table().find(key);
  if (found == table().end() || (found->second.run == nullptr) != symbol)
    throw WireError(std::string("the test program has no ") + what + " " + key);
  return found->second;
}

#ifdef CUDALAB_EMU
void put_counters(Message& out, std::vector<LaunchCounters> launches) {
  out.put<uint64_t>(launches.size());
  for (LaunchCounters& c : launches) {
    out.put(c.kernel);
    out.put(c.where);
    for (auto* v : counts_of(c)) out.put(*v);
    out.put<uint64_t>(c.sites.size());
    for (AccessSite& s : c.sites) {
      out.put(s.where.file);
      out.put(s.where.line);
      out.put(s.shared);
      out.put(s.store);
      for (auto* v : counts_of(s)) out.put(*v);
      out.put(s.max_degree);
    }
  }
}
#endif

// Does one request; its answer goes into `out`, after the status.
void serve_one(Op op, Message& in, Message& out) {
  switch (op) {
    case Op::hello:  // the runner is there
      return;
    case Op::malloc: {
      CallerSite at(in, true);
      auto size = in.get<uint64_t>();
      void* p = nullptr;
      out.put(cudaMalloc(&p, size));
      out.put(reinterpret_cast<uintptr_t>(p));
      return;
    }
    case Op::free: {
      CallerSite at(in);
      out.put(cudaFree(reinterpret_cast<void*>(in.get<uintptr_t>())));
      return;
    }
    case Op::memcpy: {
      CallerSite at(in);
      auto kind = in.get<cudaMemcpyKind>();
      auto count = in.get<uint64_t>();
      void* dst = read_pointer(in, false);
      const void* src = read_pointer(in, false);
      harness_copy = true;
      cudaError_t err = cudaMemcpy(dst, src, count, kind);
      harness_copy = false;
      out.put(err);
      bool host_dst = in.get<uint8_t>();
      if (host_dst) out.put_bytes(dst, err == cudaSuccess ? count : 0);
      return;
    }
    case Op::memset: {
      CallerSite at(in);
      void* p = reinterpret_cast<void*>(in.get<uintptr_t>());
      int value = in.get<int>();
      auto count = in.get<uint64_t>();
      out.put(cudaMemset(p, value, count));
      return;
    }
    case Op::memcpy_to_symbol: {
      const Entry& s = entry(in.get_string(), "symbol", true);
      auto offset = in.get<uint64_t>(), count = in.get<uint64_t>();
      std::vector<char> bytes(count);
      in.get_bytes(bytes.data(), count);
      note_given(bytes.data(), count);
#ifdef CUDALAB_EMU
      out.put(emu::copy_symbol(s.symbol, bytes.data(), count, offset, s.symbol_bytes, true));
#else
      // (as a const void*: CUDA's template overload would take the address of the pointer)
      out.put(cudaMemcpyToSymbol(static_cast<const void*>(s.symbol), bytes.data(), count, offset,
                                 cudaMemcpyHostToDevice));
#endif
      return;
    }
    case Op::synchronize:
      out.put(cudaDeviceSynchronize());
      return;
    case Op::get_last_error:
      out.put(cudaGetLastError());
      return;
    case Op::peek_at_last_error:
      out.put(cudaPeekAtLastError());
      return;
    case Op::event_create: {
      cudaEvent_t e = nullptr;
      out.put(cudaEventCreate(&e));
      out.put(reinterpret_cast<uintptr_t>(e));
      return;
    }
    case Op::event_destroy:
      out.put(cudaEventDestroy(reinterpret_cast<cudaEvent_t>(in.get<uintptr_t>())));
      return;
    case Op::event_record: {
      auto e = reinterpret_cast<cudaEvent_t>(in.get<uintptr_t>());
      out.put(cudaEventRecord(e, reinterpret_cast<cudaStream_t>(in.get<uintptr_t>())));
      return;
    }
    case Op::event_synchronize:
      out.put(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(in.get<uintptr_t>())));
      return;
    case Op::event_elapsed_time: {
      auto start = reinterpret_cast<cudaEvent_t>(in.get<uintptr_t>());
      auto end = reinterpret_cast<cudaEvent_t>(in.get<uintptr_t>());
      float ms = 0;
      out.put(cudaEventElapsedTime(&ms, start, end));
      out.put(ms);
      return;
    }
    case Op::device_attribute: {
      auto attr = in.get<cudaDeviceAttr>();
      int device = in.get<int>(), value = 0;
      out.put(cudaDeviceGetAttribute(&value, attr, device));
      out.put(value);
      return;
    }
    case Op::get_device: {
      int device = 0;
      out.put(cudaGetDevice(&device));
      out.put(device);
      return;
    }
    case Op::launch:
    case Op::call: {
      std::string key = in.get_string();
      entry(key, op == Op::launch ? "kernel" : "function").run(in, out);
      return;
    }
    case Op::forget_host_block:
      twins.erase(in.get<uint64_t>());
      return;
#ifdef CUDALAB_EMU
    case Op::live_allocations: {
      auto live = emu::live_allocations();
      out.put<uint64_t>(live.size());
      for (const auto& a : live) {
        out.put<uint64_t>(a.bytes);
        out.put(a.where);
      }
      return;
    }
    case Op::fail_malloc_after: {
      auto successes = in.get<unsigned>();
      emu::fail_malloc_after(successes, in.get<cudaError_t>());
      return;
    }
    case Op::device_work: {
      const void* p = read_pointer(in, false);
      auto work = emu::device_work(p, in.get<uint64_t>());
      out.put<uint64_t>(work.bytes);
      out.put<uint64_t>(work.by_kernels);
      return;
    }
    case Op::element_store: {
      const void* p = read_pointer(in, false);
      put_store(out, emu::element_store(p, in.get<uint64_t>()));
      return;
    }
    case Op::watch_thread: {
      const auto block = in.get<Dim3>();
      emu::watch_thread(block, in.get<Dim3>());
      return;
    }
    case Op::watched_loads: {
      const auto loads = emu::watched_loads();
      out.put<uint64_t>(loads.size());
      for (const auto& l : loads) {
        out.put<uint64_t>(reinterpret_cast<uintptr_t>(l.address));
        out.put<unsigned>(l.bytes);
        out.put(l.at.file);
        out.put(l.at.line);
      }
      return;
    }
    case Op::start_counting:
      emu::start_counting();
      return;
    case Op::stop_counting:
      put_counters(out, emu::stop_counting());
      return;
#else
    case Op::live_allocations:
    case Op::fail_malloc_after:
    case Op::device_work:
    case Op::element_store:
    case Op::watch_thread:
    case Op::watched_loads:
    case Op::start_counting:
    case Op::stop_counting:
      throw WireError("only the emu backend answers that question");
#endif
    case Op::foreign_upload_bytes:
      out.put<uint64_t>(foreign_upload_bytes);
      return;
    case Op::launches:
#ifdef CUDALAB_EMU
      throw WireError("the emu backend follows the bytes, not the launches");
#else
      out.put<uint64_t>(testing::launches_so_far());
      return;
#endif
  }
  throw WireError("an unknown request");
}

}  // namespace

// Answers until the checker hangs up. Each answer: 0 and the results, or 1 and why the request
// could not be done (a message the checker prints before it stops).
int serve(int fd) {
  widen_buffers(fd);
#ifdef CUDALAB_EMU
  emu::set_upload_check(note_upload);
#else
  cudaFree(nullptr);  // the GPU's context, made before the filter: the driver opens its devices
#endif
  records::channel();  // opened now: the filter refuses to open files for writing
  if (std::string why = install_system_call_filter(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  Message in;
  std::string unanswered_failure;  // of a request without an answer: told with the next answer
  while (receive(fd, in, uint64_t{1} << 40)) {
    Message out;
    out.put<uint8_t>(0);
    Op op = Op::hello;
    try {
      op = in.get<Op>();
      serve_one(op, in, out);
    } catch (const std::exception& e) {
      if (unanswered_failure.empty()) unanswered_failure = e.what();
    }
    flush_output();
    if (!answered(op)) {
      in = Message();
      continue;
    }
    if (!unanswered_failure.empty()) {
      out = Message();
      out.put<uint8_t>(1);
      out.put(unanswered_failure);
    }
    if (!send(fd, out)) break;
    in = Message();
  }
  return 0;
}

void* get_pointer(Message& in, bool writable) { return read_pointer(in, writable); }

void put_blocks(Message& out) {
  out.put<uint64_t>(written.size());
  for (uint64_t id : written) {
    const std::vector<char>& t = twins.at(id);
    out.put(id);
    out.put<uint64_t>(t.size());
    out.put_bytes(t.data(), t.size());
  }
  written.clear();
}

LaunchSite get_launch_site(Message& in) {
  // The string lives until the next request: a launch on the default stream is over by then.
  static std::string file;
  file = in.get_string();
  LaunchSite at{file.c_str(), in.get<int>(), {}, {}, 0, nullptr};
  at.grid = in.get<dim3>();
  at.block = in.get<dim3>();
  at.shared_bytes = in.get<uint64_t>();
  at.stream = reinterpret_cast<cudaStream_t>(in.get<uintptr_t>());
  return at;
}

Registry::Registry(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) table()[e.key] = e;
}

}  // namespace cudalab::remote

#ifndef CUDALAB_EMU
// On a GPU, the runner's link wraps the runtime's copies (--wrap, common/CMakeLists.txt): an
// upload is noted, and the copy goes on to the CUDA runtime.
namespace {
bool host_to_device(const void* src, cudaMemcpyKind kind) {
  if (kind == cudaMemcpyHostToDevice) return true;
  if (kind != cudaMemcpyDefault) return false;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, src) != cudaSuccess) {
    cudaGetLastError();  // (an unregistered host pointer: not an error to keep)
    return true;
  }
  return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
}
}  // namespace

extern "C" {
cudaError_t __real_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t __wrap_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (src != nullptr && host_to_device(src, kind)) cudalab::remote::note_upload(src, count);
  return __real_cudaMemcpy(dst, src, count, kind);
}
cudaError_t __real_cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                   cudaStream_t stream);
cudaError_t __wrap_cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                   cudaStream_t stream) {
  if (src != nullptr && host_to_device(src, kind)) cudalab::remote::note_upload(src, count);
  return __real_cudaMemcpyAsync(dst, src, count, kind, stream);
}
}
#endif
