"""The memory accesses that a stretch of a loop form proves, read from Clang's AST, so that checked
code checks their words once per block (common/emu/src/proven_stretches.cpp) and runs the stretch
without a check per access (thread_loops.py says when a stretch may).

The algorithm. A statement is *proven* when the only memory it touches is
- loads of `__shared__` arrays declared in the kernel (`__shared__ float
  Mds[TILE_WIDTH][TILE_WIDTH];`, or the dynamic `extern __shared__ float s[];`),
- loads of global memory through a pointer parameter (`M[Row * Width + ph * TILE_WIDTH + tx]`),
- loads of `__constant__` arrays declared with a size (`c_Kernel[KERNEL_RADIUS - j]`),
- stores to either, each a statement of its own (`Mds[ty][tx] = value;`, `P[Row * Width + Col] =
  Pvalue;`, or `s[tid] += value;`, a load and a store of the element) that every thread makes, or
  every thread whose x index is below a limit of the block's: under no `if` but `if (threadIdx.x <
  limit)` without `else` (a tree reduction's step; in a loop with the block's bounds, every such
  thread makes it for every value of the counter), or `if (i < n)` where i is the block's offset
  plus threadIdx.x (the guard of the thread's global index; both sides signed, so that the
  comparison is the numbers' and the bound is n less the offset, which the launch gives where the
  kernel's index cannot wrap: index_bound), or `if (threadIdx.x == 0)` (the limit 1: a block's
  result stored by its first thread); or every thread that is its warp's first lane, `if
  (threadIdx.x % 32 == 0)` (or `(threadIdx.x & 31) == 0`, or a variable that stands for either,
  `lane == 0`; any literal above 1 or `warpSize` for 32, a power of two for `&`), alone or joined
  by `&&` to a bound above: the record's x counts those threads (threadIdx.x / 32), and a subscript
  may divide by 32 an index whose x coefficient is 1 (`i / 32`, `threadIdx.x >> 5`), the block's
  part of it divided where 32 divides it (the launch asks: else the access's x bound is kNoBound),
each subscript an integer that is affine in the thread's index (threadIdx.x, .y, .z) and the
counters of loops in the statement, with coefficients the block's values: literals, parameters,
constants, template values, blockIdx, blockDim, gridDim, and variables of the kernel that the
planner knows to be the block's. Everything else must be local numbers and arithmetic: a local
scalar may be assigned, a call must be a math function of numbers or a warp shuffle of them (the
shuffle's result is read from the emu's memory: thread_loops.py), and a loop must read
`for (int k = first; k < end; ++k)` (or `k <= last`, `k++`, `k += step`) with the block's bounds and a
body that leaves k alone. An integer variable with one initializer that names the thread's index
stands for it (`int ty = threadIdx.y;`, `int row = ty * 2 + 1;`), which the planner accepts only
where nothing in the kernel changes it; one whose initializer names no thread (a tile loop's
counter) is named, as a value the planner must know to be the block's. A pointer parameter is
accepted where the kernel never moves it, or where its one change is a statement of the kernel's
body (in no loop or `if`) that adds an offset of that affine form (`d_Src += baseY * pitch +
baseX;`): after it, `d_Src[i]` is the argument's element at the offset plus i. A local pointer
that nothing changes, whose initializer moves a parameter the kernel never moves by offsets of
that form (`real *x = d_x + blockDim.x * blockIdx.x;`, or `&d_x[offset]`), its elements of the
parameter's type, stands for the parameter the same way (its declaration touches no memory). The
record gives each access's subscripts as the coefficients of the thread's index and the loops'
counters, so that the launch can bound every subscript a block's threads form, for every value of
the counters, by the corners of that box.

Limitations (the statement keeps a check per access): a store under an `if` other than a thread's
x bound or first lanes, or inside an expression,
a store to local memory, a pointer other than a parameter or a local moved from one, a member
other than the built-ins', a call other than math, a loop of another form, a subscript that
multiplies two indices, a `__shared__` array declared at file scope (the dynamic `extern
__shared__` array is proven where the kernel declares it, its first dimension as long as the
launch's dynamic shared memory holds), an element that is not a number of whole 4-byte words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .kernel_statements import SHUFFLES, Facts, Tokens, changed_by_call, children, kind_of, local_id
from .proven_accesses import (
    INTEGERS,
    MATH,
    NUMBERS,
    SIGNED,
    UNIT_STEP,
    canonical_kind,
    combined,
    increment,
    plain,
    shared,
    written,
)

THREAD_AXES = ("x", "y", "z")
BLOCK_BUILTINS = ("blockIdx", "blockDim", "gridDim")
# Expressions that pass their value through (or are one)
PASSING = frozenset(
    ("PAREN_EXPR", "UNEXPOSED_EXPR", "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR")
)
LITERALS = frozenset(("INTEGER_LITERAL", "FLOATING_LITERAL", "CXX_BOOL_LITERAL_EXPR"))
CHANGES = ("*", "&", "++", "--")  # unary operators that read memory, take an address or change
# What names a value that every thread of the block shares, whatever the planner knows
CONSTANT_DECLARATIONS = frozenset(("PARM_DECL", "ENUM_CONSTANT_DECL", "TEMPLATE_NON_TYPE_PARAMETER"))

Terms = dict[str, str]  # "constant", "x", "y", "z" or a loop's counter id as str -> coefficient


@dataclass(frozen=True)
class Loop:
    counter: int  # the counter's local id
    first: str  # its bounds and step as the kernel writes them: it runs over first, first +
    end: str  # step, ... below end (the launch checks that the step is positive)
    step: str


@dataclass(frozen=True)
class Subscript:
    terms: tuple[tuple[str, str], ...]  # (variable, coefficient), variables as in Terms


@dataclass(frozen=True)
class StretchAccess:
    array: str  # the array's name, or the pointer parameter's
    space: str  # "shared" (a `__shared__` array's element), "constant" (a `__constant__` one's) or
    # "global" (global memory through the parameter)
    store: bool
    subscripts: tuple[Subscript, ...]  # from the outermost (a pointer's: one)
    line: int
    x_end: str | None = None  # under `if (threadIdx.x < x_end)`: the block's value x_end
    enclosing: tuple[int, ...] = ()  # the counters of the loops it is in (each value, a visit)
    sometimes: bool = False  # under an `if` (but a thread's bound), `?:`, `&&` or `||`: a thread
    # may skip it
    x_every: int = 1  # under `if (threadIdx.x % W == 0)`: W, the x terms count threadIdx.x / W


@dataclass(frozen=True)
class StretchAccesses:
    accesses: tuple[StretchAccess, ...]
    loops: tuple[Loop, ...]  # the loops of the statement, in order
    uses: frozenset[int]  # the locals and parameters the coefficients and bounds name (the block's?)
    aliases: frozenset[int]  # the locals that stand for their initializer (nothing may change them)


@dataclass(frozen=True)
class Move:
    """`P += offset;`, the one change of the pointer parameter P, a statement of the kernel's body."""

    statement: int  # the statement's offset in the file
    end: int  # where it ends: an access after it reads P's argument at the offset plus its subscript
    offset: object  # the offset's cursor


def moved_pointers(body: object, tokens: Tokens) -> dict[int, Move]:
    """The pointer parameters that the kernel whose body is `body` changes once, by a statement
    `P += offset;` of the body (in no loop or `if`), by their ids."""
    changes: dict[int, list[object]] = {}
    by_calls = Facts()  # (a pointer bound to a reference parameter may change in the call)
    for c in body.walk_preorder():  # type: ignore[attr-defined]
        kind = kind_of(c)
        if kind == "CALL_EXPR":
            changed_by_call(c, children(c), by_calls)
        if kind not in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR", "UNARY_OPERATOR"):
            continue
        inner = children(c)
        if not inner:
            continue
        target = plain(inner[0])
        parameter = target.referenced if kind_of(target) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]
        if parameter is None or kind_of(parameter) != "PARM_DECL":
            continue
        start, end = c.extent.start.offset, c.extent.end.offset  # type: ignore[attr-defined]
        if kind == "UNARY_OPERATOR":
            changing = tokens.at_or_after(start) in ("++", "--") or tokens.before(end) in ("++", "--")
        else:
            operator = tokens.at_or_after(inner[0].extent.end.offset)  # type: ignore[attr-defined]
            changing = kind == "COMPOUND_ASSIGNMENT_OPERATOR" or operator == "="
        if changing:
            changes.setdefault(local_id(parameter), []).append(c)
    top_level = {c.extent.start.offset for c in children(body)}  # type: ignore[attr-defined]
    moves = {}
    for parameter, (change, *others) in changes.items():
        pointer = children(change)[0].type.get_canonical().kind.name == "POINTER"  # type: ignore[attr-defined]
        adds = kind_of(change) == "COMPOUND_ASSIGNMENT_OPERATOR"
        adds = adds and tokens.at_or_after(children(change)[0].extent.end.offset) == "+="  # type: ignore[attr-defined]
        alone = not others and parameter not in by_calls.changes
        if alone and pointer and adds and change.extent.start.offset in top_level:  # type: ignore[attr-defined]
            start, end = change.extent.start.offset, change.extent.end.offset  # type: ignore[attr-defined]
            moves[parameter] = Move(start, end, children(change)[1])
    return moves


def constant(variable: object) -> bool:
    """Whether a variable lives in constant memory (`__constant__`)."""
    return any(kind_of(c) == "CUDACONSTANT_ATTR" for c in children(variable))


def block_handle(variable: object) -> bool:
    """Whether `variable` is cooperative groups' handle of the block, `cg::thread_block cta =
    cg::this_thread_block();` (a value that touches no memory)."""
    if kind_of(variable) != "VAR_DECL":
        return False
    if not variable.type.get_canonical().spelling.endswith("::thread_block"):  # type: ignore[attr-defined]
        return False
    calls = [c for c in variable.walk_preorder() if kind_of(c) == "CALL_EXPR"]  # type: ignore[attr-defined]
    return bool(calls) and all(c.spelling in ("this_thread_block", "thread_block") for c in calls)


class NotProven(Exception):
    pass


def literal_value(text: str) -> int | None:
    """The value of a text that is arithmetic of integer literals (`(0) + (1)`, as a sum of terms
    writes threadIdx.x's coefficient), else None."""
    if not re.fullmatch(r"[\d\s()+*-]+", text) or "**" in text:
        return None
    try:
        return eval(text, {"__builtins__": {}})  # type: ignore[no-any-return]  # (digits, parentheses, + - * alone)
    except SyntaxError:  # (a literal C++ writes with a leading 0, which Python does not read)
        return None


def whole_number(expression: object) -> int | None:
    """The value of an expression of integer literals, or of `warpSize` (32: nvcc's built-in, a
    constant of the emu's device.h), else None."""
    c = plain(expression)
    if kind_of(c) == "DECL_REF_EXPR" and c.spelling == "warpSize":  # type: ignore[attr-defined]
        target = c.referenced  # type: ignore[attr-defined]
        return 32 if target is not None and target.type.is_const_qualified() else None
    return literal_value(written(c))


def initializer_of(variable: object) -> object | None:
    """The one initializer of an integer local of the kernel (not `__shared__`), which the local
    may stand for where nothing changes it; else None."""
    if variable is None or kind_of(variable) != "VAR_DECL" or shared(variable):
        return None
    init = [i for i in children(variable) if kind_of(i) != "TYPE_REF"]
    if len(init) != 1 or canonical_kind(variable.type) not in INTEGERS:  # type: ignore[attr-defined]
        return None
    if kind_of(variable.semantic_parent) not in ("FUNCTION_DECL", "FUNCTION_TEMPLATE"):  # type: ignore[attr-defined]
        return None
    return init[0]


def is_one(coefficient: str) -> bool:
    """Whether a coefficient's text is arithmetic of integer literals whose value is 1."""
    return literal_value(coefficient) == 1


def stretch_accesses(
    cursor: object, tokens: Tokens, moves: dict[int, Move] | None = None
) -> StretchAccesses | None:
    """The memory accesses of `cursor` (a statement), where the module's docstring admits them all
    (`moves`: the kernel's moved pointers); None where it does not."""
    walk = Walk(tokens, moves or {})
    try:
        walk.statement(cursor)
    except NotProven:
        return None
    return StretchAccesses(
        tuple(walk.accesses), tuple(walk.loops), frozenset(walk.uses), frozenset(walk.aliases)
    )


class Walk:
    def __init__(self, tokens: Tokens, moves: dict[int, Move]) -> None:
        self.tokens = tokens
        self.moves = moves
        self.accesses: list[StretchAccess] = []
        self.guarded = 0  # the `if`s the walk is in (but a thread's bound)
        self.branches = 0  # the `?:` branches and right sides of `&&` and `||` it is in
        self.x_end: str | None = None  # the limit of the `if (threadIdx.x < limit)` it is in
        self.x_every = 1  # W of the `if (threadIdx.x % W == 0)` it is in (a warp's first lanes)
        self.divided: list[str] = []  # the block's values an access's subscripts divide by W
        self.loops: list[Loop] = []
        self.counters: list[int] = []  # of the loops the walk is in, from the outermost
        self.uses: set[int] = set()
        self.aliases: set[int] = set()

    def operator(self, cursor: object) -> str:
        inner = children(cursor)
        return self.tokens.at_or_after(inner[0].extent.end.offset)  # type: ignore[attr-defined]

    def statement(self, cursor: object) -> None:
        kind = kind_of(cursor)
        if kind in ("COMPOUND_STMT", "NULL_STMT", "ATTRIBUTED_STMT", "UNEXPOSED_STMT"):
            for c in children(cursor):
                self.statement(c)
        elif kind == "IF_STMT":
            parts = children(cursor)
            free = len(parts) == 2 and self.x_end is None and self.x_every == 1 and not self.guarded
            guard = self.thread_guard(parts[0]) if free else None
            outer = self.x_end, self.x_every
            if guard is None:
                self.guarded += 1
            else:
                self.x_end, self.x_every = guard
            try:
                for c in parts if guard is None else parts[1:]:
                    self.statement(c)
            finally:
                self.guarded -= guard is None
                self.x_end, self.x_every = outer
        elif kind == "DECL_STMT":
            for variable in children(cursor):
                if block_handle(variable):
                    continue
                if (alias := self.pointer_alias(variable)) is not None:  # (an address: no access)
                    for offset in alias[1]:
                        self.value(offset)
                    continue
                if kind_of(variable) != "VAR_DECL" or canonical_kind(variable.type) not in NUMBERS:  # type: ignore[attr-defined]
                    raise NotProven("a local that is not a number")
                if shared(variable) or variable.storage_class.name == "STATIC":  # type: ignore[attr-defined]
                    raise NotProven("a shared or static variable")
                for c in children(variable):
                    if kind_of(c) != "TYPE_REF":
                        self.value(c)
        elif kind == "FOR_STMT":
            self.loop(cursor)
        elif kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and self.stored_element(cursor):
            target, value = children(cursor)
            if self.guarded:
                raise NotProven("a store that some threads make")
            self.value(value)
            if kind == "COMPOUND_ASSIGNMENT_OPERATOR":  # (it loads the element, then stores it)
                self.element(target, store=False)
            self.element(target, store=True)
        elif kind.endswith(("_EXPR", "_OPERATOR", "_LITERAL")):
            self.value(cursor)
        else:
            raise NotProven(f"a {kind}")

    def thread_guard(self, condition: object) -> tuple[str | None, int] | None:
        """The threads an `if`'s condition admits, as (x bound, x_every): a thread's x bound
        (thread_bound), a warp's first lanes (`threadIdx.x % W == 0`: lane_width), or both joined
        by `&&` (`threadIdx.x % 32 == 0 && i < n`); else None."""
        if (bound := self.thread_bound(condition)) is not None:
            return bound, 1
        if (width := self.lane_width(condition)) is not None:
            return None, width
        c = plain(condition)
        if kind_of(c) != "BINARY_OPERATOR" or self.operator(c) != "&&":
            return None
        for lanes, limit in (children(c), reversed(children(c))):
            width, bound = self.lane_width(lanes), self.thread_bound(limit)
            if width is not None and bound is not None:
                return bound, width
        return None

    def lane_width(self, condition: object) -> int | None:
        """W of `threadIdx.x % W == 0` (W a literal above 1; or a variable that stands for
        threadIdx.x % W, `lane == 0`), the threads that are their warp's (or W-thread segment's)
        first."""
        c = plain(condition)
        if kind_of(c) != "BINARY_OPERATOR" or self.operator(c) != "==":
            return None
        lane, zero = children(c)
        if literal_value(written(plain(zero))) != 0:
            return None
        lane = plain(lane)
        if kind_of(lane) != "DECL_REF_EXPR":
            return self.lane_width_of(lane)
        target = lane.referenced  # type: ignore[attr-defined]
        if (init := initializer_of(target)) is None:
            return None
        width = self.lane_width_of(init)  # (the local stands for its initializer)
        if width is not None:
            self.aliases.add(local_id(target))
        return width

    def lane_width_of(self, expression: object) -> int | None:
        """W of `threadIdx.x % W`, W a literal above 1, or of `threadIdx.x & (W - 1)`, W a power of
        two."""
        c = plain(expression)
        if kind_of(c) != "BINARY_OPERATOR" or self.operator(c) not in ("%", "&"):
            return None
        index, width = children(c)
        try:
            if self.terms(index) != {"x": "1"}:
                return None
        except NotProven:
            return None
        value = whole_number(width)
        if value is not None and self.operator(c) == "&":
            value = value + 1 if value & (value + 1) == 0 else None
        return value if value is not None and value > 1 else None

    def thread_bound(self, condition: object) -> str | None:
        """The x bound of `threadIdx.x < limit` (or a variable that stands for threadIdx.x), a
        tree reduction's `if (tid < s)`, where `condition` is one with the block's limit; or of
        `offset + threadIdx.x < limit` with the block's offset, a guard `if (i < n)` of the
        thread's global index i (both signed, so that the comparison is the numbers'): limit -
        offset; or 1 for `threadIdx.x == 0` (a block's result stored by its first thread)."""
        c = plain(condition)
        if kind_of(c) != "BINARY_OPERATOR" or self.operator(c) not in ("<", "=="):
            return None
        index, limit = children(c)
        try:
            if self.operator(c) == "==":
                first = self.terms(index) == {"x": "1"} and literal_value(self.block_value(limit)) == 0
                return "1" if first else None
            terms = self.terms(index)
            if terms == {"x": "1"}:  # (compared as the index's type and the limit's make it)
                index_type = plain(index).type.get_canonical().spelling  # type: ignore[attr-defined]
                return f"::cudalab::emu::bound_of<{index_type}>({self.block_value(limit)})"
            signed = all(canonical_kind(plain(e).type) in SIGNED for e in (index, limit))  # type: ignore[attr-defined]
            if set(terms) != {"x", "constant"} or not is_one(terms["x"]) or not signed:
                return None
            bound, offset = self.block_value(limit), terms["constant"]
            return f"::cudalab::emu::index_bound({bound}, {offset})"
        except NotProven:
            return None

    def loop(self, cursor: object) -> None:
        """`for (int k = first; k < end; ++k) body` with the block's bounds, k unchanged in body."""
        parts = children(cursor)
        if len(parts) != 4 or kind_of(parts[0]) != "DECL_STMT" or len(children(parts[0])) != 1:
            raise NotProven("a loop of another form")
        counter = children(parts[0])[0]
        init = [c for c in children(counter) if kind_of(c) != "TYPE_REF"]
        if canonical_kind(counter.type) not in INTEGERS or len(init) != 1:  # type: ignore[attr-defined]
            raise NotProven("a loop of another form")
        first = self.block_value(init[0])
        condition = plain(parts[1])
        if kind_of(condition) != "BINARY_OPERATOR":
            raise NotProven("a loop of another form")
        left, right = children(condition)
        operator = self.operator(condition)
        if self.variable(left) != local_id(counter) or operator not in ("<", "<="):
            raise NotProven("a loop of another form")
        end = self.block_value(right)
        if operator == "<=":
            end = f"({end}) + 1"
        self.loops.append(Loop(local_id(counter), first, end, self.step(parts[2], counter)))
        self.counters.append(local_id(counter))
        try:
            self.statement(parts[3])
        finally:
            self.counters.pop()

    def step(self, cursor: object, counter: object) -> str:
        """The step of a loop's `++k`, `k++` or `k += step` (the block's value)."""
        added = increment(cursor, counter, self.tokens)
        if added is None:
            raise NotProven("a loop of another form")
        return "1" if added is UNIT_STEP else self.block_value(added)

    @staticmethod
    def variable(cursor: object) -> int | None:
        c = plain(cursor)
        if kind_of(c) != "DECL_REF_EXPR" or c.referenced is None:  # type: ignore[attr-defined]
            return None
        return local_id(c.referenced)  # type: ignore[attr-defined]

    def value(self, cursor: object) -> None:
        """An expression: its loads are recorded, and it may touch nothing else."""
        kind = kind_of(cursor)
        inner = children(cursor)
        if kind in LITERALS or kind == "TYPE_REF":
            return
        if kind == "CONDITIONAL_OPERATOR":
            self.value(inner[0])
            self.branch(inner[2:])
            self.below_bound(inner[0], inner[1])
            return
        if kind in PASSING:
            if kind.endswith("CAST_EXPR") and canonical_kind(cursor.type) not in NUMBERS:  # type: ignore[attr-defined]
                raise NotProven("a cast to something other than a number")
        elif kind == "DECL_REF_EXPR":
            self.name(cursor)
            return
        elif kind == "MEMBER_REF_EXPR":
            base = plain(inner[0]) if inner else None
            builtin = base is not None and kind_of(base) == "DECL_REF_EXPR"
            if not builtin or base.spelling not in ("threadIdx", *BLOCK_BUILTINS):  # type: ignore[union-attr]
                raise NotProven("a member access")
            return
        elif kind == "ARRAY_SUBSCRIPT_EXPR":
            self.element(cursor, store=False)
            return
        elif kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            if kind == "COMPOUND_ASSIGNMENT_OPERATOR" or self.operator(cursor) == "=":
                if not self.is_move(cursor):
                    self.local_target(inner[0])
                inner = inner[1:]
            elif self.operator(cursor) == "&&":
                self.value(inner[0])
                self.below_bound(inner[0], inner[1])
                return
            elif self.operator(cursor) == "||":
                self.value(inner[0])
                self.branch(inner[1:])
                return
        elif kind == "UNARY_OPERATOR":
            start, end = cursor.extent.start.offset, cursor.extent.end.offset  # type: ignore[attr-defined]
            operator = self.tokens.at_or_after(start)
            if operator in ("*", "&"):
                raise NotProven("a pointer's dereference or an address")
            if operator in ("++", "--") or self.tokens.before(end) in ("++", "--"):
                self.local_target(inner[0])
                return
        elif kind == "CALL_EXPR":
            name = cursor.spelling  # type: ignore[attr-defined]
            if name not in MATH and name not in SHUFFLES or canonical_kind(cursor.type) not in NUMBERS:  # type: ignore[attr-defined]
                raise NotProven(f"a call of {name}")
            inner = list(cursor.get_arguments())  # type: ignore[attr-defined]
            if name in SHUFFLES:  # (its arguments are read by another stretch, or not at all)
                before = len(self.accesses)
                for c in inner:
                    self.value(c)
                if len(self.accesses) != before:
                    raise NotProven("a shuffle of memory")
                return
        else:
            raise NotProven(f"a {kind}")
        for c in inner:
            self.value(c)

    def branch(self, expressions: list[object]) -> None:
        """Expressions that a thread may not evaluate (a `?:`'s branches, the right side of `&&` or
        `||`): their loads are made by some threads."""
        self.branches += 1
        try:
            for c in expressions:
                self.value(c)
        finally:
            self.branches -= 1

    def below_bound(self, condition: object, expression: object) -> None:
        """An expression that a thread evaluates where `condition` holds (a `?:`'s first branch,
        the right side of `&&`): where the condition is a thread's x bound (`g < n ? in[g] : 0`)
        and no other condition or bound encloses it, its loads are those of the threads below the
        bound; else of some threads."""
        bound = None
        if self.x_end is None and not self.guarded and not self.branches:
            bound = self.thread_bound(condition)
        if bound is None:
            self.branch([expression])
            return
        self.x_end = bound
        try:
            self.value(expression)
        finally:
            self.x_end = None

    def name(self, cursor: object) -> None:
        target = cursor.referenced  # type: ignore[attr-defined]
        kind = kind_of(target) if target is not None else ""
        if kind in CONSTANT_DECLARATIONS or kind == "VAR_DECL":
            if canonical_kind(target.type) not in NUMBERS or shared(target):  # type: ignore[attr-defined]
                raise NotProven("a name that is not a number in a register")
            return
        raise NotProven(f"a name of another kind ({kind})")

    def is_move(self, assignment: object) -> bool:
        """Whether `assignment` is a moved pointer's move."""
        start = assignment.extent.start.offset  # type: ignore[attr-defined]
        return any(move.statement == start for move in self.moves.values())

    def local_target(self, cursor: object) -> None:
        """The left side of an assignment, ++ or --: a local scalar, not a loop's counter."""
        c = plain(cursor)
        target = c.referenced if kind_of(c) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]
        if target is None or kind_of(target) != "VAR_DECL" or canonical_kind(target.type) not in NUMBERS:  # type: ignore[attr-defined]
            raise NotProven("a store to memory")
        if shared(target) or target.storage_class.name == "STATIC" or local_id(target) in self.counters:  # type: ignore[attr-defined]
            raise NotProven("a store to shared memory, or to a loop's counter")

    def stored_element(self, assignment: object) -> bool:
        """Whether `assignment` (`=` or `+=` and the like) stores an element of a `__shared__`
        array or of a pointer parameter."""
        if kind_of(assignment) == "BINARY_OPERATOR" and self.operator(assignment) != "=":
            return False
        c = plain(children(assignment)[0])
        if kind_of(c) != "ARRAY_SUBSCRIPT_EXPR":
            return False
        while kind_of(c) == "ARRAY_SUBSCRIPT_EXPR":
            c = plain(children(c)[0])
        target = c.referenced if kind_of(c) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]
        kind = kind_of(target) if target is not None else ""
        if kind == "VAR_DECL":
            return shared(target) or self.pointer_alias(target) is not None
        return kind == "PARM_DECL"

    def pointer_alias(self, variable: object) -> tuple[object, list[object]] | None:
        """For a local pointer with one initializer `P + offset` (or a sum of several) or
        `&P[offset]`, P a pointer parameter the kernel never moves and each offset an integer
        (`real *x = d_x + blockDim.x * blockIdx.x;`): P and the offsets' cursors, else None. Such
        a pointer stands for P moved by the offsets, where nothing changes it (`aliases`: the
        planner checks)."""
        if kind_of(variable) != "VAR_DECL" or shared(variable) or variable.storage_class.name == "STATIC":  # type: ignore[attr-defined]
            return None
        if kind_of(variable.semantic_parent) not in ("FUNCTION_DECL", "FUNCTION_TEMPLATE"):  # type: ignore[attr-defined]
            return None
        if variable.type.get_canonical().kind.name != "POINTER":  # type: ignore[attr-defined]
            return None
        names = ("TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF")
        init = [c for c in children(variable) if kind_of(c) not in names]
        if len(init) != 1:
            return None
        c, offsets = plain(init[0]), []
        if kind_of(c) == "UNARY_OPERATOR" and self.tokens.at_or_after(c.extent.start.offset) == "&":  # type: ignore[attr-defined]
            c = plain(children(c)[0])
            if kind_of(c) != "ARRAY_SUBSCRIPT_EXPR":
                return None
            c, offset = children(c)
            c, offsets = plain(c), [offset]
        while kind_of(c) == "BINARY_OPERATOR" and self.operator(c) == "+":  # (`P + a + b`)
            left, right = children(c)
            if canonical_kind(right.type) not in INTEGERS:  # type: ignore[attr-defined]
                left, right = right, left
            c = plain(left)
            offsets.append(right)
        parameter = c.referenced if kind_of(c) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]
        if not offsets or parameter is None or kind_of(parameter) != "PARM_DECL":
            return None
        if local_id(parameter) in self.moves:
            return None
        pointee = variable.type.get_canonical().get_pointee()  # type: ignore[attr-defined]
        same = parameter.type.get_canonical().get_pointee().get_canonical().spelling  # type: ignore[attr-defined]
        integers = all(canonical_kind(o.type) in INTEGERS for o in offsets)  # type: ignore[attr-defined]
        if not integers or pointee.get_canonical().spelling != same:
            return None  # (a cast to another element: `(float2*)P + i`)
        return parameter, offsets

    def offset_terms(self, offsets: list[object]) -> Terms:
        """The sum of a pointer alias's offsets, as terms."""
        terms: Terms = {}
        for offset in offsets:
            terms = combined("+", terms, self.terms(offset)) or {}  # (a sum is always affine)
        return terms

    def element(self, cursor: object, store: bool) -> None:
        """`S[i]...[j]`, with S a `__shared__` array of the kernel (the dynamic one's first dimension
        the launch's), or `P[i]`, with P a pointer parameter."""
        indices = []
        c = cursor
        while kind_of(c) == "ARRAY_SUBSCRIPT_EXPR":
            base, index = children(c)
            indices.append(index)
            c = plain(base)
        array = c.referenced if kind_of(c) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]
        alias = self.pointer_alias(array) if array is not None and len(indices) == 1 else None
        if alias is not None or (array is not None and kind_of(array) == "PARM_DECL" and len(indices) == 1):
            pointer = array.type.get_canonical()  # type: ignore[attr-defined]
            element = pointer.get_pointee() if pointer.kind.name == "POINTER" else None
            if element is None or element.kind.name not in NUMBERS or element.get_size() % 4:
                raise NotProven("an access through a pointer to something other than numbers")
            if alias is not None:  # (the parameter's element at the offset plus the subscript)
                self.aliases.add(local_id(array))
                parameter, offsets = alias
                self.uses.add(local_id(parameter))
                self.record(parameter, "global", store, indices, cursor, self.offset_terms(offsets))
                return
            move = self.moves.get(local_id(array))
            if move is None:
                self.uses.add(local_id(array))  # (a pointer the kernel never moves: the block's)
            elif cursor.extent.start.offset > move.end:  # type: ignore[attr-defined]
                self.record(array, "global", store, indices, cursor, self.terms(move.offset))
                return
            self.record(array, "global", store, indices, cursor)  # (the argument itself)
            return
        if array is None or kind_of(array) != "VAR_DECL" or not (shared(array) or constant(array)):
            raise NotProven("an access to something other than a __shared__ array or a parameter's")
        # (lexically: an `extern` declaration's semantic parent is the translation unit)
        in_kernel = kind_of(array.lexical_parent) in ("FUNCTION_DECL", "FUNCTION_TEMPLATE")  # type: ignore[attr-defined]
        if shared(array) and not in_kernel:
            raise NotProven("a __shared__ array declared outside the kernel")
        if constant(array) and store:
            raise NotProven("a store to a __constant__ array")
        declared = array.type.get_canonical()  # type: ignore[attr-defined]
        rank = 0
        if declared.kind.name == "INCOMPLETEARRAY" and shared(array):  # (the dynamic array)
            rank, declared = 1, declared.get_array_element_type()
        while declared.kind.name in ("CONSTANTARRAY", "DEPENDENTSIZEDARRAY"):
            rank += 1
            declared = declared.get_array_element_type()
        size = declared.get_size()  # (the element's: a template's subscript has a dependent type)
        if rank != len(indices) or declared.kind.name not in NUMBERS or size <= 0 or size % 4:
            raise NotProven("a subscript that leaves an array, or an element of another kind")
        self.record(array, "shared" if shared(array) else "constant", store, indices, cursor)

    def record(
        self,
        array: object,
        space: str,
        store: bool,
        indices: list[object],
        cursor: object,
        moved: Terms | None = None,
    ) -> None:
        """The access of `array` at `indices` (innermost first), each as the sum of its terms (a
        moved pointer's plus its offset, `moved`)."""
        subscripts = []
        self.divided = []
        for index in reversed(indices):
            if canonical_kind(index.type) not in INTEGERS:  # type: ignore[attr-defined]
                raise NotProven("a subscript that is not an integer")
            terms = self.terms(index)
            if moved is not None:
                terms = combined("+", moved, terms) or {}  # (a sum is always affine)
            subscripts.append(Subscript(tuple(sorted(terms.items()))))
        line = cursor.extent.start.line  # type: ignore[attr-defined]
        sometimes = bool(self.guarded or self.branches)
        x_end = self.x_end
        if self.divided:  # (elsewhere no thread's subscript is the record's)
            divides = " && ".join(f"({value}) % {self.x_every} == 0" for value in self.divided)
            every = f"static_cast<long long>({x_end})" if x_end else "::cudalab::emu::kEveryThread"
            x_end = f"({divides}) ? {every} : ::cudalab::emu::kNoBound"
        self.accesses.append(
            StretchAccess(
                array.spelling,  # type: ignore[attr-defined]
                space,
                store,
                tuple(subscripts),
                line,
                x_end,
                tuple(self.counters),
                sometimes,
                self.x_every,
            )
        )

    def terms(self, expression: object) -> Terms:
        """An integer as the sum of its terms (the thread's index, the loops' counters, the block's
        values), each coefficient's text."""
        c = plain(expression)
        kind = kind_of(c)
        if kind == "MEMBER_REF_EXPR":
            base = plain(children(c)[0]) if children(c) else None
            if base is not None and base.spelling == "threadIdx" and c.spelling in THREAD_AXES:  # type: ignore[attr-defined]
                # (under a warp's first lanes, threadIdx.x is x_every times the x the terms count)
                return {c.spelling: str(self.x_every) if c.spelling == "x" else "1"}  # type: ignore[attr-defined]
        if kind == "DECL_REF_EXPR":
            target = c.referenced  # type: ignore[attr-defined]
            if target is not None and local_id(target) in self.counters:
                return {str(local_id(target)): "1"}
            if (init := initializer_of(target)) is not None:
                # (it stands for its initializer where that names the thread; else it is named,
                # as a tile loop's counter is, and must be the block's)
                terms = self.terms(init)
                if set(terms) - {"constant"}:
                    self.aliases.add(local_id(target))
                    return terms
        if kind == "BINARY_OPERATOR":
            left, right = children(c)
            operator = self.operator(c)
            if operator in ("+", "-", "*"):
                joined = combined(operator, self.terms(left), self.terms(right))
                if joined is None:
                    raise NotProven("a subscript that multiplies two indices")
                return joined
            divisor = whole_number(right)
            if operator == ">>" and divisor is not None and 0 <= divisor < 63:
                divisor = 1 << divisor
            if operator in ("/", ">>") and self.x_every > 1 and divisor == self.x_every:
                return self.lanes_divided(self.terms(left))
        return {"constant": self.block_value(c)}

    def lanes_divided(self, terms: Terms) -> Terms:
        """`E / W` under a warp's first lanes (threadIdx.x = W x), E's terms `terms`: W x / W is x,
        and the block's part C of E gives C / W where W divides it (the record's x bound asks it of
        the launch: `i / 32` with i = blockIdx.x * blockDim.x + threadIdx.x)."""
        if set(terms) - {"x", "constant"} or literal_value(terms.get("x", "0")) != self.x_every:
            raise NotProven("a division other than a warp's first lane's")
        divided = {"x": "1"}
        if "constant" in terms:
            self.divided.append(terms["constant"])
            divided["constant"] = f"({terms['constant']}) / {self.x_every}"
        return divided

    def block_value(self, expression: object) -> str:
        """An integer that every thread of the block has, as the kernel writes it; the locals it
        names go to `uses` (the planner checks that they are the block's)."""
        for c in expression.walk_preorder():  # type: ignore[attr-defined]
            kind = kind_of(c)
            if kind == "DECL_REF_EXPR":
                target = c.referenced
                target_kind = kind_of(target) if target is not None else ""
                if c.spelling in BLOCK_BUILTINS:
                    continue
                if target_kind == "VAR_DECL" and not shared(target):
                    if kind_of(target.semantic_parent) in ("FUNCTION_DECL", "FUNCTION_TEMPLATE"):
                        if local_id(target) in self.counters:
                            raise NotProven("a loop's counter in a block's value")
                        self.uses.add(local_id(target))
                    elif not target.type.is_const_qualified():
                        raise NotProven("a global variable that may change")
                elif target_kind == "PARM_DECL":
                    self.uses.add(local_id(target))  # (the block's unless the kernel changes it)
                elif target_kind not in CONSTANT_DECLARATIONS:
                    raise NotProven("a name that is not the block's")
            elif kind == "MEMBER_REF_EXPR":
                base = plain(children(c)[0]) if children(c) else None
                if base is None or base.spelling not in BLOCK_BUILTINS:
                    raise NotProven("a member that is not the block's")
            elif kind not in PASSING | LITERALS | {"BINARY_OPERATOR", "UNARY_OPERATOR"}:
                raise NotProven(f"a {kind} in a block's value")
            elif kind == "UNARY_OPERATOR" and self.tokens.at_or_after(c.extent.start.offset) in CHANGES:
                raise NotProven("a dereference, address or change in a block's value")
        if canonical_kind(expression.type) not in INTEGERS:  # type: ignore[attr-defined]
            raise NotProven("a value that is not an integer")
        return written(expression)
