"""What a student's compiled code may define and call: checked by make check and by the grader.

A lab's code is the student's kernels, helpers and the functions of the lab's interface. It must
not define main() or a function that runs before or after it (constructor or destructor
functions), stand in for the harness (define anything, inline functions included, in the
namespaces `cudalab` or `testing`: the checker, the references), replace a function that a library
of the test program provides (the C and C++ libraries, GoogleTest, the harness, the CUDA runtime:
e.g. an `fwrite` that edits the report), call into the harness, GoogleTest or the emu runtime's
inspection (`cudalab/emu/inspect.h`: what the harness asks the runtime), nor call what could forge
a verdict or leave the test: exit and its kin, processes, threads, signals, files (C, POSIX and
C++ streams), raw writes to descriptors, sockets, memory mappings, dynamic loading. Nor may it
hold a system-call instruction (inline assembly that would reach the system around those rules).
The check reads the object file (binutils' nm, readelf and objdump), so it holds however the
source spells a name (macros, extern "C", a pointer taken, assembly).

Limitations: code can still write through wild pointers into the harness's memory (the harness's
data, not its code, which is read-only); only a checker in a process of its own closes that
(planned).
"""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

# Calls a lab's code never needs, by their C names. (Not exit(): nvcc's host code for a __device__
# function calls it; and leaving with exit() from a test fails the test, there being no report.)
DENIED_CALLS = frozenset(
    """_exit _Exit quick_exit at_quick_exit
    fork vfork clone execv execve execvp execvpe execl execlp execle fexecve system popen
    posix_spawn posix_spawnp kill raise signal sigaction sigset ptrace syscall prctl
    dlopen dlmopen dlsym dlvsym
    open open64 openat openat64 creat creat64 fopen fopen64 freopen freopen64 fdopen
    mkfifo mkfifoat mknod mknodat symlink symlinkat link linkat unlink unlinkat rename renameat
    renameat2 remove mkdir mkdirat rmdir chdir fchdir chmod fchmod truncate ftruncate
    socket socketpair connect bind listen accept accept4
    on_exit pthread_create thrd_create clone3 unshare setns
    mmap mmap64 mprotect pkey_mprotect mremap process_vm_readv process_vm_writev memfd_create
    write pwrite pwrite64 writev pwritev pwritev2 sendfile sendfile64 splice dup dup2 dup3 ioctl
    fcntl fcntl64 setenv putenv unsetenv clearenv""".split()
)
# The same, for C++ names (by their demangled prefix): files through streams and std::filesystem,
# threads, a terminate handler (it runs when a test throws).
DENIED_CXX_CALLS = (
    "std::basic_ofstream",
    "std::basic_ifstream",
    "std::basic_fstream",
    "std::basic_filebuf",
    "std::__basic_file",
    "std::filesystem::",
    "std::thread::",
    "std::jthread::",
    "std::set_terminate",
)
# Machine instructions that enter the kernel (x86-64, i386, AArch64), as objdump prints them.
SYSTEM_CALL_INSTRUCTIONS = re.compile(r"\t(syscall|sysenter|int\s+\$0x80|svc\s+#?0x0?)\b")
# Constructor functions the compilers themselves emit: C++ static initialisation (g++, clang++
# and nvcc's host compiler), GCC's prioritised ones (ThreadSanitizer's, on the emu backend) and
# nvcc's registration of a file's kernels.
COMPILER_CONSTRUCTORS = ("_GLOBAL__sub_I_", "_sub_I_", "__sti__")  # "__sti__": once demangled
HARNESS_NAMESPACES = ("cudalab::", "testing::")
RUNTIME_NAMESPACE = "cudalab::emu::"  # the emu runtime, which translated code calls
COMPILER_DATA = ("DW.ref.",)  # what g++ emits for exceptions (the personality routine's address)
STRONG_DEFINITIONS = set("TDBRGS")  # nm's letters for global definitions that are not weak
WEAK_DEFINITIONS = set("WVu")  # weak, weak object, unique global (inline functions, templates)
EMU_INSPECTION = Path(__file__).resolve().parents[2] / "emu/include/cudalab/emu/inspect.h"
# The libraries every C++ program links besides those its link command names.
IMPLICIT_LIBRARIES = ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1")


def _output(*command: str) -> str:
    """What a binutils command prints."""
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _harness(name: str) -> bool:
    """Whether a demangled name is the harness's or GoogleTest's (the emu's runtime is not)."""
    return name.startswith(HARNESS_NAMESPACES) and not name.startswith(RUNTIME_NAMESPACE)


@functools.cache
def _inspection() -> frozenset[str]:
    """The functions of the emu's inspection interface (inspect.h), by their qualified names."""
    declared = re.findall(r"^[A-Za-z][\w:<>, ]*[\s*&](\w+)\(", EMU_INSPECTION.read_text(), re.M)
    return frozenset(RUNTIME_NAMESPACE + name for name in declared)


def _nm(obj: Path) -> dict[str, tuple[str, str]]:
    """The global symbols of `obj`: raw name -> (nm's letter, demangled name)."""
    raw = _output("nm", str(obj)).splitlines()
    readable = _output("nm", "-C", str(obj)).splitlines()
    symbols = {}
    for line, shown in zip(raw, readable, strict=True):
        fields = line.split(maxsplit=2)
        if len(fields) == 2 and fields[0] == "U":
            symbols[fields[1]] = ("U", shown.split(maxsplit=1)[1])
        elif len(fields) == 3 and fields[1] in STRONG_DEFINITIONS | WEAK_DEFINITIONS:
            if not fields[2].startswith(COMPILER_DATA):
                symbols[fields[2]] = (fields[1], shown.split(maxsplit=2)[2])
    return symbols


def _system_calls(obj: Path) -> set[str]:
    """The functions of `obj` that hold a system-call instruction."""
    found, function = set(), "?"
    for line in _output("objdump", "-d", "-C", "--no-show-raw-insn", str(obj)).splitlines():
        if line.endswith(">:"):  # "0000000000000000 <name>:"
            function = line[line.index("<") + 1 : -2]
        elif SYSTEM_CALL_INSTRUCTIONS.search(line):
            found.add(function)
    return found


def _constructors(obj: Path, sections: tuple[str, ...]) -> set[str]:
    """The functions `obj` asks to run before main() (sections .init_array, .ctors,
    .preinit_array) or after it (.fini_array, .dtors): the targets of those sections'
    relocations, which name a function or a section and an offset into it."""
    functions = {}  # (section, offset) -> function
    for line in _output("objdump", "-t", str(obj)).splitlines():  # "VALUE FLAGS SECTION<tab>SIZE NAME"
        left, tab, right = line.partition("\t")
        fields = left.split()
        if tab and len(fields) >= 3 and "F" in fields[1:-1]:
            functions[(fields[-1], int(fields[0], 16))] = right.split(maxsplit=1)[-1]
    found, inside = set(), False
    for line in _output("readelf", "-rW", str(obj)).splitlines():
        if line.startswith("Relocation section"):
            inside = any(s in line for s in sections)
        elif inside and line[:1].isalnum() and len(fields := line.split(None, 4)) == 5:
            symbol, _, addend = fields[4].partition("+")  # "NAME + ADDEND"
            symbol, offset = symbol.strip(), int(addend.strip() or "0", 16)
            found.add(functions.get((symbol, offset), symbol))
    return found


def _base(name: str) -> str:
    """A C or C++ name without its parameters: `open(char const*, int, ...)` -> `open`."""
    return name.split("(")[0].split("@")[0]


def violations(obj: Path, source: str, provided: Mapping[str, str] | None = None) -> list[str]:
    """What the object file compiled from `source` defines or calls against the rules, in words
    (empty: it keeps them). `provided` maps the raw names that the test program's libraries
    define to the library's file name (see `provided_by`)."""
    provided = provided or {}
    found: list[str] = []
    for raw, (letter, name) in sorted(_nm(obj).items(), key=lambda item: item[1][1]):
        if letter == "U":
            if _base(name) in DENIED_CALLS or name.startswith(DENIED_CXX_CALLS):
                called = next((p.rstrip(":") for p in DENIED_CXX_CALLS if name.startswith(p)), _base(name))
                refusal = f"{source} calls {called}(), which a lab's code may not call"
                found += [refusal] if refusal not in found else []
            elif _harness(name) or _base(name) in _inspection():
                found.append(f"{source} calls {name}, which belongs to the harness")
        elif _base(name) == "main":
            found.append(f"{source} defines main(): the harness has the program's main()")
        elif _harness(name):
            found.append(f"{source} defines {name}, which belongs to the harness")
        elif raw in provided and (
            letter in STRONG_DEFINITIONS or letter in "WV" and not raw.startswith("_Z")
        ):
            # (an inline C++ function, template or inline variable that a library also holds is
            # the same code: only strong definitions and weak C names replace the library's)
            found.append(f"{source} defines {name}, which replaces the one in {provided[raw]}")
    for when, sections in (
        ("before", (".init_array", ".ctors", ".preinit_array")),
        ("after", (".fini_array", ".dtors")),
    ):
        constructors = sorted(_constructors(obj, sections))
        readable = _output("c++filt", *constructors).splitlines()
        for name, shown in zip(constructors, readable, strict=True):
            if not (name.startswith(COMPILER_CONSTRUCTORS) or shown.startswith(COMPILER_CONSTRUCTORS)):
                kind = "constructor" if when == "before" else "destructor"
                found.append(f"{source} has a {kind} function ({shown}) that runs {when} main()")
    for function in sorted(_system_calls(obj)):
        found.append(
            f"{source} makes a system call itself (an instruction in {function}): a lab's "
            "code reaches the system only through the calls the rules allow"
        )
    return found


def provided_by(build: Path, lab: str, student: set[Path]) -> dict[str, str]:
    """The raw names that the libraries and other objects of `lab`'s test program define, each
    with the file that defines it (read from the program's link command in the build, which CMake's
    Makefile generator writes; without it, those of the C and C++ libraries)."""
    link = build / "CMakeFiles" / f"{lab}-labs.dir" / "link.txt"
    command = link.read_text() if link.exists() else ""
    inputs: list[Path] = []
    for word in shlex.split(command):
        path = build / word if not word.startswith("/") else Path(word)
        if word.startswith("-l"):  # the shared library, else the static one
            path = next(
                (f for f in (_library(f"lib{word[2:]}{e}") for e in (".so", ".a")) if f.is_file()), path
            )
        if path.suffix in (".a", ".o") or ".so" in path.name:
            if path.resolve() not in student and path.is_file():
                inputs.append(path)
    inputs += [_library(name) for name in IMPLICIT_LIBRARIES]
    provided: dict[str, str] = {}
    for path in inputs:
        provided.update((name, path.name) for name in _defined(path))
    return provided


def _library(name: str) -> Path:
    """Where the C++ compiler finds the library file `name`."""
    return Path(_output("c++", f"-print-file-name={name}").strip())


@functools.cache
def _defined(path: Path) -> frozenset[str]:
    """The raw names of the global definitions in a library or object file."""
    dynamic = [] if path.suffix in (".a", ".o") else ["-D"]
    done = subprocess.run(["nm", *dynamic, "--defined-only", "-g", str(path)], capture_output=True, text=True)
    names = (line.split()[-1] for line in done.stdout.splitlines() if len(line.split()) == 3)
    return frozenset(name.split("@")[0] for name in names)


def student_objects(build: Path, lab: str, sources: list[str]) -> dict[str, Path]:
    """The object file of each of the student's `sources` in `lab`'s test program, by source."""
    folder = build / "CMakeFiles" / f"{lab}-labs.dir"
    objects = {}
    for source in sources:
        for name in (f"{source}.o", f"{source}.cpp.o"):  # nvcc's, and the emu's translation
            hits = [p for p in folder.rglob(name) if p.parent.name == lab and p.parent.parent.name == "labs"]
            if hits:
                objects[source] = hits[0]
    return objects


def check(build: Path, lab: str, sources: list[str]) -> str:
    """The rules' verdict on the student's code of `lab`, as a build error ("" when it keeps them)."""
    objects = student_objects(build, lab, sources)
    missing = [s for s in sources if s not in objects]
    if missing:
        return f"error: no object file of {', '.join(missing)} in {build} to check"
    provided = provided_by(build, lab, {obj.resolve() for obj in objects.values()})
    found = [v for source, obj in objects.items() for v in violations(obj, f"labs/{lab}/{source}", provided)]
    return "\n".join(f"error: {v}" for v in found)
