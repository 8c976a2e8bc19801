"""The instructor's workbook as the grader uses it: what a submission's build needs, and when a
lab's grading changes. The labs, their files and rubrics are cudalab_tools.labs (make check's)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
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


def digest_files(h: hashlib._Hash, tops: Iterable[Path], skip: tuple[str, ...] = ("__pycache__",)) -> None:
    """Adds to `h` the path (from the workbook's root) and the bytes of every file under `tops` (a
    file stands for itself), in a fixed order, but those in a folder named in `skip`."""
    for top in tops:
        for p in [top] if top.is_file() else sorted(top.rglob("*")):
            relative = p.relative_to(ROOT)
            if p.is_file() and not any(part in skip for part in relative.parts):
                h.update(str(relative).encode())
                h.update(p.read_bytes())


def fingerprint(lab: str) -> str:
    """Changes when anything the lab is graded with changes (tests, interface, rubric, common)."""
    h = hashlib.sha256()
    digest_files(h, (ROOT / "labs" / lab, ROOT / "common", ROOT / "cmake"))
    return h.hexdigest()[:16]
