"""Which accesses of a kernel its code proves, read from Clang's AST, so that checked code on the emu
checks them once per block instead of once per access (common/emu/src/proven_blocks.cpp).

The algorithm. A kernel is *proven* when every memory access it makes is `P[i]`, where P is one of
its pointer parameters, and `i` is the thread's global x index, declared first and never changed
(`int i = blockIdx.x * blockDim.x + threadIdx.x;`, the factors and terms in either order), under the
guard `if (i < n) ...` (the kernel's last statement) or after `if (i >= n) return;`, with `n`
integer arithmetic of integer parameters (`n`, `B * T`); or, as the kernel's one statement, in the
grid-stride loop `for (int i = <that index>; i < n; i += blockDim.x * gridDim.x)`; or, in a 2D
kernel whose y index `row` is declared beside it, `P[row * pitch + i]` (one pitch for all, integer
arithmetic of the parameters, no smaller than n, which the launch checks) under `if (i < n && row <
m)` or after `if (i >= n || row >= m) return;`; or with no guard at all, where every thread of the
grid has its element (a grid that covers the arrays exactly: the launch checks the whole grid's
ranges, and a block whose ranges reach past an array runs checked). Then the threads of a block
touch elements [blockIdx.x * blockDim.x, min((blockIdx.x + 1) * blockDim.x, n)) of each array (and
the same rows a grid's threads further on, in a grid-stride loop; those columns of each of the
block's rows, in 2D),
each element one thread's: the launch can check a block's ranges against their arrays and their
writers at once, and run the block's threads without a check per access. Everything else in the
guarded statements must touch no memory: local scalars, arithmetic, `if`, and calls of the math
functions of MATH or of the program's device functions with numbers for arguments and result
(checked code: they keep their own checks). Each array is stored from one line at most (the line a
wrong result's report names), and each store is made by every thread that passes the guard (not
under another `if`, `?:`, `&&` or `||`, and no `return` after the guard): the block's stores are
recorded before it runs. A load may be conditional (its range is then checked for more elements than
are read, which can only send the block to the per-access checks). A load may also read another
element than the thread's, at an index that is integer arithmetic of the parameters times the
thread's indices and the counter of the loop it is in (`M[Row * Width + k]`, `N[k * Width + Col]`,
`in[i + 1]`), in a loop `for (int k = first; k < end; ++k)` whose bounds are integer arithmetic of
the parameters and whose body changes k nowhere: its elements are checked as the segments each row
of the block's threads reads. `*P` is P[0]. A store in such a loop is at the thread's own element
(the same element however often the loop runs), made where the loop runs at least once (the launch
runs the blocks checked where it does not). The record gives, per parameter accessed, its element
size, whether the access loads or stores, and its line, and for such a load its index's terms, for
such a store its loop's bounds; and, for the counters, each access of the text (a visit: its
parameter, whether it loads or stores, its line, its index's terms and the bounds of the loop it is
in), unless a load is one that some threads skip (under an `if`, `?:`, `&&` or `||`).

A signed integer local that one initializer gives and nothing changes after (`int idx = row * width
+ col;`, `int start = i - r;`) stands for its initializer; such integers of arithmetic alone may also
come between the thread's indices and the guard.

Limitations (the kernel then keeps a check per access): a template kernel, or one whose name has
overloads; a store at another element than the thread's; any other index (a product of two indices,
a local variable that something changes), a loop in a loop, a loop of another form, a pointer, local
array, member access, atomic, call of a function that is neither math nor the program's device
function, or a second guard; a load at another element in a grid-stride loop, or at an index of an
unsigned type (whose arithmetic wraps below 0); a parameter of another type than a pointer to
numbers or a number; a device function that waits (a barrier: the translator leaves such kernels
out)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .kernel_statements import Tokens, children, kind_of

# Calls whose arguments and result are numbers and which touch no memory.
MATH = frozenset(
    f + suffix
    for f in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "pow",
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf",
        "erfc", "fabs", "fmax", "fmin", "fma", "floor", "ceil", "round", "trunc", "fmod",
        "copysign", "hypot", "lgamma", "tgamma",
    )
    for suffix in ("", "f")
) | frozenset(
    ("max", "min", "abs", "__expf", "__logf", "__powf", "__sinf", "__cosf", "__tanf",
     "__fdividef", "__saturatef", "rsqrtf", "__frcp_rn", "__fsqrt_rn", "__fmaf_rn")
)  # fmt: skip
# The types of a number (Clang's type kinds).
NUMBERS = frozenset(
    ("BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG", "CHAR_S", "SCHAR", "SHORT",
     "INT", "LONG", "LONGLONG", "FLOAT", "DOUBLE")
)  # fmt: skip
INTEGERS = NUMBERS - {"FLOAT", "DOUBLE", "BOOL"}
# The index types whose arithmetic the runtime's (in 64 bits, signed) follows where it fits in 32
# bits: an unsigned index that wraps below 0 reads elsewhere than its terms say.
SIGNED = frozenset(("CHAR_S", "SCHAR", "SHORT", "INT", "LONG", "LONGLONG"))
BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
# What a guard's limit may be made of (with integer parameters and literals).
LIMIT_KINDS = frozenset(
    (
        "INTEGER_LITERAL",
        "BINARY_OPERATOR",
        "PAREN_EXPR",
        "UNEXPOSED_EXPR",
        "CSTYLE_CAST_EXPR",
        "CXX_STATIC_CAST_EXPR",
    )
)
MAX_ACCESSES = 8  # (the runtime's ProvenRanges holds as many)
MAX_VISITS = 16  # (and as many visits: ProvenRanges::visits)


@dataclass(frozen=True)
class AffineIndex:
    """A load's index as integer arithmetic of the kernel's parameters (each term's coefficient as
    the kernel writes it): constant + column * x + row * y + step * k, with x and y the thread's
    global indices and k the counter of the loop around the load, from `first` up to `end`."""

    constant: str = "0"
    column: str = "0"
    row: str = "0"
    step: str = "0"
    first: str = "0"
    end: str = "1"


@dataclass(frozen=True)
class ProvenAccess:
    parameter: int  # the pointer parameter's position
    element_bytes: int
    store: bool
    line: int
    index: AffineIndex | None = None  # a load at another element than the thread's own
    # a store in a loop: the loop's bounds (first, end), as the kernel writes them
    loop: tuple[str, str] | None = None


@dataclass(frozen=True)
class Visit:
    """One access of the kernel's text, as the counters count it: each thread that passes the guard
    makes it (in a loop, once per value of the counter), at P[constant + column * x + row * y +
    step * k] (`index`), or where `index` is None at the thread's own element (P[i], or P[row *
    pitch + i])."""

    parameter: int
    store: bool
    line: int
    index: AffineIndex | None
    loop: tuple[str, str] | None  # the bounds of the loop it is in


UNGUARDED = ""  # a kernel without a guard: its limits (every thread of the grid has its element)


@dataclass(frozen=True)
class ProvenKernel:
    limit: str  # the guard's `n`, as the kernel writes it (integer arithmetic of its parameters)
    accesses: tuple[ProvenAccess, ...]
    grid_stride: bool = False  # the accesses are in a grid-stride loop
    # a 2D kernel: the guard's limit of the y index, and the pitch of `P[row * pitch + i]`
    rows: str | None = None
    pitch: str | None = None
    # each access of the text, for the counters (None: a load that some threads skip)
    visits: tuple[Visit, ...] | None = None
    # the types of the x and y indices (a guard compares its limit as their types make it)
    index_type: str = "int"
    row_type: str = "int"


class NotProven(Exception):
    pass


def canonical_kind(type_: object) -> str:
    return type_.get_canonical().kind.name  # type: ignore[attr-defined]


def plain(cursor: object) -> object:
    """The expression under implicit casts and parentheses."""
    while kind_of(cursor) in ("UNEXPOSED_EXPR", "PAREN_EXPR") and len(children(cursor)) == 1:
        cursor = children(cursor)[0]
    return cursor


def referenced(cursor: object) -> object | None:
    c = plain(cursor)
    return c.referenced if kind_of(c) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]


def shared(variable: object) -> bool:
    """Whether a variable lives in shared memory (whose accesses the copy would not check)."""
    return any(kind_of(c) == "CUDASHARED_ATTR" for c in children(variable))


def same(a: object | None, b: object | None) -> bool:
    return a is not None and b is not None and a == b


def spelled_bare(expression: object) -> str:
    """An expression's tokens, joined, without parentheses: `(blockIdx.x*blockDim.x)+threadIdx.x`
    as `blockIdx.x*blockDim.x+threadIdx.x`."""
    return "".join(t.spelling for t in expression.get_tokens() if t.spelling not in "()")  # type: ignore[attr-defined]


def is_thread_index(init: object, axis: str = "x") -> bool:
    """Whether `init` is the thread's global index along `axis`, as its tokens spell it (the factors
    and terms in either order, parentheses left out)."""
    spelled = spelled_bare(init)
    thread = f"threadIdx.{axis}"
    products = (f"blockIdx.{axis}*blockDim.{axis}", f"blockDim.{axis}*blockIdx.{axis}")
    return any(spelled in (f"{p}+{thread}", f"{thread}+{p}") for p in products)


class Prover:
    """What a kernel's guarded statements access; `index` the thread's x index, `row` its y index
    in a 2D kernel (whose accesses are then P[row * pitch + index], one pitch for all)."""

    def __init__(
        self,
        parameters: list[object],
        index: object,
        tokens: Tokens,
        programs: Callable[[str], bool],
        row: object | None = None,
        changed: frozenset[int] = frozenset(),
    ) -> None:
        self.parameters = parameters
        self.programs = programs  # whether a file is the program's
        self.index = index
        self.row = row
        self.pitch: str | None = None
        self.tokens = tokens
        self.locals: set[int] = set()  # the guarded statements' own scalars, by offset
        # Their integers that name an index (`int idx = row * width + col;`, never changed after):
        # the index is their initializer's, by offset.
        self.aliases: dict[int, object] = {}
        self.changed = changed  # the variables an assignment or ++/-- changes, by offset
        self.found: dict[tuple[int, bool], set[int]] = {}  # (parameter, store) -> lines
        self.sizes: dict[int, int] = {}
        self.affine: dict[tuple[int, AffineIndex], int] = {}  # loads at other elements -> line
        self.store_loops: dict[int, tuple[str, str]] = {}  # parameter -> its store's loop's bounds
        # The loop the walk is in: its counter and its bounds (as the kernel writes them).
        self.loop: tuple[object, str, str] | None = None
        self.visits: list[Visit] = []  # every access, in the text's order
        self.skipped = False  # whether some thread that passes the guard may skip a load

    def parameter(self, declaration: object) -> int | None:
        for k, p in enumerate(self.parameters):
            if same(p, declaration):
                return k
        return None

    def subscript(self, cursor: object, load: bool, store: bool) -> None:
        base, index = children(cursor)
        self.element(cursor, base, index, load, store)

    def dereference(self, cursor: object) -> None:
        """`*P`, read: P[0]."""
        self.element(cursor, children(cursor)[0], None, True, False)

    def element(self, cursor: object, base: object, index: object | None, load: bool, store: bool) -> None:
        """The access `cursor` of base[index] (index None: element 0)."""
        k = self.parameter(referenced(base))
        if k is None:
            raise NotProven("an array other than a parameter")
        size = cursor.type.get_size()  # type: ignore[attr-defined]
        if canonical_kind(cursor.type) not in NUMBERS or size % 4 != 0:  # type: ignore[attr-defined]
            raise NotProven("an element that is not a number of whole words")
        if self.sizes.setdefault(k, size) != size:
            raise NotProven("an array read as elements of two sizes")
        line = cursor.extent.start.line  # type: ignore[attr-defined]
        loop = self.loop[1:] if self.loop is not None else None
        if index is None:
            self.affine.setdefault((k, AffineIndex()), line)
            self.visits.append(Visit(k, False, line, AffineIndex(), loop))
            return
        if not self.thread_element(index):
            signed = canonical_kind(index.type) in SIGNED  # type: ignore[attr-defined]
            affine = self.affine_index(index) if load and not store and signed else None
            if affine is None:
                raise NotProven("an index other than the thread's, or a store at another element")
            self.affine.setdefault((k, affine), line)
            self.visits.append(Visit(k, False, line, affine, loop))
            return
        if store and loop is not None:  # (the same element however often the loop runs)
            self.store_loops[k] = loop
        for kind, happens in ((False, load), (True, store)):
            if happens:
                self.found.setdefault((k, kind), set()).add(line)
                self.visits.append(Visit(k, kind, line, None, loop))

    def affine_index(self, index: object) -> AffineIndex | None:
        """`index` as constant + column * x + row * y + step * k (x, y the thread's indices, k the
        counter of the loop the load is in), each coefficient integer arithmetic of parameters."""
        terms = self.terms(index)
        if terms is None:
            return None
        first, end = ("0", "1") if self.loop is None or "step" not in terms else self.loop[1:]
        return AffineIndex(
            terms.get("constant", "0"),
            terms.get("column", "0"),
            terms.get("row", "0"),
            terms.get("step", "0"),
            first,
            end,
        )

    def terms(self, expression: object) -> dict[str, str] | None:
        """An expression's terms by variable ("constant", "column", "row", "step"), each its
        coefficient's text; None where it is not such a sum."""
        c = plain(self.unaliased(expression))
        variable = referenced(c)
        counter = self.loop[0] if self.loop is not None else None
        for name, declared in (("column", self.index), ("row", self.row), ("step", counter)):
            if same(variable, declared):
                return {name: "1"}
        if (text := limit_text(c)) is not None:
            return {"constant": text}  # (arithmetic of the parameters alone: `n`, `Mask_Width / 2`)
        if kind_of(c) == "BINARY_OPERATOR":
            left, right = children(c)
            operator = self.tokens.at_or_after(left.extent.end.offset)  # type: ignore[attr-defined]
            a, b = self.terms(left), self.terms(right)
            return None if a is None or b is None else combined(operator, a, b)
        return None

    def loop_over(self, statement: object) -> None:
        """`for (int k = first; k < end; ++k) body` (or `k <= last`, `k++`, `k += 1`), first and
        end integer arithmetic of parameters, k unchanged in the body: the body is walked with k
        as the counter of its loads' indices."""
        if self.loop is not None:
            raise NotProven("a loop in a loop")
        parts = children(statement)
        if len(parts) != 4 or kind_of(parts[0]) != "DECL_STMT" or len(children(parts[0])) != 1:
            raise NotProven("a loop of another form")
        counter = children(parts[0])[0]
        init = children(counter)
        first = limit_text(init[0]) if len(init) == 1 else None
        condition = guard(parts[1], self.tokens, counter)
        bound = None if condition is None or condition[0] != "<" else condition[1]
        if bound is None and kind_of(plain(parts[1])) == "BINARY_OPERATOR":
            left, right = children(plain(parts[1]))
            operator = self.tokens.at_or_after(left.extent.end.offset)  # type: ignore[attr-defined]
            last = limit_text(right)
            if operator == "<=" and same(referenced(left), counter) and last is not None:
                bound = f"({last}) + 1"
        if first is None or bound is None or not counts_up(parts[2], counter, self.tokens):
            raise NotProven("a loop of another form")
        self.locals.add(counter.location.offset)  # type: ignore[attr-defined]
        self.loop = (counter, first, bound)
        try:
            self.walk(parts[3])
        finally:
            self.loop = None

    def unaliased(self, expression: object) -> object:
        """The expression, or where it names an alias, the alias's initializer (and so on)."""
        variable = referenced(expression)
        while variable is not None and variable.location.offset in self.aliases:  # type: ignore[attr-defined]
            expression = self.aliases[variable.location.offset]  # type: ignore[attr-defined]
            variable = referenced(expression)
        return expression

    def thread_element(self, index: object) -> bool:
        """Whether `index` is the thread's element: i, or in a 2D kernel row * pitch + i."""
        index = self.unaliased(index)
        if self.row is None:
            return same(referenced(index), self.index)
        c = plain(index)
        if (
            kind_of(c) != "BINARY_OPERATOR"
            or self.tokens.at_or_after(children(c)[0].extent.end.offset) != "+"
        ):  # type: ignore[attr-defined]
            return False
        terms = [plain(t) for t in children(c)]
        if same(referenced(terms[0]), self.index):
            terms.reverse()
        if not same(referenced(terms[1]), self.index) or kind_of(terms[0]) != "BINARY_OPERATOR":
            return False
        factors = [plain(f) for f in children(terms[0])]
        if self.tokens.at_or_after(factors[0].extent.end.offset) != "*":  # type: ignore[attr-defined]
            return False
        if same(referenced(factors[1]), self.row):
            factors.reverse()
        pitch = limit_text(factors[1]) if same(referenced(factors[0]), self.row) else None
        if pitch is None or (self.pitch is not None and pitch != self.pitch):
            return False
        self.pitch = pitch
        return True

    def target(self, cursor: object, load: bool, conditional: bool) -> None:
        """The left side of an assignment (`load`: a compound one, or ++/--); `conditional`: not
        every thread that passes the guard makes it."""
        c = plain(cursor)
        if kind_of(c) == "ARRAY_SUBSCRIPT_EXPR":
            if conditional:  # (the block's stores are recorded before it runs: each must happen)
                raise NotProven("a store that some threads may not make")
            self.subscript(c, load, True)
            return
        target = referenced(c)
        if target is None or kind_of(target) != "VAR_DECL" or target.location.offset not in self.locals:  # type: ignore[attr-defined]
            raise NotProven("an assignment to something other than a local scalar or P[i]")
        if self.loop is not None and same(target, self.loop[0]):
            raise NotProven("a loop whose counter its body changes")

    def walk(self, cursor: object, conditional: bool = False) -> None:
        """Proves what `cursor` accesses (`conditional`: it runs in some threads only)."""
        kind = kind_of(cursor)
        inner = children(cursor)
        # (the parts after an `if`'s condition, a `?:`'s, and the right side of && and ||)
        branches = 1 if kind in ("IF_STMT", "CONDITIONAL_OPERATOR") else len(inner)
        if kind in ("COMPOUND_STMT", "DECL_STMT", "IF_STMT", "NULL_STMT", "PAREN_EXPR", "UNEXPOSED_EXPR",
                    "CONDITIONAL_OPERATOR", "INTEGER_LITERAL", "FLOATING_LITERAL", "CXX_BOOL_LITERAL_EXPR",
                    "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR",
                    "TYPE_REF"):  # fmt: skip
            if kind.endswith("CAST_EXPR") and canonical_kind(cursor.type) not in NUMBERS:  # type: ignore[attr-defined]
                raise NotProven("a cast to something other than a number")
        elif kind == "RETURN_STMT":
            raise NotProven("a return after the guard")
        elif kind == "FOR_STMT":
            self.loop_over(cursor)
            return
        elif kind == "VAR_DECL":
            if canonical_kind(cursor.type) not in NUMBERS or shared(cursor):  # type: ignore[attr-defined]
                raise NotProven("a local that is not a number in the thread's registers")
            offset = cursor.location.offset  # type: ignore[attr-defined]
            self.locals.add(offset)
            if len(inner) == 1 and canonical_kind(cursor.type) in SIGNED and offset not in self.changed:  # type: ignore[attr-defined]
                self.aliases[offset] = inner[0]
        elif kind == "DECL_REF_EXPR":
            target = cursor.referenced  # type: ignore[attr-defined]
            target_kind = kind_of(target) if target is not None else ""
            if target_kind == "PARM_DECL" and canonical_kind(target.type) == "POINTER":  # type: ignore[attr-defined]
                raise NotProven("a pointer used other than as P[i]")
            if target_kind not in ("PARM_DECL", "VAR_DECL", "ENUM_CONSTANT_DECL"):
                raise NotProven(f"a name of another kind ({target_kind})")
            if target_kind == "VAR_DECL" and (canonical_kind(target.type) not in NUMBERS or shared(target)):  # type: ignore[attr-defined]
                raise NotProven("a variable that is not a number, or one in shared memory")
        elif kind == "MEMBER_REF_EXPR":
            base = plain(inner[0]) if inner else None
            if base is None or kind_of(base) != "DECL_REF_EXPR" or base.spelling not in BUILTINS:  # type: ignore[attr-defined]
                raise NotProven("a member access")
            # (the copy reads threadIdx by its own name: `::threadIdx` would be checked code's const)
            if self.tokens.at_or_after(base.extent.start.offset) == "::":  # type: ignore[attr-defined]
                raise NotProven("a built-in named with ::")
            return
        elif kind == "ARRAY_SUBSCRIPT_EXPR":
            self.skipped |= conditional
            self.subscript(cursor, True, False)
            return
        elif kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
            operator = self.tokens.at_or_after(inner[0].extent.end.offset)  # type: ignore[attr-defined]
            if kind == "COMPOUND_ASSIGNMENT_OPERATOR" or operator == "=":
                self.target(inner[0], kind == "COMPOUND_ASSIGNMENT_OPERATOR", conditional)
                inner = inner[1:]
            elif operator in ("&&", "||"):
                branches = 1
        elif kind == "UNARY_OPERATOR":
            start, end = cursor.extent.start.offset, cursor.extent.end.offset  # type: ignore[attr-defined]
            operator = self.tokens.at_or_after(start)
            if operator == "*" and kind_of(plain(inner[0])) == "DECL_REF_EXPR":
                self.skipped |= conditional
                self.dereference(cursor)
                return
            if operator in ("*", "&"):
                raise NotProven("a pointer's dereference or an address")
            if operator in ("++", "--") or self.tokens.before(end) in ("++", "--"):
                self.target(inner[0], True, conditional)
                return
        elif kind == "CALL_EXPR":
            # A math function, or a device function of the program, which is checked code: what it
            # touches, it touches through its own checks (its arguments and result are numbers).
            callee = cursor.referenced  # type: ignore[attr-defined]
            device = (
                callee is not None
                and any(kind_of(c) == "CUDADEVICE_ATTR" for c in children(callee))
                and callee.location.file is not None
                and self.programs(callee.location.file.name)
            )  # (not the emu's or the toolkit's: a shuffle, a barrier that counts)
            if not (cursor.spelling in MATH or device) or canonical_kind(cursor.type) not in NUMBERS:  # type: ignore[attr-defined]
                raise NotProven(f"a call of {cursor.spelling}")  # type: ignore[attr-defined]
            for argument in cursor.get_arguments():  # type: ignore[attr-defined]
                if canonical_kind(argument.type) not in NUMBERS:
                    raise NotProven("a call with an argument that is not a number")
                self.walk(argument, conditional)
            return
        else:
            raise NotProven(f"a {kind}")
        for k, child in enumerate(inner):
            self.walk(child, conditional or k >= branches)

    def accesses(self) -> tuple[ProvenAccess, ...]:
        found = []
        for (k, store), lines in sorted(self.found.items()):
            if store and len(lines) > 1:
                raise NotProven("an array stored from more than one line")
            loop = self.store_loops.get(k) if store else None
            found.append(ProvenAccess(k, self.sizes[k], store, min(lines), loop=loop))
        for (k, index), line in self.affine.items():
            found.append(ProvenAccess(k, self.sizes[k], False, line, index))
        if len(found) > MAX_ACCESSES:
            raise NotProven("more arrays than the runtime's record holds")
        return tuple(found)


def combined(operator: str, a: dict[str, str], b: dict[str, str]) -> dict[str, str] | None:
    """Two sums of terms (each variable's coefficient, as text; "constant" for the rest) joined by
    `+`, `-`, or `*` where one side is a constant; None for anything else."""
    if operator in ("+", "-"):
        sign = "-" if operator == "-" else "+"
        joined = dict(a)
        for name, coefficient in b.items():
            joined[name] = f"({joined.get(name, '0')}) {sign} ({coefficient})"
        return joined
    if operator == "*" and (set(a) == {"constant"} or set(b) == {"constant"}):
        factor, other = (a["constant"], b) if set(a) == {"constant"} else (b["constant"], a)
        return {name: f"({factor}) * ({coefficient})" for name, coefficient in other.items()}
    return None


UNIT_STEP = "++"  # what increment() gives for ++k and k++


def increment(step: object, counter: object, tokens: Tokens) -> object | None:
    """What a loop's `step` adds to its counter k: UNIT_STEP for ++k or k++, the cursor of e for
    k += e; None for anything else."""
    c = plain(step)
    start, end = c.extent.start.offset, c.extent.end.offset  # type: ignore[attr-defined]
    inner = children(c)
    if not inner or not same(referenced(inner[0]), counter):
        return None
    if kind_of(c) == "UNARY_OPERATOR":
        return UNIT_STEP if "++" in (tokens.at_or_after(start), tokens.before(end)) else None
    if kind_of(c) == "COMPOUND_ASSIGNMENT_OPERATOR":
        operator = tokens.at_or_after(inner[0].extent.end.offset)  # type: ignore[attr-defined]
        return inner[1] if operator == "+=" else None
    return None


def counts_up(step: object, counter: object, tokens: Tokens) -> bool:
    """Whether a loop's `step` is ++k, k++ or k += 1, k its counter."""
    added = increment(step, counter, tokens)
    return added is UNIT_STEP or (added is not None and spelled_bare(added) == "1")


def arithmetic_only(statement: object) -> bool:
    """Whether `statement` declares integers from arithmetic alone (no memory, no call): what may
    come before the guard, which every thread runs."""
    if kind_of(statement) != "DECL_STMT":
        return False
    for variable in children(statement):
        if kind_of(variable) != "VAR_DECL" or canonical_kind(variable.type) not in INTEGERS:  # type: ignore[attr-defined]
            return False
        for c in variable.walk_preorder():  # type: ignore[attr-defined]
            kind = kind_of(c)
            base = children(c)[:1] if kind == "MEMBER_REF_EXPR" else []
            builtin = bool(base) and plain(base[0]).spelling in BUILTINS  # type: ignore[attr-defined]
            if (
                kind in ("ARRAY_SUBSCRIPT_EXPR", "CALL_EXPR", "UNARY_OPERATOR", "MEMBER_REF_EXPR")
                and not builtin
            ):
                return False
    return True


def changed_variables(body: object, tokens: Tokens) -> frozenset[int]:
    """The variables that an assignment, a compound assignment or ++/-- in `body` changes (or whose
    address it takes), by offset."""
    found = set()
    for c in body.walk_preorder():  # type: ignore[attr-defined]
        kind, inner = kind_of(c), children(c)
        if not inner:
            continue
        start, end = c.extent.start.offset, c.extent.end.offset  # type: ignore[attr-defined]
        if kind == "COMPOUND_ASSIGNMENT_OPERATOR" or (
            kind == "BINARY_OPERATOR" and tokens.at_or_after(inner[0].extent.end.offset) == "="  # type: ignore[attr-defined]
        ):
            target = referenced(inner[0])
        elif kind == "UNARY_OPERATOR" and (
            tokens.at_or_after(start) in ("++", "--", "&") or tokens.before(end) in ("++", "--")
        ):
            target = referenced(inner[0])
        else:
            continue
        if target is not None:
            found.add(target.location.offset)  # type: ignore[attr-defined]
    return frozenset(found)


def limit_text(expression: object) -> str | None:
    """The guard's limit as the kernel writes it, where it is integer arithmetic of the kernel's
    integer parameters, integer constants and literals (`n`, `B * T`, `N` of `const int N = ...;`
    outside any function), else None."""
    for c in expression.walk_preorder():  # type: ignore[attr-defined]
        kind = kind_of(c)
        if kind == "DECL_REF_EXPR":
            target = c.referenced
            if (
                target is None
                or canonical_kind(target.type) not in INTEGERS
                or not (kind_of(target) == "PARM_DECL" or integer_constant(target))
            ):
                return None
        elif kind not in LIMIT_KINDS or canonical_kind(c.type) not in INTEGERS:
            return None
    return written(expression)


def integer_constant(variable: object) -> bool:
    """A const variable outside any function: a constant, as device code reads a host variable
    only where it is one (a `__constant__` or `__device__` variable is not const)."""
    return (
        kind_of(variable) == "VAR_DECL"
        and kind_of(variable.semantic_parent) in ("TRANSLATION_UNIT", "NAMESPACE")  # type: ignore[attr-defined]
        and variable.type.is_const_qualified()  # type: ignore[attr-defined]
    )


@functools.cache
def file_text(name: str) -> bytes:
    return Path(name).read_bytes()


def written(expression: object) -> str:
    """An expression's tokens, joined by spaces; where a macro's expansion begins it (a bound
    `N_REPEAT`), Clang's tokens of its range start in the macro's definition, so the text written
    at the use (the macro's name) instead."""
    extent = expression.extent  # type: ignore[attr-defined]
    tokens = list(expression.get_tokens())  # type: ignore[attr-defined]
    if (
        tokens
        and tokens[0].extent.start.offset == extent.start.offset
        and all(t.extent.end.offset <= extent.end.offset for t in tokens)
    ):
        return " ".join(t.spelling for t in tokens)
    text = file_text(extent.start.file.name)[extent.start.offset : extent.end.offset]
    return " ".join(text.decode("utf-8", "replace").split())


def guard(condition: object, tokens: Tokens, index: object) -> tuple[str, str] | None:
    """`i < n` ("<") or `i >= n` (">="), either way round, with `n` integer arithmetic of integer
    parameters: the operator as `i` comes first, and n as the kernel writes it."""
    c = plain(condition)
    if kind_of(c) != "BINARY_OPERATOR":
        return None
    left, right = children(c)
    operator = tokens.at_or_after(left.extent.end.offset)  # type: ignore[attr-defined]
    flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
    if same(referenced(right), index):
        left, right, operator = right, left, flipped.get(operator, operator)
    if not same(referenced(left), index) or operator not in ("<", ">="):
        return None
    limit = limit_text(right)
    return None if limit is None else (operator, limit)


def only_return(statement: object) -> bool:
    if kind_of(statement) == "COMPOUND_STMT":
        inner = children(statement)
        return len(inner) == 1 and only_return(inner[0])
    return kind_of(statement) == "RETURN_STMT" and not children(statement)


def thread_indices(statement: object) -> dict[str, object] | None:
    """The variables `statement` declares, each the thread's global index along x or y, by axis;
    None where it declares anything else."""
    if kind_of(statement) != "DECL_STMT":
        return None
    found: dict[str, object] = {}
    for variable in children(statement):
        init = children(variable)
        if kind_of(variable) != "VAR_DECL" or canonical_kind(variable.type) not in INTEGERS or len(init) != 1:  # type: ignore[attr-defined]
            return None
        axis = next((a for a in ("x", "y") if is_thread_index(init[0], a)), None)
        if axis is None or axis in found:
            return None
        found[axis] = variable
    return found or None


def guards(
    condition: object, tokens: Tokens, index: object, row: object | None
) -> tuple[str, str, str | None] | None:
    """The guard of the thread's x index (guard), and in a 2D kernel of its y index too, joined by
    && (`<`) or || (`>=`): the operator, the x limit and the y limit (None in 1D)."""
    if row is None:
        found = guard(condition, tokens, index)
        return None if found is None else (found[0], found[1], None)
    c = plain(condition)
    if kind_of(c) != "BINARY_OPERATOR":
        return None
    sides = children(c)
    joint = tokens.at_or_after(sides[0].extent.end.offset)  # type: ignore[attr-defined]
    x = [guard(side, tokens, index) for side in sides]
    y = [guard(side, tokens, row) for side in sides]
    for k in (0, 1):
        if x[k] is not None and y[1 - k] is not None and x[k][0] == y[1 - k][0]:
            operator = x[k][0]
            if (operator, joint) in (("<", "&&"), (">=", "||")):
                return operator, x[k][1], y[1 - k][1]
    return None


def grid_stride(step: object, tokens: Tokens, index: object) -> bool:
    """Whether `step` is `i += blockDim.x * gridDim.x` (the factors either way round)."""
    if kind_of(step) != "COMPOUND_ASSIGNMENT_OPERATOR":
        return False
    target, by = children(step)
    spelled = spelled_bare(by)
    operator = tokens.at_or_after(target.extent.end.offset)  # type: ignore[attr-defined]
    return (
        same(referenced(target), index)
        and operator == "+="
        and spelled in ("blockDim.x*gridDim.x", "gridDim.x*blockDim.x")
    )


def proven_kernel(function: object, body: object, programs: Callable[[str], bool]) -> ProvenKernel | None:
    """The kernel's proven accesses (the module's docstring says when), or None; `programs` says
    whether a file is the program's (whose device functions it may call)."""
    parameters = [c for c in children(function) if kind_of(c) == "PARM_DECL"]
    for p in parameters:
        kind = canonical_kind(p.type)  # type: ignore[attr-defined]
        pointee = p.type.get_canonical().get_pointee() if kind == "POINTER" else None  # type: ignore[attr-defined]
        if not p.spelling or not (kind in NUMBERS or (pointee is not None and pointee.kind.name in NUMBERS)):  # type: ignore[attr-defined]
            return None
    statements = children(body)
    tokens = Tokens(body)
    stride = False
    if len(statements) == 1 and kind_of(statements[0]) == "FOR_STMT":
        # for (int i = <the thread's index>; i < n; i += blockDim.x * gridDim.x) <guarded>
        parts = children(statements[0])
        if len(parts) != 4:
            return None
        declared = thread_indices(parts[0])
        index = declared.get("x") if declared is not None and len(declared) == 1 else None
        found = guard(parts[1], tokens, index) if index is not None else None
        if found is None or found[0] != "<" or not grid_stride(parts[2], tokens, index):
            return None
        limit, guarded, stride = found[1], [parts[3]], True
        row = rows = None
    else:
        # int i = <the thread's x index>; [int row = <its y index>;] then
        # if (i < n [&& row < m]) <guarded>  or  if (i >= n [|| row >= m]) return; <guarded>
        indices: dict[str, object] = {}
        first = 0
        while first < len(statements) and (declared := thread_indices(statements[first])) is not None:
            if set(declared) & set(indices):
                return None
            indices |= declared
            first += 1
        # (integers of arithmetic alone before the guard: `int idx = row * width + col;`)
        arithmetic = first
        while first < len(statements) and arithmetic_only(statements[first]):
            first += 1
        if "x" not in indices or first >= len(statements):
            return None
        index, row = indices["x"], indices.get("y")
        parts = children(statements[first])
        found = None
        if kind_of(statements[first]) == "IF_STMT" and len(parts) == 2:  # (no else)
            found = guards(parts[0], tokens, index, row)
        before, rest = statements[arithmetic:first], statements[first + 1 :]
        if found is None:  # no guard: every thread of the grid has its element
            limit, rows, guarded = UNGUARDED, None if row is None else UNGUARDED, statements[arithmetic:]
        elif found[0] == "<" and not rest:
            limit, rows, guarded = found[1], found[2], [*before, parts[1]]
        elif found[0] == ">=" and only_return(parts[1]):
            limit, rows, guarded = found[1], found[2], [*before, *rest]
        else:
            return None
    prover = Prover(
        parameters, index, tokens, programs, None if stride else row, changed_variables(body, tokens)
    )
    try:
        for statement in guarded:
            prover.walk(statement)
        accesses = prover.accesses()
    except NotProven:
        return None
    if not accesses or (stride and any(a.index is not None for a in accesses)):
        return None
    visits = None if prover.skipped or len(prover.visits) > MAX_VISITS else tuple(prover.visits)
    index_type = index.type.get_canonical().spelling  # type: ignore[attr-defined]
    if rows is None:
        return ProvenKernel(limit, accesses, stride, visits=visits, index_type=index_type)
    row_type = row.type.get_canonical().spelling  # type: ignore[attr-defined]
    return ProvenKernel(limit, accesses, stride, rows, prover.pitch, visits, index_type, row_type)
