"""The records that the emu runtime and the test harness write where CUDALAB_RECORDS names a file
(common/include/cudalab/records.h): JSON lines, one object each with its "kind", read here into
typed values for make check, the report pages, `cudalab run --report` and the grader. The schema,
kind by kind, is the dataclasses below (docs/diagnostics.md, "Records", shows one of each).

Records only describe: a verdict never comes from them (gtest.py decides), since the student's code
shares the process that writes some of them. A line that is not a record of a known kind, or whose
fields do not have their types, is left out.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Site:
    file: str  # as the program was compiled (the emu names files without their folders)
    line: int


@dataclass(frozen=True)
class Diagnostic:
    """A check stopped a kernel or refused a call (kind "diagnostic")."""

    text: str  # what the student reads, made from the fields below
    problem: str  # what went wrong and what to do
    check: str = ""  # the check that found it ("global_out_of_bounds" ...), "" for a refused call
    error: str = ""  # the error the program got ("cudaErrorIllegalAddress"), "" for a warning
    severity: str = "error"  # or "warning": the kernel went on
    kernel: str = ""  # where a check in a kernel found it: the kernel, its launch, the thread ...
    launch: Site | None = None
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    at: Site | None = None  # ... and the line of the access or call

    def problem_key(self) -> str:
        """The problem in words that do not depend on the test: what the check found, the kernel
        and its line ("an access outside every array in kernel 'k' at k.cu:14"; make check groups
        the tests that failed for the same one)."""
        if not self.kernel:
            return self.problem
        where = f" at {self.at.file}:{self.at.line}" if self.at else ""
        found = CHECK_FINDINGS.get(self.check, self.check.replace("_", " ") or self.problem)
        return f"{found} in kernel '{self.kernel}'{where}"


# What each check of the emu finds, as the words of a sentence (docs/diagnostics.md, "Records").
CHECK_FINDINGS = {
    "global_out_of_bounds": "an access outside every array",
    "use_after_free": "an access to a freed array",
    "unwritten_read": "a read of device memory nobody wrote",
    "race_between_blocks": "two blocks touching one element",
    "global_race": "two threads of a block touching one element between barriers",
    "host_pointer": "an access through a host pointer",
    "shared_out_of_bounds": "an access outside every __shared__ variable",
    "shared_unwritten_read": "a read of shared memory no thread wrote",
    "shared_race": "two threads touching one shared element between barriers",
    "time_limit": "a launch past its time limit",
    "grid_sync": "a grid.sync() outside a cooperative launch",
    "shuffle_width": "a shuffle of a width that is no power of two up to 32",
    "assert": "a failed assert",
    "trap": "a __trap()",
    "texture": "a texture or surface access a GPU would fault on",
    "barrier_divergence": "threads waiting at different barriers",
    "warp_divergence": "lanes of a warp waiting at different places",
}


@dataclass(frozen=True)
class WrongMap:
    """Where the wrong elements of a rows x cols output are (a 1D output: one row): each cell
    'X' (wrong), 'o' (never written) or '.', one per mark_rows x mark_cols elements."""

    rows: int
    cols: int
    mark_rows: int
    mark_cols: int
    cells: tuple[str, ...]

    @classmethod
    def from_json(cls, data: dict) -> WrongMap | None:
        """The map that `data` (a record, or a result of the grader's) holds; None where it holds
        none."""
        cells = data.get("cells")
        drawn = (
            _typed(data, dict.fromkeys(("rows", "cols", "mark_rows", "mark_cols"), int))
            and isinstance(cells, list)
            and cells
            and all(isinstance(c, str) and set(c) <= set(".Xo") for c in cells)
        )
        if not drawn:
            return None
        return cls(data["rows"], data["cols"], data["mark_rows"], data["mark_cols"], tuple(cells))

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "cells": list(self.cells)}


@dataclass(frozen=True)
class ElementStore:
    """Who stored one listed wrong element (a "store" in a wrong_elements record; the emu says)."""

    element: int
    kernel: str  # the launch: the last that stored into the array where no thread stored it
    launch: Site | None
    block: tuple[int, int, int] | None = None  # none where no thread stored the element
    thread: tuple[int, int, int] | None = None
    atomic: bool = False
    at: Site | None = None  # the store's line
    loads: tuple[Site, ...] = ()  # the lines the thread loaded from, where known

    @classmethod
    def from_json(cls, data: object) -> ElementStore | None:
        if not isinstance(data, dict) or not _typed(data, {"element": int, "kernel": str}):
            return None
        atomic = data.get("atomic", 0)
        listed = data.get("loads")
        loads = (
            [_site(x.get("at")) for x in listed if isinstance(x, dict)] if isinstance(listed, list) else []
        )
        return cls(
            data["element"],
            data["kernel"],
            _site(data.get("launch")),
            _triple(data.get("block")),
            _triple(data.get("thread")),
            atomic == 1,
            _site(data.get("at")),
            tuple(x for x in loads if x is not None),
        )


@dataclass(frozen=True)
class WrongElements:
    """A compared output with wrong elements (kind "wrong_elements", compare.h)."""

    output: str  # its name in the test
    elements: int
    wrong: int
    text: str  # the comparison's report, as the test's message holds it
    map: WrongMap | None = None  # none where it would say nothing (one element, all wrong)
    stores: tuple[ElementStore, ...] = ()  # who stored the listed wrong elements, where known


@dataclass(frozen=True)
class LineCounters:
    """One source line's memory requests in one kernel, over its counted launches (kind
    "counters")."""

    kernel: str
    launches: int
    at: Site
    access: str  # "global load", "global store", "shared load" or "shared store"
    requests: int  # warp requests
    units: int  # sectors (global) or wavefronts (shared) they took
    ideal_units: int  # the fewest the same bytes need

    @property
    def per_request(self) -> float:
        return self.units / self.requests if self.requests else 0.0

    @property
    def efficiency(self) -> int:
        """Percent: 100 is coalesced, or free of bank conflicts."""
        return round(100 * self.ideal_units / self.units) if self.units else 100

    @property
    def wasteful(self) -> bool:
        return self.efficiency < 100


@dataclass(frozen=True)
class LineEvent:
    """One source line's barrier passes (by blocks) or atomic operations in one kernel (kind
    "events")."""

    kernel: str
    launches: int
    at: Site
    event: str  # "barrier" or "atomics"
    count: int

    def __str__(self) -> str:
        return f"{self.event}: {self.count} {'block passes' if self.event == 'barrier' else 'operations'}"


@dataclass(frozen=True)
class Roofline:
    """A counting test's kernel for the roofline (kind "roofline", performance.h)."""

    name: str  # the name the lab's interface gives it
    flops: float  # what its formula does at the test's size
    sectors: int  # what its launches moved
    launches: int
    kernel: str


Record = Diagnostic | WrongElements | LineCounters | LineEvent | Roofline


def _site(value: object) -> Site | None:
    if isinstance(value, dict) and isinstance(value.get("file"), str) and type(value.get("line")) is int:
        return Site(value["file"], value["line"])
    return None


def _triple(value: object) -> tuple[int, int, int] | None:
    if isinstance(value, list) and len(value) == 3 and all(type(v) is int for v in value):
        return (value[0], value[1], value[2])
    return None


def _typed(data: dict, fields: dict[str, type | tuple[type, ...]]) -> bool:
    return all(
        isinstance(data.get(name), kinds) and type(data.get(name)) is not bool
        for name, kinds in fields.items()
    )


def from_object(data: object) -> Record | None:
    """The record a JSON object holds; None where it is none of a known kind."""
    if not isinstance(data, dict):
        return None
    kind, at = data.get("kind"), _site(data.get("at"))
    if kind == "diagnostic" and _typed(data, {"text": str, "problem": str}):
        optional = {
            k: data[k] for k in ("check", "error", "severity", "kernel") if isinstance(data.get(k), str)
        }
        return Diagnostic(
            data["text"],
            data["problem"],
            **optional,
            launch=_site(data.get("launch")),
            block=_triple(data.get("block")),
            thread=_triple(data.get("thread")),
            at=at,
        )
    if kind == "wrong_elements" and _typed(data, {"output": str, "elements": int, "wrong": int, "text": str}):
        found = WrongMap.from_json(data)
        listed = data.get("stores")
        stores = [ElementStore.from_json(s) for s in listed] if isinstance(listed, list) else []
        return WrongElements(
            data["output"],
            data["elements"],
            data["wrong"],
            data["text"],
            found,
            tuple(s for s in stores if s is not None),
        )
    counted = {"kernel": str, "launches": int}
    if (
        kind == "counters"
        and at
        and _typed(data, {**counted, "access": str, "requests": int, "units": int, "ideal_units": int})
    ):
        return LineCounters(
            data["kernel"],
            data["launches"],
            at,
            data["access"],
            data["requests"],
            data["units"],
            data["ideal_units"],
        )
    if kind == "events" and at and _typed(data, {**counted, "event": str, "count": int}):
        return LineEvent(data["kernel"], data["launches"], at, data["event"], data["count"])
    if kind == "roofline" and _typed(data, {"name": str, "flops": (int, float), "sectors": int, **counted}):
        return Roofline(data["name"], float(data["flops"]), data["sectors"], data["launches"], data["kernel"])
    return None


def parse_lines(text: str) -> list[dict]:
    """The JSON objects of a records file's lines (a line that is not one is left out), as they
    were written: what make check saves with a lab's result."""
    objects = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if from_object(data) is not None:
            objects.append(data)
    return objects


def read_file(path: Path, limit: int = 4 << 20) -> list[dict]:
    """parse_lines of the file's first `limit` bytes; none where it does not exist."""
    try:
        with path.open("rb") as f:
            return parse_lines(f.read(limit).decode("utf-8", errors="replace"))
    except OSError:
        return []


def typed(objects: list[dict]) -> list[Record]:
    return [r for r in map(from_object, objects) if r is not None]


def first_problem(objects: list[dict]) -> str | None:
    """The problem_key of the first error diagnosed; None where none was."""
    for r in typed(objects):
        if isinstance(r, Diagnostic) and r.severity == "error":
            return r.problem_key()
    return None


def first_error(objects: list[dict]) -> str:
    """The first error that stopped a kernel or the program ("cudaErrorIllegalAddress: kernel
    ..."), "" where none did."""
    for r in typed(objects):
        if isinstance(r, Diagnostic) and r.error:
            return f"{r.error}: {r.text}"
    return ""


def wrong_maps(objects: list[dict]) -> list[WrongMap]:
    return [r.map for r in typed(objects) if isinstance(r, WrongElements) and r.map]
