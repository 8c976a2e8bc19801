"""The Clang front end: reads a CUDA file as Clang does and returns what the workbook's tools need
as records (kernels and functions with their parameters and bodies, __shared__/__constant__/
__device__ variables and the uses of those at file scope, kernel launches, calls of file-scope
functions, inline assembly, `assert`s, #includes and the headers they name, with exact source
ranges), so that no tool reads CUDA with its own pattern matching. Records name files by their
real path.

How: libclang (the `libclang` package from PyPI, version 18, which ./setup.sh installs into
.deps/python; a libclang of version 16 or newer found elsewhere works too) parses the file as CUDA,
host side only (`-x cuda --cuda-host-only`), with the real preprocessor and the program's include
folders and definitions. The CUDA headers are the emu's own (common/emu/include), as when the file
is compiled, with cudalab/emu/front_end.h first: there `__global__`, `__shared__` and the other
qualifiers are Clang's CUDA attributes, so the AST says which function is a kernel and which
variable is shared, and `kernel<<<grid, block>>>(args)` is a kernel call whose configuration Clang
parses. Offsets are in bytes, as Clang counts them, so a file in any encoding is rewritten exactly.

Limitations:
- Device code is parsed as the host side sees it. The prelude's functions are `__host__
  __device__` there (front_end.h), but those of emu headers a program includes after it
  (cooperative_groups.h, mma.h, curand_kernel.h) are host functions, so a kernel's call of one is
  an error to Clang and no call in the AST. Those errors are not the front end's to report (the
  compiler that builds the program reports real ones): `Source.errors` keeps them for a tool that
  needs a clean parse.
- Only the file's own code and its local headers are walked (not the system's or the emu's).
- In a macro's expansion, Clang places everything at the macro's name: a launch there is marked
  `in_macro` (`Source.macro_launches` reads it from Clang's tokens of the macro's body or argument:
  the kernel expression before its `<<<`, the configuration up to `>>>`, the `(` after), and a
  variable's or a use's name span does not hold its name (callers check the text).
- `<< <` and `>> >` (spaces that nvcc accepts in a launch) are joined before parsing, on the
  tokens of Clang's own lexer, so columns and lines stay where they were.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from . import kernel_statements, precompiled, proven_accesses, stretch_accesses
from .kernel_statements import kind_of

HERE = Path(__file__).resolve().parent
if (HERE.parents[1] / "emu" / "include").is_dir():  # in the workbook: common/tools/cudalab_tools
    ROOT = HERE.parents[2]
    PACKAGES = ROOT / ".deps" / "python"  # ./setup.sh installs requirements.txt here
    EMU_INCLUDE = ROOT / "common" / "emu" / "include"
    WORKBOOK_INCLUDE = ROOT / "common" / "include"
else:  # installed (cmake --install): <prefix>/share/cudalab/cudalab_tools
    PACKAGES = HERE.parent / "python"
    EMU_INCLUDE = WORKBOOK_INCLUDE = HERE.parents[2] / "include" / "cudalab-emu"
OLDEST_CLANG = 16  # (std::source_location in the emu's headers needs Clang 15; CUDA parsing 16)


class FrontEndError(Exception):
    """The front end cannot read a file: the message names the file and line (or what is missing)."""


@functools.cache
def cindex() -> ModuleType:
    """clang.cindex, with the library loaded: the project's own first, else one on sys.path."""
    if PACKAGES.is_dir() and str(PACKAGES) not in sys.path:
        sys.path.insert(0, str(PACKAGES))
    try:
        import clang.cindex as ci
    except ImportError:
        raise FrontEndError(
            "libclang's Python bindings are missing: run ./setup.sh "
            "(it installs requirements.txt into .deps/python)"
        ) from None
    try:
        get_version = ci.conf.lib.clang_getClangVersion
    except ci.LibclangError as e:
        raise FrontEndError(f"libclang cannot be loaded ({e}): run ./setup.sh") from None
    get_version.restype = ci._CXString
    text = ci.conf.lib.clang_getCString(get_version())
    text = text.decode() if isinstance(text, bytes) else str(text)
    found = re.search(r"version (\d+)", text)
    if found is None or int(found.group(1)) < OLDEST_CLANG:
        raise FrontEndError(f"{text} is too old (needs {OLDEST_CLANG} or newer): run ./setup.sh")
    # The functions these bindings do not wrap, declared once.
    lib = ci.conf.lib
    lib.clang_getSkippedRanges.restype = ctypes.POINTER(SourceRangeList)
    lib.clang_getSkippedRanges.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(SourceRangeList)]
    lib.clang_isInvalidDeclaration.argtypes = [ci.Cursor]
    lib.clang_Cursor_getVarDeclInitializer.restype = ci.Cursor
    lib.clang_Cursor_getVarDeclInitializer.argtypes = [ci.Cursor]
    return ci


class SourceRangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.c_void_p)]


@functools.cache
def compiler_include() -> str | None:
    """The compiler's own headers (stddef.h, stdarg.h): libclang's package has none."""
    try:
        out = subprocess.run(["cc", "-print-file-name=include"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = out.stdout.strip()
    return folder if Path(folder, "stddef.h").is_file() else None


@dataclass(frozen=True)
class Span:
    """Where a construct is written: its file, its first line and the byte offsets [start, end)."""

    file: str
    line: int
    start: int
    end: int

    def __contains__(self, offset: int) -> bool:
        return self.start <= offset < self.end


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # as Clang spells it, macros expanded: "const float *"
    reference: bool
    has_default: bool
    span: Span
    name_at: int = -1  # the offset of its name (-1: unnamed)
    copies_run_code: bool = False  # a class whose copy or destruction runs the program's code

    def declaration(self) -> str:
        """The parameter as a declaration: its type and its name."""
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class Function:
    name: str
    spaces: frozenset[str]  # written execution spaces: "global", "device", "host" (none: host)
    result: str
    parameters: tuple[Parameter, ...]
    template: bool
    body: Span | None  # `{` ... `}` where it is defined here
    at_file_scope: bool  # (not a member of a class)
    span: Span
    # a kernel's body, as statements (kernel_statements.py); None for other functions
    statements: kernel_statements.Statement | None = None
    calls: frozenset[str] = frozenset()  # the names of the functions its body calls
    name_at: int = -1  # the offset of its name
    global_at: tuple[Span, ...] = ()  # where `__global__` is written before its name
    # a kernel's accesses that its code proves (proven_accesses.py), or None
    proven: proven_accesses.ProvenKernel | None = None

    @property
    def kernel(self) -> bool:
        return "global" in self.spaces

    @property
    def defined(self) -> bool:
        return self.body is not None

    @property
    def device_code(self) -> bool:
        """Its body runs on the device only (it is __global__ or __device__, not also __host__)."""
        return bool(self.spaces & {"global", "device"}) and "host" not in self.spaces


@dataclass(frozen=True)
class Call:
    """A call of a function declared at file scope (`clock()`, `cudaLaunchKernel(...)`)."""

    function: str
    span: Span
    arguments: tuple[Span, ...]
    # per argument: where it is an explicit cast to `void*` (`(void*)k`), the expression cast
    uncast: tuple[Span | None, ...] = ()


@dataclass(frozen=True)
class Variable:
    name: str
    space: str  # "shared", "constant", "device" or "managed"
    type: str
    extern: bool
    at_file_scope: bool
    initialized: bool
    valid: bool  # Clang read the declaration without an error (else `type` may be a guess)
    span: Span  # the declaration, from its first token to the end of its declarator
    name_span: Span  # the declarator's name
    statement: Span | None  # in a function: the declaration statement, to its `;` (else None)
    # The class, union or enum that the declaration itself defines (`__shared__ union U {...} u;`)
    type_definition: Span | None = None


@dataclass(frozen=True)
class Token:
    spelling: str
    span: Span


@dataclass(frozen=True)
class MacroLaunch:
    """A launch written in a macro's body or argument, read from the tokens there (the AST places
    all of it at the macro's name): its kernel expression starts at `kernel_start`, `<<<` is at
    `opening` (as written: `<< <` too), `>>>` starts at `closing_start` and the `(` of its
    arguments is at `paren`; `problem`: why it is no launch (then the offsets after it are -1)."""

    kernel_start: int
    opening: Span
    closing_start: int = -1
    paren: int = -1
    problem: str = ""
    kernel_text: str = ""  # as Launch's
    kernel_name: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class Reference:
    """A use of a variable that has a CUDA memory space and is declared at file scope."""

    variable: Span  # the variable's name where it is declared
    span: Span  # the use (in a macro's expansion: where the macro is used)


@dataclass(frozen=True)
class Launch:
    """`kernel<<<config>>>(arguments)`: the kernel expression, the configuration between `<<<`
    and `>>>`, and the arguments between the parentheses (each span in the file where it is
    written; a launch inside a macro's expansion has `in_macro`)."""

    kernel: Span
    kernel_text: str  # its tokens, spaced only between words: "ns::k<long long,4>"
    kernel_function: str | None  # the kernel's name when the expression names one
    kernel_name: tuple[str, str, str] | None  # where it is written as a name: name_parts' answer
    opening: Span  # `<<<`
    closing: Span  # `>>>`
    arguments: Span  # `(` ... `)`
    in_macro: bool
    argument_spans: tuple[Span, ...]  # each argument as written
    reference_parameters: tuple[bool, ...]  # per parameter of the kernel's type: a reference?
    # The arguments written as a null pointer constant (`NULL`, `0`) for a pointer parameter: a
    # launch that passes them on as values would make them integers.
    null_pointers: tuple[Span, ...] = ()


@dataclass(frozen=True)
class Include:
    """An #include: the header's name as written (`name`: its span, with the quotes or the angle
    brackets; a macro's name where a macro gives it) and the file the preprocessor found."""

    name: Span
    spelled: str  # "kernels.cuh", "thrust/sort.h"
    quoted: bool
    included: str  # its real path


@dataclass(frozen=True)
class Diagnostic:
    """An error Clang found (see the limitations: not all are the program's)."""

    file: str
    line: int
    message: str


@dataclass(frozen=True)
class Shift:
    """A shift by an amount that is not a literal (`a << n`, `x >>= n`): its operands' spans and its
    operator's (`<<`, `>>`, `<<=` or `>>=`)."""

    left: Span
    operator: Span
    right: Span
    spelling: str


@dataclass
class Source:
    path: Path
    functions: list[Function] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    assembly: list[Span] = field(default_factory=list)  # `asm(...)` statements
    asserts: list[Span] = field(default_factory=list)  # `assert`, used or in a macro's body
    # the bodies of the macros that declare `__shared__` variables, as tokens
    shared_in_macros: list[tuple[Token, ...]] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    # `<<<` in the body of a macro that the file defines (the launch is made where it is used),
    # or in a macro's argument (`CHECK((k<<<g, b>>>(x)))`): Clang's ranges there are the macro's
    macro_launches: list[MacroLaunch] = field(default_factory=list)
    # `<<<` in the file's code that is no launch Clang could read (an undeclared kernel, say)
    unread_launches: list[Span] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    shifts: list[Shift] = field(default_factory=list)

    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.kernel]


ATTRIBUTE_SPACES = {
    "CUDAGLOBAL_ATTR": "global",
    "CUDADEVICE_ATTR": "device",
    "CUDAHOST_ATTR": "host",
}
VARIABLE_SPACES = {"CUDASHARED_ATTR": "shared", "CUDACONSTANT_ATTR": "constant", "CUDADEVICE_ATTR": "device"}
CONFIGURE_CALL = "__cudaPushCallConfiguration"
FILE_SCOPES = ("TRANSLATION_UNIT", "NAMESPACE", "LINKAGE_SPEC")


FRONT_END = "cudalab/emu/front_end.h"  # the emu's CUDA declarations, before the file's own code


def arguments(
    path: Path, include_dirs: Sequence[Path] = (), defines: Sequence[str] = (), std: str = "c++20"
) -> list[str]:
    """Clang's command line for a file: CUDA, host side, the emu's headers, the program's flags
    (without FRONT_END, which parse() adds: precompiled.py)."""
    return language(defines, std, [path.parent, *include_dirs])


def language(defines: Sequence[str], std: str, folders: Sequence[Path] = ()) -> list[str]:
    """The options of a parse, with the program's include `folders` first."""
    args = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", f"-std={std}"]
    args += ["-Wno-unknown-cuda-version", "-ferror-limit=0"]
    args += [f"-D{d}" for d in defines]
    args += [f"-I{d}" for d in [*folders, EMU_INCLUDE, WORKBOOK_INCLUDE]]
    system = compiler_include()
    return args + (["-isystem", system] if system else [])


SINGLE_FILE_PARSE = 0x400  # CXTranslationUnit_SingleFileParse: the file alone, its includes skipped
SPLIT_CHEVRONS = re.compile(rb"<<?\s+<|>>?\s+>")  # (only says whether to look at the tokens)


def joined_chevrons(ci: ModuleType, path: Path, data: bytes) -> tuple[bytes, dict[int, int]] | None:
    """The file with a launch's `<< <`, `< < <`, `>> >`... (spellings nvcc accepts) joined into
    `<<<` and `>>>`, the spaces and line breaks kept beside them so that every other token keeps
    its offset, and where each joined run of chevrons was written (from its first byte to its end,
    and back); None if there is none. Clang's lexer finds them, so strings, comments and raw strings
    are never touched; a split `>>>` counts only where a launch is open (`vector<vector<int>> >`)."""
    if not SPLIT_CHEVRONS.search(data):
        return None
    tu = ci.Index.create().parse(
        str(path), args=["-x", "cuda"], unsaved_files=[(str(path), data)], options=SINGLE_FILE_PARSE
    )
    tokens = [
        (t.spelling, t.extent.start.offset, t.extent.end.offset)
        for t in tu.get_tokens(extent=tu.cursor.extent)
        if t.kind.name == "PUNCTUATION"
    ]
    edits: list[tuple[int, int]] = []
    open_launches, k = 0, 0
    while k < len(tokens):
        run, j = tokens[k][0], k + 1
        while len(run) < 3 and j < len(tokens) and set(tokens[j][0]) == set(run) and run[0] in "<>":
            if data[tokens[j - 1][2] : tokens[j][1]].strip():
                break
            run, j = run + tokens[j][0], j + 1
        if run == "<<<" or (run == ">>>" and open_launches > 0):
            open_launches += 1 if run == "<<<" else -1
            if j - k > 1:
                edits.append((tokens[k][1], tokens[j - 1][2]))
            k = j
        else:
            k += 1
    if not edits:
        return None
    out, done, runs = bytearray(), 0, {}
    for start, end in edits:
        runs[start], runs[end] = end, start
        written = data[start:end]
        spaces = bytes(c for c in written if c not in b"<>")
        # `<<<` where the first chevron was, `>>>` where the last was: the kernel before and the
        # arguments after keep their offsets.
        joined = b"<<<" + spaces if written.startswith(b"<") else spaces + b">>>"
        out += data[done:start] + joined
        done = end
    return bytes(out + data[done:]), runs


def translation_unit(
    ci: ModuleType,
    path: Path,
    args: list[str],
    unsaved: list[tuple[str, bytes]],
    options_only: list[str],
    defines: Sequence[str],
) -> object:
    """Clang's parse of the file with FRONT_END first: precompiled (for the options without the
    file's folders and definitions, `options_only`, and the `defines` it mentions) where libclang
    can use it, as text otherwise (precompiled.py)."""
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    pch = precompiled.header(ci, options_only, defines, FRONT_END)
    if pch is not None:
        try:
            with precompiled.quiet():
                return ci.Index.create().parse(
                    str(path), args=[*args, "-include-pch", str(pch)], unsaved_files=unsaved, options=options
                )
        except ci.TranslationUnitLoadError:
            pass  # (libclang crashed on a header after it)
    return ci.Index.create().parse(
        str(path), args=[*args, "-include", FRONT_END], unsaved_files=unsaved, options=options
    )


def parse(
    path: Path,
    include_dirs: Sequence[Path] = (),
    defines: Sequence[str] = (),
    std: str = "c++20",
    headers: Sequence[Path] = (),
    data: bytes | None = None,
    local_headers: bool = False,
) -> Source:
    """The records of a CUDA file: its functions, variables and launches, and those of `headers`
    (files it includes that the caller wants too), or with `local_headers` of every file it
    includes that is neither the system's nor the emu's. `data`: the file's text, where it is not
    (yet) what the file on disk holds."""
    ci = cindex()
    path = path.resolve()
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise FrontEndError(f"{path}: error: cannot read: {e.strerror}") from None
    joined, runs = joined_chevrons(ci, path, data) or (data, {})
    unsaved = [(str(path), joined)]
    args = arguments(path, include_dirs, defines, std)
    try:
        tu = translation_unit(ci, path, args, unsaved, language((), std), defines)
    except ci.TranslationUnitLoadError as e:
        raise FrontEndError(f"{path}: error: Clang cannot parse it ({e})") from None
    source = Source(path)
    source.errors = [
        Diagnostic(file_name(d.location.file) if d.location.file else str(path), d.location.line, d.spelling)
        for d in tu.diagnostics
        if d.severity >= ci.Diagnostic.Error
    ]
    texts: dict[str, bytes] = {str(path): joined}
    wanted = {str(path), *(str(h.resolve()) for h in headers)}
    if local_headers:
        wanted |= {
            name for inclusion in tu.get_includes() if not system_or_emu(name := inclusion.include.name)
        }
    statement: Span | None = None  # the declaration statement the walk is in
    macro_uses: list[Span] = []
    for cursor in walk(tu.cursor, wanted):
        kind = kind_of(cursor)
        if kind == "DECL_STMT":
            statement = span(cursor)
        if kind in ("FUNCTION_DECL", "FUNCTION_TEMPLATE", "CXX_METHOD"):
            # (an explicit specialization, `template <> __global__ void k<int>()`, is a template's)
            template = kind == "FUNCTION_TEMPLATE" or cursor.get_num_template_arguments() > 0
            file = cursor.location.file.name
            if file not in texts:
                texts[file] = Path(file).read_bytes()
            source.functions.append(function(cursor, template, texts[file]))
        elif kind == "VAR_DECL":
            found = variable(cursor, statement)
            if found is not None:
                source.variables.append(found)
        elif kind == "DECL_REF_EXPR":
            found_reference = reference(cursor)
            if found_reference is not None:
                source.references.append(found_reference)
        elif kind == "CALL_EXPR":
            file = cursor.location.file.name
            if file not in texts:
                texts[file] = Path(file).read_bytes()
            found = launch(cursor, texts[file], runs if file == str(path) else {})
            if found is not None:
                source.launches.append(found)
            elif (found_call := call(cursor)) is not None:
                source.calls.append(found_call)
        elif kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            if (found_shift := shift(cursor, texts)) is not None:
                source.shifts.append(found_shift)
        elif kind == "ASM_STMT":
            source.assembly.append(span(cursor))
        elif kind == "INCLUSION_DIRECTIVE":
            found_include = include(cursor)
            if found_include is not None:
                source.includes.append(found_include)
        elif kind == "MACRO_INSTANTIATION":
            if cursor.spelling == "assert":
                source.asserts.append(location_span(cursor))
            macro_uses.append(span(cursor))
        elif kind == "MACRO_DEFINITION":
            definition = tokens(tu, cursor.extent)
            body = macro_body(definition)
            source.macro_launches += [macro_launch(body, k, runs) for k in chevron_indices(body)]
            # (after the macro's name: a macro named assert is not a use of it)
            source.asserts += [t.span for t in definition[1:] if t.spelling == "assert"]
            if any(t.spelling == "__shared__" for t in definition[1:]):
                source.shared_in_macros.append(definition[1:])
    source.unread_launches = unread_launches(ci, tu, path, source, runs, macro_uses)
    return source


SHIFT_OPERATORS = (b"<<=", b">>=", b"<<", b">>")


def shift(cursor: object, texts: dict[str, bytes]) -> Shift | None:
    """A built-in shift whose amount is not an integer literal, written in the file as Clang reads
    it (not in a macro's expansion), or None; `texts` holds the files read so far, by name."""
    operands = list(cursor.get_children())  # type: ignore[attr-defined]
    if len(operands) != 2:
        return None
    left, right = span(operands[0]), span(operands[1])
    if left.file != right.file:
        return None
    if left.file not in texts:
        texts[left.file] = Path(left.file).read_bytes()
    text = texts[left.file]
    if not left.end <= right.start <= len(text):
        return None
    between = text[left.end : right.start]
    spelling = next((o for o in SHIFT_OPERATORS if between.strip() == o), None)
    if spelling is None:
        return None
    amount = operands[1]
    while amount.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR") and len(list(amount.get_children())) == 1:
        amount = next(amount.get_children())
    if amount.kind.name == "INTEGER_LITERAL":
        return None
    start = left.end + between.index(spelling)
    operator = Span(left.file, left.line, start, start + len(spelling))
    return Shift(left, operator, right, spelling.decode())


# The build's copy of CUB with the emu's files (common/emu/cub_mirror.py): the emu's headers too.
EMU_CUB_FOLDER = "cudalab-emu-cub"


def system_or_emu(file: str) -> bool:
    """Whether a file is the system's (libstdc++ is found as `/../lib/gcc/...`) or the emu's."""
    path = Path(file).resolve()
    return path.is_relative_to("/usr") or path.is_relative_to(EMU_INCLUDE) or EMU_CUB_FOLDER in path.parts


def widened(span: Span, runs: dict[int, int]) -> Span:
    """A `<<<` token's span over the chevrons as written (`<< <`)."""
    return Span(span.file, span.line, span.start, runs.get(span.start, span.end))


def token_span(token: object) -> Span:
    extent = token.extent  # type: ignore[attr-defined]
    return Span(file_name(extent.start.file), extent.start.line, extent.start.offset, extent.end.offset)


def tokens(tu: object, extent: object) -> tuple[Token, ...]:
    """The tokens in a range of a file, but its comments (a literal that is not UTF-8 is spelled
    "": it is no punctuation or name either)."""
    found = []
    for t in tu.get_tokens(extent=extent):  # type: ignore[attr-defined]
        if t.kind.name == "COMMENT":
            continue
        try:
            spelling = t.spelling
        except UnicodeDecodeError:
            spelling = ""
        found.append(Token(spelling, token_span(t)))
    return tuple(found)


def macro_body(definition: Sequence[Token]) -> Sequence[Token]:
    """A macro definition's tokens after its name and its parameters."""
    if (
        len(definition) > 1
        and definition[1].spelling == "("
        and definition[1].span.start == definition[0].span.end
    ):
        return definition[next(k for k, t in enumerate(definition) if t.spelling == ")") + 1 :]
    return definition[1:]


def cursor_tokens(cursor: object) -> tuple[Token, ...]:
    """The tokens of an expression where it is written."""
    return tokens(cursor.translation_unit, cursor.extent)  # type: ignore[attr-defined]


def spelled(found: Sequence[Token]) -> str:
    """Tokens as one text, spaced only between two words (`long long`)."""
    out = ""
    for t in found:
        word = t.spelling[:1].isalnum() or t.spelling[:1] == "_"
        if out and word and (out[-1].isalnum() or out[-1] == "_"):
            out += " "
        out += t.spelling
    return out


def name_parts(found: Sequence[Token]) -> tuple[str, str, str] | None:
    """Where tokens spell a function's name (`k`, `::k`, `ns::k`, `k<T, 4>`: template arguments
    last), its qualifier, its identifier and its template arguments ("ns::", "k", "<T,4>"); None
    for an expression (`table[i]`, `(*fp)`, `get()`)."""
    k = 1 if found and found[0].spelling == "::" else 0
    while k < len(found) and found[k].spelling.isidentifier():
        k += 1
        if k < len(found) and found[k].spelling == "::":
            k += 1
        else:
            break
    if k == 0 or not found[k - 1].spelling.isidentifier():
        return None
    if k < len(found):
        arguments_last = found[-1].spelling in (">", ">>") and opener(found, len(found) - 1) == k
        if found[k].spelling != "<" or not arguments_last:
            return None
    return spelled(found[: k - 1]), found[k - 1].spelling, spelled(found[k:])


def chevron_indices(found: Sequence[Token]) -> list[int]:
    """Where the `<<<` tokens are among `found`."""
    return [k for k, t in enumerate(found) if t.spelling == "<<<"]


CLOSERS = {")": "(", "]": "[", ">": "<", ">>": "<"}
# Words before an expression in parentheses that do not call it.
STATEMENT_WORDS = {"if", "while", "for", "switch", "return", "else", "do", "case", "sizeof", "throw"}


def opener(found: Sequence[Token], j: int) -> int:
    """The token that opens the bracket that token j closes (`)`, `]`, or template arguments'
    `>`, `>>`), or 0 where none does."""
    close, depth = found[j].spelling, 0
    for k in range(j, -1, -1):
        spelling = found[k].spelling
        if spelling == CLOSERS[close]:
            depth -= 1
        elif spelling in CLOSERS and CLOSERS[spelling] == CLOSERS[close]:
            depth += len(spelling)
        if depth <= 0:
            return k
    return 0


def expression_start(found: Sequence[Token], k: int) -> int:
    """The first token of the kernel expression that ends before token k (`<<<`): a name (`ns::k`,
    `::k`, `k<T, 4>`), a member (`table.kernel`), a call or subscript of one (`kernels[i]`), or an
    expression in parentheses (`(*fp)`); not a statement's head before it (`if (ok)`)."""
    start, j = k, k - 1
    while j >= 0:
        spelling = found[j].spelling
        if spelling in CLOSERS:
            opening = opener(found, j)
            before = found[opening - 1].spelling if opening > 0 else ""
            if spelling == ")" and before in STATEMENT_WORDS:
                return start
            start = opening
            called = (before.isidentifier() and before not in STATEMENT_WORDS) or before in CLOSERS
            if spelling in (")", "]") and not called:
                return start  # (an expression in parentheses)
            j = opening - 1
        elif spelling.isidentifier() and spelling not in STATEMENT_WORDS:
            start = j
            if j == 0 or found[j - 1].spelling not in ("::", ".", "->"):
                return start
            start, j = j - 1, j - 2  # (`::k`: from the `::`)
        else:
            return start
    return start


def macro_launch(found: Sequence[Token], k: int, runs: dict[int, int]) -> MacroLaunch:
    """The launch whose `<<<` is token k of `found` (a macro's body, or the tokens of a file)."""
    first = expression_start(found, k)
    start = found[first].span.start
    opening = widened(found[k].span, runs)
    kernel = {"kernel_text": spelled(found[first:k]), "kernel_name": name_parts(found[first:k])}
    depth = 0
    for j in range(k + 1, len(found)):
        spelling = found[j].spelling
        if spelling in ("(", "[", "{"):
            depth += 1
        elif spelling in (")", "]", "}"):
            depth -= 1
        elif spelling == ">>>" and depth == 0:
            closing = runs.get(found[j].span.end, found[j].span.start)  # (`>> >` as written)
            if j + 1 < len(found) and found[j + 1].spelling == "(":
                return MacroLaunch(start, opening, closing, found[j + 1].span.start, **kernel)
            return MacroLaunch(start, opening, problem="expected '(' and the kernel's arguments after '>>>'")
        if depth < 0 or spelling == ";":
            break
    return MacroLaunch(start, opening, problem="'<<<' without a matching '>>>'")


def skipped_ranges(ci: ModuleType, tu: object, path: Path) -> list[tuple[int, int]]:
    """The byte ranges of the file that the preprocessor skipped (`#if 0` ... `#endif`)."""
    lib = ci.conf.lib
    file = ci.File.from_name(tu, str(path))
    found = lib.clang_getSkippedRanges(tu.obj, file.obj)  # type: ignore[attr-defined]
    try:
        ranges = ctypes.cast(found.contents.ranges, ctypes.POINTER(ci.SourceRange))
        return [(ranges[i].start.offset, ranges[i].end.offset) for i in range(found.contents.count)]
    finally:
        lib.clang_disposeSourceRangeList(found)


def unread_launches(
    ci: ModuleType, tu: object, path: Path, source: Source, runs: dict[int, int], macro_uses: list[Span]
) -> list[Span]:
    """`<<<` in the file's code (not skipped by the preprocessor, not in a macro's body) where
    Clang read no launch: it could not make sense of the kernel or its arguments. One in the
    arguments of a macro whose use holds a launch Clang read goes to `source.macro_launches`."""
    read = {launch.opening.start for launch in source.launches if not launch.in_macro}
    read |= {m.opening.start for m in source.macro_launches}
    skipped = skipped_ranges(ci, tu, path)
    # (a launch in a macro's use is placed at the macro's name: the use holds its `<<<`)
    at = {launch.kernel.start for launch in source.launches if launch.in_macro}
    uses = [(use.start, use.end) for use in macro_uses if use.start in at]
    unread = []
    found = tokens(tu, tu.cursor.extent)  # type: ignore[attr-defined]
    for k in chevron_indices(found):
        span = found[k].span
        if span.file != str(path) or span.start in read or any(a <= span.start < b for a, b in skipped):
            continue
        if any(a <= span.start < b for a, b in uses):
            source.macro_launches.append(macro_launch(found, k, runs))
        else:
            unread.append(span)
    return unread


def walk(cursor: object, files: set[str], top: bool = True) -> Iterator[object]:
    """The cursors under `cursor` that are written in `files` (a macro's expansion: where it is
    used), depth first; below the top, also those under a cursor written nowhere (the implicit
    conversion of a lambda to a function pointer)."""
    for child in cursor.get_children():  # type: ignore[attr-defined]
        where = child.location.file
        if where is None and not top:
            yield from walk(child, files, False)
        elif where is not None and where.name in files:
            yield child
            yield from walk(child, files, False)


def file_name(file: object) -> str:
    """A file's path as the records give it: absolute, without `..` or links (a header found
    through `-Isrc/../inc` is the same file as `inc/x.h`)."""
    return real_path(file.name)  # type: ignore[attr-defined]


@functools.cache
def real_path(name: str) -> str:
    return os.path.realpath(name)


def span(cursor: object) -> Span:
    extent = cursor.extent  # type: ignore[attr-defined]
    file = file_name(extent.start.file) if extent.start.file else ""
    return Span(file, extent.start.line, extent.start.offset, extent.end.offset)


def copies_run_code(t: object) -> bool:
    """Whether copying or destroying a value of type `t` runs code the program wrote: a class with a
    copy constructor or a destructor of its own (not `= default`), or with a base or member that
    has one (an array of such: its elements)."""
    t = t.get_canonical()  # type: ignore[attr-defined]
    if t.kind.name == "CONSTANTARRAY":
        return copies_run_code(t.element_type)
    if t.kind.name != "RECORD":
        return False
    for c in t.get_declaration().get_children():
        kind = kind_of(c)
        if kind == "CONSTRUCTOR" and c.is_copy_constructor() and not c.is_default_method():
            return True
        if kind == "DESTRUCTOR" and not c.is_default_method():
            return True
        if kind in ("CXX_BASE_SPECIFIER", "FIELD_DECL") and copies_run_code(c.type):
            return True
    return False


def function(cursor: object, template: bool, text: bytes) -> Function:
    children = list(cursor.get_children())  # type: ignore[attr-defined]
    spaces = frozenset(ATTRIBUTE_SPACES[k] for c in children if (k := kind_of(c)) in ATTRIBUTE_SPACES)
    parameters = tuple(
        Parameter(
            p.spelling,
            p.type.spelling,
            p.type.kind.name in ("LVALUEREFERENCE", "RVALUEREFERENCE"),
            any(kind_of(c) not in ("TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF") for c in p.get_children()),
            span(p),
            p.location.offset if p.spelling else -1,
            copies_run_code(p.type),
        )
        for p in children
        if kind_of(p) == "PARM_DECL"
    )
    body_cursor = next((c for c in children if kind_of(c) == "COMPOUND_STMT"), None)
    body = span(body_cursor) if body_cursor is not None else None
    statements = None
    calls: frozenset[str] = frozenset()
    proven = None
    if body_cursor is not None and "global" in spaces:
        tokens = kernel_statements.Tokens(body_cursor)
        moves = stretch_accesses.moved_pointers(body_cursor, tokens)
        accesses = functools.partial(stretch_accesses.stretch_accesses, moves=moves)
        statements = kernel_statements.statement_tree(body_cursor, text, tokens, accesses)
        calls = statements.calls
        if not template:
            proven = proven_accesses.proven_kernel(cursor, body_cursor, lambda f: not system_or_emu(f))
    elif body_cursor is not None:
        calls = kernel_statements.called(body_cursor)
    result = cursor.result_type.spelling  # type: ignore[attr-defined]
    at_file_scope = kind_of(cursor.semantic_parent) in FILE_SCOPES  # type: ignore[attr-defined]
    name = cursor.spelling  # type: ignore[attr-defined]
    return Function(
        name,
        spaces,
        result,
        parameters,
        template,
        body,
        at_file_scope,
        span(cursor),
        statements=statements,
        calls=calls,
        name_at=location_span(cursor).start,
        global_at=tuple(span(c) for c in children if kind_of(c) == "CUDAGLOBAL_ATTR"),
        proven=proven,
    )


def call(cursor: object) -> Call | None:
    """A call of a function declared at file scope, else None (a method, a function pointer...)."""
    target = cursor.referenced  # type: ignore[attr-defined]
    if target is None or kind_of(target) != "FUNCTION_DECL":
        return None
    if kind_of(target.semantic_parent) not in FILE_SCOPES:
        return None
    given = list(cursor.get_arguments())  # type: ignore[attr-defined]
    return Call(
        target.spelling, span(cursor), tuple(span(a) for a in given), tuple(cast_to_void(a) for a in given)
    )


CASTS = ("CSTYLE_CAST_EXPR", "CXX_REINTERPRET_CAST_EXPR", "CXX_STATIC_CAST_EXPR")


def include(cursor: object) -> Include | None:
    """The record of an #include directive whose header the preprocessor found."""
    try:
        found = cursor.get_included_file()  # type: ignore[attr-defined]
    except AssertionError:  # (the bindings' File refuses the null of a header not found)
        return None
    written = list(cursor.get_tokens())[2:]  # type: ignore[attr-defined]  (after `#` `include`)
    if found is None or not written:
        return None
    first, last = token_span(written[0]), token_span(written[-1])
    name = Span(first.file, first.line, first.start, last.end)
    quoted = written[0].spelling.startswith('"')
    return Include(name, cursor.spelling, quoted, file_name(found))  # type: ignore[attr-defined]


def cast_to_void(expression: object) -> Span | None:
    """The expression that `(void*)e`, `reinterpret_cast<void*>(e)`... casts, else None."""
    while kind_of(expression) == "UNEXPOSED_EXPR" and len(inner := list(expression.get_children())) == 1:  # type: ignore[attr-defined]
        expression = inner[0]
    if kind_of(expression) not in CASTS:
        return None
    target = expression.type.get_canonical()  # type: ignore[attr-defined]
    if target.kind.name != "POINTER" or target.get_pointee().kind.name != "VOID":
        return None
    operand = list(expression.get_children())[-1]  # type: ignore[attr-defined]
    return span(operand)


def memory_space(children: Sequence[object]) -> str | None:
    """A variable's CUDA memory space, from its declaration's attributes (None: the host's)."""
    return next((VARIABLE_SPACES[k] for c in children if (k := kind_of(c)) in VARIABLE_SPACES), None)


def variable(cursor: object, statement: Span | None) -> Variable | None:
    """A variable with a CUDA memory space; `statement`: the last declaration statement the walk
    entered (the variable's own when it lies inside it)."""
    children = list(cursor.get_children())  # type: ignore[attr-defined]
    space = memory_space(children)
    if space is None:
        return None
    # (written where: an `extern` declaration in a function belongs to the namespace around it)
    at_file_scope = kind_of(cursor.lexical_parent) in FILE_SCOPES  # type: ignore[attr-defined]
    extern = cursor.storage_class.name == "EXTERN"  # type: ignore[attr-defined]
    initialized = has_initializer(cursor)
    where, name = span(cursor), location_span(cursor)
    inside = statement is not None and statement.file == where.file and where.start in statement
    return Variable(
        cursor.spelling,  # type: ignore[attr-defined]
        space,
        cursor.type.spelling,  # type: ignore[attr-defined]
        extern,
        at_file_scope,
        initialized,
        not invalid_declaration(cursor),
        where,
        name,
        statement if inside and not at_file_scope else None,
        type_defined_in(cursor, statement if inside else where),
    )


def type_defined_in(cursor: object, declaration: Span | None) -> Span | None:
    """The definition of a variable's class, union or enum type where it lies in the variable's
    declaration (`struct S {...} s;`), else None."""
    declared = cursor.type.get_declaration()  # type: ignore[attr-defined]
    if declaration is None or kind_of(declared) == "NO_DECL_FOUND" or not declared.is_definition():
        return None
    defined = span(declared)
    inside = defined.file == declaration.file and declaration.start <= defined.start
    return defined if inside and defined.end <= declaration.end else None


def invalid_declaration(cursor: object) -> bool:
    return bool(cindex().conf.lib.clang_isInvalidDeclaration(cursor))


def has_initializer(cursor: object) -> bool:
    """Whether a variable's declaration gives it a value (`= 3`, `(3)`, `{3}`); a class's default
    construction, which Clang spells at the variable's name, is none."""
    lib = cindex().conf.lib
    found = lib.clang_Cursor_getVarDeclInitializer(cursor)
    if found == lib.clang_getNullCursor():
        return False
    name, value = location_span(cursor), span(found)
    return not (name.start <= value.start and value.end <= name.end)


def reference(cursor: object) -> Reference | None:
    """A use of a file-scope variable that has a CUDA memory space, else None."""
    target = cursor.referenced  # type: ignore[attr-defined]
    if target is None or kind_of(target) != "VAR_DECL":
        return None
    if kind_of(target.lexical_parent) not in FILE_SCOPES:
        return None
    if memory_space(list(target.get_children())) is None:
        return None
    return Reference(location_span(target), span(cursor))


def location_span(cursor: object) -> Span:
    """The token a cursor is named by (a declaration's name, a reference's first token)."""
    where = cursor.location  # type: ignore[attr-defined]
    file = file_name(where.file) if where.file else ""
    return Span(file, where.line, where.offset, where.offset + len(cursor.spelling))  # type: ignore[attr-defined]


SPACE_AND_COMMENTS = re.compile(rb"(?:\s|/\*.*?\*/|//[^\n]*\n)*", re.S)


def launch(cursor: object, text: bytes, runs: dict[int, int]) -> Launch | None:
    """The launch that a call expression is, if it is a kernel call (its second child is the call
    that passes the configuration). `runs`: where chevrons written apart were joined."""
    children = list(cursor.get_children())  # type: ignore[attr-defined]
    if len(children) < 2 or kind_of(children[1]) != "CALL_EXPR" or children[1].spelling != CONFIGURE_CALL:
        return None
    call, callee, config = span(cursor), span(children[0]), span(children[1])
    # The configuration's call runs from `<<<` to `>>>` (its last token); in a macro's expansion
    # every offset is the macro's name.
    closing = config.end - 3
    in_macro = text[config.start : config.start + 3] != b"<<<" or text[closing : config.end] != b">>>"
    # The arguments' `(` may stand apart from the `>>>` (spaces, a line break, a comment).
    paren = SPACE_AND_COMMENTS.match(text, config.end).end() if not in_macro else config.end
    arguments = Span(call.file, call.line, paren, call.end)
    kernel = Span(callee.file, callee.line, callee.start, config.start)
    written = cursor_tokens(children[0])
    named = referenced_function(children[0])
    return Launch(
        kernel,
        spelled(written),
        named,
        name_parts(written),
        Span(call.file, config.line, config.start, runs.get(config.start, config.start + 3)),
        Span(call.file, config.line, runs.get(config.end, closing), config.end),
        arguments,
        in_macro,
        tuple(span(c) for c in children[2:]),
        reference_parameters(children[0].type),
        null_pointers(children[0].type, children[2:], text),
    )


def parameter_kinds(kernel_type: object) -> tuple[str, ...]:
    """The kind of each parameter of a kernel's type (a function, or a pointer to one)."""
    t = kernel_type
    if t.kind.name == "POINTER":  # type: ignore[attr-defined]
        t = t.get_pointee()  # type: ignore[attr-defined]
    t = t.get_canonical()  # type: ignore[attr-defined]
    if t.kind.name != "FUNCTIONPROTO":
        return ()
    return tuple(a.get_canonical().kind.name for a in t.argument_types())


def reference_parameters(kernel_type: object) -> tuple[bool, ...]:
    """For each parameter of a kernel's type: a reference?"""
    return tuple(k in ("LVALUEREFERENCE", "RVALUEREFERENCE") for k in parameter_kinds(kernel_type))


NULL_POINTER_CONSTANTS = ("NULL", "__null", "0", "0L", "0l")


def null_pointers(kernel_type: object, arguments: Sequence[object], text: bytes) -> tuple[Span, ...]:
    """The arguments written as a null pointer constant (`text`: the file's) that a pointer
    parameter takes."""
    spans = [span(a) for a in arguments]
    written = [text[s.start : s.end].decode(errors="replace").strip() for s in spans]
    return tuple(
        s
        for s, kind, as_written in zip(spans, parameter_kinds(kernel_type), written, strict=False)
        if kind == "POINTER" and as_written in NULL_POINTER_CONSTANTS
    )


def referenced_function(cursor: object) -> str | None:
    """The function that a launch's kernel expression names (`k`, `ns::k`, `k<T>`), else None."""
    target = cursor
    while kind_of(target) == "UNEXPOSED_EXPR":
        inner = list(target.get_children())  # type: ignore[attr-defined]
        if len(inner) != 1:
            return None
        target = inner[0]
    if kind_of(target) not in ("DECL_REF_EXPR", "OVERLOADED_DECL_REF"):
        return None
    declared = target.referenced  # type: ignore[attr-defined]
    if declared is None or kind_of(declared) not in ("FUNCTION_DECL", "FUNCTION_TEMPLATE"):
        return None
    return declared.spelling
