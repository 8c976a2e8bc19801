"""The instructor's workbook as the grader uses it: labs, the student's files of each lab, rubrics."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "common" / "tools"))
import check  # noqa: E402
import rubric  # noqa: E402
import symbols  # noqa: E402, F401  (the grader checks what make check checks)
from check import GTEST_NOISE, useful_build_errors  # noqa: E402, F401  (make check and the grader agree)

# What a submission's build needs of the workbook; solutions/, grader/ and docs/ stay out of reach.
BUILD_PARTS = ("CMakeLists.txt", "cmake", "common", "labs", "bench")


def labs() -> list[str]:
    return sorted(p.name for p in (ROOT / "labs").glob("[0-9][0-9]_*") if p.is_dir())


def select(spec: str | None) -> list[str]:
    """'01,04' or '01_vector_add' or None (all) -> lab folder names; unknown names are an error."""
    all_labs = labs()
    if not spec:
        return all_labs
    chosen = []
    for item in spec.split(","):
        item = item.strip()
        match = [lab for lab in all_labs if item in (lab, lab[:2], lab[3:])]
        if not match:
            raise ValueError(f"--labs: no lab named '{item}'; the labs are: {', '.join(all_labs)}")
        chosen += [m for m in match if m not in chosen]
    return chosen


def student_files(lab: str) -> list[str]:
    """The files a student writes in a lab (make check's rule)."""
    return check.student_files(ROOT / "labs" / lab)


def points(lab: str) -> dict[str, float]:
    return rubric.load(ROOT / "labs" / lab / "rubric.toml")


def categories(lab: str) -> dict[str, str]:
    return rubric.categories(ROOT / "labs" / lab / "rubric.toml")


def fingerprint(lab: str) -> str:
    """Changes when anything the lab is graded with changes (tests, interface, rubric, common)."""
    h = hashlib.sha256()
    for base in (ROOT / "labs" / lab, ROOT / "common", ROOT / "cmake"):
        for p in sorted(base.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(ROOT)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]
