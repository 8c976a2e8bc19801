"""A kernel whose threads wait only at `__syncthreads()` and warp shuffles, as loops over the block's
threads between its waits (loop fission, as MCUDA, COX and CuPBoP do), for unchecked and checked
code on the emu (thread_loops.h says how the checks see each thread).

The algorithm. The kernel's body (Clang's statements, kernel_statements.py) is read as a list of
statements at each level that holds a barrier: a barrier statement; a loop, `if` or `{ }` that
holds one (a *waiting* statement, whose head must have the same value in every thread of the
block: literals, the kernel's parameters that it never changes, blockIdx, blockDim, gridDim,
constants, and the variables of enclosing such loops' own inits); the declaration of `__shared__`
variables, types and `const` values from such values (the block's, run once where no thread can
have returned before them: in a kernel without `return`, or in its body before the first); and
the other statements, which run per thread. Each run of consecutive per-thread statements becomes
a region, `threads.run([&](unsigned t) -> bool { statements; return false; })`: the statements run for each
thread of the block in turn (x fastest; threadIdx is set where a statement names it or calls
something: `threads.run<false>` leaves it), and a `return` in them is `return true`,
which leaves the thread out of every later region (a thread that returned does not wait at later
barriers, as on a GPU). A barrier is `threads.barrier(...)`: its bookkeeping, nothing to wait for.
A waiting statement keeps its head and runs once for the block; its body is read the same way. A
variable that a region declares and a later region names is kept per thread (`PerThread<T>`, in the
block's memory): the declaring region stores it at its end, a later one names the thread's copy
(`auto& v = kept[t];`); a reference is kept as the address it refers to. A scalar that nothing
changes and whose initializer reads only the thread's index and the block's values
(`int tid = threadIdx.x`) is computed again instead, by its own text, in each later region that
names it: arithmetic costs less than a load per thread, and the compiler then sees the value (the
loop over `if (tid < s)` is over the thread's index). A stretch that is one `if (i < limit)`
without `else`, where `i` is the thread's x index and the limit the block's (a tree reduction's
step), runs for each row's threads up to the first for which the condition fails
(`threads.run_while(condition, stretch)`): the others would do nothing.

In checked code, a stretch whose only memory accesses are loads and stores of the kernel's
`__shared__` arrays and loads of global memory through its pointer parameters, at subscripts
affine in the thread's index and its loops' counters (stretch_accesses.py), and after which the
next barrier or the kernel's end comes (no later access can race with its own), or a warp's
meeting where its accesses are global and constant loads alone (`float v = i < n ? in[i] : 0`
before a shuffle: proven while no store into their arrays in the launch has the checks record
reads, so that the later accesses of the epoch see what they would see), runs a copy of its
text without the checks' instrumentation where the block's words prove the accesses, once per block
and run of the stretch (stretch_fine, thread_loops.h: every subscript within its dimension, every
word read written before and not since the last barrier, every word stored touched by no other
thread), and the stretch itself elsewhere: a tiled product's tile loads and inner loop, a tree
reduction's steps (`if (tid < s) s_data[tid] += s_data[tid + s];`, stores of the threads below a
bound), a stencil's halo loads, a warp reduction's store by each warp's first lane (`if (lane ==
0) sums[warp] = v;`). The copy runs through BlockThreads::run_proven (run_proven_while
for a step), without the runtime's step between threads that checked stretches take.

The loop form is the kernel's text with these insertions, after the translator's other edits, so
that its lines and the checks' names stay the kernel's.

A parameter that the kernel changes (`d_Src += baseY * pitch + baseX;`) is kept per thread as a
variable is, each thread's copy starting as the argument. The block's barrier of cooperative
groups (`cg::sync(block)`, `block.sync()` of a `thread_block`) is a barrier as `__syncthreads()`.

Limitations (the kernel then runs on fibers): a wait other than
`__syncthreads()` and shuffles (votes, `__syncwarp`, cooperative groups' other waits: a tile's
sync, shuffles and collectives, the grid's sync; a function that waits); a
shuffle inside a thread's own branch or loop, with arguments that change or call something, or
with a template argument; a
waiting statement whose head depends on the thread or on memory, or that is written by a macro; a
`break` or `continue` that leaves a region for the loop around it; a reference parameter the
kernel changes, or a parameter whose address it takes; a kept variable whose type Clang could not
spell (`auto` in a template, a lambda); a variable named `threadIdx` declared between barriers (in
checked code, each stretch's parameter); a variable whose address is taken (`&v`, a reference to
it, an array as a pointer) in a stretch that a wait follows.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE if (HERE / "cudalab_tools").is_dir() else HERE.parent / "tools"))
from cudalab_tools.cuda_ast import Function, Parameter, Source  # noqa: E402
from cudalab_tools.kernel_statements import Local, Statement, waits  # noqa: E402
from cudalab_tools.stretch_accesses import StretchAccess  # noqa: E402

Edit = tuple[int, int, str]  # byte offsets [start, end) of the kernel's file, and the new text
THREADS = "cudalab_threads"
WARPS = "cudalab_warps"
THREAD = "cudalab_t"
# Each stretch's second parameter: in checked code, the thread's index (thread_loops.h)
INDEX = "CUDALAB_LOOPS_INDEX"
NS = "::cudalab::emu::"
NO_CHECKS = '__attribute__((no_sanitize("thread")))'  # (the checks are ThreadSanitizer's hooks)
PROVEN_LOOPS = 4  # the loops a proven stretch may have (thread_loops.h's kProvenLoops)
WAITING = ("compound", "for", "while", "do", "if")
UNSPELLABLE = re.compile(r"\bauto\b|lambda|\(|dependent|decltype")


class NotLoops(Exception):
    """The kernel cannot run as loops (the message says what stops it)."""


@dataclass
class Plan:
    edits: list[Edit] = field(default_factory=list)


def kept_name(variable: Local) -> str:
    return f"cudalab_kept_{variable.name}_{variable.id}"


def storage(variable: Local) -> str:
    t = variable.type
    if UNSPELLABLE.search(t):
        raise NotLoops(f"the type of '{variable.name}' ({t})")
    if t.rstrip().endswith("&"):
        return f"{NS}PerThread<::std::remove_reference_t<{t}>*> {kept_name(variable)};"
    return f"{NS}PerThread<::std::remove_cv_t<{t}>> {kept_name(variable)};"


def save(variable: Local) -> str:
    if variable.type.rstrip().endswith("&"):
        return f"{kept_name(variable)}[{THREAD}] = &{variable.name};"
    return f"{NS}keep({kept_name(variable)}[{THREAD}], {variable.name});"


def restore(variable: Local, text: bytes, checked: bool = True) -> str:
    """The stretch's name for a thread's value of a variable that an earlier stretch declared
    (`checked` False: in a proven stretch's copy, which names the kept value itself)."""
    if variable.value is not None:  # (computed again, as the kernel's text computes it)
        start, end = variable.value
        return f"{variable.type} {variable.name} = {text[start:end].decode('utf-8', 'surrogateescape')};"
    if variable.type.rstrip().endswith("&"):
        return f"auto& {variable.name} = *{kept_name(variable)}[{THREAD}];"
    macro = "CUDALAB_LOOPS_RESTORE" if checked else "CUDALAB_LOOPS_REFER"
    return f"{macro}({variable.name}, {kept_name(variable)}[{THREAD}])"


def declared_in(statement: Statement) -> list[Local]:
    found = list(statement.declares)
    for part in statement.parts:
        found += declared_in(part)
    return found


class Planner:
    def __init__(self, kernel: Statement, text: bytes, parameters: Sequence[Parameter] = ()) -> None:
        self.text = text
        locals_ = declared_in(kernel)
        self.declared = {v.id for v in locals_}
        self.declared_names: dict[str, list[int]] = {}
        for v in locals_:
            self.declared_names.setdefault(v.name, []).append(v.id)
        # Parameters (and variables the tree does not declare): the block's while nothing changes
        # them; one that the kernel changes (`d_Src += offset;`) is each thread's, kept per thread.
        outside = kernel.changes - self.declared
        by_id = {p.name_at: p for p in parameters}
        if any(i not in by_id or by_id[i].reference for i in outside) or outside & kernel.addressed:
            raise NotLoops("it changes a reference parameter, or one whose address it takes")
        self.changed_parameters = [Local(by_id[i].name, by_id[i].type, i, False) for i in sorted(outside)]
        self.uniform: set[int] = set(kernel.uses - self.declared - outside)
        # The block's `const` scalars (runs_once), each stretch's lambda capturing by name those it
        # names: GCC 12 crashes (an internal error) on a template kernel's stretch that sizes an
        # array by one it captures by `[&]` alone (`float r[4 * n];`, `const int n = BM / 4;`).
        self.block_constants: dict[int, str] = {}
        self.addressed = kernel.addressed
        self.changed = kernel.changes
        self.first_return = min(kernel.returns, default=None)
        self.top_level = {part.start for part in kernel.parts}
        self.edits: list[Edit] = []
        self.shuffle_reads: list[Edit] = []  # (each shuffle's call, and the read that replaces it)
        # (where a down shuffle reads its source's kept value: its stretch runs the threads in order)
        self.kept_reads: list[int] = []

    def block_value(self, statement: Statement, own: set[int] = frozenset()) -> bool:  # type: ignore[assignment]
        return (
            statement.head_plain
            and statement.head_uses - own <= self.uniform
            and statement.head_changes <= own
        )

    def captures(self, region: list[Statement]) -> str:
        """The capture list of a stretch's lambda: by reference, and by name the block's `const`
        scalars that the stretch names."""
        names = set().union(*(s.uses for s in region))
        return "".join(
            f", {n}" for n in sorted({self.block_constants[i] for i in names & self.block_constants.keys()})
        )

    def recomputed(self, variable: Local) -> Local:
        """The variable as later stretches get it: computed again from its initializer where that
        names only the thread's index and the block's values and nothing changes it (a load of a
        kept copy costs more than the arithmetic, and the compiler sees what the value is), else
        kept per thread (`value` None)."""
        again = variable.value is not None and variable.value_uses <= self.uniform
        # (each name its initializer writes means the same variable wherever it is computed)
        for word in variable.value_words if again else ():
            ids = self.declared_names.get(word, [])
            again = again and (not ids or (len(ids) == 1 and ids[0] in variable.value_uses))
        if not again or variable.id in self.changed | self.addressed:
            return dataclasses.replace(variable, value=None)
        return variable

    def holds(self, region: list[Statement], kept: list[Local], attributes: str = "") -> str | None:
        """For a stretch that is one `if (i < limit)` without `else`, where `i` is the thread's x
        index (threadIdx.x, or a variable computed again as it) and the limit is the block's (a
        tree reduction's `if (tid < s)`): the condition as a function of the thread, so that the
        stretch runs for the threads of each row up to the first for which it fails
        (BlockThreads::run_while), not for every thread. (`attributes`: the lambda's.)"""
        s = region[0]
        if len(region) != 1 or s.kind != "if" or len(s.parts) != 1 or s.bound is None:
            return None
        bound = s.bound
        if not bound.limit_uses <= self.uniform:
            return None
        index = [v for v in kept if v.id == bound.index and v.value is not None and v.thread_x]
        if bound.index is not None and not index:
            return None
        condition = self.written(*bound.condition)
        restores = " ".join(restore(v, self.text) for v in index)
        return f"[&](unsigned, {INDEX}) {attributes}-> bool {{ {restores} return ({condition}); }}"

    def runs_once(self, statement: Statement) -> bool:
        """A statement the block runs once: a declaration of `__shared__` or static variables, of
        no variable (a type), or, where every thread reaches it, of `const` variables or of scalars
        that nothing changes, from the block's values (`int aEnd = aBegin + wA - 1;`)."""
        if statement.kind != "declaration" or statement.barriers:
            return False
        if all(v.common for v in statement.declares):
            return True
        own = {v.id for v in statement.declares}
        if not self.reached_by_every_thread(statement):
            return False
        if all(self.never_changed(v) for v in statement.declares) and self.block_value(statement, own):
            self.uniform |= own
            for v in statement.declares:
                if v.type.startswith("const ") and v.value is not None and v.id not in self.addressed:
                    self.block_constants[v.id] = v.name
            return True
        return False

    def reached_by_every_thread(self, statement: Statement) -> bool:
        """Whether no thread can have returned before `statement`: the kernel has no `return`, or
        it is a statement of the kernel's body before the first. (Run once, a value is computed
        even where every thread returned before it: `if (d == 0) return; const int q = n / d;`
        would trap.)"""
        if self.first_return is None:
            return True
        return statement.start in self.top_level and statement.end <= self.first_return

    def never_changed(self, variable: Local) -> bool:
        """A `const` value, or a scalar with one initializer that nothing changes or points to (one
        named threadIdx stays in its stretch, which refuses it: the name is each stretch's index)."""
        if variable.name == "threadIdx":
            return False
        if variable.type.startswith("const ") and not variable.type.rstrip().endswith("&"):
            return True
        unchanged = variable.id not in self.changed | self.addressed
        return variable.value is not None and unchanged

    def level(
        self,
        statements: tuple[Statement, ...],
        visible: list[Local],
        begin: int,
        final: bool = False,
    ) -> None:
        """The edits for the statements of one level, which starts at `begin`; `visible`: variables
        kept per thread that enclosing levels declared before it; `final`: nothing waits after the
        level (the kernel's own). A stretch starts where the statement before it ends (or the
        level starts): what lies between is the stretch's too (a macro that expands to nothing
        leaves its name before the `;` that Clang places the statement at)."""
        kept: list[Local] = list(visible)
        region: list[Statement] = []

        def close() -> None:
            if not region:
                return
            names = set().union(*(s.uses for s in region))
            declared_here = [v for s in region for v in s.declares]
            if any(v.name == "threadIdx" for v in declared_here):  # (a stretch's parameter)
                raise NotLoops("a variable named threadIdx between barriers")
            after = statements.index(region[-1]) + 1
            later = set().union(*(s.uses for s in statements[after:]))
            keep = [self.recomputed(v) for v in declared_here if v.id in later]
            last = final and region[-1] is statements[-1]  # (nothing waits after it)
            for v in declared_here:
                if v.id in self.addressed and not last:
                    raise NotLoops(f"the address of '{v.name}' may be used after a wait")
            restored = [v for v in kept if v.id in names and v.id not in {d.id for d in declared_here}]
            restores = [restore(v, self.text) for v in restored]
            for s in region:
                if s.jumps_out:
                    raise NotLoops(
                        f"line {s.line}: a break or continue leaves the statements between barriers"
                    )
                for r in s.returns:
                    self.edits.append((r, r + len("return"), "return true"))
            declarations = "".join(storage(v) for v in keep if v.value is None)
            in_order = any(region[0].start <= at < region[-1].end for at in self.kept_reads)
            run = f"{run_of(region, restored, in_order)}("
            holds = None if in_order else self.holds(region, kept)
            if holds is not None:
                run = f"{THREADS}.run_while({holds}, "
            captures = self.captures(region)
            opening = f"{run}[&{captures}](unsigned {THREAD}, {INDEX}) -> bool {{ {' '.join(restores)} "
            first = statements.index(region[0])
            start = statements[first - 1].end if first > 0 else begin
            if region[0].shuffles:  # (its shuffle's stretches come first, at its start)
                start = region[0].start
            saves = " ".join(save(v) for v in keep if v.value is None)
            ends_epoch = last or (after < len(statements) and statements[after].kind == "barrier")
            if (proven := self.proven_stretch(region, ends_epoch)) is not None:
                referred = [restore(v, self.text, checked=False) for v in restored]
                copy_run = f"{THREADS}.run_proven("
                if holds is not None:
                    copy_run = f"{THREADS}.run_proven_while({self.holds(region, kept, NO_CHECKS + ' ')}, "
                copy = self.proven_branch(proven, copy_run, start, region[-1].end, referred, saves, captures)
                opening = copy + opening
            self.edits.append((start, start, declarations + opening))
            self.edits.append((region[-1].end, region[-1].end, f" {saves} return false; }});"))
            kept.extend(keep)
            region.clear()

        for s in statements:
            if s.in_macro:
                raise NotLoops(f"line {s.line}: a macro writes it")
            if s.kind == "barrier":
                close()
                self.edits.append((s.start, s.end, f"{THREADS}.barrier(__FILE__, __LINE__);"))
            elif s.barriers == 0 and not s.waits_otherwise and not s.shuffles:
                if self.runs_once(s):
                    close()
                else:
                    region.append(s)
            elif s.waits_otherwise:
                raise NotLoops(f"line {s.line}: a wait other than __syncthreads() and shuffles")
            elif s.kind in ("other", "declaration") and s.barriers == 0 and len(s.shuffles) == 1:
                close()
                self.shuffle(s, kept)
                region.append(s)
            elif s.kind in WAITING:
                close()
                self.waiting(s, kept)
            else:
                raise NotLoops(f"line {s.line}: a __syncthreads() inside an expression, or two waits")
        close()

    def proven_stretch(self, region: list[Statement], ends_epoch: bool) -> str | None:
        """For a stretch whose every memory access stretch_accesses.py proves, where the next
        barrier or the kernel's end follows, or a warp's meeting where it only loads global and
        constant memory, or that touches no memory (locals and arithmetic: nothing a later access
        can race with): the call that checks the words the block's threads touch (stretch_fine,
        which also asks of global stores that no checked access touched global memory since the
        block's start or its last barrier), else None."""
        found = [s.accesses for s in region if s.accesses is not None]
        if len(found) < len(region) or any(s.returns for s in region):
            return None
        accesses = [access for f in found for access in f.accesses]
        only_loads = all(not a.store and a.space != "shared" for a in accesses)
        if not ends_epoch and accesses and (any(s.shuffles for s in region) or not only_loads):
            return None
        loops = [loop for f in found for loop in f.loops]
        uses = set().union(*(f.uses for f in found))
        aliases = set().union(*(f.aliases for f in found))
        if len(loops) > PROVEN_LOOPS or aliases & self.changed or not uses <= self.uniform:
            return None
        counters = [str(loop.counter) for loop in loops]

        def long_long(text: str) -> str:
            return f"static_cast<long long>({text})"

        def subscript(access: StretchAccess, level: int) -> str:
            array = access.array
            terms = dict(access.subscripts[level].terms)
            extent = f"{NS}extent_of<::std::remove_reference_t<decltype({array})>, {level}>"
            stride = f"sizeof({array}{'[0]' * (level + 1)})"
            fields = [extent if access.space != "global" else "0", stride]
            fields += [terms.get(v, "0") for v in ("constant", "x", "y", "z")]
            steps = [long_long(terms.get(c, "0")) for c in counters] or ["0"]
            return "{" + ", ".join(map(long_long, fields)) + ", {" + ", ".join(steps) + "}}"

        def described(access: StretchAccess) -> str:
            where = f"&{access.array}" if access.space != "global" else access.array
            flags = f"{NS}Space::{access.space}, {str(access.store).lower()}, {access.line}, "
            flags += long_long(access.x_end) if access.x_end is not None else f"{NS}kEveryThread"
            enclosing = sum(1 << counters.index(str(c)) for c in access.enclosing)
            flags += f", {enclosing}u, {str(access.sometimes).lower()}, {access.x_every}u"
            levels = ", ".join(subscript(access, k) for k in range(len(access.subscripts)))
            return f"{{{where}, {flags}, {{{levels}}}}}"

        bounds = ", ".join(
            f"{{{', '.join(map(long_long, (loop.first, loop.end, loop.step)))}}}" for loop in loops
        )
        listed = ", ".join(described(access) for access in accesses)
        # (built without checks: the records are the emu's, on the worker's stack)
        call = f"{NS}stretch_fine(__FILE__, {{{bounds}}}, {{{listed}}}, {THREADS}.returned(), "
        call += f"{str(ends_epoch).lower()})"
        return f"[&]() {NO_CHECKS} {{ return {call}; }}()"

    def proven_branch(
        self, proven: str, run: str, start: int, end: int, restores: list[str], saves: str, captures: str
    ) -> str:
        """In checked code, a stretch whose accesses the block's words prove runs a copy of its
        text without the checks' instrumentation (`run`: BlockThreads::run_proven or
        run_proven_while); the copy and the
        stretch keep the kernel's lines."""
        line = self.text.count(b"\n", 0, start) + 1
        copy = self.copied(start, end)
        restored = " ".join(restores)
        return (
            f"\n#ifdef CUDALAB_EMU_CHECKED\nif ({proven}) "
            f"{run}[&{captures}](unsigned {THREAD}, {INDEX}) {NO_CHECKS} -> bool {{ {restored}"
            f"\n#line {line}\n{copy}\n {saves} return false; }}); else\n"
            f"#endif\n#line {line}\n"
        )

    def written(self, start: int, end: int) -> str:
        return self.text[start:end].decode("utf-8", "surrogateescape")

    def copied(self, start: int, end: int) -> str:
        """The text of [start, end) for a proven copy: as written, but each shuffle read as the
        stretch reads it."""
        pieces, at = [], start
        for call_start, call_end, read in sorted(self.shuffle_reads):
            if start <= call_start and call_end <= end:
                pieces += [self.written(at, call_start), read]
                at = call_end
        return "".join(pieces) + self.written(at, end)

    def shuffle(self, s: Statement, kept: list[Local]) -> None:
        """A statement with a shuffle: a stretch before it publishes each thread's value (and the
        lane it reads), and the statement reads the result instead of calling. Where the mask, the
        lane or delta and the width are the block's values, they are given once, before that
        stretch, and each thread's source lane is computed where it reads; a down shuffle of such a
        kind whose value is a variable kept per thread needs no stretch before it (it reads the
        kept copies: WarpShuffles::down_result_in)."""
        call = s.shuffles[0]
        if not call.plain:
            raise NotLoops(f"line {s.line}: a shuffle whose arguments change or call something")
        arguments = [f"({self.written(a, b)})" for a, b in call.arguments]
        value = arguments[1]
        restored = [v for v in kept if v.id in s.uses]
        restores = " ".join(restore(v, self.text) for v in restored)
        opening = f"{run_of([s], restored)}([&](unsigned {THREAD}, {INDEX}) -> bool {{ {restores} "
        if call.lane_plain and call.lane_uses <= self.uniform:  # (the block's mask, lane, width)
            lanes = ", ".join(arguments[:1] + arguments[2:])
            kind = call.kind.rstrip("_")  # (xor_: xor_of_block, xor_result)
            rule = f"{WARPS}.{kind}_of_block(__FILE__, __LINE__, {lanes}); "
            written = self.written(*call.arguments[1]).strip()
            source = [
                v
                for v in restored
                if v.name == written and v.value is None and not v.type.rstrip().endswith("&")
            ]
            if kind == "down" and source:  # (read where it is kept: WarpShuffles::down_result_in)
                meet = f"{WARPS}.meet_of_block({THREADS}, __FILE__, __LINE__); "
                self.edits.append((s.start, s.start, rule + meet))
                read = f"{WARPS}.down_result_in({kept_name(source[-1])}, {THREAD})"
                self.edits.append((call.start, call.end, read))
                self.shuffle_reads.append((call.start, call.end, read))
                self.kept_reads.append(call.start)
                return
            publish = f"{WARPS}.put({THREAD}, {value}); return false; }}); "
            publish += f"{WARPS}.meet_of_block({THREADS}, __FILE__, __LINE__);"
            read = f"{WARPS}.{kind}_result<::std::decay_t<decltype({value})>>({THREAD})"
            self.edits.append((s.start, s.start, rule + opening + publish + " "))
        else:
            every = ", ".join(arguments)
            publish = f"{WARPS}.{call.kind}({THREAD}, __FILE__, __LINE__, {every}); return false; }}); "
            publish += f"{WARPS}.meet({THREADS}, __FILE__, __LINE__);"
            read = f"{WARPS}.result<::std::decay_t<decltype({value})>>({THREAD})"
            self.edits.append((s.start, s.start, opening + publish + " "))
        self.edits.append((call.start, call.end, read))
        self.shuffle_reads.append((call.start, call.end, read))

    def waiting(self, s: Statement, kept: list[Local]) -> None:
        """A loop, `if` or `{ }` that holds a barrier: once for the block, its body as a level."""
        own = {v.id for v in s.declares}
        if s.kind != "compound":
            changed_in_body = set().union(*(p.changes for p in s.parts))
            if not self.block_value(s, own) or own & changed_in_body:
                raise NotLoops(f"line {s.line}: its head may differ between the block's threads")
            if s.jumps_out or any(p.jumps_out for p in s.parts if s.kind == "if"):
                raise NotLoops(f"line {s.line}: a break or continue")
            self.uniform |= own
        if s.kind == "compound":
            self.level(s.parts, kept, s.start + 1)
            return
        for part in s.parts:
            if part.kind == "compound":
                self.level(part.parts, kept, part.start + 1)
            else:  # (a body without braces: a level of one statement, which may become several)
                self.edits.append((part.start, part.start, "{ "))
                self.level((part,), kept, part.start)
                self.edits.append((part.end, part.end, " }"))


def run_of(statements: list[Statement], restored: Sequence[Local] = (), in_order: bool = False) -> str:
    """The call that runs a stretch of these statements (and computes the `restored` variables
    again) for each thread: with threadIdx set only where one of them names it or calls something;
    `in_order`: in ascending order even where the block's threads run last first (the stretch reads
    a later lane's kept value, BlockThreads::run)."""
    names = any(s.names_thread for s in statements) or any(v.value_names_thread for v in restored if v.value)
    if in_order:
        return f"{THREADS}.run<{'true' if names else 'false'}, true>"
    return f"{THREADS}.run" if names else f"{THREADS}.run<false>"


def waiting_functions(source: Source) -> set[str]:
    """The names of the program's functions that wait, themselves or through those they call (the
    call graph of Clang's records: a name counts as waiting if any function of that name does);
    "" (a call through a pointer, or one Clang could not name) and a device function defined
    elsewhere are taken to wait."""
    defined = {f.name for f in source.functions if f.defined}
    # (a device function defined elsewhere, as with separate compilation, may wait)
    found = {""} | {f.name for f in source.functions if f.device_code and f.name not in defined}
    grew = True
    while grew:
        grew = False
        for f in source.functions:
            if f.name not in found and any(waits(c) or c in found for c in f.calls):
                found.add(f.name)
                grew = True
    return found


def plan(kernel: Function, text: bytes) -> list[Edit]:
    """The edits that make a kernel's loop form from its text (`text`: its file's bytes; the edits'
    offsets are byte offsets of it), besides the head's (translate.py); NotLoops where it cannot
    have one."""
    body = kernel.statements
    if body is None or not (body.barriers or body.shuffles) or body.waits_otherwise:
        raise NotLoops("it waits at no barrier or shuffle, or at another call")
    if body.in_macro:
        raise NotLoops("a macro writes its body")
    if body.jumps_out or body.has_goto:
        raise NotLoops("a goto, or a break or continue outside a loop")
    planner = Planner(body, text, kernel.parameters)
    opening = body.start + 1  # after `{` (before the first stretch's opening, at the same place)
    warps = f" {NS}WarpShuffles {WARPS};" if body.shuffles else ""
    # (a parameter the kernel changes starts as the argument in every thread)
    parameters = "".join(
        f" {storage(p)} for (unsigned {THREAD} = 0; {THREAD} < {NS}block_threads(); ++{THREAD}) {save(p)}"
        for p in planner.changed_parameters
    )
    planner.edits.append((opening, opening, f" {NS}BlockThreads {THREADS};{warps}{parameters}"))
    planner.level(body.parts, list(planner.changed_parameters), opening, final=True)
    planner.edits.append((body.end - 1, body.end - 1, " return {}; "))
    return planner.edits
