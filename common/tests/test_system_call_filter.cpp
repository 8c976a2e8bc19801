// The remote runner's system-call filter (common/remote/src/system_call_filter.cpp): each test
// installs it in a child process (a GoogleTest death test) and exits 0 where the child saw what
// the filter promises. Plain C++: the filter is the same on both backends.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "system_call_filter.h"

namespace {

void install() {
  if (std::string why = cudalab::remote::install_system_call_filter(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::_Exit(2);
  }
}

bool refused(long result) { return result == -1 && errno == EPERM; }

TEST(SystemCallFilter, RefusesTheNetworkThroughLibcAndThroughRawCalls) {
  EXPECT_EXIT(
      {
        install();
        std::_Exit(refused(socket(AF_INET, SOCK_STREAM, 0)) &&
                           refused(syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0))
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SystemCallFilter, RefusesWritingFilesButReadsThem) {
  const std::string path = ::testing::TempDir() + "system_call_filter_probe";
  EXPECT_EXIT(
      {
        install();
        const int reads = open("/proc/self/status", O_RDONLY);
        std::_Exit(reads >= 0 && refused(open(path.c_str(), O_WRONLY | O_CREAT, 0600)) &&
                           refused(syscall(SYS_openat, AT_FDCWD, "/proc/self/status",
                                           O_RDONLY | O_TRUNC)) &&
                           refused(unlink("/proc/self/status")) &&
                           refused(mkdir(path.c_str(), 0700))
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_NE(access(path.c_str(), F_OK), 0) << path << " was made";
}

TEST(SystemCallFilter, SignalsOnlyItself) {
  EXPECT_EXIT(
      {
        install();
        std::_Exit(
            kill(getpid(), 0) == 0 && refused(kill(getppid(), 0)) && refused(kill(-1, 0)) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        install();
        std::abort();  // raise() signals this thread of this process: allowed
      },
      ::testing::KilledBySignal(SIGABRT), "");
}

TEST(SystemCallFilter, RefusesMemoryNoProcessHolds) {
  EXPECT_EXIT(
      {
        install();
        std::_Exit(refused(memfd_create("hidden", 0)) &&
                           refused(shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600))
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// The emu runs addr2line (a child, no shell) for its messages, and its blocks on threads.
TEST(SystemCallFilter, ThreadsAndChildProgramsStillRun) {
  EXPECT_EXIT(
      {
        install();
        int value = 0;
        std::thread([&] { value = 1; }).join();
        FILE* p = popen("exec echo child", "r");
        char line[16] = {};
        const bool read = p != nullptr && std::fgets(line, sizeof line, p) != nullptr;
        const bool exited = p != nullptr && pclose(p) == 0;
        std::_Exit(value == 1 && read && exited && std::strcmp(line, "child\n") == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

#if defined(__x86_64__)
// Another ABI's numbers would pass a filter of x86-64's: the i386 entry kills the process, an x32
// call is refused.
TEST(SystemCallFilter, RefusesOtherAbisCalls) {
  EXPECT_EXIT(
      {
        install();
        long result = 20;  // i386's getpid
        asm volatile("int $0x80" : "+a"(result) : : "memory");
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGSYS), "");
  EXPECT_EXIT(
      {
        install();
        std::_Exit(refused(syscall(0x40000000 | SYS_getpid)) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

}  // namespace
