// Messages on a socket: an 8-byte length, then the bytes (see include/cudalab/remote/wire.h).
#include "cudalab/remote/wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

namespace cudalab::remote {
namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t done = ::send(fd, p, n, MSG_NOSIGNAL);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    p += done;
    n -= size_t(done);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t done = ::read(fd, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    p += done;
    n -= size_t(done);
  }
  return true;
}

}  // namespace

void flush_output() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

void widen_buffers(int fd) {
  int bytes = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

bool send(int fd, const Message& m) {
  uint64_t n = m.bytes().size();
  return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) &&
         write_all(fd, m.bytes().data(), n);
}

bool receive(int fd, Message& m, uint64_t limit) {
  uint64_t n = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&n), sizeof n) || n > limit) return false;
  m.bytes().resize(n);
  return read_all(fd, m.bytes().data(), n);
}

}  // namespace cudalab::remote
