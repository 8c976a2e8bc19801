"""Rubrics: the points of each test of a lab, read from labs/NN_name/rubric.toml.

[points]            one entry per test: "Suite.Test" = points
[category]          optional: "Suite.Test" = "diagnostics" or "performance" (default:
                    "correctness"), so that a grade can show partial credit by kind
"""

from __future__ import annotations

import tomllib
from pathlib import Path


class RubricError(Exception):
    """A rubric file that cannot be used; the message names the file."""


def load(path: Path) -> dict[str, float]:
    """Test name ("Suite.Test") -> points."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RubricError(f"{path}: missing (every lab needs a rubric.toml)") from None
    except tomllib.TOMLDecodeError as e:
        raise RubricError(f"{path}: not valid TOML: {e}") from None
    points = data.get("points")
    if not isinstance(points, dict) or not points:
        raise RubricError(f"{path}: needs a [points] table with one entry per test")
    for name, value in points.items():
        if not isinstance(value, int | float) or value < 0:
            raise RubricError(f"{path}: points of {name!r} must be a number >= 0, not {value!r}")
    return {name: float(value) for name, value in points.items()}


CATEGORIES = ("correctness", "diagnostics", "performance")


def categories(path: Path) -> dict[str, str]:
    """Test name -> its category, for every test that [points] names."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    chosen = data.get("category", {})
    for test, cat in chosen.items():
        if cat not in CATEGORIES:
            raise RubricError(
                f"{path}: category of {test!r} must be one of {', '.join(CATEGORIES)}, not {cat!r}"
            )
        if test not in data.get("points", {}):
            raise RubricError(f"{path}: [category] names {test!r}, which [points] does not")
    return {test: chosen.get(test, "correctness") for test in data.get("points", {})}


def mismatch(rubric: dict[str, float], tests: set[str], path: Path) -> list[str]:
    """Problems between a rubric and the tests that exist; empty when they agree."""
    problems = [f"{path}: names {t!r}, which is not a test of this lab" for t in sorted(set(rubric) - tests)]
    problems += [f"{path}: gives no points to the test {t!r}" for t in sorted(tests - set(rubric))]
    return problems
