"""The instructor's workbook as the grader uses it: what a submission's build needs, and when a
lab's grading changes. The labs, their files and rubrics are cudalab_tools.labs (make check's)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cudalab_tools.labs import ROOT, categories, labs, points, select, student_files  # noqa: F401

from . import submissions

# What a submission's build needs of the workbook; solutions/, grader/ and docs/ stay out of reach.
BUILD_PARTS = ("CMakeLists.txt", "cmake", "common", "labs", "bench")
# The Python packages that ./setup.sh installed (the front end's libclang): a build reads them
# where they are, read-only, through a link in its copy of the workbook.
PACKAGES = ROOT / ".deps"


def submitted_files(unpacked: Path, lab: str) -> dict[str, Path | None]:
    """The student's files of `lab` in the unpacked submission (submissions.lab_files)."""
    instructors = {p.name for p in (ROOT / "labs" / lab).iterdir()}
    return submissions.lab_files(unpacked, lab, student_files(lab), instructors)


def fingerprint(lab: str) -> str:
    """Changes when anything the lab is graded with changes (tests, interface, rubric, common)."""
    h = hashlib.sha256()
    for base in (ROOT / "labs" / lab, ROOT / "common", ROOT / "cmake"):
        for p in sorted(base.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(ROOT)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]
