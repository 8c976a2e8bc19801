"""Late penalties from a deadline file (TOML):

    penalty_per_day = 10      # percent of the lab's points, per started day late
    max_penalty = 100         # percent, at most
    [deadlines]
    01_vector_add = 2026-12-01T23:59:00Z

A submission's time is its file's or folder's modification time, as the course's collection left it.
"""

from __future__ import annotations

import datetime as dt
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class DeadlineError(Exception):
    pass


@dataclass
class Deadlines:
    per_day: float = 0.0
    maximum: float = 100.0
    due: dict[str, dt.datetime] = field(default_factory=dict)

    def penalty(self, lab: str, submitted_at: float) -> float:
        """The fraction of the lab's points taken off (0 to 1)."""
        due = self.due.get(lab)
        if due is None:
            return 0.0
        late = dt.datetime.fromtimestamp(submitted_at, dt.UTC) - due
        if late.total_seconds() <= 0:
            return 0.0
        days = math.ceil(late.total_seconds() / 86400)
        return min(self.maximum, days * self.per_day) / 100.0


def load(path: Path | None) -> Deadlines:
    if path is None:
        return Deadlines()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise DeadlineError(f"{path}: {e}") from None
    due = {}
    for lab, when in data.get("deadlines", {}).items():
        if isinstance(when, dt.date) and not isinstance(when, dt.datetime):
            when = dt.datetime.combine(when, dt.time(23, 59, 59))
        if not isinstance(when, dt.datetime):
            raise DeadlineError(f"{path}: the deadline of {lab} must be a date or date-time, not {when!r}")
        due[lab] = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    try:
        return Deadlines(float(data.get("penalty_per_day", 0)), float(data.get("max_penalty", 100)), due)
    except (TypeError, ValueError):
        raise DeadlineError(f"{path}: penalty_per_day and max_penalty must be numbers (percent)") from None
