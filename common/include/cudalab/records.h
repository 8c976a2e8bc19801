// Records: what the emu runtime and the test harness found, as JSON lines for the tools that draw
// it (make check's table and page, `cudalab run --report`, the grader), so that no tool reads the
// English back. Where CUDALAB_RECORDS names a file, each record is one line appended to it; the
// English a student reads is made from the same values, in the code that writes the record.
//
// Every record has "kind"; the kinds and their fields (docs/diagnostics.md, "Records", and
// common/tools/cudalab_tools/records.py, which reads them):
//   diagnostic      a check stopped a kernel or refused a call
//   wrong_elements  where the wrong elements of a compared output are (compare.h)
//   counters        one source line's memory requests, barrier passes or atomics in one kernel
//   roofline        a counting test's kernel: its FLOPs and the sectors it moved
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace cudalab::records {

// A line of the program's source: its file as compiled (the name alone) and the line. Line 0: not
// known, and `file` may say why ("an unknown line (build with -g)").
struct SourceLine {
  std::string file;
  unsigned line = 0;
  bool known() const { return line != 0; }
  // "file.cu:14" (or, where the line is not known, what `file` says).
  std::string text() const { return known() ? file + ":" + std::to_string(line) : file; }
  bool operator==(const SourceLine& o) const { return line == o.line && file == o.file; }
  bool operator<(const SourceLine& o) const {
    return file != o.file ? file < o.file : line < o.line;
  }
};

// A JSON object, field by field, in the order written.
class Record {
 public:
  explicit Record(std::string_view kind) { text("kind", kind); }

  Record& text(std::string_view name, std::string_view value) {
    key(name);
    quote(value);
    return *this;
  }
  Record& number(std::string_view name, double value) {
    key(name);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    json_ += buffer;
    return *this;
  }
  Record& count(std::string_view name, unsigned long long value) {
    key(name);
    json_ += std::to_string(value);
    return *this;
  }
  // An index such as a block's or a thread's (x, y, z).
  Record& triple(std::string_view name, unsigned x, unsigned y, unsigned z) {
    key(name);
    json_ += "[" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + "]";
    return *this;
  }
  Record& texts(std::string_view name, const std::vector<std::string>& values) {
    key(name);
    json_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) json_ += ',';
      quote(values[i]);
    }
    json_ += ']';
    return *this;
  }
  // A list of records, each an object with its "kind".
  Record& objects(std::string_view name, const std::vector<Record>& values) {
    key(name);
    json_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) json_ += ',';
      json_ += values[i].json_ + '}';
    }
    json_ += ']';
    return *this;
  }
  // A source location as {"file": ..., "line": ...}: the file as the program was compiled.
  Record& site(std::string_view name, std::string_view file, unsigned line) {
    key(name);
    json_ += "{\"file\":";
    quote(file);
    json_ += ",\"line\":" + std::to_string(line) + "}";
    return *this;
  }
  // The same, left out where the line is not known.
  Record& site(std::string_view name, const SourceLine& where) {
    return where.known() ? site(name, where.file, where.line) : *this;
  }
  std::string line() const { return json_ + "}\n"; }

 private:
  void key(std::string_view name) {
    json_ += json_.empty() ? '{' : ',';
    quote(name);
    json_ += ':';
  }
  void quote(std::string_view s) {
    json_ += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        json_ += '\\';
        json_ += static_cast<char>(c);
      } else if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        json_ += escaped;
      } else {
        json_ += static_cast<char>(c);  // UTF-8 as it is (a reader replaces what is not)
      }
    }
    json_ += '"';
  }
  std::string json_;
};

// The file that CUDALAB_RECORDS names, opened to append on the first call (-1: none). A process
// that will lose the right to open files (the remote runner's system-call filter) calls it first.
inline int channel() {
  static const int fd = [] {
    const char* path = std::getenv("CUDALAB_RECORDS");
    return path == nullptr || *path == '\0'
               ? -1
               : ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  }();
  return fd;
}

// Appends the record as one line (one write: lines of processes and threads that share the file
// do not mix).
inline void write(const Record& record) {
  const int fd = channel();
  if (fd < 0) return;
  const std::string line = record.line();
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace cudalab::records
