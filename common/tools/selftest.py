#!/usr/bin/env python3
"""The project's own checks of a lab (run by `make test` through CTest).

selftest.py skeleton-fails TEST_BINARY
    Every test of the lab must fail on the untouched skeleton: a test that passes without the
    student's work cannot fail, and is a defect. Each test runs in its own process, so that a
    crash fails that test only. Tests that skip themselves on this backend are allowed.
selftest.py rubric RUBRIC.toml TEST_BINARY
    The rubric gives points to every test of the lab and names no test that does not exist, and
    the README's status table and the lab's own README give the lab the rubric's number of tests
    and points.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from cudalab_tools import rubric
from cudalab_tools.gtest import TestVerdict, list_tests, run_test


def skeleton_fails(binary: str) -> int:
    passed = []
    for test in list_tests(Path(binary)):
        verdict = run_test(Path(binary), test, timeout=120).verdict  # decided as make check decides
        if verdict == TestVerdict.SKIPPED:
            print(f"skipped          {test}")
        elif verdict == TestVerdict.PASSED:
            print(f"PASSES           {test}")
            passed.append(test)
        else:
            print(f"fails            {test}")
    if passed:
        names = ", ".join(passed)
        print(f"error: {len(passed)} test(s) pass on the untouched skeleton and so cannot fail: {names}")
        return 1
    return 0


def check_rubric(path: str, binary: str) -> int:
    try:
        points = rubric.load(Path(path))
        rubric.categories(Path(path))
    except rubric.RubricError as e:
        print(f"error: {e}")
        return 1
    problems = rubric.mismatch(points, set(list_tests(Path(binary))), Path(path))
    problems += readme_row_mismatch(Path(path).parent.name, len(points), sum(points.values()))
    problems += lab_readme_mismatch(Path(path).parent / "README.md", len(points), sum(points.values()))
    for p in problems:
        print(f"error: {p}")
    if not problems:
        print(f"{path}: {len(points)} tests, {sum(points.values()):g} points")
    return 1 if problems else 0


def readme_row_mismatch(lab: str, tests: int, points: float) -> list[str]:
    """The README's status row `| lab | what | tests | points |` against the rubric's numbers."""
    readme = Path(__file__).resolve().parents[2] / "README.md"
    rows = [line for line in readme.read_text().splitlines() if line.startswith(f"| {lab} |")]
    if len(rows) != 1:
        return [f"{readme}: the status table needs one row for {lab}"]
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    if cells[-2:] != [str(tests), f"{points:g}"]:
        return [f"{readme}: {lab}'s row says {cells[-2:]}; the rubric has {tests} tests, {points:g} points"]
    return []


COUNTS = re.compile(r"\b(\d+) tests, (\d+(?:\.\d+)?) points\b")


def lab_readme_mismatch(readme: Path, tests: int, points: float) -> list[str]:
    """The lab README's "N tests, M points" (one, under "What `make check` checks") against the
    rubric's numbers."""
    found = COUNTS.findall(readme.read_text(encoding="utf-8"))
    if len(found) != 1:
        return [f'{readme}: says "N tests, M points" {len(found)} times; once, with the rubric\'s numbers']
    if found[0] != (str(tests), f"{points:g}"):
        said = f"{found[0][0]} tests, {found[0][1]} points"
        return [f"{readme}: says {said}; the rubric has {tests} tests, {points:g} points"]
    return []


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "skeleton-fails":
        return skeleton_fails(argv[2])
    if len(argv) == 4 and argv[1] == "rubric":
        return check_rubric(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
