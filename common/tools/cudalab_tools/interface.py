"""A lab's interface, as the remote runner needs it (common/remote): the kernels and host
functions that its header declares, and the kernels and __constant__/__device__ variables of its
harness. Writes the two sources that join a lab to the runner:

    checker  the harness (test_*.cu) and, for each host function of the interface, a definition
             that runs it in the runner: the checker holds no student code.
    runner   the harness and the table of what the checker may ask the runner to run.

Usage: python3 -m cudalab_tools.interface checker|runner HEADER HARNESS OUTPUT
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)
DECLARATION = re.compile(r"^(?P<result>[\w\s:*&<>]+?)\s*\b(?P<name>\w+)\s*\((?P<params>.*)\)$", re.S)
KERNEL = re.compile(r"\b__global__\s+void\s+(\w+)\s*\(")
SYMBOL = re.compile(r"\b__(?:constant|device)__\s+[\w\s:<>]+?\b(\w+)\s*(?:\[[^\]]*\]\s*)*[;=]")


@dataclass(frozen=True)
class Function:
    result: str
    name: str
    params: list[str]  # each "type name", as declared

    def type(self) -> str:
        return f"{self.result} (*)({', '.join(self.params)})"

    def param_names(self) -> list[str]:
        return [re.search(r"(\w+)\s*$", p).group(1) for p in self.params]


def code(text: str) -> str:
    """The text without comments, strings and preprocessor lines (each replaced by a space)."""
    text = COMMENT_OR_STRING.sub(" ", text)
    return re.sub(r"^[ \t]*#.*?(?<!\\)$", " ", text, flags=re.M)


def split_params(params: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for c in params:
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    parts.append(current)
    parts = [" ".join(p.split()) for p in parts]
    return [] if parts == ["void"] or parts == [""] else parts


def top_level_statements(text: str) -> list[str]:
    """Statements outside any braces (struct bodies and function bodies are skipped)."""
    statements, depth, current = [], 0, ""
    for c in text:
        if c == "{":
            depth += 1
            current = ""
        elif c == "}":
            depth -= 1
            current = ""
        elif c == ";" and depth == 0:
            statements.append(current.strip())
            current = ""
        elif depth == 0:
            current += c
    return statements


def host_functions(header: Path) -> list[Function]:
    """The functions the header declares that are not kernels."""
    found = []
    for statement in top_level_statements(code(header.read_text(encoding="utf-8"))):
        m = DECLARATION.match(" ".join(statement.split()))
        if not m or "__global__" in m["result"] or m["result"].strip() in ("struct", "class"):
            continue
        params = split_params(m["params"])
        for p in params:
            if not re.search(r"[\w\]]\s+\**\s*\w+\s*$|[*&]\s*\w+\s*$", p) or "=" in p:
                raise SystemExit(f"{header}: {m['name']}: every parameter needs a name and no default: '{p}'")
        found.append(Function(" ".join(m["result"].split()), m["name"], params))
    return found


def kernels(*sources: Path) -> list[str]:
    names: list[str] = []
    for source in sources:
        for name in KERNEL.findall(code(source.read_text(encoding="utf-8"))):
            if name not in names:
                names.append(name)
    return names


def symbols(source: Path) -> list[str]:
    return SYMBOL.findall(code(source.read_text(encoding="utf-8")))


def checker_source(header: Path, harness: Path) -> str:
    lines = [
        f"// The checker of {harness.parent.name}, written by cudalab_tools/interface.py: the harness,",
        "// and the lab's host functions run by the runner.",
        f'#include "{harness}"',
        "",
    ]
    for f in host_functions(header):
        call = f"::cudalab::remote::Call<{f.result}({', '.join(f.params)})>::run"
        lines += [
            f"{f.result} {f.name}({', '.join(f.params)}) {{",
            f'  return {call}("{f.name}", {", ".join(f.param_names())});',
            "}",
        ]
    names = symbols(harness)
    if names:
        pairs = ", ".join(f'{{"{n}", &{n}}}' for n in names)
        lines.append(f"static const ::cudalab::remote::SymbolNames cudalab_symbol_names{{{pairs}}};")
    return "\n".join(lines) + "\n"


def runner_source(header: Path, harness: Path) -> str:
    entries = [f'::cudalab::remote::kernel("{k}", &{k})' for k in kernels(header, harness)]
    entries += [
        f'::cudalab::remote::function("{f.name}", static_cast<{f.type()}>(&{f.name}))'
        for f in host_functions(header)
    ]
    entries += [f'::cudalab::remote::symbol("{n}", &{n}, sizeof({n}))' for n in symbols(harness)]
    return "\n".join(
        [
            f"// The runner of {harness.parent.name}, written by cudalab_tools/interface.py: the harness",
            "// (for its kernels and symbols) and what the checker may ask the runner to run.",
            f'#include "{harness}"',
            '#include "cudalab/remote/runner.h"',
            "static const ::cudalab::remote::Registry cudalab_registry{",
            "    " + ",\n    ".join(entries) + "};",
            "",
        ]
    )


def main(argv: list[str]) -> int:
    if len(argv) != 5 or argv[1] not in ("checker", "runner"):
        print(__doc__, file=sys.stderr)
        return 2
    header, harness, output = Path(argv[2]).resolve(), Path(argv[3]).resolve(), Path(argv[4])
    text = (checker_source if argv[1] == "checker" else runner_source)(header, harness)
    if not output.exists() or output.read_text(encoding="utf-8") != text:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
