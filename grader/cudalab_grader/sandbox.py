"""Running untrusted commands: bubblewrap where it works, resource limits always.

Inside bubblewrap a command sees the system's programs read-only, the folders it is given, a
private /tmp, no network, and no other process; as root, each job runs under its own user id
so that the process limit is its own. Without bubblewrap only the limits apply, and protections()
says so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import glob
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .files import disk_bytes

FIRST_UID = 60000  # as root, jobs run as users FIRST_UID + 1, + 2, ... claimed one job at a time
USER_LOCKS = Path(tempfile.gettempdir()) / "cudalab-grader-users"  # claims, shared by all graders


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 600
    cpu_seconds: int = 900
    memory_bytes: int | None = 8 << 30  # address space of each process (None: no limit)
    processes: int = 256
    output_bytes: int = 256 << 10  # kept of what the command prints
    file_bytes: int = 512 << 20  # largest file it may write
    # The whole job, all its processes together (watched twice a second):
    job_memory_bytes: int = 8 << 30  # resident memory, and what its memory-backed folders may hold
    job_disk_bytes: int = 2 << 30  # what it holds in its writable folders on disk
    tmp_bytes: int = 512 << 20  # each of its memory-backed folders (tmpfs: /tmp, /dev/shm, ...)

    def memory_backed(self, folders: int) -> Limits:
        """These limits for a job with `folders` size-limited tmpfs folders (a file there is memory
        no process holds): each folder holds at most tmp_bytes, and no more than leaves half the
        job's memory to its processes, which may hold the rest, so that the two together stay
        within job_memory_bytes."""
        tmp = min(self.tmp_bytes, self.job_memory_bytes // (2 * folders))
        processes = self.job_memory_bytes - folders * tmp
        return dataclasses.replace(self, tmp_bytes=tmp, job_memory_bytes=processes)


class Stopped(Exception):
    """The grader is stopping (SIGINT or SIGTERM): no new command starts."""


@dataclass
class Outcome:
    returncode: int | None  # None: killed at the wall-clock limit
    output: str  # its first Limits.output_bytes, marked where cut
    timed_out: bool
    over_limit: str | None = None  # the job-wide limit it was stopped for, in words


def keep_output(stream: IO[bytes], kept: bytearray, limit: int) -> bool:
    """Reads `stream` to its end, keeping its first `limit` bytes in `kept`; whether it said more."""
    truncated = False
    while chunk := stream.read(1 << 16):
        room = limit - len(kept)
        if room > 0:
            kept.extend(chunk[:room])
        if len(chunk) > room:
            truncated = True
    return truncated


def _resident_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[4])
    except (OSError, ValueError, IndexError):
        return None


def _processes_in_session(session: int) -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and _session_of(int(e)) == session]


class JobWatch(threading.Thread):
    """Stops a command whose processes together hold more memory, or whose writable folders hold
    more bytes, than its Limits allow: per-process limits alone let 256 processes of 8 GiB each."""

    def __init__(self, proc: subprocess.Popen, uid: int | None, writable: set[Path], limits: Limits) -> None:
        super().__init__(daemon=True)
        self.proc, self.uid, self.writable, self.limits = proc, uid, writable, limits
        self.over_limit: str | None = None
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            pids = _processes_of(self.uid) if self.uid is not None else _processes_in_session(self.proc.pid)
            memory = _resident_bytes(pids)
            if memory > self.limits.job_memory_bytes:
                self.stop(
                    f"its processes held {memory >> 20} MiB of memory at once "
                    f"(limit {self.limits.job_memory_bytes >> 20} MiB per job)"
                )
            elif (disk := disk_bytes(self.writable)) > self.limits.job_disk_bytes:
                self.stop(
                    f"it wrote {disk >> 20} MiB to its folders "
                    f"(limit {self.limits.job_disk_bytes >> 20} MiB per job)"
                )

    def stop(self, why: str) -> None:
        self.over_limit = why
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.done.set()


def _bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    try:
        r = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


# The programs a job runs; where they live outside the system folders, those folders are shown too.
TOOLS = ("cmake", "ctest", "nvcc", "c++", "g++", "sh")
SYSTEM = ("/usr", "/etc", "/opt")


def _tools_others_cannot_run(path: list[str]) -> list[str]:
    """The build tools that a job's user (not root) cannot run: a folder it cannot enter, or a
    script whose interpreter lies in one."""

    def drop() -> None:
        os.setgroups([])
        os.setgid(FIRST_UID)
        os.setuid(FIRST_UID)

    env = {"PATH": ":".join(path), "HOME": "/tmp"}
    failing = []
    for tool in ("cmake", "ctest"):
        try:
            r = subprocess.run([tool, "--version"], env=env, preexec_fn=drop, capture_output=True, timeout=30)
            ok = r.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if not ok:
            failing.append(shutil.which(tool) or tool)
    return failing


def _give(folder: Path, uid: int, gid: int) -> None:
    """`folder` and everything in it to the user `uid`."""
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)
    os.lchown(folder, uid, gid)


def _processes_of(uid: int) -> list[int]:
    """The processes of `uid`, zombies included (they still count against its process limit)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _kill_user(uid: int) -> None:
    """Kills every process of `uid` (a job's own user) until none but zombies is left."""
    for _ in range(50):
        found = False
        for pid in _processes_of(uid):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue  # already dead, waiting to be reaped by its parent
                os.kill(pid, signal.SIGKILL)
                found = True
            except OSError:
                continue
        if not found:
            return
        time.sleep(0.1)


CGROUPS = Path("/sys/fs/cgroup")


def _cgroups_usable() -> bool:
    """Whether this machine lets the grader make cgroup v2 groups with memory and process limits
    (as root on most machines, or in a container that delegates its cgroup)."""
    try:
        if not {"memory", "pids"} <= set((CGROUPS / "cgroup.subtree_control").read_text().split()):
            return False
        probe = CGROUPS / f"cudalab-probe-{os.getpid()}"
        probe.mkdir()
        probe.rmdir()
        return True
    except OSError:
        return False


def _tmpfs_mountable() -> bool:
    """Whether the grader may mount a tmpfs (as root, outside a container that forbids it)."""
    if shutil.which("mount") is None or shutil.which("umount") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="cudalab-mount-probe-") as probe:
        mount = ["mount", "-t", "tmpfs", "-o", "size=1m", "cudalab-probe", probe]
        if subprocess.run(mount, capture_output=True).returncode != 0:
            return False
        subprocess.run(["umount", probe], capture_output=True)
        return True


class JobGroup:
    """A cgroup v2 group for one command: its memory and process count limited by the kernel, every
    process it starts inside it, all of them killed at the end."""

    count = 0

    def __init__(self, limits: Limits) -> None:
        JobGroup.count += 1
        self.path = CGROUPS / f"cudalab-grader-{os.getpid()}-{JobGroup.count}"
        self.path.mkdir()
        (self.path / "memory.max").write_text(str(limits.job_memory_bytes))
        (self.path / "pids.max").write_text(str(limits.processes))
        with contextlib.suppress(OSError):
            (self.path / "memory.swap.max").write_text("0")
        self.limits = limits

    def enter(self) -> None:
        """In the child, before it drops root: joins the group."""
        (self.path / "cgroup.procs").write_text("0")

    def over_limit(self) -> str | None:
        events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
        if int(events.get("oom_kill", 0)) > 0:
            return f"its processes held more than {self.limits.job_memory_bytes >> 20} MiB of memory at once"
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.05)


def tool_folders() -> list[str]:
    """The folders that hold the tools on the grader's PATH, then the usual ones."""
    folders = []
    for tool in TOOLS:
        found = shutil.which(tool)
        folder = os.path.dirname(found) if found else None
        if folder and folder not in folders:
            folders.append(folder)
    return folders + [
        d for d in ("/usr/local/cuda/bin", "/usr/local/bin", "/usr/bin", "/bin") if d not in folders
    ]


class Sandbox:
    def __init__(self, use_bwrap: bool | None = None) -> None:
        self.bwrap = _bwrap_works() if use_bwrap is None else use_bwrap
        self.cgroups = os.geteuid() == 0 and _cgroups_usable()
        self.mounts = os.geteuid() == 0 and _tmpfs_mountable()
        self.path = tool_folders()
        # As root, jobs run under their own user ids, if those users can run the tools.
        self.hidden_tools = _tools_others_cannot_run(self.path) if os.geteuid() == 0 else []
        self.root = os.geteuid() == 0 and not self.hidden_tools
        self._claims: dict[int, object] = {}
        self._claims_lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()  # guarded by _claims_lock
        self._stopped = False

    def stop_all(self) -> None:
        """Kills every command running now, and refuses to start more (the grader is stopping)."""
        with self._claims_lock:
            self._stopped = True
            running = list(self._running)
        for proc in running:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    def protections(self) -> list[str]:
        """What is active, in words, for the instructor and the records."""
        p = [
            "wall-clock, CPU, memory, process-count and file-size limits per process; per job, its "
            "processes' memory together and what it writes to its folders (watched twice a second); "
            "output capped",
            "the test program, as the checker's runner, filters its own system calls once it is set "
            "up (seccomp): no sockets, no file opened to write, no signals but to itself, no memory "
            "outside its processes (memfd, System V shared memory)",
        ]
        if self.bwrap:
            p.append(
                "bubblewrap: own mount, network, PID and IPC namespaces; system folders read-only; "
                "only the job's own folders visible (no other submission, no solutions); no network; "
                "a private, size-limited /tmp"
            )
        else:
            p.append(
                "NO bubblewrap (missing, or user namespaces are off): submissions can read files "
                "the grader can read and use the network; the jobs run one at a time, in the "
                "instructor's build; install bubblewrap for isolation and jobs side by side"
            )
        if self.mounts and self.bwrap:
            p.append("a job's build folder is a tmpfs that the kernel holds to the job's disk limit")
        if self.cgroups:
            p.append(
                "cgroup v2: each job in a group of its own, its memory and processes limited by the kernel"
            )
        if self.root:
            p.append(f"each job runs as its own user (uids above {FIRST_UID}), not as root")
        elif os.geteuid() == 0:
            p.append(
                f"jobs run as root, because other users cannot run {', '.join(self.hidden_tools)}: "
                "the process limit does not apply to root"
            )
        else:
            p.append("jobs run as the grader's user; the process limit counts that user's processes")
        return p

    @contextlib.contextmanager
    def folder_of_size(self, folder: Path, size: int) -> Iterator[bool]:
        """Makes `folder` and, where the grader may mount (as root), mounts on it a tmpfs of `size`
        bytes, which the kernel holds to that size, for as long as the context lasts; whether it
        did (else the job watch counts what is written there)."""
        folder.mkdir()
        mounted = (
            self.mounts
            and subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "cudalab-job", str(folder)],
                capture_output=True,
            ).returncode
            == 0
        )
        try:
            yield mounted
        finally:
            if mounted:
                subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)

    def uid(self, number: int) -> int | None:
        return FIRST_UID + number if self.root else None

    def claim(self) -> int:
        """A job number whose user no other job (of this or another grader) uses, and who has no
        process left from an earlier job; 0 when jobs do not get users of their own."""
        if not self.root:
            return 0
        USER_LOCKS.mkdir(mode=0o700, exist_ok=True)
        with self._claims_lock:
            for number in range(1, 5000):
                if number in self._claims:
                    continue
                lock = open(USER_LOCKS / f"{FIRST_UID + number}.lock", "w")  # noqa: SIM115 (held)
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    lock.close()
                    continue
                if _processes_of(FIRST_UID + number):
                    lock.close()
                    continue
                self._claims[number] = lock
                return number
        raise RuntimeError(f"no free user id between {FIRST_UID + 1} and {FIRST_UID + 4999}")

    def release(self, number: int) -> None:
        with self._claims_lock:
            lock = self._claims.pop(number, None)
        if lock is not None:
            lock.close()

    def prepare(self, folder: Path, number: int) -> None:
        """Makes `folder` (a job's writable area) belong to the job's user."""
        uid = self.uid(number)
        if uid is not None:
            _give(folder, uid, uid)

    def reclaim(self, folder: Path) -> None:
        """Makes `folder` the grader's again, after a job's user had it."""
        if self.root:
            _give(folder, os.getuid(), os.getgid())

    def run(
        self,
        command: list[str],
        *,
        binds: dict[Path, str],
        writable: set[Path],
        cwd: str,
        limits: Limits,
        slot: int = 0,
        env: dict[str, str] | None = None,
        gpu: bool = False,
        pass_fds: tuple[int, ...] = (),
        scratch: tuple[str, ...] = (),
    ) -> Outcome:
        """Runs `command` as the user of job slot `slot` (see claim()); inside bubblewrap each host
        folder in `binds` appears at its path, read-only unless it is in `writable`, and each path
        in `scratch` is an empty tmpfs of limits.tmp_bytes, which the kernel holds to that size
        (as it does /tmp and /dev/shm). Without bubblewrap the command runs with the host paths,
        so callers use the host paths in `command` and `cwd` (grading.Grader._inside), and
        `scratch` folders are the host folders in `binds`. `pass_fds`: descriptors the command
        keeps (a socket to the checker)."""
        if self.bwrap:
            # /tmp, /dev/shm and the scratch folders are memory: counted against the job's memory
            limits = limits.memory_backed(2 + len(scratch))
            argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all"]
            for d in SYSTEM:
                argv += ["--ro-bind-try", d, d]
            for d in self.path:
                if not d.startswith(SYSTEM) and os.path.isdir(d) and not os.path.islink(d):
                    argv += ["--ro-bind-try", d, d]
            for link in ("bin", "sbin", "lib", "lib64", "lib32"):
                target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
                if target:
                    argv += ["--symlink", target, f"/{link}"]
                elif os.path.isdir(f"/{link}"):
                    argv += ["--ro-bind", f"/{link}", f"/{link}"]
            argv += ["--proc", "/proc", "--dev", "/dev"]
            for folder in ("/tmp", "/dev/shm"):
                argv += ["--size", str(limits.tmp_bytes), "--tmpfs", folder]
            if gpu:
                for dev in glob.glob("/dev/nvidia*"):
                    argv += ["--dev-bind", dev, dev]
            for host, inside in binds.items():
                if inside not in scratch:
                    argv += ["--bind" if host in writable else "--ro-bind", str(host), inside]
            for inside in scratch:  # (a tmpfs that bubblewrap makes is its user's: the job's)
                argv += ["--size", str(limits.tmp_bytes), "--tmpfs", inside]
            argv += ["--chdir", cwd, "--"]
            argv += command
            workdir = None
        else:
            argv, workdir = command, cwd
        base_env = {
            "PATH": ":".join(self.path),
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
        }
        base_env.update(env or {})
        uid = self.uid(slot)

        group = JobGroup(limits) if self.cgroups else None

        def limit() -> None:
            if group is not None:
                group.enter()
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
            if limits.memory_bytes is not None:
                resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))

        with self._claims_lock:
            try:
                if self._stopped:
                    raise Stopped("the grader is stopping")
                proc = subprocess.Popen(
                    argv,
                    cwd=workdir,
                    env=base_env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    preexec_fn=limit,
                    start_new_session=True,
                    pass_fds=pass_fds,
                )
            except BaseException:
                if group is not None:
                    group.close()
                raise
            self._running.add(proc)
        kept = bytearray()
        truncated = False

        def drain() -> None:
            nonlocal truncated
            assert proc.stdout is not None
            truncated = keep_output(proc.stdout, kept, limits.output_bytes)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        watch = JobWatch(proc, uid, writable, limits)
        watch.start()
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        if timed_out or proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        watch.done.set()
        watch.join()
        over_limit = watch.over_limit
        if group is not None:
            over_limit = over_limit or group.over_limit()
            group.close()
        reader.join(timeout=10)
        with self._claims_lock:
            self._running.discard(proc)
        if uid is not None:
            _kill_user(uid)  # what escaped the process group (a fork bomb's children) must not linger
        text = kept.decode("utf-8", "replace")
        if truncated:
            text += f"\n[output cut at {limits.output_bytes >> 10} KiB]"
        return Outcome(None if timed_out else proc.returncode, text, timed_out, over_limit)
