#!/usr/bin/env python3
"""Turns a CUDA C++ source file into plain C++ for the emu backend.

Two rewrites, everything else is left as written (the prelude's macros do the rest):

    kernel<<<grid, block[, shared[, stream]]>>>(args)
      -> ::cudalab::emu::Launch("kernel", __FILE__, __LINE__, grid, block[, ...])(
             [&](auto&&... cudalab_args) { kernel(cudalab_args...); }, args)

    extern __shared__ T name[];
      -> T* const name = reinterpret_cast<T*>(::cudalab::emu::builtins.dynamic_shared);

    __shared__ T name[N][M];   (inside a function)
      -> static ::cudalab::emu::SharedSlot cudalab_slot_name{"name", __FILE__, __LINE__};
         auto& name = ::cudalab::emu::shared<T[N][M]>(cudalab_slot_name);

so that each block's copy lives in the block's checked shared space (see common/emu/src/checks.cpp).
A declaration the translator cannot read stays as written; the prelude makes it a thread_local.

The output starts with `#line 1 "<input>"` and keeps every line where it was, so compiler errors
and the backend's diagnostics name the student's file and line.

Usage: translate.py INPUT.cu OUTPUT.cpp
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PRELUDE = '#include "cudalab/emu/prelude.h"\n'
IDENT = re.compile(r"[A-Za-z0-9_:]")
EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+([^;{}]*?)\s*\b(\w+)\s*\[\s*\]\s*;")
ALIGN = re.compile(r"\b(__align__|alignas)\s*\([^)]*\)")


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


def kernel_start(src: str, mask: list[bool], pos: int) -> int:
    """Start of the kernel expression that ends just before `<<<` at pos: name, `ns::name`,
    `name<T, 4>`."""
    k = pos - 1
    while k >= 0 and src[k].isspace():
        k -= 1
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


def config_end(src: str, mask: list[bool], pos: int) -> int:
    """Position of the `>>>` that closes the launch configuration opened at pos."""
    depth = 0
    k = pos + 3
    while k < len(src):
        if mask[k]:
            if src[k] in "([{":
                depth += 1
            elif src[k] in ")]}":
                depth -= 1
            elif depth == 0 and src.startswith(">>>", k):
                return k
            elif src[k] == ";":
                break
        k += 1
    raise TranslateError(src, pos, "'<<<' without a matching '>>>'")


def rewrite_launches(src: str) -> str:
    out: list[str] = []
    mask = code_mask(src)
    done = 0
    pos = src.find("<<<")
    while pos >= 0:
        if not mask[pos]:
            pos = src.find("<<<", pos + 3)
            continue
        start = kernel_start(src, mask, pos)
        close = config_end(src, mask, pos)
        paren = close + 3
        while paren < len(src) and src[paren].isspace():
            paren += 1
        if paren >= len(src) or src[paren] != "(":
            raise TranslateError(src, close, "expected '(' and the kernel's arguments after '>>>'")
        kernel = re.sub(r"\s+", "", src[start:pos])
        config = src[pos + 3 : close]
        args_follow = src[paren + 1 :].lstrip()[:1] != ")"
        text = (
            f'::cudalab::emu::Launch("{kernel}", __FILE__, __LINE__, {config})('
            f"[&](auto&&... cudalab_args) {{ {kernel}(cudalab_args...); }}" + (", " if args_follow else "")
        )
        text += "\n" * (src.count("\n", start, paren + 1) - text.count("\n"))
        out.append(src[done:start])
        out.append(text)
        done = paren + 1
        pos = src.find("<<<", done)
    out.append(src[done:])
    return "".join(out)


def rewrite_extern_shared(src: str) -> str:
    mask = code_mask(src)

    def depth_at(pos: int) -> int:
        opened = sum(1 for k in range(pos) if mask[k] and src[k] == "{")
        return opened - sum(1 for k in range(pos) if mask[k] and src[k] == "}")

    def replace(m: re.Match[str]) -> str:
        if not mask[m.start()]:
            return m.group(0)
        if depth_at(m.start()) == 0:
            raise TranslateError(
                src, m.start(), "declare 'extern __shared__' arrays inside the kernel that uses them"
            )
        type_ = ALIGN.sub("", m.group(1)).strip()
        name = m.group(2)
        return f"{type_}* const {name} = reinterpret_cast<{type_}*>(::cudalab::emu::builtins.dynamic_shared);"

    return EXTERN_SHARED.sub(replace, src)


SHARED = re.compile(r"\b__shared__\b")
FIRST_DECLARATOR = re.compile(r"^(.*?)\b([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", re.S)
MORE_DECLARATOR = re.compile(r"^\s*([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", re.S)


def split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


def shared_declaration(text: str) -> str | None:
    """`__shared__ float a[4][4], b[4];` -> slots and references, or None if not understood."""
    words = re.sub(r"\b(__shared__|static)\b", " ", ALIGN.sub(" ", text)).strip()
    if not words or "=" in words or "(" in words or "{" in words:
        return None
    parts = split_top_level(words)
    first = FIRST_DECLARATOR.match(parts[0].strip())
    if first is None or not first.group(1).strip():
        return None
    type_ = " ".join(first.group(1).split())
    declarators = [(first.group(2), first.group(3))]
    for part in parts[1:]:
        more = MORE_DECLARATOR.match(part)
        if more is None:
            return None
        declarators.append((more.group(1), more.group(2)))
    out = []
    for name, dims in declarators:
        dims = "".join(dims.split())
        slot = f"cudalab_slot_{name}"
        out.append(
            f'static ::cudalab::emu::SharedSlot {slot}{{"{name}", __FILE__, __LINE__}}; '
            f"auto& {name} = ::cudalab::emu::shared<{type_}{dims}>({slot});"
        )
    return " ".join(out)


def rewrite_shared(src: str) -> str:
    mask = code_mask(src)
    out: list[str] = []
    done = 0
    depth = 0
    k = 0
    for m in SHARED.finditer(src):
        if not mask[m.start()] or m.start() < done:
            continue
        while k < m.start():
            if mask[k]:
                depth += {"{": 1, "}": -1}.get(src[k], 0)
            k += 1
        if depth == 0:
            continue  # a namespace-scope __shared__ variable: the prelude's thread_local
        start = m.start()
        while start > 0 and not (mask[start - 1] and src[start - 1] in ";{}"):
            start -= 1
        while start < m.start() and (src[start].isspace() or not mask[start] or src[start] == "#"):
            if mask[start] and src[start] == "#":  # a preprocessor line before the declaration
                start = src.find("\n", start) + 1
            else:
                start += 1
        end = src.find(";", m.end())
        while end >= 0 and not mask[end]:
            end = src.find(";", end + 1)
        if end < 0:
            continue
        text = shared_declaration(src[start:end])
        if text is None:
            continue
        out.append(src[done:start])
        out.append(text + "\n" * src.count("\n", start, end))
        done = end + 1
    out.append(src[done:])
    return "".join(out)


def translate(src: str, path: str) -> str:
    body = rewrite_shared(rewrite_extern_shared(rewrite_launches(src)))
    return f'{PRELUDE}#line 1 "{path}"\n{body}'


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, target = Path(argv[1]).resolve(), Path(argv[2])
    try:
        text = translate(source.read_text(encoding="utf-8"), str(source))
    except TranslateError as e:
        print(f"{source}:{e.line}: error: {e}", file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as e:
        print(f"{source}: error: cannot read: {e}", file=sys.stderr)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
