// Code address -> source line, for diagnostics and counters. The debug info says it; binutils'
// addr2line reads it (run only when a message is written, and remembered).
#include "symbolize.h"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cudalab/emu/launch.h"
#include "errors.h"
#include "memory.h"

namespace cudalab::emu {

namespace {
// addr2line's output for a code address of the program, with `options`, a line per entry. It is
// started without a shell and with its errors closed: in the remote runner, whose system-call
// filter refuses to open a file for writing, a shell's "2>/dev/null" would stop it.
std::vector<std::string> addr2line(const void* code, uintptr_t adjust,
                                   std::initializer_list<const char*> options) {
  Dl_info info{};
  if (dladdr(code, &info) == 0 || info.dli_fname == nullptr || info.dli_fbase == nullptr) return {};
  // Position-independent code: addr2line wants the offset in the file.
  auto address = reinterpret_cast<uintptr_t>(code) - adjust;
  if (static_cast<const Elf64_Ehdr*>(info.dli_fbase)->e_type == ET_DYN)
    address -= reinterpret_cast<uintptr_t>(info.dli_fbase);
  std::string exe = info.dli_fname[0] ? info.dli_fname : "/proc/self/exe";
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(address));
  std::vector<char*> argv{const_cast<char*>("addr2line"), const_cast<char*>("-e"), exe.data()};
  for (const char* option : options) argv.push_back(const_cast<char*>(option));
  argv.push_back(hex);
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, STDERR_FILENO);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, "addr2line", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::vector<std::string> lines;
  if (FILE* p = spawned == 0 ? fdopen(out[0], "r") : nullptr) {
    char line[4096];
    while (std::fgets(line, sizeof line, p) != nullptr) {
      lines.emplace_back(line);
      if (lines.back().back() == '\n') lines.back().pop_back();
    }
    std::fclose(p);
  } else {
    close(out[0]);
  }
  if (spawned == 0) waitpid(pid, nullptr, 0);
  return lines;
}
}  // namespace

std::string symbol_name(const void* function) {
  const auto lines = addr2line(function, 0, {"-f", "-C"});
  return lines.empty() || lines.front() == "??" ? std::string() : lines.front();
}

namespace {
// "file:line" (addr2line's text of a frame, less a " (discriminator n)" after it) as a line of the
// program. (The file's path may hold spaces.)
records::SourceLine parsed(std::string text) {
  if (const auto discriminator = text.find(" (discriminator "); discriminator != std::string::npos)
    text.resize(discriminator);
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || text.compare(0, 2, "??") == 0 ||
      text.compare(colon, 2, ":?") == 0 || text.compare(colon, 2, ":0") == 0)
    return {};
  return code_place(text.substr(0, colon).c_str(), std::stoi(text.substr(colon + 1)));
}

// Whether addr2line's frame lies in the emu's own headers (an atomicAdd, a shuffle), whose lines
// are never the program's.
bool in_emu(const std::string& frame) { return frame.find("/cudalab/emu/") != std::string::npos; }
}  // namespace

std::vector<records::SourceLine> source_lines(const void* pc) {
  static std::mutex mutex;
  static std::map<const void*, std::vector<records::SourceLine>> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(pc); it != known.end()) return it->second;
  std::vector<records::SourceLine> lines;
  for (const std::string& frame : addr2line(pc, 1, {"-i"}))
    if (!in_emu(frame))
      if (records::SourceLine line = parsed(frame); line.known()) lines.push_back(line);
  return known[pc] = lines;
}

// The first frame of the calling stack whose line, among its inlined frames, lies neither in the
// emu's headers nor in a system header (Thrust's, the standard library's).
CallSite program_call_site() {
  static std::mutex mutex;
  // Each return address's line of the program (not known: none). A launch keeps the file's name
  // as a pointer: the map's entries are never changed or removed.
  static std::map<const void*, records::SourceLine> known;
  void* stack[32];
  const int depth = backtrace(stack, 32);
  std::lock_guard<std::mutex> lock(mutex);
  for (int i = 1; i < depth; ++i) {  // (0: this function)
    auto it = known.find(stack[i]);
    if (it == known.end()) {
      records::SourceLine line;
      for (const std::string& frame : addr2line(stack[i], 1, {"-i"}))
        if (!in_emu(frame) && frame.compare(0, 5, "/usr/") != 0)
          if (line = parsed(frame); line.known()) break;
      it = known.emplace(stack[i], line).first;
    }
    if (it->second.known()) return {it->second.file.c_str(), static_cast<int>(it->second.line)};
  }
  return {"?", 0};
}

namespace {
std::mutex known_mutex;
std::map<const void*, records::SourceLine>& known_lines() {
  static std::map<const void*, records::SourceLine> known;
  return known;
}
}  // namespace

const void* line_marker(const char* file, unsigned line) {
  static std::map<records::SourceLine, std::unique_ptr<char>> markers;
  std::lock_guard<std::mutex> lock(known_mutex);
  const records::SourceLine at =
      code_place(file, static_cast<int>(line));  // (as parsed() names it)
  auto& marker = markers[at];
  if (marker == nullptr) {
    marker = std::make_unique<char>();
    known_lines()[marker.get()] = at;
  }
  return marker.get();
}

records::SourceLine source_line(const void* pc) {
  std::map<const void*, records::SourceLine>& known = known_lines();
  std::lock_guard<std::mutex> lock(known_mutex);
  if (auto it = known.find(pc); it != known.end()) return it->second;
  // pc is the return address; with -i the innermost inlined frame comes first: the line of the
  // access itself, unless it is inside the emu's own headers (an atomicAdd, a shuffle): then the
  // program's line that called them.
  const auto frames = addr2line(pc, 1, {"-i"});
  std::string text = frames.empty() ? std::string() : frames.front();
  for (const std::string& frame : frames)
    if (!in_emu(frame)) {
      text = frame;
      break;
    }
  return known[pc] = parsed(text);
}

}  // namespace cudalab::emu
