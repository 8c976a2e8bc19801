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
the object itself, as on a GPU (launch.h), and a null pointer constant (`NULL`, `0`) for a pointer
parameter becomes `nullptr` (passed on as a value, it would be an integer). A launch Clang cannot
read (an undeclared kernel, say) is an error with its line and Clang's first error. A launch in a
macro's body is rewritten in the body, and one in a macro's argument (`CHECK((k<<<g, b>>>(x)))`)
where it is written: Clang places
such a launch at the macro's name, so its parts are read from Clang's tokens there (the kernel
expression before the `<<<`, the configuration up to the `>>>`, the arguments after it).

The same AST gives the other edits, each where Clang says it is written:

    __shared__ T name[N][M];   (inside a function; T[N][M]: the type as Clang reads it)
      -> static ::cudalab::emu::SharedSlot cudalab_slot_name{"name", __FILE__, __LINE__};
         auto& name = ::cudalab::emu::shared<T[N][M]>(cudalab_slot_name);

    extern __shared__ T name[];
      -> auto& name = *reinterpret_cast<::std::add_pointer_t<T[]>>(
             ::cudalab::emu::builtins.dynamic_shared);

so that each block's copy lives in the block's checked shared space (see common/emu/src/checks.cpp).
At file scope the declaration becomes the slot (nothing, for an `extern` array) and each use of the
variable is the current block's copy, `(::cudalab::emu::shared<T[N]>(cudalab_slot_name))`; a use
inside a macro is an error naming its line. `assert` (used, or in a macro's body) becomes
`cudalab_assert` (a failed assert in a kernel fails the launch with cudaErrorAssert); `clock()` in
device code the device's clock; inline PTX in device code a call (a read of a special register, one
of a few one-register instructions) or an error naming its line.

A kernel whose threads can run as loops between its waits (`__syncthreads()` and warp shuffles
that every thread reaches: common/emu/thread_loops.py says which and how) gets its loop form after
it, which runs once per block (common/emu/include/cudalab/emu/thread_loops.h):

    #line <the kernel's line> "<input>"
    ::cudalab::emu::ThreadLoops cudalab_loops_kernel(params) { <the thread loops> }

and its launches after it run the loop form, checked or not (every other kernel runs on fibers):

    ::cudalab::emu::Launch("kernel", ...)(::cudalab::emu::LoopFormCall{[&](auto&... cudalab_args) {
        return cudalab_loops_kernel(::cudalab::emu::kernel_argument(cudalab_args)...); }}, args)
A `__shared__` declaration with an initializer, one of a type Clang could not read, or one that a
macro writes stays as written; the prelude makes it a thread_local (one block at a time per worker:
right, but unchecked).

The output starts with `#line 1 "<input>"` and keeps every line where it was, so compiler errors
and the backend's diagnostics name the student's file and line.

Local headers that the file includes with quotes and that hold CUDA constructs (a launch,
__shared__, assert) are translated too, into OUTPUT.cpp.headers/, and included from there; so are
the workbook's own (common/include, such as "cudalab/textbook_kernels.cuh").
A kernel whose every access its code proves (grader/cudalab_tools/proven_accesses.py: each is
`P[i]` with i the thread's global x index under `if (i < n)` or in a grid-stride loop, or
`P[Row * pitch + Col]` under `if (Row < m && Col < n)`) gets, in checked code, a copy without the
checks' instrumentation and a function that gives its ranges from its arguments:

    #ifdef CUDALAB_EMU_CHECKED
    #line <the kernel's line> "<input>"
    __attribute__((no_sanitize("thread"))) inline void cudalab_proven_kernel(params) { ... }
    ... ::cudalab::emu::ProvenRanges cudalab_proven_ranges_kernel(params) { ... }
    #endif

and its launches pass all three, `CUDALAB_KERNEL_PROVEN((kernel), (copy), (ranges))`: a block
whose ranges the launch finds fine runs the copy (common/emu/src/proven_blocks.cpp), any other the
kernel.

A `(void*)` cast of the kernel given to cudaLaunchKernel or cudaLaunchCooperativeKernel is removed
(the emu's launch APIs need the kernel's type).

With --checker, the output is for the remote runner's checker (common/remote): a test program
that holds no device code. Every __global__ and __device__ function loses its body (it runs in the
runner), and a launch sends the kernel's name and arguments there:

    kernel<<<grid, block>>>(args)
      -> ::cudalab::remote::Launch<decltype(&kernel)>("kernel", __FILE__, __LINE__, grid, block)(args)

Usage: translate.py INPUT.cu OUTPUT.cpp [--checker] [--depfile OUT.d] [--file-name NAME] [-I DIR] [-D N[=V]]

--file-name: the name the output's `#line` directives give INPUT.cu (so its `__FILE__`), as nvcc
gives the path written on its command line (`cudalab cc`); by default INPUT.cu's absolute path.

-I: a folder of the compiler's include path: Clang reads the file with it, and a header that the
file includes (with quotes or angle brackets) and that is not beside it is looked for there, only
for Clang; such headers are never translated. -D: a definition (N, or N=V) Clang reads the file with.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import zlib
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
LOOP_FORM_PREFIX = "cudalab_loops_"  # a loop form's name: this and the kernel's (launch.h's too)
PROVEN_PREFIX = "cudalab_proven_"  # a proven kernel's copy without the checks (proven_form)
PROVEN_PLAN_PREFIX = "cudalab_proven_ranges_"  # and the function that gives its ranges
UNBOUNDED = "0x7fffffffffffffffLL"  # a proven kernel's limit where it has no guard
NO_CHECKS = thread_loops.NO_CHECKS


class TranslateError(Exception):
    def __init__(self, src: str, pos: int, message: str) -> None:
        super().__init__(message)
        self.line = src.count("\n", 0, pos) + 1


class LaunchSite(NamedTuple):
    """Where a launch is written, in characters of the translated text: its kernel expression
    starts at `start`, `<<<` at `opening`, the configuration at `config`, `>>>` at `closing`, and
    `(` at `paren`; `kernel`: the expression's tokens (cuda_ast's kernel_text), `name`: its parts
    where it is a name (cuda_ast.name_parts); `references`: the arguments ([start, end)) that the
    kernel takes by reference."""

    start: int
    opening: int
    config: int
    closing: int
    paren: int
    kernel: str
    name: tuple[str, str, str] | None
    references: tuple[tuple[int, int], ...] = ()
    null_pointers: tuple[tuple[int, int], ...] = ()  # `NULL` or `0` for a pointer parameter


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
                launch.kernel_text,
                launch.kernel_name,
                references,
                tuple((offsets(arg.start), offsets(arg.end)) for arg in launch.null_pointers),
            )
        )
    for m in source.macro_launches:
        if m.opening.file == file:
            if m.problem:
                raise TranslateError(src, offsets(m.opening.start), m.problem)
            opening, config = offsets(m.opening.start), offsets(m.opening.end)
            closing, paren = offsets(m.closing_start), offsets(m.paren)
            start = offsets(m.kernel_start)
            sites.append(LaunchSite(start, opening, config, closing, paren, m.kernel_text, m.kernel_name))
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
    src: str,
    sites: list[LaunchSite],
    checker: bool = False,
    loop_forms: dict[str, int] | None = None,
    proven: dict[str, int] | None = None,
) -> list[Edit]:
    """Every launch, as the module's docstring shows; a launch of a kernel in `loop_forms` (its
    name: where the form is defined) after that definition passes the loop form too, and one of a
    kernel in `proven` (where its proven form is defined) its proven copy and ranges."""
    edits: list[Edit] = []
    for site in sites:
        # The kernel as written, its spaces only where they separate words (`k<long long>`).
        kernel = site.kernel
        config = src[site.config : site.closing]
        args_follow = src[site.paren + 1 :].lstrip()[:1] != ")"
        quoted = kernel.replace("\\", "\\\\").replace('"', '\\"')
        if checker:
            if site.name is None:
                message = "the checker launches a kernel by its name, not an expression"
                raise TranslateError(src, site.start, message)
            launch = f"::cudalab::remote::Launch<decltype(&{kernel})>"
            text = f'{launch}("{quoted}", __FILE__, __LINE__, {config})('
        else:
            call = "(::cudalab::emu::kernel_argument(cudalab_args)...)"
            if site.name is not None:  # a name: overloads and templates resolve at the call
                body = f"[&](auto&... cudalab_args) {{ {kernel}{call}; }}"
                form = loop_form_of(site.name, loop_forms or {}, site.start)
                if form is not None:
                    loops = f"[&](auto&... cudalab_args) {{ return {form}{call}; }}"
                    body = f"::cudalab::emu::LoopFormCall{{{loops}}}"
                elif (copy := loop_form_of(site.name, proven or {}, site.start, PROVEN_PREFIX)) is not None:
                    ranges = copy.replace(PROVEN_PREFIX, PROVEN_PLAN_PREFIX, 1)
                    unchecked = "(::cudalab::emu::proven_argument(cudalab_args)...)"
                    copy_body = f"[&](auto&... cudalab_args) {NO_CHECKS} {{ {copy}{unchecked}; }}"
                    ranges_body = f"[&](auto&... cudalab_args) {NO_CHECKS} {{ return {ranges}{unchecked}; }}"
                    body = f"CUDALAB_KERNEL_PROVEN(({body}), ({copy_body}), ({ranges_body}))"
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
            # (passed on as a value, NULL would be a long and 0 an int, which no pointer takes)
            edits += [(start, end, "nullptr") for start, end in site.null_pointers]
    return edits


def loop_form_of(
    name: tuple[str, str, str], loop_forms: dict[str, int], launch: int, prefix: str = LOOP_FORM_PREFIX
) -> str | None:
    """The loop form (or the copy that `prefix` names) of the kernel a launch at `launch` names (its
    qualifier, identifier and template arguments: `ns::k<16>` -> `ns::cudalab_loops_k<16>`), if it
    has one defined before the launch."""
    qualifier, identifier, arguments = name
    if identifier not in loop_forms or launch < loop_forms[identifier]:
        return None
    return f"{qualifier}{prefix}{identifier}{arguments}"


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
            array = f"::std::add_pointer_t<{' '.join(kept)}[]{dims}>"
            text = f"auto& {name} = *reinterpret_cast<{array}>(::cudalab::emu::builtins.dynamic_shared);"
            start, end = offsets(body[first].span.start), offsets(body[last].span.end)
            edits.append((start, end, text + " \\\n" * src.count("\n", start, end)))
    return edits


BITWISE = "::cudalab::emu::Bitwise"  # (launch.h)


def bitwise_type(src: str, parameter: cuda_ast.Parameter, offsets: CharacterOffsets) -> str | None:
    """The type that a kernel's parameter of a class whose copies run code gets (launch.h's
    Bitwise: each thread gets the bytes of the launch's one copy, as on a GPU), made from the type
    as written; None for any other parameter, and for one whose declaration is not a type and a
    name as written (a macro's, or an array's)."""
    if not parameter.copies_run_code or parameter.reference:
        return None
    start, end = offsets(parameter.span.start), offsets(parameter.span.end)
    name = offsets(parameter.name_at) if parameter.name_at >= 0 else end
    if not start < name <= end or src[name:end] not in ("", parameter.name):
        return None
    return f"{BITWISE}<{src[start:name].strip()}>"


def bitwise_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """Each declaration of a kernel with a parameter of a class whose copies run code: the
    parameter's type becomes bitwise_type's, and a definition names the object by a reference
    made at the start of its body (`auto& c = cudalab_bitwise_c.object();`), so that its body
    reads as written."""
    edits = []
    for f in source.kernels():
        if f.span.file != file:
            continue
        aliases = []
        for p in f.parameters:
            if (written := bitwise_type(src, p, offsets)) is None:
                continue
            named = p.name and f.body is not None
            name = f"cudalab_bitwise_{p.name}" if named else p.name
            edits.append((offsets(p.span.start), offsets(p.span.end), f"{written} {name}"))
            if named:
                aliases.append(f"auto& {p.name} = {name}.object(); ")
        if aliases and f.body is not None:
            brace = offsets(f.body.start) + 1
            edits.append((brace, brace, " " + "".join(aliases)))
    return edits


def registration_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """After each kernel that is not a template and is defined once in the file, a registration
    by address (`KernelEntry`): cudaLaunchKernel with a void* and graph kernel nodes find it so.
    By its own parameter types, as Clang spells them: a header may declare an overload. Its name
    holds the file's and the definition's place: two headers that one program includes may each
    define an overload of one kernel."""
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
        types = ", ".join(bitwise_type(src, p, offsets) or p.type for p in f.parameters)
        kernel = f"static_cast<void (*)({types})>({f.name})"
        name = f"cudalab_kernel_entry_{f.name}_{zlib.crc32(file.encode())}_{body.end}"
        entry = f" static const ::cudalab::emu::KernelEntry {name}{{{kernel}}};"
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


SHIFTS = {
    "<<": "shift_left",
    ">>": "shift_right",
    "<<=": "shift_left_assign",
    ">>=": "shift_right_assign",
}


def shift_edits(src: str, source: cuda_ast.Source, file: str, offsets: CharacterOffsets) -> list[Edit]:
    """A shift in device code by an amount that is not a literal, `a << n` ->
    `::cudalab::emu::shift_left(a, n)`: a GPU's shift by the operand's width or more gives 0 (or
    the sign, for a negative number shifted right), which C++ leaves undefined and an x86 processor
    computes otherwise (1 << 32 is 1 there). Outer shifts first, so that nested ones nest."""
    device = device_code(source, file)
    edits = []
    for s in sorted(source.shifts, key=lambda s: (s.left.start, -s.right.end)):
        if s.left.file != file or not any(offsets(s.operator.start) in r for r in device):
            continue
        start, end = offsets(s.operator.start), offsets(s.operator.end)
        if src[start:end] != s.spelling:
            continue  # (written by a macro)
        edits.append((offsets(s.left.start), offsets(s.left.start), f"::cudalab::emu::{SHIFTS[s.spelling]}("))
        edits.append((start, end, ","))
        edits.append((offsets(s.right.end), offsets(s.right.end), ")"))
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
    the slots and a reference to each; at file scope the
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
        """The current block's copy (an `extern` array: the array of unknown size at the start of
        the dynamic shared memory, so that `reinterpret_cast<T&>(name)` means what it does on a GPU)."""
        if v.extern:
            return (
                f"*reinterpret_cast<::std::add_pointer_t<{v.type}>>(::cudalab::emu::builtins.dynamic_shared)"
            )
        return f"::cudalab::emu::shared<{v.type}>(cudalab_slot_{v.name})"

    def type_defined(v: cuda_ast.Variable) -> str:
        """The class that the declaration defines (`__shared__ union U {...} u;`), which stays."""
        d = v.type_definition
        return "" if d is None else src[offsets(d.start) : offsets(d.end)] + "; "

    def local(v: cuda_ast.Variable) -> str:
        # (by its type where it is no array: `auto&` of a call would make the type of a template's
        # own class dependent, whose member templates C++ then wants named with `template`)
        reference = "auto&" if v.type.endswith("]") else f"{v.type}&"
        if v.extern:
            return f"{reference} {v.name} = {copy(v)};"
        return f"static ::cudalab::emu::SharedSlot {slot(v)}; {reference} {v.name} = {copy(v)};"

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
            text = type_defined(variables[0]) + " ".join(local(v) for v in variables)
        else:  # at file scope: `static Slot s, t` (the `;` stays), and its uses are rewritten
            start, end = offsets(variables[0].span.start), offsets(max(v.span.end for v in variables))
            slots = [slot(v) for v in variables if not v.extern]
            text = type_defined(variables[0]) + (
                "static ::cudalab::emu::SharedSlot " + ", ".join(slots) if slots else ""
            )
        edits.append((start, end, text + "\n" * (src.count("\n", start, end) - text.count("\n"))))
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
    shift_edits,
    clock_edits,
    ptx_edits,
    void_cast_edits,
    registration_edits,
    bitwise_edits,
)


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
    header_loop_forms: dict[str, int] | None = None,
    source: cuda_ast.Source | None = None,
    raw: bytes | None = None,
    redirect: Redirect = lambda include: None,
    plans: LoopFormPlans | None = None,
    header_proven: dict[str, int] | None = None,
    proven: dict[str, cuda_ast.Function] | None = None,
    file_name: str | None = None,
) -> str:
    """`file_name`: the name its `#line` directives give the file (by default `path`);
    `header_loop_forms`: the kernels with loop forms that local headers define, each with where
    this file includes the header (a launch after it may run the form); `header_proven`: the same
    for kernels with proven forms; `source`: the front end's records of the file (and its local
    headers), read from `raw`, the file's bytes (by default it reads `src` alone); `redirect`: what
    its #includes of local headers name instead; `plans`: the file's loop_form_plans, where the
    caller has them; `proven`: its proven_kernels, likewise."""
    if source is None or raw is None:
        raw = src.encode("utf-8", "surrogateescape")
        source = cuda_ast.parse(Path(path), data=raw)
    file = str(Path(path).resolve())
    offsets = CharacterOffsets(raw)
    if plans is None:
        plans = loop_form_plans(source, file, raw)
    defined = {f.name for f in source.kernels() if f.defined and f.body is not None and f.body.file == file}
    shown = file_name or path
    forms = [loop_form(src, f, offsets, plan, shown) for found in plans.values() for f, plan in found]
    launchable = {k: at for k, at in (header_loop_forms or {}).items() if k not in defined}
    launchable |= {name: min(offsets(f.span.end) for f, _ in found) for name, found in plans.items()}
    if proven is None:
        proven = proven_kernels(source, file, raw, plans)
    forms += [proven_form(src, f, offsets, shown) for f in proven.values()]
    proven_at = {k: at for k, at in (header_proven or {}).items() if k not in defined}
    proven_at |= {name: offsets(f.span.end) for name, f in proven.items()}
    sites = launch_sites(src, source, file, offsets)
    edits = launch_edits(src, sites, loop_forms=launchable, proven=proven_at)
    edits += emu_edits(src, source, file, offsets) + include_edits(source, file, offsets, redirect)
    # (each form's text is the kernel's with the edits inside it made)
    edits += [(at, at, form(edits)) for at, form in forms]
    uses_thrust = any(i.spelled.startswith("thrust/") for i in source.includes if i.name.file == file)
    return f'{PRELUDE}{THRUST_AS_ON_CUDA if uses_thrust else ""}#line 1 "{shown}"\n{applied(src, edits)}'


# Per kernel name, its definitions, each with its plan (thread_loops.plan).
LoopFormPlans = dict[str, list[tuple[cuda_ast.Function, list[Edit]]]]


def loop_form_plans(
    source: cuda_ast.Source, file: str, raw: bytes, waiting: set[str] | None = None
) -> LoopFormPlans:
    """The kernels of `file` (its bytes: `raw`) that get loop forms, each with its definitions and
    their plans (thread_loops.plan): a kernel all of whose definitions are in the file, whose lines
    hold nothing Clang could not read (a call, as of cooperative groups, that may wait), that calls
    no function that waits (`waiting`, by default thread_loops.waiting_functions), and whose
    threads can run as loops between its own waits."""
    if waiting is None:
        waiting = thread_loops.waiting_functions(source)
    plans: LoopFormPlans = {}
    for name, found in kernel_definitions(source).items():
        if any(f.body is None or f.body.file != file or f.statements is None for f in found):
            continue
        if any(f.statements.calls & waiting or unread(source, f, raw) for f in found):
            continue
        try:
            plans[name] = [(f, thread_loops.plan(f, raw)) for f in found]
        except thread_loops.NotLoops:
            continue
    return plans


def kernel_definitions(source: cuda_ast.Source) -> dict[str, list[cuda_ast.Function]]:
    """The definitions of each kernel the front end read, by name."""
    definitions: dict[str, list[cuda_ast.Function]] = {}
    for f in source.kernels():
        if f.defined:
            definitions.setdefault(f.name, []).append(f)
    return definitions


def proven_kernels(
    source: cuda_ast.Source, file: str, raw: bytes, plans: LoopFormPlans, waiting: set[str] | None = None
) -> dict[str, cuda_ast.Function]:
    """The kernels of `file` whose accesses their code proves (cuda_ast.Function.proven), by name:
    those defined once, here, without a loop form (`plans`: the file's loop_form_plans), and not
    overloaded, that call no function that waits (`waiting`, by default
    thread_loops.waiting_functions)."""
    # (a launch names the kernel as written: a name with overloads could pick another copy; and a
    # device function it calls runs on in the copy's thread, which must not wait at a barrier)
    if waiting is None:
        waiting = thread_loops.waiting_functions(source)
    signatures: dict[str, set[tuple[str, ...]]] = {}
    for f in source.kernels():
        signatures.setdefault(f.name, set()).add(tuple(p.type for p in f.parameters))
    return {
        name: found[0]
        for name, found in kernel_definitions(source).items()
        if len(found) == 1
        and len(signatures[name]) == 1
        and not found[0].calls & waiting
        and found[0].proven is not None
        and found[0].body is not None
        and found[0].body.file == file
        and name not in plans
        and not unread(source, found[0], raw)
    }


def unread(source: cuda_ast.Source, f: cuda_ast.Function, raw: bytes) -> bool:
    """Whether Clang reported an error in the lines of `f`."""
    first = f.span.line
    last = first + raw.count(b"\n", f.span.start, f.span.end)
    return any(e.file == f.span.file and first <= e.line <= last for e in source.errors)


def loop_form(
    src: str, kernel: cuda_ast.Function, offsets: CharacterOffsets, plan: list[Edit], path: str
) -> tuple[int, Callable[[list[Edit]], str]]:
    """Where `kernel`'s loop form goes (after the line where the kernel ends), and its text given
    the file's edits (those that lie in the kernel are made in the form too) and the `plan`'s (byte
    offsets); the kernel's own lines keep their numbers (#line)."""
    return kernel_copy(src, kernel, offsets, path, plan, LOOP_FORM_PREFIX, "::cudalab::emu::ThreadLoops")


def proven_form(
    src: str, kernel: cuda_ast.Function, offsets: CharacterOffsets, path: str
) -> tuple[int, Callable[[list[Edit]], str]]:
    """Where a kernel whose accesses its code proves (kernel.proven) gets, in checked code, its copy
    without the checks' instrumentation (PROVEN_PREFIX: the block runs it once the launch has checked
    the block's ranges, common/emu/src/proven_blocks.cpp) and the function that gives the launch
    those ranges from the kernel's arguments (PROVEN_PLAN_PREFIX)."""
    assert kernel.proven is not None and kernel.body is not None
    # (checked code's threadIdx is const, which lets the compiler keep one thread's index for a
    # whole row of threads once it inlines the copy into the row's loop: the copy reads the
    # worker's threadIdx through a reference that the loop's stores may change)
    opening = kernel.body.start + 1
    index = (opening, opening, " const ::uint3& threadIdx = ::cudalab::emu::thread_index();")
    # (inline, as its ranges' function: a kernel defined in a header that two files include)
    head = src[offsets(kernel.span.start) : offsets(kernel.name_at)]
    inline = "" if re.search(r"\b(inline|__forceinline__|__inline_hint__)\b", head) else "inline "
    result = f"{NO_CHECKS} {inline}void"
    parameters = ", ".join(p.declaration() for p in kernel.parameters)
    names = [p.name for p in kernel.parameters]

    def long_long(text: str) -> str:  # the kernel's integer arithmetic (no guard: every thread)
        return UNBOUNDED if text == cuda_ast.proven_accesses.UNGUARDED else f"static_cast<long long>({text})"

    def access(a: cuda_ast.proven_accesses.ProvenAccess) -> str:
        fields = [names[a.parameter], str(a.element_bytes), "true" if a.store else "false", str(a.line)]
        if a.index is not None:  # a load at another element: its index's coefficients
            i = a.index
            fields += ["true", *map(long_long, (i.constant, i.column, i.row, i.step, i.first, i.end))]
        elif a.loop is not None:  # a store in a loop: the loop's bounds
            fields += ["false", "0", "0", "0", "0", *map(long_long, a.loop)]
        return "{" + ", ".join(fields) + "}"

    def visit(v: cuda_ast.proven_accesses.Visit) -> str:
        # (the thread's own element: x, and in a 2D kernel the pitch times y)
        own = cuda_ast.proven_accesses.AffineIndex(column="1", row=kernel.proven.pitch or "0")
        i = v.index or own
        first, end = v.loop or ("0", "1")
        terms = (i.constant, i.column, i.row, i.step, first, end)
        parameter = names[v.parameter]
        fields = [parameter, f"sizeof(*{parameter})", "true" if v.store else "false", str(v.line)]
        return "{" + ", ".join([*fields, *map(long_long, terms)]) + "}"

    accesses = ", ".join(access(a) for a in kernel.proven.accesses)

    def bound(text: str, index_type: str) -> str:  # (a guard's limit, as its comparison converts it)
        if text == cuda_ast.proven_accesses.UNGUARDED:
            return UNBOUNDED
        return f"::cudalab::emu::bound_of<{index_type}>({text})"

    limit = bound(kernel.proven.limit, kernel.proven.index_type)
    stride = "true" if kernel.proven.grid_stride else "false"
    rows = "-1" if kernel.proven.rows is None else bound(kernel.proven.rows, kernel.proven.row_type)
    pitch = "0" if kernel.proven.pitch is None else long_long(kernel.proven.pitch)
    visits = kernel.proven.visits
    counted = "{}, -1" if visits is None else f"{{{', '.join(map(visit, visits))}}}, {len(visits)}"
    ranges = (
        f"{NO_CHECKS} inline ::cudalab::emu::ProvenRanges {PROVEN_PLAN_PREFIX}{kernel.name}({parameters}) "
        f"{{ return {{__FILE__, {limit}, {{{accesses}}}, {len(kernel.proven.accesses)}, {stride}, {rows}, "
        f"{pitch}, {counted}}}; }}"
    )
    return kernel_copy(src, kernel, offsets, path, [index], PROVEN_PREFIX, result, "ifdef", ranges + "\n")


def kernel_copy(
    src: str,
    kernel: cuda_ast.Function,
    offsets: CharacterOffsets,
    path: str,
    plan: list[Edit],
    prefix: str,
    result: str,
    condition: str | None = None,
    after: str = "",
) -> tuple[int, Callable[[list[Edit]], str]]:
    """A copy of `kernel` after the line where it ends, named with `prefix`, without `__global__`,
    its `void` replaced by `result`, followed by `after`, in `#{condition} CUDALAB_EMU_CHECKED`
    where a condition is given (`ifdef`: for checked code only);
    its text given the file's edits (those that lie in the kernel are made in the copy too) and the
    `plan`'s (byte offsets); the kernel's own lines keep their numbers (#line)."""
    assert kernel.body is not None
    start, named, end = offsets(kernel.span.start), offsets(kernel.name_at), offsets(kernel.body.end)
    # The head before the name, without `__global__` (where Clang says it is written) and the
    # blanks after it, its `void` the copy's type.
    head = src[start:named]
    cut = []
    for g in kernel.global_at:
        a, b = offsets(g.start) - start, offsets(g.end) - start
        if 0 <= a < b <= len(head):
            cut.append((a, len(head) - len(head[b:].lstrip(" \t")), ""))
    before = applied(head, cut)
    void = before.rfind("void")
    before = before[:void] + result + before[void + 4 :]
    # (from the kernel's name on: its parameters, and its body with the plan's steps)
    steps = [(offsets(a) - named, offsets(b) - named, t) for a, b, t in plan]
    line_end = src.find("\n", end)
    line_end = len(src) if line_end < 0 else line_end
    first_line = src.count("\n", 0, start) + 1
    next_line = src.count("\n", 0, line_end) + 2

    def text(edits: list[Edit]) -> str:
        inside = [(a - named, b - named, t) for a, b, t in edits if named <= a < end and b <= end]
        body = before + prefix + applied(src[named:end], inside + steps)
        form = f'#line {first_line} "{path}"\n{body}\n{after}'
        if condition is not None:
            form = f"#{condition} CUDALAB_EMU_CHECKED\n{form}#endif\n"
        return f'\n{form}#line {next_line} "{path}"'

    return line_end, text


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
        file_name: str | None = None,
    ) -> None:
        self.out_dir = out_dir
        self.file_name = file_name  # (the first file's, in its #line directives)
        self.checker = checker
        self.include_path = [Path(d).resolve() for d in include_path]  # (-I: Clang's)
        self.defines = list(defines)  # (-D)
        self.done: dict[Path, Path] = {}
        self.changed: dict[Path, bool] = {}  # needs_translation's answers, by header
        self.read: list[Path] = []
        self.source: cuda_ast.Source | None = None  # the first file's, with its local headers'
        self.waiting: set[str] | None = None  # thread_loops.waiting_functions of self.source
        self.plans: dict[Path, LoopFormPlans] = {}  # loop_form_plans' answers, by file
        self.proven: dict[Path, dict[str, cuda_ast.Function]] = {}  # and proven_kernels'

    def file(self, source: Path, target: Path) -> None:
        self.read.append(source)
        raw = source.read_bytes()
        text = decoded(raw)
        file_name = self.file_name if self.source is None else None
        try:
            if self.source is None:
                self.source = cuda_ast.parse(source, self.include_path, self.defines, local_headers=True)
                # (a change to any local header may change which kernels get loop forms)
                self.read += [h for h in (Path(i.included) for i in self.source.includes) if self.local(h)]
            if self.checker:
                translated = translate_for_checker(text, str(source), self.source, raw, self.redirect)
            else:
                forms = self.header_loop_forms(source)
                plans = self.loop_form_plans(source)
                header_proven = self.header_proven(source)
                translated = translate(
                    text,
                    str(source),
                    forms,
                    self.source,
                    raw,
                    self.redirect,
                    plans,
                    header_proven,
                    self.proven_kernels(source),
                    file_name,
                )
        except TranslateError as e:
            raise SystemExit(f"{source}:{e.line}: error: {e}") from None
        except cuda_ast.FrontEndError as e:
            raise SystemExit(str(e)) from None
        write_if_changed(target, translated, [*self.read, *TRANSLATOR])

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
        the emu: a launch, a kernel, __shared__, assert, clock, inline PTX ...), or a local header
        it includes (whose #include then names the translation). Asked for each #include of it and
        each file whose loop forms it may hold: answered once."""
        assert self.source is not None
        if header not in self.changed:
            self.changed[header] = False  # (while its includes are asked: a cycle adds nothing)
            raw = header.read_bytes()
            text, file, offsets = decoded(raw), str(header), CharacterOffsets(raw)
            if self.checker:
                edits = checker_edits(text, self.source, file, offsets)
            else:
                edits = emu_edits(text, self.source, file, offsets) or launch_sites(
                    text, self.source, file, offsets
                )
            included = (Path(i.included) for i in self.includes(header))
            self.changed[header] = bool(edits) or any(self.needs_translation(h) for h in included)
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

    def loop_form_plans(self, file: Path) -> LoopFormPlans:
        """loop_form_plans of `file`, made once per file (a header's are asked for by each file
        that includes it, and by its own translation), from one reading of the call graph."""
        assert self.source is not None
        file = file.resolve()
        if file not in self.plans:
            if self.waiting is None:
                self.waiting = thread_loops.waiting_functions(self.source)
            self.plans[file] = loop_form_plans(self.source, str(file), file.read_bytes(), self.waiting)
        return self.plans[file]

    def header_loop_forms(self, file: Path) -> dict[str, int]:
        """The kernels with loop forms that the local headers `file` includes define (and the
        headers they include), each with where `file` includes it."""
        return self.header_kernels(file, lambda header: set(self.loop_form_plans(header)))

    def proven_kernels(self, file: Path) -> dict[str, cuda_ast.Function]:
        """proven_kernels of `file`, found once per file, as loop_form_plans."""
        assert self.source is not None
        file = file.resolve()
        if file not in self.proven:
            plans = self.loop_form_plans(file)  # (which also reads the call graph once)
            self.proven[file] = proven_kernels(self.source, str(file), file.read_bytes(), plans, self.waiting)
        return self.proven[file]

    def header_proven(self, file: Path) -> dict[str, int]:
        """The same as header_loop_forms for the kernels with proven forms (proven_form)."""
        return self.header_kernels(file, lambda header: set(self.proven_kernels(header)))

    def header_kernels(
        self, file: Path, kernels: Callable[[Path], set[str]], seen: set[Path] | None = None
    ) -> dict[str, int]:
        """The kernels that `kernels` finds in the local headers `file` includes (and the headers
        they include), each with where `file` includes it."""
        assert self.source is not None
        seen = set() if seen is None else seen
        offsets = CharacterOffsets(file.read_bytes())
        forms: dict[str, int] = {}
        for include in self.includes(file):
            header = Path(include.included)
            if header in seen:
                continue
            seen.add(header)
            if not self.needs_translation(header):
                continue  # included as it is: so are the headers it includes (no loop forms)
            found = kernels(header) | set(self.header_kernels(header, kernels, seen))
            forms |= {name: offsets(include.name.start) for name in found if name not in forms}
        return forms


def decoded(raw: bytes) -> str:
    """A source file's text as a compiler reads it: a byte-order mark (a Windows editor's) is not
    part of it, and bytes that are not UTF-8 stay the bytes they are (surrogate escapes)."""
    return raw.decode("utf-8-sig", errors="surrogateescape")


def write_if_changed(target: Path, text: str, made_from: Iterable[Path] = ()) -> None:
    """Writes `text` unless `target` holds it already (what is compiled from it is not compiled
    again); a target that holds it but is older than a file it is `made_from` is touched, or make,
    which compares times, would make it again on every build."""
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8", "surrogateescape")
    if not target.exists() or target.read_bytes() != data:
        target.write_bytes(data)
    elif any(p.stat().st_mtime > target.stat().st_mtime for p in made_from if p.exists()):
        target.touch()


# The translator's own files: a change to any of them may change every translation (the depfile).
TRANSLATOR = sorted(
    {
        Path(m.__file__)
        for m in (
            sys.modules[__name__],
            thread_loops,
            cuda_ast,
            cuda_ast.kernel_statements,
            cuda_ast.proven_accesses,
        )
    }
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(usage=__doc__.split("Usage: ")[1].split("\n")[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--checker", action="store_true")
    parser.add_argument("--depfile", type=Path)
    parser.add_argument("--file-name")
    parser.add_argument("-I", dest="include_path", action="append", default=[], type=Path)
    parser.add_argument("-D", dest="defines", action="append", default=[])
    args = parser.parse_args(argv[1:])
    source, target = args.input.resolve(), args.output.resolve()
    headers = target.parent / (target.name + ".headers")
    translation = Translation(headers, args.checker, args.include_path, args.defines, args.file_name)
    try:
        translation.file(source, target)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as e:
        print(f"{source}: error: cannot read: {e}", file=sys.stderr)
        return 1
    if args.depfile is not None:
        deps = " ".join(str(p).replace(" ", "\\ ") for p in [*translation.read, *TRANSLATOR])
        write_if_changed(args.depfile, f"{target}: {deps}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
