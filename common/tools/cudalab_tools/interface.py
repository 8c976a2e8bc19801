"""A lab's interface, as the remote runner needs it (common/remote): the kernels and host
functions that its header declares, and the kernels and __constant__/__device__ variables of its
harness, read by the Clang front end (cuda_ast.py). Writes the two sources that join a lab to the
runner:

    checker  the harness (test_*.cu) and, for each host function of the interface, a definition
             that runs it in the runner: the checker holds no student code.
    runner   the harness and the table of what the checker may ask the runner to run.

Usage: python3 -m cudalab_tools.interface HEADER HARNESS CHECKER_OUTPUT RUNNER_OUTPUT
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from cudalab_tools import cuda_ast


@dataclass(frozen=True)
class Interface:
    header: Path
    harness: Path
    host_functions: list[cuda_ast.Function]  # declared in the header, not kernels
    kernels: list[str]  # of the header and the harness
    symbols: list[str]  # __constant__ and __device__ variables of the harness


def signature(f: cuda_ast.Function) -> str:
    return ", ".join(p.declaration() for p in f.parameters)


def read(header: Path, harness: Path) -> Interface:
    """The interface, from the harness as Clang reads it (it includes the header)."""
    source = cuda_ast.parse(harness, headers=[header])
    in_header = [f for f in source.functions if f.span.file == str(header) and f.at_file_scope]
    host_functions: dict[tuple[str, str], cuda_ast.Function] = {}  # (overloads: by name and parameters)
    for f in in_header:
        if f.kernel or f.template or f.defined or "device" in f.spaces:
            continue
        if (f.name, signature(f)) in host_functions:
            continue
        for p in f.parameters:
            if not p.name or p.has_default:
                raise cuda_ast.FrontEndError(
                    f"{header}:{p.span.line}: error: {f.name}: every parameter of the interface needs a name "
                    "and no default value"
                )
        host_functions[f.name, signature(f)] = f
    kernels = [f.name for f in source.functions if f.kernel and f.at_file_scope and not f.template]
    symbols = [
        v.name
        for v in source.variables
        if v.span.file == str(harness) and v.at_file_scope and not v.extern
        if v.space in ("constant", "device")
    ]
    return Interface(header, harness, list(host_functions.values()), list(dict.fromkeys(kernels)), symbols)


def checker_source(interface: Interface) -> str:
    lines = [
        f"// The checker of {interface.harness.parent.name}, written by cudalab_tools/interface.py:",
        "// the harness, and the lab's host functions run by the runner.",
        f'#include "{interface.harness}"',
        "",
    ]
    for f in interface.host_functions:
        call = f"::cudalab::remote::Call<{f.result}({signature(f)})>::run"
        lines += [
            f"{f.result} {f.name}({signature(f)}) {{",
            f'  return {call}("{f.name}", {", ".join(p.name for p in f.parameters)});',
            "}",
        ]
    if interface.symbols:
        pairs = ", ".join(f'{{"{n}", &{n}}}' for n in interface.symbols)
        lines.append(f"static const ::cudalab::remote::SymbolNames cudalab_symbol_names{{{pairs}}};")
    return "\n".join(lines) + "\n"


def runner_source(interface: Interface) -> str:
    entries = [f'::cudalab::remote::kernel("{k}", &{k})' for k in interface.kernels]
    entries += [
        f'::cudalab::remote::function("{f.name}", static_cast<{f.result} (*)({signature(f)})>(&{f.name}))'
        for f in interface.host_functions
    ]
    entries += [f'::cudalab::remote::symbol("{n}", &{n}, sizeof({n}))' for n in interface.symbols]
    return "\n".join(
        [
            f"// The runner of {interface.harness.parent.name}, written by cudalab_tools/interface.py:",
            "// the harness (for its kernels and symbols) and what the checker may ask the runner to run.",
            f'#include "{interface.harness}"',
            '#include "cudalab/remote/runner.h"',
            "static const ::cudalab::remote::Registry cudalab_registry{",
            "    " + ",\n    ".join(entries) + "};",
            "",
        ]
    )


def write_if_changed(output: Path, text: str) -> None:
    """Writes `text` unless `output` holds it already, and then touches it: make runs this when an
    input is newer than the output, and would run it again on every build otherwise."""
    if not output.exists() or output.read_text(encoding="utf-8") != text:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    else:
        output.touch()


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    header, harness = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    try:
        interface = read(header, harness)
    except cuda_ast.FrontEndError as e:
        print(e, file=sys.stderr)
        return 1
    write_if_changed(Path(argv[3]), checker_source(interface))
    write_if_changed(Path(argv[4]), runner_source(interface))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
