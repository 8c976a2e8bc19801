"""What a student's compiled code may define and call: checked by make check and by the grader.

A lab's code is the student's kernels, helpers and the functions of the lab's interface. It may
**call** only what a list allows: the backend's runtime and libraries (what the CUDA or emu runtime
and cuBLAS/cuRAND define, but the emu's inspection, `cudalab/emu/inspect.h`, which is the
harness's), the maths library, the C library's memory, string and printing functions, and the C++
library (containers, algorithms, strings, streams to the terminal, exceptions) but for files,
threads and handlers. It may **define** only its own names: not main(), not a function that runs
before or after it (a constructor or destructor function: the compiler's own static
initialisation is allowed), no `.init`/`.fini`/`.preinit_array` section, no ifunc (its resolver
runs before main()), no global `operator new` or `operator delete`, nothing in the harness's
namespaces (`cudalab`, `testing`), and no name that a library of the test program also defines,
weak or not (an `fwrite` that would edit a report; the one exception is an instantiation of the
C++ library's templates, the same code the library holds). Nor may it hold a system-call
instruction. The check reads the object file (binutils' nm, readelf and objdump), so it holds
however the source spells a name (macros, extern "C", a pointer taken, assembly), and each refusal
names the symbol or section.

Limitations: code can still compute a code address from an allowed one and jump there, or write
through wild pointers into the runner's memory; what that can and cannot reach is in
docs/instructor-guide.md, "Untrusted code".
"""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# The C library's functions a lab's code may call, by their C names (the maths library's are all
# allowed). exit() and atexit(): nvcc's host code calls them (a test that exits fails, there being
# no report); the rest is memory, strings, numbers, printing to the terminal, time and sorting.
ALLOWED_C_CALLS = frozenset(
    """malloc calloc realloc free aligned_alloc posix_memalign memalign
    memcpy memmove memset memcmp memchr strlen strnlen strcmp strncmp strcpy strncpy strcat strncat
    strchr strrchr strstr strdup strtok strtol strtoll strtoul strtoull strtod strtof atoi atol atof
    __isoc23_strtol __isoc23_strtoll __isoc23_strtoul __isoc23_strtoull __isoc99_sscanf sscanf
    printf puts putchar fprintf vprintf vfprintf fputs fputc putc fflush fwrite perror
    snprintf sprintf vsnprintf vsprintf __printf_chk __fprintf_chk __sprintf_chk __snprintf_chk
    __vsnprintf_chk __vfprintf_chk __vprintf_chk __memcpy_chk __memmove_chk __memset_chk
    __strcpy_chk __strcat_chk __stack_chk_fail __assert_fail abort exit atexit __errno_location
    stdout stderr qsort bsearch rand srand rand_r time clock clock_gettime gettimeofday getenv
    __cxa_atexit __cxa_finalize __cxa_guard_acquire __cxa_guard_release __cxa_guard_abort
    __cxa_allocate_exception __cxa_free_exception __cxa_throw __cxa_begin_catch __cxa_end_catch
    __cxa_rethrow __cxa_pure_virtual __cxa_deleted_virtual __cxa_call_unexpected
    __cxa_get_exception_ptr __cxa_bad_cast __cxa_bad_typeid __cxa_thread_atexit
    __gxx_personality_v0 _Unwind_Resume __dso_handle _GLOBAL_OFFSET_TABLE_ __tls_get_addr""".split()
)
# The C++ library's names a lab's code may call (by demangled prefix), and those among them that it
# may not: files through streams and std::filesystem, threads, handlers (a terminate handler runs
# when a test throws).
ALLOWED_CXX_PREFIXES = (
    "std::",
    "__gnu_cxx::",
    "__cxxabiv1::",
    "operator new",
    "operator delete",
    "typeinfo for ",
    "typeinfo name for ",
    "vtable for ",
    "VTT for ",
)
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
    "std::set_unexpected",
    "std::set_new_handler",
    "std::quick_exit",
    "std::at_quick_exit",
    "std::random_device::",
)
# The libraries that make the backend: a lab's code may call what they define (the CUDA runtime,
# cuBLAS, cuRAND, ...; on emu, its runtime), but the emu's inspection.
RUNTIME_LIBRARIES = re.compile(
    r"^lib(cudalab_emu|cudart|cublas|cublasLt|curand|cufft|cusparse|cusolver)(_static)?\.(a|so)"
)
# Raw names of the C++ library's and the emu runtime's entities (std::, its abbreviations such as
# std::allocator, __gnu_cxx::, cudalab::emu::), members and local entities included.
LIBRARY_TEMPLATES = re.compile(r"^_ZZ?N?[KVRO]*(S[tabsiod]|9__gnu_cxx|7cudalab3emu)")
# Global replacement operators: raw names of operator new, new[], delete and delete[].
# (not the placement forms, which <new> defines inline and no program may replace)
GLOBAL_OPERATORS = ("_Znw", "_Zna", "_Zdl", "_Zda")
PLACEMENT_OPERATORS = ("_ZnwmPv", "_ZnamPv", "_ZdlPvS_", "_ZdaPvS_")
# Sections whose code the loader runs before or after main() without a relocation to name it.
LOADER_SECTIONS = (".init", ".fini", ".preinit_array")
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
MATHS_LIBRARY = "libm.so.6"


def _output(*command: str) -> str:
    """What a binutils command prints."""
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def _harness(name: str) -> bool:
    """Whether a demangled name is the harness's or GoogleTest's (the emu's runtime is not)."""
    return name.startswith(HARNESS_NAMESPACES) and not name.startswith(RUNTIME_NAMESPACE)


@functools.cache
def _emu_interface() -> frozenset[str]:
    """The identifiers of the emu's headers that translated code includes (common/emu/include),
    but for its inspection: of the emu runtime's own names, a lab's code may call only these
    (its internals, such as the record of who wrote which byte, are not for it)."""
    words: set[str] = set()
    for header in EMU_INSPECTION.parents[2].rglob("*"):
        if header.is_file() and header != EMU_INSPECTION:
            words.update(re.findall(r"\b[A-Za-z_]\w*\b", header.read_text(errors="replace")))
    return frozenset(words)


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
        elif len(fields) == 3 and fields[1] in STRONG_DEFINITIONS | WEAK_DEFINITIONS | {"i"}:
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


@dataclass(frozen=True)
class Libraries:
    """What the test program's libraries define, by raw name: `provided` maps each name to the
    library's file; `runtime` holds the names the backend's runtime and libraries define
    (RUNTIME_LIBRARIES), `maths` those of the maths library."""

    provided: Mapping[str, str] = field(default_factory=dict)
    runtime: frozenset[str] = frozenset()
    maths: frozenset[str] = frozenset()


def _allowed_call(raw: str, name: str, libraries: Libraries) -> bool:
    """Whether a lab's code may call (or take the address of) the symbol `raw` (demangled `name`)."""
    if name.startswith(DENIED_CXX_CALLS) or _harness(name) or _base(name) in _inspection():
        return False
    if name.startswith(RUNTIME_NAMESPACE) and _base(name).split("::")[-1] not in _emu_interface():
        return False
    return (
        raw in libraries.runtime
        or raw in libraries.maths
        or _base(raw) in ALLOWED_C_CALLS
        or name.startswith(ALLOWED_CXX_PREFIXES)
    )


def _refused_call(name: str) -> str:
    """Why a call is refused, in words."""
    if _harness(name) or _base(name) in _inspection():
        return f"calls {name}, which belongs to the harness"
    called = next((p.rstrip(":") for p in DENIED_CXX_CALLS if name.startswith(p)), _base(name))
    return (
        f"calls {called}(), which a lab's code may not call (it may call the CUDA runtime and its "
        "libraries, maths, printing, memory and strings, and the C++ library but for files and threads)"
    )


def _refused_definition(raw: str, letter: str, name: str, libraries: Libraries) -> str | None:
    """Why a definition is refused, in words; None where a lab's code may define it."""
    if _base(name) == "main":
        return "defines main(): the harness has the program's main()"
    if _harness(name):
        return f"defines {name}, which belongs to the harness"
    if raw.startswith(GLOBAL_OPERATORS) and raw not in PLACEMENT_OPERATORS:
        return f"defines the global {name}, which replaces the C++ library's"
    if letter == "i":
        return f"defines {name} as an ifunc, whose resolver runs before main()"
    if raw in libraries.provided and not (letter in WEAK_DEFINITIONS and LIBRARY_TEMPLATES.match(raw)):
        # (an instantiation of the C++ library's or the emu's templates, or of an inline function
        # of theirs, is the same code the library holds)
        return f"defines {name}, which replaces the one in {libraries.provided[raw]}"
    return None


def _loader_sections(obj: Path) -> list[str]:
    """The sections of `obj` whose code the loader runs by itself (LOADER_SECTIONS)."""
    found = []
    for line in _output("readelf", "-SW", str(obj)).splitlines():
        fields = line.replace("[", " ").replace("]", " ").split()
        if len(fields) > 2 and fields[1] in LOADER_SECTIONS:
            found.append(fields[1])
    return found


def violations(
    obj: Path, source: str, libraries: Libraries | None = None, own: frozenset[str] = frozenset()
) -> list[str]:
    """What the object file compiled from `source` defines or calls against the rules, in words
    (empty: it keeps them). `own`: the raw names the student's other files define (a helper in a
    second .cu), which it may call."""
    libraries = libraries or Libraries()
    found: list[str] = []
    for raw, (letter, name) in sorted(_nm(obj).items(), key=lambda item: item[1][1]):
        if letter == "U":
            if raw not in own and not _allowed_call(raw, name, libraries):
                refusal = f"{source} {_refused_call(name)}"
                found += [refusal] if refusal not in found else []
        elif why := _refused_definition(raw, letter, name, libraries):
            found.append(f"{source} {why}")
    for section in _loader_sections(obj):
        found.append(f"{source} has a {section} section, whose code the loader runs by itself")
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


def libraries_of(build: Path, lab: str, student: set[Path]) -> Libraries:
    """What the libraries and other objects of `lab`'s test program define (read from the
    program's link command in the build, which CMake's Makefile generator writes; without it,
    the C, C++ and maths libraries)."""
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
    runtime: set[str] = set()
    for path in inputs:
        provided.update((name, path.name) for name in _defined(path))
        if RUNTIME_LIBRARIES.match(path.name):
            runtime |= _defined(path)
    return Libraries(provided, frozenset(runtime), _defined(_library(MATHS_LIBRARY)))


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
    libraries = libraries_of(build, lab, {obj.resolve() for obj in objects.values()})
    own = frozenset(raw for obj in objects.values() for raw, (letter, _) in _nm(obj).items() if letter != "U")
    found = [
        v for source, obj in objects.items() for v in violations(obj, f"labs/{lab}/{source}", libraries, own)
    ]
    return "\n".join(f"error: {v}" for v in found)
