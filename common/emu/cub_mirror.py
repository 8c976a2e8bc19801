#!/usr/bin/env python3
"""The emu's CUB: CUB's headers as the system has them (Debian's libcub-dev, CUB 1.17), with the
emu's own files (common/emu/cub) in place of those a CPU cannot compile: the PTX layer
(util_ptx.cuh), the warp shuffles written in PTX, and the device-wide algorithms, whose dispatch
launches kernels from inside CUB (the emu runs them on the CPU: cub/device/emu_algorithm.cuh).

CUB's headers include each other by relative paths, so the emu's files must sit in a copy of the
tree rather than before it on the include path. In the copy, a member typedef that reuses its
template's name (`typedef BlockExchange<...> BlockExchange;`, twelve in CUB 1.17) names the
template with CUB's namespace: GCC rejects the unqualified form ("changes meaning", nvcc's EDG
front end accepts it); nothing else of CUB's text changes.

Usage: cub_mirror.py CUB_INCLUDE_DIR OVERLAY_DIR OUTPUT_DIR   (OUTPUT_DIR/cub is replaced)
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

SELF_NAMED_TYPEDEF = re.compile(r"\btypedef(\s+)(\w+)(\s*<[^;{}]*>\s*)\2(\s*;)")


def qualified(text: str) -> str:
    """`typedef X<...> X;` as `typedef CUB_NS_QUALIFIER::X<...> X;`."""
    return SELF_NAMED_TYPEDEF.sub(r"typedef\1CUB_NS_QUALIFIER::\2\3\2\4", text)


def mirror(cub_include: Path, overlay: Path, output: Path) -> None:
    source, target = cub_include / "cub", output / "cub"
    if not (source / "cub.cuh").is_file():
        raise SystemExit(f"cub_mirror.py: {source}/cub.cuh not found (install libcub-dev)")
    shutil.rmtree(target, ignore_errors=True)
    for header in source.rglob("*"):
        if header.is_file():
            copy = target / header.relative_to(source)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(qualified(header.read_text()))
    for own in overlay.rglob("*.cuh"):
        copy = target / own.relative_to(overlay)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(own, copy)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__.split("Usage: ")[1], file=sys.stderr)
        return 2
    mirror(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
