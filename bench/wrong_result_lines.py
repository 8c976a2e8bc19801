"""How often a wrong result is explained with the line of its mistake, on emu.

Plants one typical mistake at a time into a lab's reference solution (each leaves a wrong output:
no crash, no race), builds the lab's solutions test, runs it (the timing tests left out), and
says whether a failure's message names the mistake's line as file:line. The solution is put back
after each, also when a step fails. Run from the repository's root after `make build`:

    python3 bench/wrong_result_lines.py [build/default]

Takes about three minutes on two cores (a lab's test is rebuilt for each mistake).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mistake:
    lab: str
    file: str
    right: str  # the text of the solution it replaces (found once in the file)
    wrong: str


MISTAKES = [
    Mistake("01_vector_add", "vector_add.cu", "C[i] = A[i] + B[i]", "C[i] = A[i] + A[i]"),
    Mistake("01_vector_add", "vector_add.cu", "THREADS>>>(d_A", "THREADS / 2>>>(d_A"),
    Mistake("01_vector_add", "vector_add.cu", "if (i < n) C[i]", "if (i < n - 1) C[i]"),
    Mistake("02_thread_indexing", "thread_indexing.cu", "Pin[rgbOffset + 2]", "Pin[rgbOffset + 1]"),
    Mistake("02_thread_indexing", "thread_indexing.cu", "(pixVal / pixels)", "(pixVal / 9)"),
    Mistake(
        "03_matmul_variants",
        "matmul_variants.cu",
        "k < wa; ++k) sum += a[Row",
        "k < wa - 1; ++k) sum += a[Row",
    ),
    Mistake("04_tiled_matmul", "tiled_matmul.cu", "Nds[k][tx]", "Nds[k][ty]"),
    Mistake(
        "05_convolution_halo",
        "convolution.cu",
        "N[N_start_point + j] * M[j]",
        "N[N_start_point + j] * M[Mask_Width - 1 - j]",
    ),
    Mistake(
        "06_spmv",
        "spmv.cu",
        "A.row_ptr[row]; elem < A.row_ptr[row + 1]; ++elem",
        "A.row_ptr[row]; elem < A.row_ptr[row + 1] - 1; ++elem",
    ),
    Mistake("07_averaging_filter", "averaging_filter.cu", "v[i + 1]) / 3.0f", "v[i + 1]) / 2.0f"),
    Mistake("08_bank_conflicts", "bank_conflicts.cu", "= tile[tx][ty]", "= tile[ty][tx]"),
    Mistake("09_jacobi", "jacobi.cu", "0.25f *", "0.2f *"),
]


def run(mistake: Mistake, build: Path) -> tuple[str, bool]:
    """How the test ended (the failed tests, or its exit status where it stopped) and whether a
    message names the mistake's line."""
    path = ROOT / "solutions" / mistake.lab / mistake.file
    text = path.read_text()
    if text.count(mistake.right) != 1:
        sys.exit(f"{path}: '{mistake.right}' is not there once")
    line = text[: text.index(mistake.right)].count("\n") + 1
    path.write_text(text.replace(mistake.right, mistake.wrong))
    try:
        target = f"{mistake.lab}-solutions"
        subprocess.run(["cmake", "--build", str(build), "--target", target], check=True, capture_output=True)
        done = subprocess.run(
            [str(build / "labs" / target), "--gtest_filter=-*Performance*"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=600,
        )
    finally:
        path.write_text(text)
    output = done.stdout + done.stderr
    failed = len(re.findall(r"^\[  FAILED  \] \S+\.\S+.* \(\d+ ms\)$", output, re.M))
    ended = f"{failed} tests failed" if failed else f"stopped with exit status {done.returncode}"
    return ended, f"{mistake.file}:{line}" in output


def main() -> int:
    build = (ROOT / (sys.argv[1] if len(sys.argv) > 1 else "build/default")).resolve()
    named = 0
    for m in MISTAKES:
        ended, found = run(m, build)
        named += found
        print(f"{m.lab}: {m.right!r} -> {m.wrong!r}: {ended}, line named: {found}")
    print(f"named with their line: {named} of {len(MISTAKES)}")
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)  # as it was
    return 0


if __name__ == "__main__":
    sys.exit(main())
