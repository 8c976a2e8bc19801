"""The workbook's labs: which there are, which a selection names, the files a student writes in
each, and their rubrics."""

from __future__ import annotations

import re
from pathlib import Path

from . import rubric

ROOT = Path(__file__).resolve().parents[3]


def labs() -> list[str]:
    return sorted(p.name for p in (ROOT / "labs").glob("[0-9][0-9]_*") if p.is_dir())


def select(spec: str | None) -> list[str]:
    """'01,04', '01_vector_add', 'vector_add' or None (all) -> lab folder names; a name that is no
    lab is a ValueError that lists the labs."""
    all_labs = labs()
    if not spec:
        return all_labs
    chosen = []
    for item in spec.split(","):
        item = item.strip()
        match = [lab for lab in all_labs if item in (lab, lab[:2], lab[3:])]
        if not match:
            raise ValueError(f"no lab named '{item}'; the labs are: {', '.join(all_labs)}")
        chosen += [m for m in match if m not in chosen]
    return chosen


def student_files(lab: str) -> list[str]:
    """The files a student writes in a lab: its .cu files other than tests and demos."""
    return sorted(
        p.name for p in (ROOT / "labs" / lab).glob("*.cu") if not p.name.startswith(("test_", "demo_"))
    )


COUNTING_TEST = re.compile(r"\bTEST\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{\s*CUDALAB_COUNTING_TEST\(\)")


def counting_tests(lab: str) -> list[str]:
    """The lab's counting tests (those whose body starts with CUDALAB_COUNTING_TEST(): they grade
    the memory traffic the emu counts), as Suite.Name."""
    found = []
    for harness in sorted((ROOT / "labs" / lab).glob("test_*.cu")):
        found += [f"{m[1]}.{m[2]}" for m in COUNTING_TEST.finditer(harness.read_text(encoding="utf-8"))]
    return found


def points(lab: str) -> dict[str, float]:
    return rubric.load(ROOT / "labs" / lab / "rubric.toml")


def categories(lab: str) -> dict[str, str]:
    return rubric.categories(ROOT / "labs" / lab / "rubric.toml")
