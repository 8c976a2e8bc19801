#!/usr/bin/env python3
"""Markdown tables of a `make bench` run on a GPU (its JSON), for docs/benchmarks.md. Each table
there sits between `<!-- bench table: docs/runs/<run>.json -->` and `<!-- end bench table -->` and is
exactly what `labs_table()` makes of that file: common/tools/test_docs.py checks it, and
`--write` writes every such table of a document anew.

Usage: tables.py BENCH.json            (prints the table)
       tables.py --write DOCUMENT.md   (rewrites its tables from the files they name)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"(<!-- bench table: (\S+) -->\n)(.*?)(<!-- end bench table -->)", re.S)


def largest_sizes(results: list[dict]) -> list[dict]:
    """Each kernel's row at its largest size (small sizes measure launches, not kernels), in the
    run's order; the ceilings' rows (lab "-") too."""
    largest: dict[tuple[str, str], dict] = {}
    for r in results:
        key = (r["lab"], r["kernel"])
        if key not in largest or r["n"] > largest[key]["n"]:
            largest[key] = r
    return list(largest.values())


def rate(r: dict) -> str:
    value, unit = r["value"], r["unit"]
    if unit == "GFLOP/s" and value >= 1000:
        return f"{value / 1000:.1f} TFLOP/s"
    return f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"


def labs_table(path: Path) -> str:
    """The table of a bench JSON: every kernel at its largest size, its time, its rate, and the
    fraction of the same run's ceiling it reaches (the copy's bandwidth or cuBLAS SGEMM's rate)."""
    data = json.loads(path.read_text())
    rows = [
        "| lab | kernel | size | ms | rate | of the ceiling |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in largest_sizes(data["results"]):
        ceiling = f"{100 * r['fraction']:.1f}% of {r['ceiling']}" if r["fraction"] else ""
        rows.append(f"| {r['lab']} | {r['kernel']} | {r['size']} | {r['ms']:.4g} | {rate(r)} | {ceiling} |")
    return "\n".join(rows) + "\n"


def rewritten(document: str) -> str:
    """The document with each of its bench tables made anew from the file it names."""
    return TABLE.sub(lambda m: m.group(1) + labs_table(ROOT / m.group(2)) + m.group(4), document)


def stale_tables(document: str) -> list[str]:
    """The files whose tables in the document are not what labs_table() makes of them."""
    return [m.group(2) for m in TABLE.finditer(document) if m.group(3) != labs_table(ROOT / m.group(2))]


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--write":
        path = Path(argv[2])
        path.write_text(rewritten(path.read_text()))
        return 0
    if len(argv) == 2:
        print(labs_table(Path(argv[1])), end="")
        return 0
    print(__doc__.split("Usage: ")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
