#!/usr/bin/env python3
"""Turns a CUDA C++ source file into plain C++ for the emu backend.

Two rewrites, everything else is left as written (the prelude's macros do the rest):

    kernel<<<grid, block[, shared[, stream]]>>>(args)
      -> ::cudalab::emu::Launch("kernel", __FILE__, __LINE__, grid, block[, ...])(
             [&](auto&... cudalab_args) {
               kernel(::cudalab::emu::kernel_argument(cudalab_args)...); }, args)

Clang reads the launches (the front end, common/tools/cudalab_tools/cuda_ast.py, with the program's
-I and -D): where each is written, byte for byte, so that a launch in `#if 0`, a string or a
comment is none, `<< <` is one, and a file in any encoding keeps its bytes; an argument for a
reference parameter of the kernel becomes `::cudalab::emu::by_reference(arg)`, so the kernel gets
the object itself, as on a GPU (launch.h). A launch Clang cannot read (an undeclared kernel, say)
is an error with its line and Clang's first error. A launch in a macro's body is rewritten in the
body, where Clang finds its `<<<`, and one in a macro's argument (`CHECK((k<<<g, b>>>(x)))`) where
it is written (Clang places it at the macro's name; its kernel and arguments are read around the
`<<<`, as in a body).

The same AST gives the other edits, each where Clang says it is written:

    __shared__ T name[N][M];   (inside a function; T[N][M]: the type as Clang reads it)
      -> static ::cudalab::emu::SharedSlot cudalab_slot_name{"name", __FILE__, __LINE__};
         auto& name = ::cudalab::emu::shared<T[N][M]>(cudalab_slot_name);

    extern __shared__ T name[];
      -> auto* const name = reinterpret_cast<::std::remove_extent_t<T[]>*>(
             ::cudalab::emu::builtins.dynamic_shared);

so that each block's copy lives in the block's checked shared space (see common/emu/src/checks.cpp).
At file scope the declaration becomes the slot (nothing, for an `extern` array) and each use of the
variable is the current block's copy, `(::cudalab::emu::shared<T[N]>(cudalab_slot_name))`; a use
inside a macro is an error naming its line. `assert` (used, or in a macro's body) becomes
`cudalab_assert` (a failed assert in a kernel fails the launch with cudaErrorAssert); `clock()` in
device code the device's clock; inline PTX in device code a call (a read of a special register, one
of a few one-register instructions) or an error naming its line.

A kernel whose own body waits only at barriers (`__syncthreads()`, its votes, the block group's
sync), warp-level calls (shuffles, votes, `__syncwarp()`, `__match_any_sync`, `__reduce_*_sync`,
and those of cooperative groups' tiles of a warp with their collectives, `cg::reduce` and the
scans) and in __device__ functions of the file that wait the same way, and calls nothing else that
could wait (no tile of several warps, no function of unknown body: the file's own functions, macros
and classes are read, and those of the local headers it includes; twin_functions() says exactly),
gets a twin whose threads are C++20 coroutines
(common/emu/include/cudalab/emu/coroutine_threads.h), after it, and so do those functions:

    #ifndef CUDALAB_EMU_CHECKED
    #line <the kernel's line> "<input>"
    ::cudalab::emu::ThreadTask cudalab_coroutine_kernel(params) { ...
        co_await ::cudalab::emu::syncthreads_arrival(); ...
        v += co_await ::cudalab::emu::shfl_down_arrival(mask, v, 16); ...
        v = co_await tile.shfl_down_arrival(v, 16); ... co_return; ... }
    #endif

    (a __device__ function's twin: ::cudalab::emu::DeviceTask<T> cudalab_coroutine_f(params),
    called as `co_await cudalab_coroutine_f(args)`)

and its launches after it pass both, `CUDALAB_KERNEL_THREADS((fibers), (coroutines))`: unchecked
code runs the twin (a barrier costs a return and a call instead of a switch of stacks), checked code
the kernel.
A `__shared__` declaration with an initializer, one of a type Clang could not read, or one that a
macro writes stays as written; the prelude makes it a thread_local (one block at a time per worker:
right, but unchecked).

The output starts with `#line 1 "<input>"` and keeps every line where it was, so compiler errors
and the backend's diagnostics name the student's file and line.

Local headers that the file includes with quotes and that hold CUDA constructs (a launch,
__shared__, assert) are translated too, into OUTPUT.cpp.headers/, and included from there; so are
the workbook's own (common/include, such as "cudalab/textbook_kernels.cuh").
A `(void*)` cast of the kernel given to cudaLaunchKernel or cudaLaunchCooperativeKernel is removed
(the emu's launch APIs need the kernel's type).

With --checker, the output is for the remote runner's checker (common/remote): a test program
that holds no device code. Every __global__ and __device__ function loses its body (it runs in the
runner), and a launch sends the kernel's name and arguments there:

    kernel<<<grid, block>>>(args)
      -> ::cudalab::remote::Launch<decltype(&kernel)>("kernel", __FILE__, __LINE__, grid, block)(args)

Usage: translate.py INPUT.cu OUTPUT.cpp [--checker] [--depfile OUTPUT.d] [-I DIR ...] [-D NAME[=VALUE] ...]

-I: a folder of the compiler's include path: Clang reads the file with it, and a header that the
file includes (with quotes or angle brackets) and that is not beside it is looked for there, only
to read what it defines (a function its twins may call where it cannot wait); such headers are
never translated. -D: a definition Clang reads the file with.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

# The front end: beside this file where installed, in common/tools in the workbook.
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE if (HERE / "cudalab_tools").is_dir() else HERE.parent / "tools"))
import thread_loops  # noqa: E402
from cudalab_tools import cuda_ast  # noqa: E402

PRELUDE = '#include "cudalab/emu/prelude.h"\n'
IDENT = re.compile(r"[A-Za-z0-9_:]")
NAME = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:]*(<.*>)?$", re.S)
CLOSE = re.compile(r">\s*>\s*>")
DEVICE_FUNCTION = re.compile(r"\b(__global__|__device__)\b")


class TranslateError(Exception):
    def __init__(self, src: str, pos: int, message: str) -> None:
        super().__init__(message)
        self.line = src.count("\n", 0, pos) + 1


def code_mask(src: str) -> list[bool]:
    """True for each character that is code, False inside comments and string/char literals."""
    mask = [True] * len(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            end = src.find("\n", i)
            end = n if end < 0 else end
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c in "\"'":
            end = i + 1
            while end < n and src[end] != c and src[end] != "\n":
                end += 2 if src[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            i += 1
            continue
        for k in range(i, end):
            mask[k] = False
        i = end
    return mask


def matching_open(src: str, mask: list[bool], k: int) -> int:
    """Position of the bracket that opens the one that closes at k (`)`, `]` or `>`)."""
    pairs = {")": "(", "]": "[", ">": "<"}
    close, depth = src[k], 0
    while k >= 0:
        if mask[k] and src[k] == close:
            depth += 1
        elif mask[k] and src[k] == pairs[close]:
            depth -= 1
            if depth == 0:
                return k
        k -= 1
    return -1


def matching_close(src: str, mask: list[bool], k: int) -> int:
    """Position of the `}` that closes the `{` at k (the end of src if none does)."""
    level = 0
    while k < len(src):
        if mask[k]:
            level += {"{": 1, "}": -1}.get(src[k], 0)
            if level == 0:
                break
        k += 1
    return k


def kernel_start(src: str, mask: list[bool], pos: int) -> int:
    """Start of the kernel expression that ends just before `<<<` at pos: name, `ns::name`,
    `name<T, 4>`, `kernels[i]`, `(*kernel)`, `table.kernel`."""
    k = pos - 1
    while k >= 0 and src[k].isspace():
        k -= 1
    while k >= 0 and src[k] in ")]":  # a call, a subscript or parentheses: take them whole
        k = matching_open(src, mask, k) - 1
        while k >= 0 and IDENT.match(src[k]):
            k -= 1
        while k >= 0 and src[k] in ".":
            k -= 1
            while k >= 0 and IDENT.match(src[k]):
                k -= 1
        if k < 0 or src[k] not in ")]":
            start = k + 1
            while start < pos and src[start].isspace():
                start += 1
            return start
    if k >= 0 and src[k] == ">":  # template arguments
        depth = 0
        while k >= 0:
            if mask[k] and src[k] == ">":
                depth += 1
            elif mask[k] and src[k] == "<":
                depth -= 1
                if depth == 0:
                    k -= 1
                    break
            k -= 1
        while k >= 0 and src[k].isspace():
            k -= 1
    end = k
    while k >= 0 and IDENT.match(src[k]):
        k -= 1
    if k == end:
        raise TranslateError(src, pos, "cannot find the kernel's name before '<<<'")
    return k + 1


def config_end(src: str, mask: list[bool], pos: int) -> tuple[int, int]:
    """Start and end of the `>>>` that closes the launch configuration whose `<<<` ends at pos."""
    depth = 0
    k = pos
    while k < len(src):
        if mask[k]:
            if src[k] in "([{":
                depth += 1
            elif src[k] in ")]}":
                depth -= 1
            elif depth == 0 and src[k] == ">" and (m := CLOSE.match(src, k)):
                return k, m.end()
            elif src[k] == ";":
                break
        k += 1
    raise TranslateError(src, pos, "'<<<' without a matching '>>>'")


class LaunchSite(NamedTuple):
    """Where a launch is written, in characters of the translated text: its kernel expression
    starts at `start`, `<<<` at `opening`, the configuration at `config`, `>>>` at `closing`, and
    `(` at `paren`; `references`: the arguments ([start, end)) that the kernel takes by reference."""

    start: int
    opening: int
    config: int
    closing: int
    paren: int
    references: tuple[tuple[int, int], ...] = ()


def launch_sites(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[LaunchSite]:
    """The launches that the front end read in `file` (whose text is `src`; `offsets`: its
    characters at the front end's byte offsets): each from the AST, and each in the body of a macro
    (the `<<<` is where the macro's text has it; the kernel expression and the arguments are the
    macro's tokens around it)."""
    unread = [span for span in source.unread_launches if span.file == file]
    if unread:
        errors = [e for e in source.errors if e.file == file] or source.errors
        reason = f" (Clang: line {errors[0].line}: {errors[0].message})" if errors else ""
        raise TranslateError(src, offsets(unread[0].start), f"cannot read this launch{reason}")
    sites = []
    for launch in source.launches:
        if launch.kernel.file != file or launch.in_macro:
            continue
        references = tuple(
            (offsets(arg.start), offsets(arg.end))
            for arg, reference in zip(launch.argument_spans, launch.reference_parameters, strict=False)
            if reference
        )
        sites.append(
            LaunchSite(
                offsets(launch.kernel.start),
                offsets(launch.opening.start),
                offsets(launch.opening.end),
                offsets(launch.closing.start),
                offsets(launch.arguments.start),
                references,
            )
        )
    mask = code_mask(src)
    for span in source.macro_launches:
        if span.file == file:
            opening, config = offsets(span.start), offsets(span.end)
            closing, close_end = config_end(src, mask, config)
            paren = close_end
            while paren < len(src) and (src[paren].isspace() or src.startswith("\\\n", paren)):
                paren += 1
            if paren >= len(src) or src[paren] != "(":
                raise TranslateError(src, closing, "expected '(' and the kernel's arguments after '>>>'")
            sites.append(LaunchSite(kernel_start(src, mask, opening), opening, config, closing, paren))
    return sorted(sites)


class CharacterOffsets:
    """The character of a text at each byte offset of the file it was read from (a byte-order
    mark and bytes that are not UTF-8 included)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0

    def __call__(self, offset: int) -> int:
        return len(self.raw[self.bom : offset].decode("utf-8", "surrogateescape"))


Edit = tuple[int, int, str]  # the characters [start, end) of a text, and what they become


def applied(src: str, edits: Iterable[Edit]) -> str:
    """The text with its edits made (none overlap)."""
    out: list[str] = []
    done = 0
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [src[done:start], text]
        done = end
    out.append(src[done:])
    return "".join(out)


def launch_edits(
    src: str, sites: list[LaunchSite], checker: bool = False, twins: dict[str, int] | None = None
) -> list[Edit]:
    """Every launch, as the module's docstring shows; a launch of a kernel in `twins` (its name:
    where its definition ends) after that definition passes the coroutine twin too."""
    edits: list[Edit] = []
    for site in sites:
        # The kernel as written, its spaces only where they separate words (`k<long long>`).
        written = " ".join(src[site.start : site.opening].replace("\\\n", " ").split())
        kernel = re.sub(r"\s*([^\w\s])\s*", r"\1", written)
        config = src[site.config : site.closing]
        args_follow = src[site.paren + 1 :].lstrip()[:1] != ")"
        quoted = kernel.replace("\\", "\\\\").replace('"', '\\"')
        if checker:
            if not NAME.match(kernel):
                message = "the checker launches a kernel by its name, not an expression"
                raise TranslateError(src, site.start, message)
            launch = f"::cudalab::remote::Launch<decltype(&{kernel})>"
            text = f'{launch}("{quoted}", __FILE__, __LINE__, {config})('
        else:
            call = "(::cudalab::emu::kernel_argument(cudalab_args)...)"
            if NAME.match(kernel):  # a name: overloads and templates resolve at the call
                body = f"[&](auto&... cudalab_args) {{ {kernel}{call}; }}"
                twin = twin_of(kernel, twins or {}, site.start)
                if twin is not None:
                    coroutines = f"[&](auto&... cudalab_args) {{ return {twin}{call}; }}"
                    body = f"CUDALAB_KERNEL_THREADS(({body}), ({coroutines}))"
            else:  # an expression: evaluated once, like the function pointer nvcc launches
                body = f"[cudalab_kernel = ({kernel})](auto&... cudalab_args) {{ cudalab_kernel{call}; }}"
            text = f'::cudalab::emu::Launch("{quoted}", __FILE__, __LINE__, {config})(' + body
            text += ", " if args_follow else ""
        text = text.replace("\\\n", " ").replace("\n", " ")  # (a macro's continued lines too)
        # Keep every line where it was (a macro's continued lines stay continued).
        newline = "\\\n" if "\\\n" in src[site.start : site.paren + 1] else "\n"
        text += newline * src.count("\n", site.start, site.paren + 1)
        edits.append((site.start, site.paren + 1, text))
        if not checker:
            for start, end in site.references:
                edits += [(start, start, "::cudalab::emu::by_reference("), (end, end, ")")]
    return edits


def device_code(source: cuda_ast.Source, file: str) -> list[range]:
    """The character ranges of `file`'s bodies of functions that run on the device only."""
    bodies = [f.body for f in source.functions if f.device_code]
    return [range(b.start, b.end) for b in bodies if b is not None and b.file == file]


def macro_shared_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """`extern __shared__ T name[];` in a macro's body (the CUDA samples' SharedMemory<T>): the same
    pointer as anywhere else, made from the body's tokens (the type is the macro's parameter)."""
    edits = []
    for body in source.shared_in_macros:
        words = [t.spelling for t in body]
        for first, word in enumerate(words):
            if word != "extern" or body[first].span.file != file or ";" not in words[first:]:
                continue
            last = words.index(";", first)
            statement = words[first + 1 : last]
            empty = [k for k in range(1, len(statement) - 1) if statement[k : k + 2] == ["[", "]"]]
            if "__shared__" not in statement or not empty:
                continue
            name, dims = statement[empty[0] - 1], "".join(statement[empty[0] + 2 :])
            kept, depth, aligning = [], 0, False  # the type: no __shared__, __align__(n), alignas(n)
            for w in statement[: empty[0] - 1]:
                if w in ("__align__", "alignas") or aligning:
                    depth += {"(": 1, ")": -1}.get(w, 0)
                    aligning = w in ("__align__", "alignas") or depth > 0
                elif w != "__shared__":
                    kept.append(w)
            element = f"::std::remove_extent_t<{' '.join(kept)}[]{dims}>"
            text = (
                f"auto* const {name} = reinterpret_cast<{element}*>(::cudalab::emu::builtins.dynamic_shared);"
            )
            start, end = offsets(body[first].span.start), offsets(body[last].span.end)
            edits.append((start, end, text + " \\\n" * src.count("\n", start, end)))
    return edits


def registration_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """After each kernel that is not a template and is defined once in the file, a registration
    by address (`KernelEntry`): cudaLaunchKernel with a void* and graph kernel nodes find it so.
    By its own parameter types, as Clang spells them: a header may declare an overload."""
    kernels = [
        (f, f.body)
        for f in source.functions
        if f.kernel and f.body and f.body.file == file and not f.template and f.at_file_scope
    ]
    defined = Counter(f.name for f, _ in kernels)
    edits = []
    for f, body in kernels:
        end = offsets(body.end)
        if defined[f.name] != 1 or src[end - 1 : end] != "}":
            continue  # (an overload, or a kernel that a macro writes)
        kernel = f"static_cast<void (*)({', '.join(p.type for p in f.parameters)})>({f.name})"
        entry = f" static const ::cudalab::emu::KernelEntry cudalab_kernel_entry_{f.name}{{{kernel}}};"
        edits.append((end, end, entry))
    return edits


LAUNCH_FUNCTIONS = ("cudaLaunchKernel", "cudaLaunchCooperativeKernel")


def void_cast_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """cudaLaunchCooperativeKernel((void *)kernel, ...) -> (kernel, ...): the emu's launch APIs
    take the kernel with its type, to know its parameters."""
    edits = []
    for c in source.calls:
        if c.function in LAUNCH_FUNCTIONS and c.span.file == file and c.uncast and c.uncast[0] is not None:
            kernel, operand = c.arguments[0], c.uncast[0]
            uncast = src[offsets(operand.start) : offsets(operand.end)]
            edits.append((offsets(kernel.start), offsets(kernel.end), uncast))
    return edits


def assert_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """assert(...) -> cudalab_assert(...): a failed assert in a kernel fails its launch."""
    edits = []
    for use in source.asserts:
        start, end = offsets(use.start), offsets(use.end)
        if use.file == file and src[start:end] == "assert":
            edits.append((start, end, "cudalab_assert"))
    return edits


def clock_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """clock() in device code -> the device's clock (the C library's clock() counts the process's
    CPU time in microseconds, not the device's cycles)."""
    device = device_code(source, file)
    edits = []
    for c in source.calls:
        if c.function == "clock" and c.span.file == file and any(c.span.start in body for body in device):
            start, end = offsets(c.span.start), offsets(c.span.end)
            if src[start:end].startswith("clock"):  # (not a macro's expansion)
                edits.append((start, end, "::cudalab::emu::device_clock()"))
    return edits


def ptx_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """In device code, a read of a special register in inline PTX -> `x = ::cudalab::emu::ptx::<register>()`;
    any other inline assembly there is an error naming its line (the emu cannot run PTX)."""
    device = device_code(source, file)
    edits = []
    for asm in source.assembly:
        if asm.file != file or not any(asm.start in body for body in device):
            continue  # host code's assembly is the host compiler's
        start = offsets(asm.start)
        found = ptx_call(src, src.find("(", start))
        if found is None:
            raise TranslateError(
                src,
                start,
                "inline PTX assembly (asm) is not supported by the emu backend; only a read of a special "
                f"register ({', '.join('%' + r for r in SPECIAL_REGISTERS)}) with mov is, and "
                f"{', '.join(PTX_INSTRUCTIONS)} of one register",
            )
        edits.append((start, found[1], found[0]))
    return edits


def shared_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """Each `__shared__` variable of `file` (with no initializer) in the block's checked shared
    space: one of fixed size in a slot, an `extern` array at the start of the launch's dynamic
    shared memory (its type as Clang reads it). In a function, the declaration statement becomes
    the slots and a reference to each (a pointer for an `extern` array); at file scope the
    declaration becomes the slots (nothing for an `extern` array), and each use of the variable the
    current block's copy. A declaration written by a macro stays as written (the prelude's
    thread_local: right, since a worker runs one block at a time, but unchecked)."""

    def written(v: cuda_ast.Variable) -> bool:
        """Its name is where Clang says (not in a macro's expansion); in another file: on disk."""
        name = v.name_span
        if name.file == file:
            return src[offsets(name.start) : offsets(name.end)] == v.name
        return file_bytes(name.file)[name.start : name.end] == v.name.encode()

    def slot(v: cuda_ast.Variable) -> str:
        return f'cudalab_slot_{v.name}{{"{v.name}", __FILE__, __LINE__}}'

    def copy(v: cuda_ast.Variable) -> str:
        """The current block's copy: a reference (an array of dynamic size: a pointer)."""
        if v.extern:
            element = f"::std::remove_extent_t<{v.type}>"
            return f"reinterpret_cast<{element}*>(::cudalab::emu::builtins.dynamic_shared)"
        return f"::cudalab::emu::shared<{v.type}>(cudalab_slot_{v.name})"

    def local(v: cuda_ast.Variable) -> str:
        if v.extern:
            return f"auto* const {v.name} = {copy(v)};"
        return f"static ::cudalab::emu::SharedSlot {slot(v)}; auto& {v.name} = {copy(v)};"

    def lines(start: int, end: int) -> str:
        return "\n" * src.count("\n", start, end)

    shared = [v for v in source.variables if v.space == "shared"]
    readable = [
        v
        for v in shared
        if v.valid
        and not v.initialized
        and "(" not in v.type
        and written(v)
        and not (v.extern and not v.type.endswith("]"))
    ]
    declarations: dict[tuple[str, int], list[cuda_ast.Variable]] = {}
    for v in shared:
        where = v.statement or v.span
        declarations.setdefault((where.file, v.statement.start if v.statement else where.start), []).append(v)
    rewritten = [vs for vs in declarations.values() if all(v in readable for v in vs)]
    edits: list[Edit] = []
    for variables in rewritten:
        if variables[0].span.file != file:
            continue
        if variables[0].statement is not None:  # in a function: `static Slot s; auto& v = ...;`
            start, end = offsets(variables[0].statement.start), offsets(variables[0].statement.end)
            text = " ".join(local(v) for v in variables)
        else:  # at file scope: `static Slot s, t` (the `;` stays), and its uses are rewritten
            start, end = offsets(variables[0].span.start), offsets(max(v.span.end for v in variables))
            slots = [slot(v) for v in variables if not v.extern]
            text = "static ::cudalab::emu::SharedSlot " + ", ".join(slots) if slots else ""
        edits.append((start, end, text + lines(start, end)))
    shared_at_file_scope = {v.name_span: v for vs in rewritten for v in vs if v.statement is None}
    for use in source.references:
        v = shared_at_file_scope.get(use.variable)
        if v is None or use.span.file != file:
            continue
        start, end = offsets(use.span.start), offsets(use.span.end)
        if src[start:end] != v.name:
            message = f"the __shared__ variable '{v.name}' is used in a macro; declare it in the kernel"
            raise TranslateError(src, start, message)
        edits.append((start, end, f"({copy(v)})"))
    return edits


@functools.cache
def file_bytes(path: str) -> bytes:
    return Path(path).read_bytes()


# Each file's edits besides its launches, in no order (none overlap).
EDITS = (
    shared_edits,
    macro_shared_edits,
    assert_edits,
    clock_edits,
    ptx_edits,
    void_cast_edits,
    registration_edits,
)


def in_macro(src: str, pos: int) -> bool:
    """Is pos on a preprocessor line, or a line that continues one?"""
    start = src.rfind("\n", 0, pos) + 1
    while start > 1 and src[start - 2] == "\\":
        start = src.rfind("\n", 0, start - 1) + 1
    return src[start:pos].lstrip().startswith("#")


def function_bodies(src: str, mask: list[bool]) -> list[tuple[int, int, int]]:
    """(the __global__ or __device__ keyword, its function's `{`, its `}`) for every definition; a
    declaration or a __device__ variable (a `;` or `=` first) has none."""
    bodies: list[tuple[int, int, int]] = []
    for m in DEVICE_FUNCTION.finditer(src):
        if not mask[m.start()] or (bodies and m.start() < bodies[-1][2]):
            continue
        k, depth = m.end(), 0
        while k < len(src):
            if mask[k]:
                if src[k] == "(":
                    depth += 1
                elif src[k] == ")":
                    depth -= 1
                elif depth == 0 and src[k] in ";=":
                    break
                elif depth == 0 and src[k] == "{":
                    bodies.append((m.start(), k, matching_close(src, mask, k)))
                    break
            k += 1
    return bodies


SPECIAL_REGISTERS = (
    "laneid warpid lanemask_eq lanemask_lt lanemask_le lanemask_gt lanemask_ge clock clock64 globaltimer"
).split()
# asm [volatile]("mov.u32 %0, %%laneid;" : "=r"(x)): a read of one special register.
SPECIAL_REGISTER_READ = re.compile(
    r"""\(\s*"\s*mov\.[bsu](?:32|64)\s+%0\s*,\s*%%?(\w+)\s*;?\s*"\s*:\s*"=[rl]"\s*\(([^()]*)\)\s*\)"""
)


# asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(x)): an instruction of one operand, as a function.
PTX_INSTRUCTIONS = {"bfind.u32": "bfind", "popc.b32": "popc", "brev.b32": "brev", "clz.b32": "clz"}
INSTRUCTION = re.compile(
    r"""\(\s*"\s*([a-z]+\.[bsu]32)\s+%0\s*,\s*%1\s*;?\s*"\s*:\s*"=r"\s*\(([^()]*)\)\s*:\s*"r"\s*\(([^()]*)\)\s*\)"""
)


def ptx_call(src: str, at: int) -> tuple[str, int] | None:
    """The call that stands for the inline PTX whose operands start at `at` (the "("), and where
    they end; None for PTX the emu cannot run."""
    op = INSTRUCTION.match(src, at)
    if op is not None and op.group(1) in PTX_INSTRUCTIONS:
        target, operand = op.group(2).strip(), op.group(3).strip()
        return f"({target} = ::cudalab::emu::ptx::{PTX_INSTRUCTIONS[op.group(1)]}({operand}))", op.end()
    read = SPECIAL_REGISTER_READ.match(src, at)
    if read is not None and read.group(1) in SPECIAL_REGISTERS:
        return f"({read.group(2).strip()} = ::cudalab::emu::ptx::{read.group(1)}())", read.end()
    return None


# Kernels whose threads can run as coroutines (the module's docstring). The rules are conservative:
# a kernel that breaks one runs on fibers, as every kernel does in checked code.
WAITS = re.compile(
    r"\b(?:__syncthreads\w*|__syncwarp|__shfl\w*|__ballot\w*|__any\w*|__all\w*|"
    r"__match\w*|__reduce\w*|__nanosleep|cooperative_groups|cg|this_thread_block|this_grid|"
    r"tiled_partition|coalesced_threads|thread_block\w*|grid_group|memcpy_async|\w*pipeline\w*|"
    r"co_await|co_return|co_yield|goto|try|throw|asm|__asm__|struct|class|union|operator)\b"
)
# What a class's code may say that a kernel's may not (WAITS: a kernel's local class).
CLASS_WORDS = re.compile(r"\b(?:struct|class|union|operator)\b")
TWIN_PREFIX = "cudalab_coroutine_"  # a twin's name: this and the kernel's (coroutine_threads.h's too)
# The waits a twin can make (each `__X` or `__X_sync` awaits coroutine_threads.h's `X_arrival`).
TWIN_WAIT_NAME = (
    r"__syncthreads(?:_count|_and|_or)?|__syncwarp|__shfl(?:_down|_up|_xor)?_sync|"
    r"__(?:ballot|any|all|match_any|reduce_(?:add|min|max|and|or|xor))_sync"
)
TEMPLATE_ARGUMENTS = r"(?:<[^;{}()]*>\s*)?"
TWIN_WAIT = re.compile(rf"\b(?:{TWIN_WAIT_NAME})\s*{TEMPLATE_ARGUMENTS}\(")
# A call: a name, maybe qualified, maybe with template arguments, then `(`; and what precedes it.
CALL = re.compile(r"(\.|->)?\s*((?:::)?[A-Za-z_]\w*(?:\s*::\s*\w+)*)\s*(?:<[^;{}()]*>\s*)?\(")
LAMBDA = re.compile(r"\[[^\[\]]*\]\s*(?:\(|\{|mutable\b|->)")
RETURN_VALUE = re.compile(r"\breturn\b\s*[^;\s]")
# What a twin's body says instead: each wait is awaited (twin_rewrites() has the rest).
TWIN_REWRITE = rf"\b(?P<wait>{TWIN_WAIT_NAME})\b(?=\s*{TEMPLATE_ARGUMENTS}\()"

# The block's group of cooperative groups (`cg::thread_block cta = cg::this_thread_block();`, or a
# parameter of its type): its sync (`cta.sync()`, `cg::sync(cta)`) is the block's barrier, and its
# queries cannot wait.
GROUPS = r"\b(?:cg|cooperative_groups)\s*::\s*"
BLOCK_GROUP = re.compile(
    rf"(?:{GROUPS})?\b(?:thread_block|auto)\s*&?\s*\b(\w+)\s*=\s*(?:{GROUPS})?this_thread_block\s*\(\s*\)"
)
BLOCK_PARAMETER = re.compile(rf"(?:\bconst\s+)?(?:{GROUPS}|\b)thread_block\b\s*&?\s*(\w+)\s*(?=[,)])")
BLOCK_GROUP_QUERIES = "thread_rank|size|num_threads|group_index|thread_index|group_dim|dim_threads"
# A tile (`cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);`, `auto` for its type, the
# block's group as the parent, or a parameter of its type): each wait `tile.X(` is awaited as
# `co_await tile.X_arrival(`, its sync `cg::sync(tile)` too (a tile of a warp meets its lanes, one of
# several warps the block's barrier: cooperative_groups.h), and the collectives of a tile of a warp
# (`cg::reduce(tile, ...)`: its size a number up to 32) as `co_await cg::reduce_arrival(tile, ...)`;
# its queries and the operations' objects (`cg::plus<int>()`) cannot wait. A tile of several warps
# keeps fibers for its collectives (they exchange through the block).
TILE_SIZE = r"<\s*(?P<size>\w+)\s*>"
# (A `thread_group`, as `tiled_partition(parent, 16)` makes, is a tile whose size the translator
# does not know; its sync is the block's barrier or its lanes' meeting, as its parent was.)
TILE_TYPE = rf"(?:{GROUPS}|\b)(?:thread_block_tile\s*{TILE_SIZE}|(?P<group>thread_group)\b)"
PARENT = rf"(?:\w+|(?:{GROUPS})?this_thread_block\s*\(\s*\))"
TILE_DECLARATION = re.compile(
    rf"(?:(?:{GROUPS}|\b)(?:thread_block_tile\s*<\s*\w+\s*>|(?P<group>thread_group\b))|\bauto)\s+"
    rf"(?P<name>\w+)\s*=\s*(?:{GROUPS}|\b)tiled_partition\s*"
    rf"(?:{TILE_SIZE}\s*\(\s*{PARENT}\s*\)|\(\s*{PARENT}\s*,[^;()]*\))"
)
TILE_PARAMETER = re.compile(rf"(?:\bconst\s+)?{TILE_TYPE}\s*&?\s*(?P<name>\w+)\s*(?=[,)])")
WARP_TILE_SIZES = {"1", "2", "4", "8", "16", "32"}
TILE_WAITS = "sync|shfl|shfl_down|shfl_up|shfl_xor|any|all|ballot|match_any"
TILE_QUERIES = "thread_rank|size|num_threads|meta_group_rank|meta_group_size"
COLLECTIVES = "reduce|inclusive_scan|exclusive_scan"
OPERATIONS = rf"{GROUPS}(?:plus|less|greater|bit_and|bit_or|bit_xor)\s*<[^<>;]*>\s*(?:\(\s*\)|\{{\s*\}})"


class GroupUses(NamedTuple):
    """Patterns of what a function does with the groups it declares (or takes, for tiles)."""

    block_syncs: str
    block_queries: str
    tile_waits: str  # `tile.X` of a wait X (the `(` follows)
    tile_syncs: str  # `cg::sync(tile)`, the tile's name its group `tile`
    collectives: str  # `cg::reduce` and the scans (`(tile,` follows)
    tile_queries: str


def group_uses(head: str, code: str) -> GroupUses:
    """The uses of the block groups and tiles of a function (head and body's code); a pattern that
    matches nothing where it has none."""
    block_names = BLOCK_GROUP.findall(code) + BLOCK_PARAMETER.findall(head)
    blocks = "|".join(re.escape(name) for name in block_names) or "(?!)"
    found = [*TILE_DECLARATION.finditer(code), *TILE_PARAMETER.finditer(head)]
    names = [m.group("name") for m in found]
    # (A tile of a warp: a number up to 32 for its size, and not a thread_group's type.)
    warp_names = [
        m.group("name") for m in found if m.group("size") in WARP_TILE_SIZES and not m.group("group")
    ]
    tiles = "|".join(map(re.escape, names)) or "(?!)"
    warp_tiles = "|".join(map(re.escape, warp_names)) or "(?!)"
    own = r"(?<![\w.>])"  # the group itself, not a member of something else named the same
    return GroupUses(
        block_syncs=rf"{own}(?:{blocks})\s*\.\s*sync\s*\(\s*\)|{GROUPS}sync\s*\(\s*(?:{blocks})\s*\)",
        block_queries=rf"{own}(?:{blocks})\s*\.\s*(?:{BLOCK_GROUP_QUERIES})\s*\(\s*\)",
        tile_waits=rf"{own}(?:{tiles})\s*\.\s*(?:{TILE_WAITS})\b(?=\s*\()",
        tile_syncs=rf"{GROUPS}sync\s*\(\s*(?P<tile>{tiles})\s*\)",
        collectives=rf"{GROUPS}(?:{COLLECTIVES})\b(?=\s*\(\s*(?:{warp_tiles})\s*,)",
        tile_queries=rf"{own}(?:{tiles})\s*\.\s*(?:{TILE_QUERIES})\s*\(\s*\)",
    )


def groups_read(head: str, code: str) -> str:
    """`code` with its groups read for what they are: a declaration declares nothing that waits, a
    block's sync is `__syncthreads()`, a tile's wait or collective a warp-level call, a query or an
    operation's object a value (any other use stays, and keeps fibers)."""
    uses = group_uses(head, code)
    code = re.sub(uses.block_syncs, "__syncthreads()", BLOCK_GROUP.sub("0", code))
    code = re.sub(uses.tile_syncs, "__syncwarp()", TILE_DECLARATION.sub("0", code))
    code = re.sub(uses.tile_waits + "|" + uses.collectives, "__syncwarp", code)
    return re.sub(rf"{uses.block_queries}|{uses.tile_queries}|{OPERATIONS}", "0", code)


def twin_word(m: re.Match[str]) -> str:
    """What the twin says for a match of twin_rewrites()."""
    if m.group("block_sync"):
        return "co_await ::cudalab::emu::syncthreads_arrival()"
    if m.group("wait"):
        return f"co_await ::cudalab::emu::{m.group('wait')[2:].removesuffix('_sync')}_arrival"
    if m.group("tile_wait"):
        return "co_await " + "".join(m.group("tile_wait").split()) + "_arrival"
    if m.group("tile_sync"):
        return f"co_await {m.group('tile')}.sync_arrival()"
    if m.group("collective"):
        return f"co_await ::cooperative_groups::{m.group('collective').split(':')[-1].strip()}_arrival"
    if m.group("callee"):
        return f"co_await {TWIN_PREFIX}{m.group('callee')}"
    return "co_return"


def twin_rewrites(head: str, code: str, callees: Iterable[str], kernel: bool) -> re.Pattern[str]:
    """What the twin of a function whose head and body are `head` and `code` rewrites (twin_word
    says into what): its waits, its groups' (group_uses), its calls of `callees` (they are awaited,
    as their twins), and its returns (a kernel's `return;`, any of a __device__ function's)."""
    uses = group_uses(head, code)
    names = "|".join(sorted(callees)) or "(?!)"
    return re.compile(
        rf"{TWIN_REWRITE}|(?P<block_sync>{uses.block_syncs})|(?P<tile_wait>{uses.tile_waits})"
        rf"|(?P<tile_sync>{uses.tile_syncs})|(?P<collective>{uses.collectives})"
        rf"|(?<![\w.:>])(?P<callee>{names})\b(?=\s*{TEMPLATE_ARGUMENTS}\()"
        + (r"|\breturn\b(?=\s*;)" if kernel else r"|\breturn\b")
    )


# Calls that cannot wait: the language's, casts to built-in types, the device API but its waits.
CALLS_THAT_CANNOT_WAIT = re.compile(
    r"(?:if|for|while|switch|return|sizeof|alignof|alignas|decltype|static_cast|reinterpret_cast|"
    r"const_cast|static_assert|noexcept|defined|assert|printf|clock|clock64|"
    r"unsigned|signed|int|long|short|char|float|double|bool|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|"
    r"uint|ushort|uchar|ulong|"
    r"dim3|(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]|__half2?|half2?|"
    r"__(?!syncthreads|syncwarp|shfl|ballot|any|all|match|reduce|nanosleep)\w+|"
    r"atomic\w+|make_\w+|tex\w+|surf\w+|curand\w*|skipahead\w*|u?min|u?max|ll(?:min|max)|ull(?:min|max)|"
    r"(?:f?min|f?max|abs|labs|llabs|fabs|sqrt|rsqrt|cbrt|rcbrt|exp|exp2|exp10|expm1|log|log2|log10|"
    r"log1p|logb|ilogb|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|sinpi|"
    r"cospi|sincos|sincospi|floor|ceil|round|lround|llround|trunc|rint|lrint|llrint|nearbyint|fmod|"
    r"remainder|remquo|hypot|rhypot|norm3d|rnorm3d|erf|erfc|erfinv|erfcinv|lgamma|tgamma|copysign|"
    r"ldexp|scalbn|frexp|modf|nextafter|fdim|fma|signbit|isnan|isinf|isfinite|saturate|normcdf|"
    r"normcdfinv)f?)"
)
# A kernel's head as the twin can copy it: `template <...>`, specifiers, `void`, name, parameters.
KERNEL_HEAD = re.compile(
    r"""(?P<prefix>(?:template\s*<.*?>\s*)?(?:(?:static|inline|__global__|__noinline__|"""
    r"""__forceinline__|extern\s*"C"|__launch_bounds__\s*\([^()]*\))\s*)*)(?P<void>void)\s+"""
    r"""(?:__launch_bounds__\s*\([^()]*\)\s*)?(?P<name>\w+)\s*\((?P<params>.*)\)\s*""",
    re.S,
)
# The head of a __device__ function as its twin can copy it: its return type a name (maybe with
# template arguments, maybe a pointer), not a reference, `auto` or a variadic function's (nor a
# specifier: a constructor has none); its name (maybe an explicit specialisation's, `f<int>`).
DEVICE_HEAD = re.compile(
    r"""(?P<prefix>(?:template\s*<.*?>\s*)?(?:(?:static|inline|__inline__|__device__|__noinline__|"""
    r"""__forceinline__)\s+)*)(?P<type>(?:(?:unsigned|signed|long|short)\s+)*(?!(?:auto|__\w+__)\b)[A-Za-z_]\w*"""
    r"""(?:\s*<[^<>()]*>)?(?:\s*\*)*)\s*(?<=[\s*>])(?P<name>\w+)\s*(?:<[^<>()]*>\s*)?"""
    r"""\((?P<params>(?:(?!\.\.\.).)*)\)\s*""",
    re.S,
)


def code_only(src: str, mask: list[bool], start: int, end: int) -> str:
    """src[start:end] with comments and literals blanked (same length, same lines)."""
    return "".join(c if mask[k] or c == "\n" else " " for k, c in enumerate(src[start:end], start))


def declaration_start(src: str, mask: list[bool], keyword: int) -> int:
    """Where the declaration of the function whose __global__ is at `keyword` starts: after the
    code before it (`;`, `{`, `}`), its comments and its preprocessor lines."""
    start = keyword
    while start > 0 and not (mask[start - 1] and src[start - 1] in ";{}"):
        start -= 1
    while start < keyword and (src[start].isspace() or not mask[start] or src[start] == "#"):
        start = src.find("\n", start) + 1 if mask[start] and src[start] == "#" else start + 1
    return start


def macro_texts(src: str, mask: list[bool]) -> dict[str, str]:
    """What each macro this file #defines stands for (its continued lines joined)."""
    macros: dict[str, str] = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n]*\\\n)*[^\n]*)", src, re.M):
        if mask[m.start(1)]:
            macros[m.group(1)] = m.group(2).replace("\\\n", " ")
    return macros


# A class or struct of the file (its name, maybe a specialisation's template arguments, its bases).
CLASS = re.compile(r"\b(?:struct|class)\s+(\w+)\s*(?:<[^{};]*>\s*)?(?::[^{};]*)?\{")


def class_texts(src: str, mask: list[bool]) -> dict[str, list[str]]:
    """The code of each class or struct that this file defines (of each definition of its name),
    from `{` to `}`: a twin may make one (the reduction sample's `SharedMemory<T>()`) if nothing
    in it waits."""
    texts: dict[str, list[str]] = {}
    for m in CLASS.finditer(src):
        if not mask[m.start()]:
            continue
        end = matching_close(src, mask, m.end() - 1)
        texts.setdefault(m.group(1), []).append(code_only(src, mask, m.end() - 1, end + 1))
    return texts


def named_functions(src: str, mask: list[bool]) -> list[tuple[str, str, int, int, int]]:
    """Each __global__ or __device__ function with a body: its name, its head's code (comments
    blanked), and function_bodies' keyword, `{` and `}`."""
    found = []
    for keyword, brace, end in function_bodies(src, mask):
        head = code_only(src, mask, declaration_start(src, mask, keyword), brace).strip()
        # The function's is the last (template arguments of one level: `template <> f<int>(` is f's).
        names = re.findall(r"(\w+)\s*(?:<[^()<>]*>\s*)?\(", head)
        if names:
            found.append((names[-1], head, keyword, brace, end))
    return found


class TwinFunctions(NamedTuple):
    """The functions of a file that get coroutine twins, each with where its last definition ends:
    kernels, and the __device__ functions that wait and that the twins call (`callees`)."""

    kernels: dict[str, int]
    callees: dict[str, int]


@functools.lru_cache(maxsize=32)  # (a header's: found for its includer's launches, then for its own twins)
def twin_functions(src: str, included: tuple[str, ...] = ()) -> TwinFunctions:
    """A kernel qualifies (every definition of the name) if its body waits (at least once) only at
    the waits a twin can make (TWIN_WAIT) or in calls of callees, at most one in a statement, and
    each other call cannot wait: the language's, the device API's (CALLS_THAT_CANNOT_WAIT) or a
    __device__ function, macro or class of this file or of the local headers it includes (the code
    of each in `included`) whose code has no wait and the same kind of calls; with no lambda, local
    class, `goto` or `try`, and a head the twin can copy (KERNEL_HEAD) that names the kernel. A
    __device__ function of this file that waits is a callee by the same rules (each definition's
    head a DEVICE_HEAD naming it: an explicit specialisation gets its own twin), called by its name
    alone (not through `::`, `.` or `->`) and defined before its caller; only the
    callees that a kernel's twin calls, itself or through other callees, get twins.

    (One wait in a statement: of `a() + b()` with both awaited, the compiler may resume from a's
    wait, then wait at b's before it reads a's result, which a lane that went on from b's wait to
    the next may have overwritten by then.)"""
    mask = code_mask(src)
    Definition = tuple[str, str, int, int]  # head (empty in a macro), body's code, keyword, end
    kernels: dict[str, list[Definition]] = {}
    device: dict[str, list[Definition]] = {}
    for name, head, keyword, brace, end in named_functions(src, mask):
        code = groups_read(head, code_only(src, mask, brace, end + 1))
        definition = ("" if in_macro(src, keyword) else head, code, keyword, end)
        (kernels if src.startswith("__global__", keyword) else device).setdefault(name, []).append(definition)
    macros: dict[str, str] = {}
    classes: dict[str, list[str]] = {}
    elsewhere: dict[str, list[str]] = {}  # the headers' functions: called, never given twins here
    for text in (*included, src):  # (the file's own macros last: they are the ones it sees)
        text_mask = code_mask(text)
        macros |= macro_texts(text, text_mask)
        for name, ts in class_texts(text, text_mask).items():
            classes.setdefault(name, []).extend(CLASS_WORDS.sub("", t) for t in ts)
        if text is not src:
            for name, head, _, brace, end in named_functions(text, text_mask):
                code = groups_read(head, code_only(text, text_mask, brace, end + 1))
                elsewhere.setdefault(name, []).append(code)
    verdicts: dict[str, bool] = {}
    callees: dict[str, int] = {}

    def cannot_wait(name: str) -> bool:  # a callee (a __device__ function, macro or class) of this file
        if name not in verdicts:
            verdicts[name] = True  # (a recursive call waits no more than its function)
            # (A macro's `return` would return from the twin, where only co_return may.)
            texts = [d[1] for d in device.get(name, [])] + elsewhere.get(name, [])
            texts += [macros[name]] if name in macros else []
            texts += classes.get(name, [])
            verdicts[name] = (
                bool(texts)
                and not (name in macros and re.search(r"\breturn\b", macros[name]))
                and all(not WAITS.search(t) and waits_in(t, 0) == [] for t in texts)
            )
        return verdicts[name]

    def waits_in(code: str, keyword: int) -> list[int] | None:
        """Where `code` (the body of a function defined at `keyword`) waits, if every wait is one a
        twin can make or a call of a callee defined before it, and every other call cannot wait;
        else None."""
        if any(not TWIN_WAIT.match(code, w.start()) for w in WAITS.finditer(code)):
            return None
        found = [w.start() for w in TWIN_WAIT.finditer(code)]
        for call in CALL.finditer(code):
            name = re.sub(r"\s+", "", call.group(2)).removeprefix("::").removeprefix("std::")
            if call.group(1) is None and CALLS_THAT_CANNOT_WAIT.fullmatch(name):
                continue
            if re.fullmatch(TWIN_WAIT_NAME, name):
                continue
            if call.group(1) is None and call.group(2) == name and callees.get(name, keyword) < keyword:
                found.append(call.start(2))
            elif not cannot_wait(name.split("::")[-1]):
                return None
        used = set(re.findall(r"\b\w+\b", code)) & macros.keys()
        return found if all(cannot_wait(macro) for macro in used) else None

    def qualifies(head_form: re.Pattern[str], name: str, definition: Definition) -> bool:
        head, code, keyword, _ = definition
        found = waits_in(code, keyword)
        statements = [len(re.findall(r"[;{}]", code[:at])) for at in found or []]
        copied = head_form.fullmatch(head)  # (as add_coroutine_twins will read it)
        return (
            copied is not None
            and copied.group("name") == name
            and bool(found)
            and len(set(statements)) == len(statements)
            and not LAMBDA.search(code)
            and not (head_form is KERNEL_HEAD and RETURN_VALUE.search(code))
        )

    grew = True
    while grew:  # (a callee may call callees defined before it)
        grew = False
        for name, found in device.items():
            if name not in callees and all(qualifies(DEVICE_HEAD, name, d) for d in found):
                callees[name] = max(end for *_, end in found)
                grew = True
    twins = {
        name: max(end for *_, end in found)
        for name, found in kernels.items()
        if all(qualifies(KERNEL_HEAD, name, d) for d in found)
    }
    # Only the callees that a kernel's twin calls, or a callee it calls, get twins.
    called: dict[str, int] = {}
    bodies = [d[1] for name in twins for d in kernels[name]]
    while bodies:
        for name in set(re.findall(r"\b\w+\b", bodies.pop())) & callees.keys() - called.keys():
            called[name] = callees[name]
            bodies += [d[1] for d in device[name]]
    return TwinFunctions(twins, called)


def coroutine_kernels(src: str, included: tuple[str, ...] = ()) -> dict[str, int]:
    """The kernels whose threads can run as coroutines (twin_functions says which)."""
    return twin_functions(src, included).kernels


def twin_of(kernel: str, twins: dict[str, int], launch: int) -> str | None:
    """The twin of the kernel a launch at `launch` names (`ns::k<16>` -> `ns::cudalab_coroutine_k<16>`),
    if it has one defined before the launch."""
    m = re.fullmatch(r"((?:::)?(?:\w+::)*)(\w+)(<.*>)?", kernel, re.S)
    if m is None or m.group(2) not in twins or launch < twins[m.group(2)]:
        return None
    return f"{m.group(1)}{TWIN_PREFIX}{m.group(2)}{m.group(3) or ''}"


def add_coroutine_twins(src: str, twins: TwinFunctions, path: str) -> str:
    """After each definition of a function in `twins`, its twin (the module's docstring), on lines
    that #line numbers as the function's own, so that the twin's diagnostics name its lines."""
    if not twins.kernels:
        return src
    mask = code_mask(src)
    out: list[str] = []
    done = 0
    for keyword, brace, end in function_bodies(src, mask):
        start = declaration_start(src, mask, keyword)
        kernel = src.startswith("__global__", keyword)
        m = (KERNEL_HEAD if kernel else DEVICE_HEAD).fullmatch(src, start, brace)
        if m is None or m.group("name") not in (twins.kernels if kernel else twins.callees):
            continue
        prefix = re.sub(
            r'\b(?:__global__|__device__|__forceinline__|__noinline__)\b[ \t]*|\bextern\s*"C"[ \t]*',
            "",
            m.group("prefix"),
        )
        task = "ThreadTask" if kernel else f"DeviceTask<{m.group('type')}>"
        name_at = m.start("name")
        head = (
            f"{prefix}::cudalab::emu::{task}"
            + (src[m.end("void") : name_at] if kernel else " ")
            + TWIN_PREFIX
            + src[name_at:brace]
        )
        body, k = [], brace
        rewrites = twin_rewrites(
            code_only(src, mask, start, brace), code_only(src, mask, brace, end + 1), twins.callees, kernel
        )
        for w in rewrites.finditer(src, brace, end + 1):
            if mask[w.start()]:
                body += [src[k : w.start()], twin_word(w)]
                k = w.end()
        body.append(src[k : end + 1])
        line_end = src.find("\n", end)
        line_end = len(src) if line_end < 0 else line_end
        first_line = src.count("\n", 0, start) + 1
        next_line = src.count("\n", 0, line_end) + 2
        out.append(src[done:line_end])
        out.append(
            f'\n#ifndef CUDALAB_EMU_CHECKED\n#line {first_line} "{path}"\n{head}{"".join(body)}\n'
            f'#endif\n#line {next_line} "{path}"'
        )
        done = line_end
    out.append(src[done:])
    return "".join(out)


# Thrust's CUDA system brings thrust::system_error with any algorithm, and programs rely on it;
# its C++ system (the emu's) does not.
THRUST_AS_ON_CUDA = "#include <thrust/system_error.h>\n"

# What an #include of a local header names instead (its translated copy, or the header by its
# absolute path), or None: as written.
Redirect = Callable[[cuda_ast.Include], str | None]


def include_edits(
    source: cuda_ast.Source, file: str, offsets: CharacterOffsets, redirect: Redirect
) -> list[Edit]:
    """Each #include of `file` that `redirect` names anew: the header's name, quotes or angle
    brackets and all, becomes what it gives."""
    edits = []
    for include in (i for i in source.includes if i.name.file == file):
        if (named := redirect(include)) is not None:
            edits.append((offsets(include.name.start), offsets(include.name.end), named))
    return edits


def checker_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """The checker's edits of a file: each __global__ or __device__ (not also __host__) function's
    body becomes `;` (its lines kept), and each launch sends the kernel's name and arguments."""
    device = [range(offsets(r.start), offsets(r.stop)) for r in device_code(source, file)]
    edits = [(r.start, r.stop, ";" + "\n" * src.count("\n", r.start, r.stop)) for r in device]
    sites = [s for s in launch_sites(src, source, file, offsets) if not any(s.start in r for r in device)]
    return edits + launch_edits(src, sites, checker=True)


def translate_for_checker(
    src: str,
    path: str,
    source: cuda_ast.Source | None = None,
    raw: bytes | None = None,
    redirect: Redirect = lambda include: None,
) -> str:
    """The file for the checker (checker_edits). `source` and `raw` as translate() takes them."""
    if source is None or raw is None:
        raw = src.encode("utf-8", "surrogateescape")
        source = cuda_ast.parse(Path(path), data=raw)
    file, offsets = str(Path(path).resolve()), CharacterOffsets(raw)
    edits = checker_edits(src, source, file, offsets) + include_edits(source, file, offsets, redirect)
    return f'{PRELUDE}#include "cudalab/remote/checker.h"\n#line 1 "{path}"\n{applied(src, edits)}'


def translate(
    src: str,
    path: str,
    header_twins: dict[str, int] | None = None,
    included: tuple[str, ...] = (),
    source: cuda_ast.Source | None = None,
    raw: bytes | None = None,
    redirect: Redirect = lambda include: None,
) -> str:
    """`header_twins`: the kernels with twins that local headers define, each with where this file
    includes the header (a launch after it may run the twin); `included`: the code of the local
    headers it includes (twin_functions); `source`: the front end's records of the file (and its
    local headers), read from `raw`, the file's bytes (by default it reads `src` alone);
    `redirect`: what its #includes of local headers name instead."""
    if source is None or raw is None:
        raw = src.encode("utf-8", "surrogateescape")
        source = cuda_ast.parse(Path(path), data=raw)
    file = str(Path(path).resolve())
    twins = twin_functions(src, included)
    mask = code_mask(src)
    defined = {f[0] for f in named_functions(src, mask) if src.startswith("__global__", f[2])}
    launchable = {k: at for k, at in (header_twins or {}).items() if k not in defined} | twins.kernels
    offsets = CharacterOffsets(raw)
    edits = launch_edits(src, launch_sites(src, source, file, offsets), twins=launchable)
    edits += emu_edits(src, source, file, offsets) + include_edits(source, file, offsets, redirect)
    loops = loop_forms(src, source, file, offsets, edits, twins, path)
    twins = TwinFunctions({k: at for k, at in twins.kernels.items() if k not in loops.kernels}, twins.callees)
    # (each loop form is a comment until the twins are added: they count the lines before them)
    marks = [(at, at, f"/*cudalab loop form {k}*/") for k, (at, _, _) in enumerate(loops.edits)]
    body = add_coroutine_twins(applied(src, edits + marks), twins, path)
    for k, (_, _, form) in enumerate(loops.edits):
        body = body.replace(f"/*cudalab loop form {k}*/", form, 1)
    uses_thrust = any(i.spelled.startswith("thrust/") for i in source.includes if i.name.file == file)
    return f'{PRELUDE}{THRUST_AS_ON_CUDA if uses_thrust else ""}#line 1 "{path}"\n{body}'


class LoopForms(NamedTuple):
    kernels: set[str]  # the kernels that have one (every definition of the name)
    edits: list[Edit]  # each after its kernel's definition


def loop_forms(
    src: str,
    source: cuda_ast.Source,
    file: str,
    offsets: CharacterOffsets,
    edits: list[Edit],
    twins: TwinFunctions,
    path: str,
) -> LoopForms:
    """Each kernel of the file that qualifies for a coroutine twin, calls no function that waits
    and nothing Clang could not read, and whose threads can run as loops between its waits
    (__syncthreads() and shuffles: thread_loops.py), gets its loop form after its definition,
    under the twin's name (a launch from unchecked code runs it):

        #ifndef CUDALAB_EMU_CHECKED
        #line <the kernel's line> "<input>"
        ::cudalab::emu::ThreadLoops cudalab_coroutine_kernel(params) { <the thread loops> }
        #endif"""
    definitions: dict[str, list[cuda_ast.Function]] = {}
    waiting = thread_loops.waiting_functions(source)
    for f in source.kernels():
        if f.body is None or f.body.file != file or f.statements is None:
            continue
        first, last = f.span.line, f.span.line + src.count("\n", offsets(f.span.start), offsets(f.span.end))
        if any(e.file == file and first <= e.line <= last for e in source.errors):
            continue  # (a call Clang could not read, as of cooperative groups, may wait)
        if not f.statements.calls & waiting:  # (a function that waits: the kernel's own waits only)
            definitions.setdefault(f.name, []).append(f)
    forms: list[Edit] = []
    named: set[str] = set()
    for name, found in definitions.items():
        try:
            plans = [thread_loops.plan(f, offsets.raw) for f in found]
        except thread_loops.NotLoops:
            continue
        if len(found) != sum(1 for f in source.kernels() if f.name == name and f.defined):
            continue  # (a definition elsewhere: its twin stays)
        for f, plan in zip(found, plans, strict=False):
            forms.append(loop_form(src, f, offsets, edits, plan, path))
        named.add(name)
    return LoopForms(named, forms)


def loop_form(
    src: str,
    kernel: cuda_ast.Function,
    offsets: CharacterOffsets,
    edits: list[Edit],
    plan: list[Edit],
    path: str,
) -> Edit:
    """The insertion, after the line where `kernel` ends, of its loop form: its text with the
    file's `edits` that lie in it and the `plan`'s (byte offsets)."""
    assert kernel.body is not None
    start, brace, end = offsets(kernel.span.start), offsets(kernel.body.start), offsets(kernel.body.end)
    name_at = offsets(kernel.name_at) - start
    head = src[start:brace]
    before = re.sub(r'\b__global__\b[ \t]*|\bextern\s*"C"[ \t]*', "", head[:name_at])
    result = before.rfind("void")
    before = before[:result] + "::cudalab::emu::ThreadLoops" + before[result + 4 :]
    inside = [(a - brace, b - brace, t) for a, b, t in edits if brace <= a < end and b <= end]
    inside += [(offsets(a) - brace, offsets(b) - brace, t) for a, b, t in plan]
    text = before + TWIN_PREFIX + head[name_at:] + applied(src[brace:end], inside)
    line_end = src.find("\n", end)
    line_end = len(src) if line_end < 0 else line_end
    first_line = src.count("\n", 0, start) + 1
    next_line = src.count("\n", 0, line_end) + 2
    form = f'#ifndef CUDALAB_EMU_CHECKED\n#line {first_line} "{path}"\n{text}\n#endif\n'
    return (line_end, line_end, f'\n{form}#line {next_line} "{path}"')


def emu_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """The edits of a file for the emu besides its launches (EDITS)."""
    return [edit for edits in EDITS for edit in edits(src, source, file, offsets)]


class Translation:
    """A source file and the local headers it includes, translated into one folder: a header that
    translating changes gets a translated copy, included by its absolute path; any other local
    header included with quotes is included by its absolute path. Local: neither the system's nor
    the emu's; the headers are those the preprocessor finds (Clang's, with the program's -I and
    -D), wherever they are."""

    def __init__(
        self,
        out_dir: Path,
        checker: bool = False,
        include_path: Iterable[Path] = (),
        defines: Iterable[str] = (),
    ) -> None:
        self.out_dir = out_dir
        self.checker = checker
        self.include_path = [Path(d).resolve() for d in include_path]  # (-I: Clang's)
        self.defines = list(defines)  # (-D)
        self.done: dict[Path, Path] = {}
        self.changed: dict[Path, bool] = {}  # needs_translation's answers, by header
        self.read: list[Path] = []
        self.source: cuda_ast.Source | None = None  # the first file's, with its local headers'

    def file(self, source: Path, target: Path) -> None:
        self.read.append(source)
        raw = source.read_bytes()
        text = decoded(raw)
        try:
            if self.source is None:
                self.source = cuda_ast.parse(source, self.include_path, self.defines, local_headers=True)
            if self.checker:
                translated = translate_for_checker(text, str(source), self.source, raw, self.redirect)
            else:
                twins, included = self.header_twins(source), self.included_code(source)
                translated = translate(text, str(source), twins, included, self.source, raw, self.redirect)
        except TranslateError as e:
            raise SystemExit(f"{source}:{e.line}: error: {e}") from None
        except cuda_ast.FrontEndError as e:
            raise SystemExit(str(e)) from None
        write_if_changed(target, translated)

    def includes(self, file: Path) -> list[cuda_ast.Include]:
        """The #includes of `file` whose headers are local, in the file's order."""
        assert self.source is not None
        name = str(file.resolve())
        return [i for i in self.source.includes if i.name.file == name and self.local(Path(i.included))]

    @staticmethod
    def local(header: Path) -> bool:
        """Whether a header is the program's (or the workbook's): not the system's nor the emu's."""
        return not cuda_ast.system_or_emu(str(header))

    def needs_translation(self, header: Path) -> bool:
        """Whether translating `header` changes it (for the checker: device code or a launch; for
        the emu: a launch, a kernel, __shared__, assert, clock, inline PTX ...). Asked for each
        #include of it and each file whose twins it may hold: answered once."""
        assert self.source is not None
        if header not in self.changed:
            raw = header.read_bytes()
            text, file, offsets = decoded(raw), str(header), CharacterOffsets(raw)
            if self.checker:
                edits = checker_edits(text, self.source, file, offsets)
            else:
                edits = emu_edits(text, self.source, file, offsets) or launch_sites(
                    text, self.source, file, offsets
                )
            self.changed[header] = bool(edits)
        return self.changed[header]

    def redirect(self, include: cuda_ast.Include) -> str | None:
        """What an #include names instead: a local header's translated copy where translating
        changes the header, else a quoted local header by its absolute path (the translation is
        compiled from another folder); None: as written (the system's and the emu's headers, and
        a local one in angle brackets that needs no translation, found on the include path)."""
        header = Path(include.included)
        if not self.local(header):
            return None
        if not self.needs_translation(header):
            if header not in self.read:
                self.read.append(header)
            return f'"{header}"' if include.quoted else None
        if header not in self.done:
            target = self.out_dir / (str(header).lstrip("/") + ".cpp")
            self.done[header] = target
            self.file(header, target)
        return f'"{self.done[header]}"'

    def header_twins(self, file: Path, seen: set[Path] | None = None) -> dict[str, int]:
        """The kernels with coroutine twins that the local headers `file` includes define (and the
        headers they include), each with where `file` includes it."""
        seen = set() if seen is None else seen
        offsets = CharacterOffsets(file.read_bytes())
        twins: dict[str, int] = {}
        for include in self.includes(file):
            header = Path(include.included)
            if header in seen:
                continue
            seen.add(header)
            if not self.needs_translation(header):
                continue  # included as it is: so are the headers it includes (no twins)
            header_text = read_source(header)
            found = coroutine_kernels(header_text, self.included_code(header))
            found |= self.header_twins(header, seen)
            twins |= {name: offsets(include.name.start) for name in found if name not in twins}
        return twins

    def included_code(self, file: Path, seen: set[Path] | None = None) -> tuple[str, ...]:
        """The code of the local headers `file` includes and of those they include, in that order:
        functions that its twins may call where they cannot wait (twin_functions)."""
        seen = set() if seen is None else seen
        found: list[str] = []
        for include in self.includes(file):
            header = Path(include.included)
            if header in seen:
                continue
            seen.add(header)
            if header not in self.read:
                self.read.append(header)  # (a change to it may change the twins: the depfile)
            header_text = read_source(header)
            found += [header_text, *self.included_code(header, seen)]
        return tuple(found)


def read_source(path: Path) -> str:
    return decoded(path.read_bytes())


def decoded(raw: bytes) -> str:
    """A source file's text as a compiler reads it: a byte-order mark (a Windows editor's) is not
    part of it, and bytes that are not UTF-8 stay the bytes they are (surrogate escapes)."""
    return raw.decode("utf-8-sig", errors="surrogateescape")


def write_if_changed(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8", "surrogateescape")
    if not target.exists() or target.read_bytes() != data:
        target.write_bytes(data)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(usage=__doc__.split("Usage: ")[1].split("\n")[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--checker", action="store_true")
    parser.add_argument("--depfile", type=Path)
    parser.add_argument("-I", dest="include_path", action="append", default=[], type=Path)
    parser.add_argument("-D", dest="defines", action="append", default=[])
    args = parser.parse_args(argv[1:])
    source, target = args.input.resolve(), args.output.resolve()
    headers = target.parent / (target.name + ".headers")
    translation = Translation(headers, args.checker, args.include_path, args.defines)
    try:
        translation.file(source, target)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as e:
        print(f"{source}: error: cannot read: {e}", file=sys.stderr)
        return 1
    if args.depfile is not None:
        deps = " ".join(str(p).replace(" ", "\\ ") for p in translation.read)
        write_if_changed(args.depfile, f"{target}: {deps}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
