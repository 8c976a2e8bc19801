"""What a student reads of a build's or a test's output: the compiler's errors, GoogleTest's
messages without its own chatter, and the problem the emu backend diagnosed, by which make check
groups the tests that failed for the same reason."""

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


# The emu's diagnosis: "cudalab emu: kernel 'K' (launched at ...), block (...), thread (...), at
# file.cu:14: a read of memory outside every array: element 1000 of ...".
DIAGNOSIS = re.compile(r"cudalab emu: kernel '([^']*)' .*?, at (\S+:\d+): ([^:0-9(]*)")


def diagnosis(message: str) -> str | None:
    """The problem the emu diagnosed in a test's message, in words that do not depend on the test
    (the kernel, its line, what went wrong; not the element or the array's size); None if none."""
    found = DIAGNOSIS.search(message)
    if found is None:
        return None
    kernel, line, what = found.groups()
    return f"{what.strip().rstrip(',')} in kernel '{kernel}' at {line}"
