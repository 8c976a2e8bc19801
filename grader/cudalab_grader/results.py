"""The grader's results as typed objects: a test's, a lab's, a student's and the class's. Each
turns into the plain JSON of results.json and the cache (`to_json`) and back (`from_json`); the
statuses are enums whose values are the strings written there."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from cudalab_tools.gtest import TestVerdict
from cudalab_tools.records import WrongMap


class LabStatus(StrEnum):
    GRADED = "graded"
    BUILD_ERROR = "build error"  # also: the code breaks the rules of what it may define and call
    REJECTED = "rejected"  # the submission could not be unpacked safely
    MISSING = "missing"  # the lab's files are not in the submission
    GRADER_ERROR = "grader error"  # the grader failed on this submission: not the student's fault

    @property
    def title(self) -> str:
        """How the feedback titles a lab in this status."""
        return {
            LabStatus.GRADED: "graded",
            LabStatus.BUILD_ERROR: "does not build",
            LabStatus.REJECTED: "submission refused",
            LabStatus.MISSING: "not found",
            LabStatus.GRADER_ERROR: "not graded: the grader failed on this submission (tell your instructor)",
        }[self]


@dataclass
class TestResult:
    __test__ = False  # (not a test class, for pytest)
    verdict: TestVerdict
    possible: float  # the rubric's points (0 when the test skips on this backend)
    message: str = ""  # what the student reads when it failed
    ratio: float | None = None  # a timing test: the speed measured against its baseline ...
    needed: float | None = None  # ... and the one needed
    # facts the verdict took from the runner, which the student's code shares (the checker's
    # report says which: "device_work", "live_allocations", "counters", "timings")
    runner_reported: tuple[str, ...] = ()
    wrong_map: WrongMap | None = None  # where its output's wrong elements are (the checker's record)

    @property
    def points(self) -> float:
        return self.possible if self.verdict == TestVerdict.PASSED else 0.0

    def to_json(self) -> dict:
        data: dict = {"result": self.verdict.value, "points": self.points, "possible": self.possible}
        if self.message:
            data["message"] = self.message
        if self.ratio is not None:
            data["ratio"], data["needed"] = self.ratio, self.needed
        if self.runner_reported:
            data["runner_reported"] = list(self.runner_reported)
        if self.wrong_map:
            data["wrong_map"] = self.wrong_map.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict) -> TestResult:
        return cls(
            TestVerdict(data["result"]),
            float(data["possible"]),
            data.get("message", ""),
            data.get("ratio"),
            data.get("needed"),
            tuple(data.get("runner_reported", ())),
            WrongMap.from_json(data["wrong_map"]) if "wrong_map" in data else None,
        )


@dataclass
class Points:
    earned: float = 0.0
    possible: float = 0.0


@dataclass
class LabResult:
    lab: str
    status: LabStatus
    possible: float
    tests: dict[str, TestResult] = field(default_factory=dict)
    message: str = ""  # why it was not graded (build errors, the refusal, ...)
    files_hash: str = ""  # the student's files that were built (none when nothing was built)
    seconds: float | None = None
    categories: dict[str, Points] = field(default_factory=dict)  # rubric categories' points
    penalty: float = 0.0  # the fraction taken for lateness

    @classmethod
    def not_graded(cls, lab: str, status: LabStatus, message: str, possible: float) -> LabResult:
        """A lab without points: missing files, a refused submission, or the grader's failure."""
        return cls(lab, status, possible, message=message)

    @property
    def earned(self) -> float:
        return sum((t.points for t in self.tests.values()), 0.0)

    @property
    def score(self) -> float:
        """The points, after the late penalty."""
        return round(self.earned * (1.0 - self.penalty), 2)

    @property
    def full_marks(self) -> bool:
        """Graded, with every point the lab gives on this backend."""
        return self.status == LabStatus.GRADED and self.score == self.possible

    def to_json(self) -> dict:
        data: dict = {
            "lab": self.lab,
            "status": self.status.value,
            "earned": self.earned,
            "possible": self.possible,
            "tests": {name: t.to_json() for name, t in self.tests.items()},
            "penalty": self.penalty,
        }
        if self.message:
            data["message"] = self.message
        if self.files_hash:
            data["hash"] = self.files_hash
        if self.seconds is not None:
            data["seconds"] = self.seconds
        if self.categories:
            data["categories"] = {
                k: {"earned": v.earned, "possible": v.possible} for k, v in self.categories.items()
            }
        return data

    @classmethod
    def from_json(cls, data: dict) -> LabResult:
        return cls(
            data["lab"],
            LabStatus(data["status"]),
            float(data["possible"]),
            {name: TestResult.from_json(t) for name, t in data.get("tests", {}).items()},
            data.get("message", ""),
            data.get("hash", ""),
            data.get("seconds"),
            {k: Points(v["earned"], v["possible"]) for k, v in data.get("categories", {}).items()},
            data.get("penalty", 0.0),
        )


@dataclass
class StudentResult:
    submitted_at: float | None
    labs: dict[str, LabResult] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.labs.values()), 2)

    def to_json(self) -> dict:
        return {"submitted_at": self.submitted_at, "labs": {lab: r.to_json() for lab, r in self.labs.items()}}

    @classmethod
    def from_json(cls, data: dict) -> StudentResult:
        return cls(data.get("submitted_at"), {lab: LabResult.from_json(r) for lab, r in data["labs"].items()})


@dataclass
class ClassResults:
    backend: str
    labs: list[str]
    graded_at: str
    protections: list[str] = field(default_factory=list)
    students: dict[str, StudentResult] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "backend": self.backend,
            "labs": self.labs,
            "graded_at": self.graded_at,
            "protections": self.protections,
            "students": {name: s.to_json() for name, s in self.students.items()},
        }

    @classmethod
    def from_json(cls, data: dict) -> ClassResults:
        return cls(
            data["backend"],
            list(data["labs"]),
            data["graded_at"],
            list(data.get("protections", [])),
            {name: StudentResult.from_json(s) for name, s in data["students"].items()},
        )
