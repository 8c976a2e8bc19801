"""What a student reads of a build's or a test's output: the compiler's errors, and GoogleTest's
messages without its own chatter."""

from __future__ import annotations

import re

# GoogleTest's lines that say nothing a student needs (its banners, RUN/OK, the filter note).
GTEST_NOISE = re.compile(
    r"^(Running main\(\)|Note: Google Test filter|\[(==========|----------|  PASSED  | RUN      |"
    r"       OK |   SEED   |  FAILED  )\]|Failed$|\s*\d+ FAILED TESTS?$|$)"
)


def useful_build_errors(log: str, limit: int = 40) -> str:
    """The compiler's error lines and their context, without the build tool's chatter."""
    keep = [
        line
        for line in log.splitlines()
        if not re.match(r"^(\[\s*\d+%\]|gmake|make|Consolidate|Scanning|Translating|-- )", line)
    ]
    errors = [i for i, line in enumerate(keep) if "error" in line]
    if not errors:
        return "\n".join(keep[-limit:])
    start = max(0, errors[0] - 2)
    return "\n".join(keep[start : start + limit])


def test_output(output: str) -> str:
    """A test's output without GoogleTest's chatter."""
    return "\n".join(line for line in output.splitlines() if not GTEST_NOISE.match(line))
