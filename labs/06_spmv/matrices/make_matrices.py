#!/usr/bin/env python3
"""Writes the lab's test matrices (Matrix Market, fixed seed): shapes that make SpMV kernels differ.

    banded.mtx      1000 x 1000, 7 diagonals: every row alike (ELL's best case)
    power_law.mtx   3000 x 3000, row lengths from a power law: a few long rows, many short ones
    empty_rows.mtx  700 x 500, every third row empty, others 1 to 9 entries
    long_row.mtx    400 x 6000, one row of 5000 entries among rows of 2: one warp's worth of work
                    for one thread in the scalar kernel, and ELL padded 2500-fold
Usage: make_matrices.py [FOLDER]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path


def write(path: Path, rows: int, cols: int, entries: dict[tuple[int, int], float], comment: str) -> None:
    lines = ["%%MatrixMarket matrix coordinate real general", f"% {comment}", f"{rows} {cols} {len(entries)}"]
    lines += [f"{r + 1} {c + 1} {v:.4f}" for (r, c), v in sorted(entries.items())]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def value(rng: random.Random) -> float:
    return round(rng.uniform(-1, 1), 4) or 0.5


def main(folder: Path) -> None:
    rng = random.Random(2026)
    banded = {(r, c): value(rng) for r in range(1000) for c in range(r - 3, r + 4) if 0 <= c < 1000}
    write(folder / "banded.mtx", 1000, 1000, banded, "cudalab: 7 diagonals")

    power = {}
    for r in range(3000):
        length = min(3000, int(rng.paretovariate(1.2)))  # mostly 1-3, a few in the hundreds
        for c in rng.sample(range(3000), length):
            power[(r, c)] = value(rng)
    write(folder / "power_law.mtx", 3000, 3000, power, "cudalab: power-law row lengths")

    empty = {}
    for r in range(700):
        if r % 3 != 0:
            for c in rng.sample(range(500), rng.randint(1, 9)):
                empty[(r, c)] = value(rng)
    write(folder / "empty_rows.mtx", 700, 500, empty, "cudalab: every third row empty")

    long_row = {}
    for r in range(400):
        cols = rng.sample(range(6000), 5000 if r == 7 else 2)
        for c in cols:
            long_row[(r, c)] = value(rng)
    write(folder / "long_row.mtx", 400, 6000, long_row, "cudalab: row 7 has 5000 entries")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
