"""What a student's compiled code may define and call: checked by make check and by the grader.

A lab's code is the student's kernels, helpers and the functions of the lab's interface. It must
not define main() or a constructor function, stand in for the harness (define anything in the
namespaces `cudalab` or `testing`: the checker, the references), call into the harness or
GoogleTest, nor call what could forge a verdict or leave the test: exit and its kin, processes,
signals, files, sockets, dynamic loading. The check reads the object file (binutils' nm and
readelf), so it holds however the source spells a name (macros, extern "C", a pointer taken).

Limitations: code can still reach the system through inline assembly (a raw system call) or by
writing through wild pointers into the harness's memory; only a checker in a process of its own
closes those (planned).
"""

from __future__ import annotations

import subprocess
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
    socket socketpair connect bind listen accept accept4""".split()
)
# Constructor functions the compilers themselves emit: C++ static initialisation (g++, clang++
# and nvcc's host compiler), GCC's prioritised ones (ThreadSanitizer's, on the emu backend) and
# nvcc's registration of a file's kernels.
COMPILER_CONSTRUCTORS = ("_GLOBAL__sub_I_", "_sub_I_", "__sti__")  # "__sti__": once demangled
HARNESS_NAMESPACES = ("cudalab::", "testing::")
RUNTIME_NAMESPACE = "cudalab::emu::"  # the emu runtime, which translated code calls
STRONG_DEFINITIONS = set("TDBRGS")  # nm's letters for global definitions that are not weak


def _output(*command: str) -> str:
    """What a binutils command prints."""
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _harness(name: str) -> bool:
    """Whether a demangled name is the harness's or GoogleTest's (the emu's runtime is not)."""
    return name.startswith(HARNESS_NAMESPACES) and not name.startswith(RUNTIME_NAMESPACE)


def _nm(obj: Path) -> tuple[set[str], set[str]]:
    """(strong global definitions, undefined references) of `obj`, demangled."""
    defined, undefined = set(), set()
    for line in _output("nm", "-C", str(obj)).splitlines():
        fields = line.split(maxsplit=2)
        if len(fields) == 2 and fields[0] == "U":
            undefined.add(fields[1])
        elif len(fields) == 3 and fields[1] in STRONG_DEFINITIONS:
            defined.add(fields[2])
    return defined, undefined


def _constructors(obj: Path) -> set[str]:
    """The functions `obj` asks to run before main(): the targets of its .init_array (.ctors)
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
            inside = any(s in line for s in (".init_array", ".ctors", ".preinit_array"))
        elif inside and line[:1].isalnum() and len(fields := line.split(None, 4)) == 5:
            symbol, _, addend = fields[4].partition("+")  # "NAME + ADDEND"
            symbol, offset = symbol.strip(), int(addend.strip() or "0", 16)
            found.add(functions.get((symbol, offset), symbol))
    return found


def _base(name: str) -> str:
    """A C or C++ name without its parameters: `open(char const*, int, ...)` -> `open`."""
    return name.split("(")[0].split("@")[0]


def violations(obj: Path, source: str) -> list[str]:
    """What the object file compiled from `source` defines or calls against the rules, in words
    (empty: it keeps them)."""
    defined, undefined = _nm(obj)
    found = []
    for name in sorted(defined):
        if _base(name) == "main":
            found.append(f"{source} defines main(): the harness has the program's main()")
        elif _harness(name):
            found.append(f"{source} defines {name}, which belongs to the harness")
    for name in sorted(undefined):
        if _base(name) in DENIED_CALLS:
            found.append(f"{source} calls {_base(name)}(), which a lab's code may not call")
        elif _harness(name):
            found.append(f"{source} calls {name}, which belongs to the harness")
    constructors = sorted(_constructors(obj))
    readable = _output("c++filt", *constructors).splitlines()
    for name, shown in zip(constructors, readable, strict=True):
        if not (name.startswith(COMPILER_CONSTRUCTORS) or shown.startswith(COMPILER_CONSTRUCTORS)):
            found.append(f"{source} has a constructor function ({shown}) that runs before main()")
    return found


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
    found = [v for source, obj in objects.items() for v in violations(obj, f"labs/{lab}/{source}")]
    return "\n".join(f"error: {v}" for v in found)
