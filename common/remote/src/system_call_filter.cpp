// The runner's system-call filter (seccomp): once the runner is set up (the GPU's context made,
// the checker's socket open), the student's code in it may not reach outside the process, even
// through a system call it makes without a libc function (the symbol rules refuse the instruction
// in the student's object, but libc holds one).
//
// Algorithm: a classic BPF program, run by the kernel on each system call of the runner and of
// every thread and child it makes from then on (the filter cannot be removed). A call from
// another ABI (i386's int 0x80, x32) is refused whole, since its numbers differ. Each call of the
// table below fails with EPERM; open/openat fail when asked to write, create or truncate; a
// signal goes only to the runner itself; every other call runs. An allowlist would be tighter,
// but the CUDA driver's calls are not documented and change between releases.
//
// Limitations: reading files is allowed (the emu reads the program's sources and runs addr2line
// for its messages; the driver reads /proc and /sys): bubblewrap hides what a job may not read.
// x86-64 and AArch64 only; elsewhere install() says so and the runner does not serve.
#include "system_call_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cudalab::remote {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#endif

// Refused outright, each for one reason.
constexpr long kRefused[] = {
    // other processes: no tracing, no reading or writing their memory, no handles on them
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_pidfd_open,
    __NR_pidfd_getfd,
    __NR_pidfd_send_signal,
    __NR_tkill,
    // the network and other local services (the checker's socket is open already)
    __NR_socket,
    __NR_socketpair,
    __NR_connect,
    __NR_bind,
    __NR_listen,
    __NR_accept,
    __NR_accept4,
    // memory no process holds (the job's memory limit counts what its processes hold)
    __NR_memfd_create,
    __NR_shmget,
    __NR_msgget,
    __NR_mq_open,
    // the file system: nothing made, renamed, removed or changed
    __NR_unlinkat,
    __NR_renameat,
    __NR_renameat2,
    __NR_linkat,
    __NR_symlinkat,
    __NR_mkdirat,
    __NR_mknodat,
    __NR_fchmod,
    __NR_fchmodat,
    __NR_fchownat,
    __NR_fchown,
    __NR_truncate,
    __NR_open_by_handle_at,
    // mounts, namespaces and the kernel's other surfaces
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_unshare,
    __NR_setns,
    __NR_open_tree,
    __NR_move_mount,
    __NR_fsopen,
    __NR_fsmount,
    __NR_fspick,
    __NR_bpf,
    __NR_perf_event_open,
    __NR_userfaultfd,
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_kexec_load,
    __NR_reboot,
    __NR_swapon,
    __NR_swapoff,
    __NR_acct,
    __NR_personality,
#if defined(__x86_64__)  // the older forms AArch64 never had
    __NR_unlink,
    __NR_rename,
    __NR_link,
    __NR_symlink,
    __NR_mkdir,
    __NR_rmdir,
    __NR_mknod,
    __NR_chmod,
    __NR_chown,
    __NR_lchown,
    __NR_creat,
    __NR_iopl,
    __NR_ioperm,
#endif
};

// Flags of open/openat that write: refused (O_TRUNC truncates even a file opened to read).
constexpr uint32_t kWritingFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

// Signals: allowed only to the runner itself (its pid is the first argument).
constexpr long kSignalling[] = {__NR_kill, __NR_tgkill, __NR_rt_sigqueueinfo,
                                __NR_rt_tgsigqueueinfo};

constexpr uint32_t kRefuse = SECCOMP_RET_ERRNO | EPERM;

// A filter program under construction: a classic BPF program (linux/filter.h), straight-line,
// each test followed by the two returns it chooses between.
class Program {
 public:
  void load(uint32_t offset) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void ret(uint32_t action) { code_.push_back(BPF_STMT(BPF_RET | BPF_K, action)); }
  // The accumulator (a call's number) == nr: `action`; else on.
  void on_call(long nr, uint32_t action) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1));
    ret(action);
  }
  // Call nr: `if_true` where the low word of argument `arg` equals k (has a bit of k, with
  // `any_bit`), else `if_false`; another call: on, with the call's number still loaded.
  void on_call(long nr, int arg, uint32_t k, bool any_bit, uint32_t if_true, uint32_t if_false) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 4));
    load(offsetof(seccomp_data, args) + 8 * arg);  // the low word: both ABIs are little-endian
    code_.push_back(BPF_JUMP(BPF_JMP | (any_bit ? BPF_JSET : BPF_JEQ) | BPF_K, k, 0, 1));
    ret(if_true);
    ret(if_false);
  }
  // The accumulator >= k: `action`; else on.
  void at_least(uint32_t k, uint32_t action) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, k, 0, 1));
    ret(action);
  }
  // The accumulator != k: `action`; else on.
  void unless(uint32_t k, uint32_t action) {
    code_.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 1, 0));
    ret(action);
  }
  sock_fprog fprog() { return {static_cast<unsigned short>(code_.size()), code_.data()}; }

 private:
  std::vector<sock_filter> code_;
};

}  // namespace

std::string install_system_call_filter() {
#if defined(__x86_64__) || defined(__aarch64__)
  Program p;
  p.load(offsetof(seccomp_data, arch));
  p.unless(kNativeArch, SECCOMP_RET_KILL_PROCESS);
  p.load(offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  p.at_least(0x40000000, kRefuse);  // __X32_SYSCALL_BIT: the x32 ABI's numbers
#endif
  for (long nr : kRefused) p.on_call(nr, kRefuse);
  p.on_call(__NR_openat2, SECCOMP_RET_ERRNO | ENOSYS);  // its flags are out of reach: use openat
  p.on_call(__NR_openat, 2, kWritingFlags, true, kRefuse, SECCOMP_RET_ALLOW);
#if defined(__x86_64__)
  p.on_call(__NR_open, 1, kWritingFlags, true, kRefuse, SECCOMP_RET_ALLOW);
#endif
  const uint32_t self = uint32_t(getpid());
  for (long nr : kSignalling) p.on_call(nr, 0, self, false, SECCOMP_RET_ALLOW, kRefuse);
  p.ret(SECCOMP_RET_ALLOW);
  sock_fprog program = p.fprog();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
    return std::string("the runner could not install its system-call filter: ") +
           std::strerror(errno);
  return "";
#else
  return "the runner's system-call filter knows x86-64 and AArch64 only";
#endif
}

}  // namespace cudalab::remote
