"""One GoogleTest test's verdict, decided in one place for `make check`, `make test`'s self-checks
and the grader: a test passes only if its process exits with status 0 **and** GoogleTest's own
JSON report says it passed (a program that calls exit(0) inside a test passes nothing); it skips
only if the report says so; anything else fails, with what the student should read first (the
time limit, the limit that stopped it, the signal that crashed it, a report never written).

Each test runs in a process of its own (run_test here; the grader runs it in its sandbox and
calls decide with what it saw). Where the backend builds a lab's checker (common/remote), the
checker is that process: it decides, and runs the lab's test program, which holds the student's
code, as its runner in a process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .build_log import test_output
from .records import read_file


class TestVerdict(StrEnum):
    __test__ = False  # (not a test class, for pytest)
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # cannot run on this backend: counts neither way
    MISSING = "missing"  # no verdict in GoogleTest's report (there was none, or not for this test)


@dataclass(frozen=True)
class Ending:
    """How a test's process ended."""

    exit_status: int | None  # negative: killed by that signal (Python's way); 128 + N: a shell's
    timed_out_after: float | None = None  # seconds, when the time limit stopped it
    stopped: str = ""  # another limit that stopped it, in words


def _report_tests(report: bytes | None) -> dict[str, dict]:
    """Each test's record ("Suite.Name") in a GoogleTest JSON report; none when there is no report
    or it is not GoogleTest's."""
    tests = {}
    try:
        for suite in json.loads(report.decode("utf-8", errors="replace")).get("testsuites", []):
            for t in suite.get("testsuite", []):
                if isinstance(t, dict):
                    tests[f"{suite.get('name')}.{t.get('name')}"] = t
    except (ValueError, AttributeError, TypeError):  # no report, not JSON, or not GoogleTest's
        pass
    return tests


def report_verdicts(report: bytes | None) -> dict[str, TestVerdict]:
    """Each test's verdict ("Suite.Name") in a GoogleTest JSON report."""
    verdicts = {}
    for name, t in _report_tests(report).items():
        ran = t.get("status") == "RUN" and t.get("result") == "COMPLETED" and not t.get("failures")
        skipped = t.get("result") == "SKIPPED"
        verdicts[name] = TestVerdict.SKIPPED if skipped else TestVerdict.PASSED if ran else TestVerdict.FAILED
    return verdicts


def report_speed(report: bytes | None, test: str) -> tuple[float, float] | None:
    """A timing test's (ratio measured, ratio needed), as the harness recorded them in its report
    (performance.h's expect_speed: the properties speed_ratio and needed_ratio); None where the test
    recorded none."""
    t = _report_tests(report).get(test, {})
    try:
        return float(t["speed_ratio"]), float(t["needed_ratio"])
    except (KeyError, ValueError, TypeError):
        return None


def report_runner_reported(report: bytes | None, test: str) -> tuple[str, ...]:
    """The facts the test's verdict took from the runner, which holds the student's code, as the
    checker recorded them in its report (the property runner_reported: "device_work",
    "live_allocations", "counters", "timings"); none where it recorded none."""
    listed = _report_tests(report).get(test, {}).get("runner_reported", "")
    return tuple(f for f in listed.split(",") if f) if isinstance(listed, str) else ()


def signal_of(exit_status: int | None) -> int:
    """The signal that ended a process, or 0 (a shell or bubblewrap reports signal N as 128 + N)."""
    if exit_status is None:
        return 0
    if exit_status < 0:
        return -exit_status
    return exit_status - 128 if 128 < exit_status <= 128 + 64 else 0


def decide(test: str, ending: Ending, report: bytes | None, output: str) -> tuple[TestVerdict, str]:
    """The verdict of `test` from how its process ended, its GoogleTest report (None: none was
    read) and what it printed; and what the student reads (empty when it passed)."""
    printed = test_output(output)
    if ending.timed_out_after is not None:
        return (
            TestVerdict.FAILED,
            f"stopped after {ending.timed_out_after:g} s (time limit): an endless loop?\n{printed}",
        )
    if ending.stopped:
        return TestVerdict.FAILED, f"stopped: {ending.stopped}\n{printed}"
    verdict = report_verdicts(report).get(test, TestVerdict.MISSING)
    if ending.exit_status == 0 and verdict == TestVerdict.PASSED:
        return verdict, ""
    if ending.exit_status == 0 and verdict == TestVerdict.SKIPPED:
        return verdict, printed
    if signal := signal_of(ending.exit_status):
        return TestVerdict.FAILED, f"crashed (signal {signal})\n{printed}"
    if verdict == TestVerdict.MISSING and ending.exit_status == 0:
        return (
            TestVerdict.FAILED,
            f"the test ended before GoogleTest wrote its report (exit() in the code?)\n{printed}",
        )
    return TestVerdict.FAILED, printed or f"failed (exit status {ending.exit_status})"


def list_tests(binary: Path) -> list[str]:
    """The tests of a GoogleTest program, as Suite.Name."""
    out = subprocess.run(
        [str(binary), "--gtest_list_tests"], capture_output=True, text=True, check=True
    ).stdout
    tests, suite = [], ""
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        else:
            tests.append(suite + line.split("#")[0].strip())
    return tests


def checker_of(program: Path) -> Path | None:
    """The checker beside a lab's test program (NN_name-labs: NN_name-checker), if built."""
    checker = program.with_name(program.name.rsplit("-", 1)[0] + "-checker")
    return checker if checker.is_file() else None


@dataclass(frozen=True)
class TestRun:
    """A test run by run_test: its verdict, what the student reads, all it printed, and the
    records its processes wrote (records.py: the maps of wrong elements, the emu's diagnostics)."""

    __test__ = False  # (not a test class, for pytest)
    verdict: TestVerdict
    message: str
    output: str
    records: list[dict]


def run_test(binary: Path, test: str, timeout: float, env: dict[str, str] | None = None) -> TestRun:
    """Runs one test of `binary` (through its checker, where there is one) in a process of its
    own."""
    env = dict(env or os.environ)
    checker = checker_of(binary)
    if checker is not None:
        env["CUDALAB_RUNNER"] = str(binary.resolve())
    with tempfile.TemporaryDirectory(prefix="cudalab-test-") as scratch:
        report = Path(scratch) / "report.json"
        env["CUDALAB_RECORDS"] = str(Path(scratch) / "records.jsonl")
        command = [str(checker or binary), f"--gtest_filter={test}", f"--gtest_output=json:{report}"]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                env=env,
            )
            ending, output = Ending(done.returncode), done.stdout + done.stderr
        except subprocess.TimeoutExpired as e:
            output = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
            ending = Ending(None, timed_out_after=timeout)
        data = report.read_bytes() if report.is_file() else None
        verdict, message = decide(test, ending, data, output)
        return TestRun(verdict, message, output, read_file(Path(env["CUDALAB_RECORDS"])))
