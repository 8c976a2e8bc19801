#!/usr/bin/env python3
"""make student-release DEST: the workbook as students get it, and a check that it is right.

Leaves out solutions/, the grader and its sample submissions, build folders, the proof runs'
logs and the GPU proof script (which copies solutions); then builds the copy on the CPU backend and
checks that `make check` fails on every lab, as untouched skeletons must. The build stays in
DEST/build/emu, which the copy's .gitignore leaves out of what is pushed; the course CI templates'
test grades that copy (.ci/run: CUDALAB_RELEASE).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEAVE_OUT = {
    "solutions",
    "grader",
    "build",
    ".git",
    "runs",
    "gpu_proof.sh",
    "__pycache__",
    ".ci",
    ".pytest_cache",
    ".ruff_cache",
}


def copy(dest: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in LEAVE_OUT}

    shutil.copytree(ROOT, dest, ignore=ignore)  # without grader/: its make targets go too


def verify(dest: Path) -> list[str]:
    problems = []
    leaked = [p for p in dest.rglob("*") if "solution" in p.name.lower()]
    problems += [f"{p}: looks like a solution" for p in leaked]
    run = subprocess.run(["make", "-C", str(dest), "check", "BACKEND=emu"], capture_output=True, text=True)
    print(run.stdout[-3000:])
    if run.returncode == 0:
        problems.append("make check passes on the release: the skeletons must fail")
    labs = sorted(p.name for p in (dest / "labs").glob("[0-9][0-9]_*"))
    for lab in labs:
        row = next((line for line in run.stdout.splitlines() if line.startswith(lab)), "")
        cells = row.split()
        if not row or "build" in row:
            problems.append(f"{lab}: does not build in the release")
        elif cells[-1].split("/")[0] != "0":
            problems.append(f"{lab}: the untouched skeleton earns {cells[-1]} points")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: make student-release DEST=<folder>", file=sys.stderr)
        return 2
    dest = Path(argv[1]).resolve()
    if dest.exists():
        print(f"student-release: error: {dest} exists; give a new folder", file=sys.stderr)
        return 2
    copy(dest)
    problems = verify(dest)
    for p in problems:
        print(f"student-release: error: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"student-release: {dest} builds, and every lab fails its tests until the student works")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
