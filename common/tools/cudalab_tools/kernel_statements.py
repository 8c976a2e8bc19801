"""A kernel's body as a tree of statement records, from Clang's AST (cuda_ast.parse makes them for
each kernel it reads): what each statement is, where it is written, which local variables and
parameters it declares, names and changes, and where it waits at `__syncthreads()`. The emu's
translator reads them to run a kernel's threads as loops between its barriers
(common/emu/thread_loops.py).

A variable is named by its declaration's offset (`Local.id`); a statement's span runs to its `;`.

Internal: only cuda_ast.py calls statement_tree(), during its walk (the cursors live only there).
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (stretch_accesses reads statements with this module's helpers)
    from .stretch_accesses import StretchAccesses

# What a statement is (Clang's kind, by what the thread loops need to know).
KINDS = {
    "COMPOUND_STMT": "compound",
    "FOR_STMT": "for",
    "WHILE_STMT": "while",
    "DO_STMT": "do",
    "IF_STMT": "if",
    "DECL_STMT": "declaration",
    "RETURN_STMT": "return",
    "BREAK_STMT": "break",
    "CONTINUE_STMT": "continue",
    "NULL_STMT": "empty",
}
# What a loop's or an `if`'s head may hold for its value to be the block's (with the variables it
# names): literals, operators, casts and the names of variables, constants and built-ins.
PLAIN_HEAD = {
    "INTEGER_LITERAL",
    "FLOATING_LITERAL",
    "CXX_BOOL_LITERAL_EXPR",
    "CHARACTER_LITERAL",
    "PAREN_EXPR",
    "UNEXPOSED_EXPR",
    "BINARY_OPERATOR",
    "COMPOUND_ASSIGNMENT_OPERATOR",
    "UNARY_OPERATOR",
    "CONDITIONAL_OPERATOR",
    "CSTYLE_CAST_EXPR",
    "CXX_STATIC_CAST_EXPR",
    "CXX_FUNCTIONAL_CAST_EXPR",
    "CXX_UNARY_EXPR",
    "DECL_STMT",
    "VAR_DECL",
    "DECL_REF_EXPR",
    "MEMBER_REF_EXPR",
    "TYPE_REF",
    "NAMESPACE_REF",
    "TEMPLATE_REF",
}
# Built-ins whose value is the block's (threadIdx is not).
BLOCK_BUILTINS = {"blockIdx", "blockDim", "gridDim", "warpSize"}
CONSTANT_KINDS = {"ENUM_CONSTANT_DECL", "NON_TYPE_TEMPLATE_PARAMETER", "TEMPLATE_NON_TYPE_PARAMETER"}
ASSIGNMENTS = {"=", "++", "--", "&"}  # (a compound assignment is its own kind)
FUNCTIONS = {"FUNCTION_DECL", "FUNCTION_TEMPLATE", "CXX_METHOD", "LAMBDA_EXPR"}
BARRIER = "syncthreads"  # `__syncthreads()`: the prelude's macro calls ::cudalab::emu::syncthreads
# The other calls that wait for a block's or a warp's threads (`__syncthreads_count()`: the
# prelude's macro calls ::cudalab::emu::syncthreads_count).
OTHER_WAITS = ("__sync", "syncthreads_", "__shfl", "__ballot", "__any", "__all", "__match", "__reduce")
LIBRARY_WAITS = ("sync", "arrive", "wait", "memcpy_async", "pipeline", "producer_", "consumer_", "barrier")
# What cooperative groups answer without waiting: where the thread and its group are.
GROUP_QUERIES = frozenset(
    ("thread_rank", "size", "num_threads", "group_index", "thread_index", "group_dim", "dim_threads",
     "meta_group_rank", "meta_group_size", "this_thread_block", "is_valid", "get_mask", "block_rank",
     "num_blocks", "block_index", "this_grid", "grid_dim", "dim_blocks")
)  # fmt: skip
SHUFFLES = {
    "__shfl_sync": "idx",
    "__shfl_up_sync": "up",
    "__shfl_down_sync": "down",
    "__shfl_xor_sync": "xor_",
}


@dataclass(frozen=True)
class Local:
    """A variable a statement declares; `value`: where its initializer is written, when the variable
    is a scalar whose initializer reads nothing but the thread's index and what a head may
    (PLAIN_HEAD: literals, operators, the block's values; `value_uses`: the variables it names), so
    that the same text computes it again wherever the thread needs it (if nothing changes it)."""

    name: str
    type: str  # as Clang spells it: "int", "float [4]", "float &", "T"
    id: int
    common: bool  # __shared__ or static: one variable that every thread names
    value: tuple[int, int] | None = None
    value_uses: frozenset[int] = frozenset()
    value_names_thread: bool = False  # the initializer names threadIdx
    value_words: frozenset[str] = frozenset()  # the identifiers written in the initializer
    thread_x: bool = False  # its initializer is `threadIdx.x`, and its type holds any x index


@dataclass(frozen=True)
class ThreadBound:
    """An `if`'s condition `i < limit`, where `i` is `threadIdx.x` (`index` None) or a local
    variable (`index`: its id) and `limit` holds only what a head may (PLAIN_HEAD; `limit_uses`: the
    variables it names): where `i` is the thread's x index and the limit is the block's, it holds
    for the first threads of each row of the block and for none after them."""

    index: int | None
    condition: tuple[int, int]  # where it is written
    limit_uses: frozenset[int]


@dataclass(frozen=True)
class Shuffle:
    """A call of a warp shuffle: which (SHUFFLES' values), where, and its arguments as written
    (mask, value, lane or delta[, width]); `plain`: they change nothing and call nothing, and the
    call names no template argument; `lane_uses`: the variables its arguments other than the value
    (mask, lane or delta, width) name, and `lane_plain`: those hold nothing but what a head may
    (PLAIN_HEAD, values of the block), so that with `lane_uses` the block's they are too."""

    kind: str
    start: int
    end: int
    arguments: tuple[tuple[int, int], ...]
    plain: bool
    lane_uses: frozenset[int] = frozenset()
    lane_plain: bool = False


@dataclass(frozen=True)
class Statement:
    kind: str  # KINDS' values, "barrier" (a statement that is `__syncthreads();`), else "other"
    start: int
    end: int  # after its `;` or `}`
    line: int
    parts: tuple[Statement, ...]  # a compound's statements; a loop's body; an if's then [and else]
    declares: tuple[Local, ...]  # a declaration's variables; a `for`'s in its init
    uses: frozenset[int]  # the variables and parameters it names (Local.id, Parameter offsets)
    changes: frozenset[int]  # those it assigns, increments, takes the address of, or calls through
    addressed: frozenset[int]  # locals whose address it takes (`&v`, a reference to v, an array as a pointer)
    barriers: int  # `__syncthreads()` calls in it
    calls: frozenset[str]  # the names of the functions it calls
    shuffles: tuple[Shuffle, ...]  # warp shuffles in it
    waits_otherwise: bool  # calls another wait of the block or warp (not a barrier, not a shuffle)
    jumps_out: bool  # a `break` or `continue` in it that leaves it (no loop or switch of its own)
    has_goto: bool  # a `goto` or a label in it
    returns: tuple[int, ...]  # offsets of the `return` keywords in it
    head_plain: bool  # a loop's or if's head (a declaration: its initializers) holds only PLAIN_HEAD
    head_uses: frozenset[int]  # the variables and parameters its head names
    head_changes: frozenset[int]  # and those it changes (a `for`'s increment)
    in_macro: bool  # Clang places it in a macro's expansion (not as written)
    names_thread: bool  # it names threadIdx or calls something (which may read it)
    bound: ThreadBound | None = None  # an `if`'s condition, where it is one
    # its memory accesses, where stretch_accesses.py proves them all
    accesses: StretchAccesses | None = None


class Tokens:
    """A kernel's tokens by offset: which operator a unary or binary operator is."""

    def __init__(self, cursor: object) -> None:
        found = [(t.extent.start.offset, t.spelling) for t in cursor.get_tokens()]  # type: ignore[attr-defined]
        self.offsets = [o for o, _ in found]
        self.spellings = [s for _, s in found]

    def at_or_after(self, offset: int) -> str:
        k = bisect.bisect_left(self.offsets, offset)
        return self.spellings[k] if k < len(self.spellings) else ""

    def between(self, start: int, end: int) -> list[str]:
        return self.spellings[bisect.bisect_left(self.offsets, start) : bisect.bisect_left(self.offsets, end)]

    def before(self, offset: int) -> str:
        k = bisect.bisect_left(self.offsets, offset)
        return self.spellings[k - 1] if k > 0 else ""


def kind_of(cursor: object) -> str:
    """A cursor's kind by name; one that these bindings do not know is "UNKNOWN"."""
    try:
        return cursor.kind.name  # type: ignore[attr-defined]
    except ValueError:
        return "UNKNOWN"


def children(cursor: object) -> list[object]:
    return list(cursor.get_children())  # type: ignore[attr-defined]


def statement_end(cursor: object, text: bytes) -> int:
    """Where a statement ends: after its `;` where Clang's extent leaves it out."""
    kind = kind_of(cursor)
    end = cursor.extent.end.offset  # type: ignore[attr-defined]
    if kind in ("IF_STMT", "FOR_STMT", "WHILE_STMT", "LABEL_STMT", "SWITCH_STMT"):
        inner = [c for c in children(cursor) if is_statement(c)]
        return statement_end(inner[-1], text) if inner else end
    if kind == "COMPOUND_STMT" or text[end - 1 : end] == b";":
        return end
    k = skip_blanks(text, end)
    return k + 1 if text[k : k + 1] == b";" else end


def skip_blanks(text: bytes, k: int) -> int:
    """The offset of the first byte at or after k that is not white space or in a comment."""
    while k < len(text):
        if text[k : k + 1].isspace():
            k += 1
        elif text.startswith(b"//", k):
            k = text.find(b"\n", k)
            k = len(text) if k < 0 else k
        elif text.startswith(b"/*", k):
            k = text.find(b"*/", k)
            k = len(text) if k < 0 else k + 2
        else:
            break
    return k


def is_statement(cursor: object) -> bool:
    return kind_of(cursor).endswith(("_STMT", "_EXPR", "_OPERATOR", "_LITERAL"))


def local_id(declaration: object) -> int:
    return declaration.location.offset  # type: ignore[attr-defined]


def is_local(declaration: object) -> bool:
    """A kernel's parameter, or a variable declared in a function (not static)."""
    kind = kind_of(declaration)
    if kind == "PARM_DECL":
        return True
    if kind != "VAR_DECL":
        return False
    return kind_of(declaration.semantic_parent) in FUNCTIONS and declaration.storage_class.name != "STATIC"  # type: ignore[attr-defined]


def named(cursor: object) -> object | None:
    """The local variable an lvalue expression is (through parentheses, casts, `.` and an array's
    subscript), else None."""
    kind = kind_of(cursor)
    inner = children(cursor)
    if kind in ("UNEXPOSED_EXPR", "PAREN_EXPR") and len(inner) == 1:
        return named(inner[0])
    if kind == "DECL_REF_EXPR":
        target = cursor.referenced  # type: ignore[attr-defined]
        return target if target is not None and is_local(target) else None
    if kind == "MEMBER_REF_EXPR" and inner and not cursor.type.kind.name.endswith("POINTER"):  # type: ignore[attr-defined]
        base = inner[0]
        return named(base) if "POINTER" not in base.type.get_canonical().kind.name else None  # type: ignore[attr-defined]
    if kind == "ARRAY_SUBSCRIPT_EXPR" and inner:
        array = named(inner[0])  # (through the conversion to a pointer)
        if array is not None and "ARRAY" in array.type.get_canonical().kind.name:  # type: ignore[attr-defined]
            return array
    return None


class Facts:
    """What a walk under a statement found."""

    def __init__(self) -> None:
        self.uses: set[int] = set()
        self.changes: set[int] = set()
        self.addressed: set[int] = set()
        self.barriers = 0
        self.calls: set[str] = set()
        self.shuffles: list[Shuffle] = []
        self.waits_otherwise = False
        self.returns: list[int] = []
        self.plain = True
        self.goto = False
        self.thread_index = False  # threadIdx is named
        self.thread_values = False  # a head whose value may be the thread's own (threadIdx is plain)


def gather(cursor: object, tokens: Tokens, facts: Facts, head: bool = False, as_array: bool = False) -> None:
    """Adds what the expressions and statements under `cursor` (itself included) name and change;
    `as_array`: the cursor is an array's name used as one (subscripted, or in sizeof)."""
    kind = kind_of(cursor)
    inner = children(cursor)
    if head and kind not in PLAIN_HEAD:
        facts.plain = False
    if kind == "DECL_REF_EXPR":
        target = cursor.referenced  # type: ignore[attr-defined]
        if target is not None and is_local(target):
            facts.uses.add(local_id(target))
            if not as_array and "ARRAY" in target.type.get_canonical().kind.name:  # type: ignore[attr-defined]
                facts.addressed.add(local_id(target))  # (it becomes a pointer)
        elif head and not block_value(target):
            facts.plain = facts.plain and facts.thread_values and cursor.spelling == "threadIdx"  # type: ignore[attr-defined]
        if cursor.spelling == "threadIdx":  # type: ignore[attr-defined]
            facts.thread_index = True
    elif kind == "VAR_DECL":
        facts.uses.add(local_id(cursor))
        if cursor.type.kind.name.endswith("REFERENCE") and inner:  # type: ignore[attr-defined]
            found = named(inner[-1])
            if found is not None:
                facts.addressed.add(local_id(found))
    elif kind == "CALL_EXPR":
        name = call_name(cursor, inner)
        group_barrier = block_sync(cursor)
        if name is not None:
            facts.calls.add(recorded_call(cursor, name))
        if name == BARRIER or group_barrier:
            facts.barriers += 1
        elif name in SHUFFLES:
            facts.shuffles.append(shuffle(cursor, name, tokens))
        elif name is not None and waits(name):  # (cooperative groups' others, by name in a template)
            facts.waits_otherwise = True
        if not group_barrier:  # (a group's sync changes nothing)
            changed_by_call(cursor, inner, facts)
    elif kind == "RETURN_STMT":
        facts.returns.append(cursor.extent.start.offset)  # type: ignore[attr-defined]
    elif kind == "COMPOUND_ASSIGNMENT_OPERATOR" and inner:
        mark_changed(inner[0], facts)
    elif kind == "BINARY_OPERATOR" and len(inner) == 2:
        if tokens.at_or_after(inner[0].extent.end.offset) == "=":  # type: ignore[attr-defined]
            mark_changed(inner[0], facts)
    elif kind == "UNARY_OPERATOR" and inner:
        start, end = cursor.extent.start.offset, cursor.extent.end.offset  # type: ignore[attr-defined]
        operator = tokens.at_or_after(start)
        if operator in ASSIGNMENTS or tokens.before(end) in ("++", "--"):
            mark_changed(inner[0], facts)
        if operator == "&" and (found := named(inner[0])) is not None:
            facts.addressed.add(local_id(found))
        if head and operator == "*":
            facts.plain = False
    elif kind == "LAMBDA_EXPR":
        facts.plain = False
    elif kind in ("GOTO_STMT", "LABEL_STMT", "INDIRECT_GOTO_STMT"):
        facts.goto = True
    returns = len(facts.returns)
    for k, child in enumerate(inner):
        array = (kind == "ARRAY_SUBSCRIPT_EXPR" and k == 0) or kind == "CXX_UNARY_EXPR"
        array = array or (as_array and kind in ("UNEXPOSED_EXPR", "PAREN_EXPR"))
        gather(child, tokens, facts, head, array)
    if kind == "LAMBDA_EXPR":
        del facts.returns[returns:]  # (a lambda's `return` is its own, not the kernel's)


def called(body: object) -> frozenset[str]:
    """The names of the functions a function's body calls ("" for a call through a pointer or one
    Clang could not resolve to a name)."""
    found: set[str] = set()
    stack = [body]
    while stack:
        cursor = stack.pop()
        inner = children(cursor)
        if kind_of(cursor) == "CALL_EXPR" and (name := call_name(cursor, inner)) is not None:
            found.add(recorded_call(cursor, name))
        stack.extend(inner)
    return frozenset(found)


def recorded_call(call: object, name: str) -> str:
    """The name a call is recorded by: BARRIER for the block's barrier of cooperative groups
    (block_sync); "" (a call whose waits are unknown, taken to wait) for a function of CUB, whose
    block and warp primitives wait inside its headers, which the front end does not read, and for
    any other function of cooperative groups but those that only say where the thread is (its
    tiles' shuffles, votes and collectives wait); else its own."""
    if block_sync(call):
        return BARRIER
    callee = call.referenced  # type: ignore[attr-defined]
    where = callee.location.file if callee is not None else None
    if where is not None and "cub" in Path(where.name).parts:
        return ""
    if callee is not None and in_cooperative_groups(callee) and name not in GROUP_QUERIES:
        return ""
    return name


def in_cooperative_groups(declaration: object) -> bool:
    """Whether a declaration lies in the namespace cooperative_groups (or one inside it)."""
    parent = declaration.semantic_parent  # type: ignore[attr-defined]
    while parent is not None and kind_of(parent) != "TRANSLATION_UNIT":
        if kind_of(parent) == "NAMESPACE" and parent.spelling == "cooperative_groups":
            return True
        parent = parent.semantic_parent
    return False


def block_sync(call: object) -> bool:
    """Whether a call is the block's barrier as cooperative groups write it: `sync` of a
    `thread_block` (`cg::sync(block)`, `block.sync()`, `cg::this_thread_block().sync()`)."""
    if call.spelling != "sync":  # type: ignore[attr-defined]
        return False
    inner = children(call)
    group = None
    if inner and kind_of(inner[0]) == "MEMBER_REF_EXPR" and children(inner[0]):
        group = children(inner[0])[0]  # (the object whose member is called)
    arguments = list(call.get_arguments())  # type: ignore[attr-defined]
    if group is None and arguments:  # (cg::sync(group), with the emu's defaulted place after it)
        group = arguments[0]
    if group is None:
        return False
    spelled = group.type.get_canonical().spelling  # type: ignore[attr-defined]
    return spelled.removeprefix("const ").rstrip(" &") == "cooperative_groups::thread_block"


def call_name(call: object, inner: list[object]) -> str | None:
    """The name of the function a call calls: its own; in a template, where Clang cannot resolve
    the call yet (`merge<sortDir>(...)`), the name of its candidates, which an unnamed reference
    among its children holds; "" where neither says (a call through a pointer); None for an
    operator on values of a type Clang cannot know yet (`a + b`: its candidates are operators, or
    none)."""
    if call.spelling:  # type: ignore[attr-defined]
        return call.spelling  # type: ignore[attr-defined]
    for c in inner:
        if kind_of(c) == "DECL_REF_EXPR" and c.spelling == "":  # type: ignore[attr-defined]
            names = [o.spelling for o in children(c) if kind_of(o) == "OVERLOADED_DECL_REF"]  # type: ignore[attr-defined]
            return names[0] if names and not names[0].startswith("operator") else None
    return ""


def waits(name: str) -> bool:
    """Whether a call of this name may wait for other threads: a barrier, a warp-level call, and
    by name the waits of cooperative groups, cuda::barrier and pipelines (`block.sync()`,
    `bar.arrive_and_wait()`, `cuda::memcpy_async`...), whose calls Clang may not resolve."""
    return name == BARRIER or name in SHUFFLES or name.startswith(OTHER_WAITS + LIBRARY_WAITS)


def shuffle(cursor: object, name: str, tokens: Tokens) -> Shuffle:
    start, end = cursor.extent.start.offset, cursor.extent.end.offset  # type: ignore[attr-defined]
    written = []
    for argument in cursor.get_arguments():  # type: ignore[attr-defined]
        a, b = argument.extent.start.offset, argument.extent.end.offset
        if start < a < b <= end:  # (a default argument is written nowhere)
            written.append((a, b))
    inner, lane = Facts(), Facts()
    for k, argument in enumerate(children(cursor)[1:]):
        gather(argument, tokens, inner)
        if k != 1:  # (not the value)
            gather(argument, tokens, lane, head=True)
    plain = not inner.changes and not inner.calls and tokens.at_or_after(start + len(name)) == "("
    plain = plain and len(written) >= 3
    return Shuffle(SHUFFLES[name], start, end, tuple(written), plain, frozenset(lane.uses), lane.plain)


def block_value(declaration: object) -> bool:
    """Whether a name that is not a local variable has the same value in every thread of a block:
    a constant, an enumerator, a template's value parameter, a `const` variable, blockIdx..."""
    if declaration is None:
        return False
    kind = kind_of(declaration)
    if kind in CONSTANT_KINDS:
        return True
    if kind == "VAR_DECL":
        name = declaration.spelling  # type: ignore[attr-defined]
        return name in BLOCK_BUILTINS or declaration.type.is_const_qualified()  # type: ignore[attr-defined]
    return False


def mark_changed(target: object, facts: Facts) -> None:
    found = named(target)
    if found is not None:
        facts.changes.add(local_id(found))


def changed_by_call(cursor: object, inner: list[object], facts: Facts) -> None:
    """A local variable that a call may change: one bound to a non-const reference parameter, or
    an object whose member function is called."""
    if inner and kind_of(inner[0]) == "MEMBER_REF_EXPR":
        base = children(inner[0])
        if base:
            mark_changed(base[0], facts)
    target = cursor.referenced  # type: ignore[attr-defined]
    if target is None:
        # An unresolved call, or an operator on values of a type a template does not know yet
        # (`sum += tile[i]` where some `operator+=` is declared): any operand may be a reference,
        # and an operator's first operand comes before its callee (marking a callee marks nothing).
        for operand in inner:
            mark_changed(operand, facts)
        return
    try:
        types = list(target.type.argument_types())  # type: ignore[attr-defined]
    except Exception:
        types = []
    arguments = list(cursor.get_arguments())  # type: ignore[attr-defined]
    for k, argument in enumerate(arguments):
        t = types[k] if k < len(types) else None
        if t is None or (t.kind.name.endswith("REFERENCE") and not t.get_pointee().is_const_qualified()):
            mark_changed(argument, facts)


def statement_tree(
    cursor: object,
    text: bytes,
    tokens: Tokens | None = None,
    accesses: Callable[[object, Tokens], StretchAccesses | None] | None = None,
) -> Statement:
    """The record of a statement and of those under it (one under `#pragma unroll` is the loop);
    `accesses` gives a statement's `accesses` (stretch_accesses.stretch_accesses)."""
    tokens = tokens or Tokens(cursor)
    kind = kind_of(cursor)
    if kind in ("ATTRIBUTED_STMT", "UNEXPOSED_STMT"):
        inner = [c for c in children(cursor) if is_statement(c)]
        if len(inner) == 1:  # (the pragma stays on its line, before whatever the loop becomes)
            return statement_tree(inner[0], text, tokens, accesses)
    inner = children(cursor)
    start = cursor.extent.start.offset  # type: ignore[attr-defined]
    end = statement_end(cursor, text)
    line = cursor.extent.start.line  # type: ignore[attr-defined]
    statements = [c for c in inner if is_statement(c)]
    parts: tuple[Statement, ...] = ()
    declares: tuple[Local, ...] = ()
    bound: ThreadBound | None = None
    head = Facts()
    facts = Facts()
    if kind == "COMPOUND_STMT":
        parts = tuple(statement_tree(c, text, tokens, accesses) for c in inner)
    elif kind in ("FOR_STMT", "WHILE_STMT", "DO_STMT", "IF_STMT"):
        body = statements[-1] if kind != "IF_STMT" else None
        if kind == "IF_STMT":
            # (the condition, then the then-statement, then maybe the else-statement)
            parts = tuple(statement_tree(c, text, tokens, accesses) for c in statements[1:])
            condition = inner[: len(inner) - len(parts)]
            for c in condition:
                gather(c, tokens, head, head=True)
            if len(condition) == 1:
                bound = thread_bound(condition[0], tokens, text)
        elif kind == "DO_STMT":
            parts = (statement_tree(statements[0], text, tokens, accesses),)
            for c in inner[1:]:
                gather(c, tokens, head, head=True)
        else:
            parts = (statement_tree(body, text, tokens, accesses),)
            for c in inner[:-1]:
                gather(c, tokens, head, head=True)
                if kind == "FOR_STMT" and kind_of(c) == "DECL_STMT":
                    declares += locals_of(c, tokens)
    elif kind == "DECL_STMT":
        declares = locals_of(cursor, tokens)
        gather(cursor, tokens, facts, head=True)  # (the same value in every thread? its head says)
        head.plain, head.uses, head.changes = facts.plain, set(facts.uses), set(facts.changes)
    if not parts and kind not in ("COMPOUND_STMT", "DECL_STMT"):
        gather(cursor, tokens, facts)
    uses = facts.uses | head.uses
    changes = facts.changes | head.changes
    addressed = facts.addressed | head.addressed
    barriers = facts.barriers + head.barriers + sum(p.barriers for p in parts)
    for p in parts:
        uses |= p.uses
        changes |= p.changes
        addressed |= p.addressed
    jumps = kind in ("BREAK_STMT", "CONTINUE_STMT") or (
        kind not in ("FOR_STMT", "WHILE_STMT", "DO_STMT", "SWITCH_STMT") and any(p.jumps_out for p in parts)
    )
    if kind == "SWITCH_STMT" or (not parts and kind not in KINDS):
        jumps = jumps or has_jump_out(cursor)
    call = cursor  # (a call on a temporary group is one under its cleanups)
    while kind_of(call) == "UNEXPOSED_EXPR" and len(children(call)) == 1:
        call = children(call)[0]
    group_barrier = kind_of(call) == "CALL_EXPR" and block_sync(call)
    is_barrier = group_barrier or (kind == "CALL_EXPR" and cursor.spelling == BARRIER)  # type: ignore[attr-defined]
    written = text[start:end].decode("utf-8", "replace")
    # (a barrier is replaced as written: a macro that writes one must spell it)
    spelled = "sync" in written if group_barrier else written.startswith("__syncthreads")
    in_macro = (is_barrier and not spelled) or (
        kind in ("COMPOUND_STMT", "FOR_STMT", "WHILE_STMT", "DO_STMT", "IF_STMT")
        and not written.startswith(
            {
                "COMPOUND_STMT": "{",
                "FOR_STMT": "for",
                "WHILE_STMT": "while",
                "DO_STMT": "do",
                "IF_STMT": "if",
            }[kind]
        )
    )
    if is_barrier:  # (the loop form replaces it whole: the group it names is not used)
        uses, changes = set(), set()
    return Statement(
        kind="barrier" if is_barrier else KINDS.get(kind, "other"),
        start=start,
        end=end,
        line=line,
        parts=parts,
        declares=declares,
        uses=frozenset(uses),
        changes=frozenset(changes),
        addressed=frozenset(addressed),
        barriers=barriers,
        calls=frozenset(facts.calls | head.calls).union(*(p.calls for p in parts)),
        shuffles=tuple(facts.shuffles + head.shuffles + [x for p in parts for x in p.shuffles]),
        waits_otherwise=facts.waits_otherwise
        or head.waits_otherwise
        or any(p.waits_otherwise for p in parts),
        jumps_out=jumps,
        has_goto=facts.goto or kind in ("GOTO_STMT", "LABEL_STMT") or any(p.has_goto for p in parts),
        returns=tuple(facts.returns + head.returns + [r for p in parts for r in p.returns]),
        head_plain=head.plain,
        head_uses=frozenset(head.uses),
        head_changes=frozenset(head.changes),
        names_thread=facts.thread_index
        or head.thread_index
        or bool((facts.calls | head.calls) - SHUFFLES.keys())
        or any(p.names_thread for p in parts),
        in_macro=in_macro,
        bound=bound,
        accesses=accesses(cursor, tokens) if accesses is not None and not is_barrier else None,
    )


def has_jump_out(cursor: object) -> bool:
    """A `break` or `continue` under a statement that is not a loop's or a switch's own."""
    for c in children(cursor):
        kind = kind_of(c)
        if kind in ("BREAK_STMT", "CONTINUE_STMT"):
            return True
        if kind not in ("FOR_STMT", "WHILE_STMT", "DO_STMT", "SWITCH_STMT", "LAMBDA_EXPR") and has_jump_out(
            c
        ):
            return True
    return False


# The canonical types of the variables whose values can be computed again (Local.value).
SCALARS = {
    "BOOL", "CHAR_U", "UCHAR", "CHAR_S", "SCHAR", "SHORT", "USHORT", "INT", "UINT", "LONG", "ULONG",
    "LONGLONG", "ULONGLONG", "FLOAT", "DOUBLE",
}  # fmt: skip


def locals_of(declaration: object, tokens: Tokens) -> tuple[Local, ...]:
    found = []
    for v in children(declaration):
        if kind_of(v) != "VAR_DECL":
            continue
        common = v.storage_class.name == "STATIC" or any(kind_of(a) == "CUDASHARED_ATTR" for a in children(v))  # type: ignore[attr-defined]
        local = Local(v.spelling, v.type.spelling, local_id(v), common)  # type: ignore[attr-defined]
        found.append(recomputable(v, local, tokens))
    return tuple(found)


def recomputable(variable: object, local: Local, tokens: Tokens) -> Local:
    """The local with its `value`, where its initializer can compute it again (Local's rule). The
    initializer must be written after the name, where Clang says (not made by a macro)."""
    inner = [c for c in children(variable) if kind_of(c) not in ("TYPE_REF", "NAMESPACE_REF", "TEMPLATE_REF")]
    if local.common or len(inner) != 1 or variable.type.get_canonical().kind.name not in SCALARS:  # type: ignore[attr-defined]
        return local
    start, end = inner[0].extent.start.offset, inner[0].extent.end.offset  # type: ignore[attr-defined]
    if not local.id < start < end or tokens.before(start) != "=" or "->" in tokens.between(start, end):
        return local
    facts = Facts()
    facts.thread_values = True
    gather(inner[0], tokens, facts, head=True)
    if not facts.plain or facts.changes or facts.calls:
        return local
    written = tokens.between(start, end)
    return dataclasses.replace(
        local,
        value=(start, end),
        value_uses=frozenset(facts.uses),
        value_names_thread=facts.thread_index,
        value_words=frozenset(
            w for k, w in enumerate(written) if w.isidentifier() and (k == 0 or written[k - 1] != ".")
        ),  # (a member's name is none)
        thread_x=written == ["threadIdx", ".", "x"]
        and variable.type.get_canonical().kind.name in WIDE_INTEGERS,  # type: ignore[attr-defined]
    )


WIDE_INTEGERS = {"INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG"}


def thread_bound(condition: object, tokens: Tokens, text: bytes) -> ThreadBound | None:
    """The condition as a ThreadBound, if it is one."""
    inner = children(condition)
    while kind_of(condition) in ("UNEXPOSED_EXPR", "PAREN_EXPR") and len(inner) == 1:
        condition, inner = inner[0], children(inner[0])
    if kind_of(condition) != "BINARY_OPERATOR" or len(inner) != 2:
        return None
    left, limit = inner
    if tokens.at_or_after(left.extent.end.offset) != "<":  # type: ignore[attr-defined]
        return None
    index: int | None = None
    written = text[left.extent.start.offset : left.extent.end.offset]  # type: ignore[attr-defined]
    if written != b"threadIdx.x":
        while kind_of(left) in ("UNEXPOSED_EXPR", "PAREN_EXPR") and len(children(left)) == 1:
            left = children(left)[0]
        target = left.referenced if kind_of(left) == "DECL_REF_EXPR" else None  # type: ignore[attr-defined]
        if target is None or kind_of(target) != "VAR_DECL" or not is_local(target):
            return None
        index = local_id(target)
    facts = Facts()
    gather(limit, tokens, facts, head=True)
    if not facts.plain or facts.changes or facts.calls:
        return None
    extent = condition.extent  # type: ignore[attr-defined]
    return ThreadBound(index, (extent.start.offset, extent.end.offset), frozenset(facts.uses))
