"""What `make check` found for one lab: the verdicts of its tests, their points and the failures'
messages (check.py fills it in; report.py draws it)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LabResult:
    lab: str
    build_error: str = ""
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    points: dict[str, float] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)  # of the failed tests
    records: dict[str, list[dict]] = field(default_factory=dict)  # of the failed tests (records.py)

    def earned(self) -> float:
        return sum(self.points.get(t, 0.0) for t in self.passed)

    def possible(self) -> float:
        if self.build_error:
            return sum(self.points.values())
        return sum(self.points.get(t, 0.0) for t in self.passed + self.failed)
