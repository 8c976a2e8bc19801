"""Grading one student's lab: their files in a clean copy of the workbook, built and tested in the
sandbox, each test in its own process.

The instructor's parts are built once (the base build); each job copies it, puts the student's
files in, and rebuilds only what changed. Inside bubblewrap every job sees its copy at the same
paths (/grade/workbook, /grade/build), which is what makes the copy of the base build valid.
Without bubblewrap a copy would be at other paths than its build was made for: there the jobs run
one at a time in the base's own folders, each putting its files in and rebuilding what changed.

A test's verdict is decided as make check decides it (cudalab_tools/gtest.py): it passes when its
process exits with 0 and GoogleTest's own JSON report says it ran without a failure, so a
submission that calls exit(0) from inside a test does not pass it. Tests run with the build folder
read-only, so a submission cannot change the tests that grade it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import resource
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cudalab_tools import symbols
from cudalab_tools.build_log import useful_build_errors
from cudalab_tools.gtest import (
    Ending,
    TestVerdict,
    decide,
    report_runner_reported,
    report_speed,
    report_verdicts,
    signal_of,
)
from cudalab_tools.records import read_file, wrong_maps

from . import bases, submissions, workbook
from .files import read_regular_file, remove_tree
from .results import LabResult, LabStatus, Points, TestResult
from .sandbox import Limits, Outcome, Sandbox, keep_output

SRC, BUILD, OUT = "/grade/workbook", "/grade/build", "/grade/out"
HOST_PART = {SRC: "src", BUILD: "build", OUT: "out"}  # where each lies in a job's folder


@dataclass
class Settings:
    backend: str  # cuda or emu
    jobs: int
    # On a GPU machine, the tests of one job at a time per GPU, so that timings are not shared.
    gpus: threading.Semaphore | None = None
    build_limits: Limits = field(default_factory=lambda: Limits(wall_seconds=600, cpu_seconds=1200))
    test_limits: Limits = field(default_factory=lambda: Limits(wall_seconds=60, cpu_seconds=120))


def not_graded(lab: str, status: LabStatus, message: str) -> LabResult:
    """A lab result without points: missing files, a refused submission, or the grader's failure."""
    return LabResult.not_graded(lab, status, message, possible=sum(workbook.points(lab).values()))


def _build_log(outcome: Outcome) -> str:
    """What a build printed, after why it was stopped if a limit stopped it."""
    if outcome.timed_out:
        return "error: the build was stopped at its time limit\n" + outcome.output
    if outcome.over_limit:
        return f"error: the build was stopped: {outcome.over_limit}\n" + outcome.output
    return outcome.output


@dataclass(frozen=True)
class TestRun:
    """One run of a lab's tests: how it ended, GoogleTest's report (None: none), what it printed,
    and the records the checker wrote (cudalab_tools/records.py: the maps of wrong elements)."""

    ending: Ending
    report: bytes | None
    output: str
    records: list[dict] = field(default_factory=list)


# The checker's address space: the harness's inputs and references, and a reservation of the same
# size for each of the runner's device arrays (checker.cpp), for the largest test of the nine labs.
CHECKER_MEMORY_BYTES = 16 << 30


def _limit_checker(limits: Limits) -> None:
    """In the checker's process, before it starts: the checker is trusted, not unbounded."""
    resource.setrlimit(resource.RLIMIT_AS, (CHECKER_MEMORY_BYTES, CHECKER_MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _copy(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, symlinks=True, copy_function=shutil.copy2, dirs_exist_ok=True)


class Grader:
    def __init__(self, settings: Settings, sandbox: Sandbox, work: Path) -> None:
        self.settings = settings
        self.sandbox = sandbox
        self.work = work
        self.base = work / "base"
        self.checkers = work / "checkers"
        self.kept: bases.Base | None = None  # the kept base this run uses, if it took one
        self.base_newest = 0.0  # the time of the newest file of the base build
        self.skipped: dict[str, set[str]] = {}  # per lab, the tests that skip on this backend
        self.in_base = threading.Lock()  # without bubblewrap: held by the job in the base's folders

    # ---- paths as the command inside the sandbox sees them -----------------------------------

    def _inside(self, job: Path, inside: str) -> str:
        if self.sandbox.bwrap:
            return inside
        return str(job / HOST_PART[inside])

    def _binds(self, job: Path, parts: tuple[str, ...]) -> dict[Path, str]:
        binds = {job / HOST_PART[p]: p for p in parts}
        if SRC in parts and workbook.PACKAGES.is_dir():
            binds[workbook.PACKAGES] = str(workbook.PACKAGES)  # (read-only; src/.deps links to it)
        return binds

    def _build_env(self, job: Path) -> dict[str, str]:
        """A build's environment: the front end keeps its precompiled headers in the build folder
        (cudalab_tools/precompiled.py), so that the base build's travel with it to every job."""
        return {"XDG_CACHE_HOME": f"{self._inside(job, BUILD)}/front-end-cache"}

    def _configure_and_build(self, job: Path, labs: list[str], number: int) -> tuple[bool, str]:
        src, build = self._inside(job, SRC), self._inside(job, BUILD)
        python = (
            "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3") or "python3"
        )
        configure = [
            "cmake",
            "-S",
            src,
            "-B",
            build,
            f"-DBACKEND={self.settings.backend}",
            # optimised as make check builds (RelWithDebInfo's -O2), without its debug information
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
            f"-DPython3_EXECUTABLE={python}",
        ]
        targets = []
        for lab in labs:
            targets += ["--target", f"{lab}-labs"]
        script = " && ".join(
            [
                shlex.join(configure),
                shlex.join(["cmake", "--build", build, *targets, "-j", str(os.cpu_count() or 2)]),
            ]
        )
        outcome = self.sandbox.run(
            ["sh", "-c", script],
            binds=self._binds(job, (SRC, BUILD)),
            writable={job / "build"},
            cwd=build,
            limits=self.settings.build_limits,
            slot=number,
            env=self._build_env(job),
        )
        return outcome.returncode == 0, _build_log(outcome)

    # ---- the base build ----------------------------------------------------------------------

    def prepare_base(self, labs: list[str]) -> str:
        """The instructor's parts built once, or taken from an earlier run that built the same
        workbook (bases.py); the checkers copied where no job can write, since they run outside
        the sandbox and decide every student's verdicts. Says what it did, for the log.

        A base that is kept holds every lab, so that any later run takes it; where the workbook's
        other labs do not build, it holds `labs` alone."""
        base_key = bases.key(self.settings.backend) if self.sandbox.bwrap else None
        if base_key is None:
            self._build_base(labs)
            return "built"
        every = workbook.labs()
        bases.wait_for_builder(base_key, every)
        with bases.building(base_key, every):
            kept = bases.find(base_key, labs)  # (also one that finished while this process waited)
            if kept is not None:
                self.kept, self.base, self.skipped = kept, kept.folder, kept.skipped
                self._take_base()
                return f"taken from {kept.folder}, built by an earlier run of the same workbook"
            try:
                self._build_base(every)
            except RuntimeError:
                if every == labs:
                    raise
                every = labs
                self._build_base(labs)
            return "built; " + bases.keep(base_key, bases.Base(self.base, every, self.skipped))

    def _take_base(self) -> None:
        """What the jobs need of the base build once it is there: its checkers, copied where no
        job can write, and the time of its newest file."""
        self.base_newest = max(
            (
                os.lstat(os.path.join(top, name)).st_mtime
                for top, _, files in os.walk(self.base / "build")
                for name in files
            ),
            default=0.0,
        )
        remove_tree(self.checkers)
        self.checkers.mkdir()
        for checker in (self.base / "build" / "labs").glob("*-checker"):
            shutil.copy2(checker, self.checkers / checker.name)

    def release_base(self) -> None:
        """Lets a later run remove the kept base this run used."""
        if self.kept is not None:
            self.kept.release()

    def _build_base(self, labs: list[str]) -> None:
        """Copies the workbook without solutions into the work folder and builds it there."""
        remove_tree(self.base)
        (self.base / "src").mkdir(parents=True)
        for part in workbook.BUILD_PARTS:
            p = workbook.ROOT / part
            if p.is_dir():
                shutil.copytree(
                    p, self.base / "src" / part, ignore=shutil.ignore_patterns("__pycache__", "build")
                )
            else:
                shutil.copy2(p, self.base / "src" / part)
        if workbook.PACKAGES.is_dir():
            (self.base / "src" / workbook.PACKAGES.name).symlink_to(workbook.PACKAGES)
        (self.base / "build").mkdir()
        number = self.sandbox.claim()
        try:
            self.sandbox.prepare(self.base / "build", number)
            ok, log = self._configure_and_build(self.base, labs, number)
            if not ok:
                raise RuntimeError("the instructor's workbook does not build in the sandbox:\n" + log[-4000:])
            self._take_base()
            self.skipped = {lab: self._tests_that_skip(lab, number) for lab in labs}
        finally:
            self.sandbox.release(number)

    # ---- one job -----------------------------------------------------------------------------

    def grade(self, unpacked: Path, student: str, lab: str) -> LabResult:
        """Builds and tests `lab` of the student whose files are in `unpacked`."""
        number = self.sandbox.claim()  # the job's own user: what it leaves behind stays its own
        try:
            return self._grade(unpacked, student, lab, number)
        finally:
            self.sandbox.release(number)

    def _grade(self, unpacked: Path, student: str, lab: str, number: int) -> LabResult:
        started = time.monotonic()
        found = workbook.submitted_files(unpacked, lab)
        missing = [name for name, path in found.items() if path is None]
        if missing:
            return not_graded(
                lab, LabStatus.MISSING, f"no labs/{lab}/{' or '.join(missing)} in the submission"
            )
        files_hash = submissions.content_hash([p for p in found.values() if p])
        result = LabResult(lab, LabStatus.GRADED, sum(workbook.points(lab).values()), files_hash=files_hash)
        if not self.sandbox.bwrap:
            with self.in_base:
                return self._build_and_test(self.base, found, result, lab, number, started)

        job = self.work / "jobs" / f"{submissions.folder_name(student)}-{lab}"
        remove_tree(job)
        job.mkdir(parents=True)
        try:
            # the only folder a job writes to disk: held to the disk limit by the kernel (as root)
            with self.sandbox.folder_of_size(job / "build", self.settings.build_limits.job_disk_bytes):
                return self._build_and_test(job, found, result, lab, number, started)
        finally:
            remove_tree(job)  # whatever the job left there, however deep

    def _build_and_test(
        self,
        job: Path,
        found: dict[str, Path | None],
        result: LabResult,
        lab: str,
        number: int,
        started: float,
    ) -> LabResult:
        rubric = workbook.points(lab)
        if job != self.base:  # (in the sandbox, where the base build is valid at the same paths)
            _copy(self.base / "src", job / "src")
            _copy(self.base / "build", job / "build")
        # The student's files newer than everything the base build made, so that make rebuilds
        # what they go into (a second later, for file systems that keep whole seconds), and not
        # in the future, or make would find them newer than what it makes of them and make it twice.
        time.sleep(max(0.0, self.base_newest + 1.0 - time.time()))
        for name, path in found.items():
            target = job / "src" / "labs" / lab / name
            shutil.copyfile(path, target)
            now = time.time()
            os.utime(target, (now, now))
        self.sandbox.prepare(job / "build", number)
        build = self._inside(job, BUILD)
        out = self.sandbox.run(
            ["cmake", "--build", build, "--target", f"{lab}-labs"],
            binds=self._binds(job, (SRC, BUILD)),
            writable={job / "build"},
            cwd=build,
            limits=self.settings.build_limits,
            slot=number,
            env=self._build_env(job),
        )
        ok, log = out.returncode == 0, _build_log(out)
        if job == self.base:  # its tests may not change what the next job builds with
            self.sandbox.reclaim(job / "build")
            self.base_newest = time.time()
        # What the student's code defines and calls, read from its object files (as make check does).
        sources = [name for name in found if name.endswith(".cu")]
        refused = symbols.check(job / "build", lab, sources) if ok else ""
        if not ok or refused:
            result.status = LabStatus.BUILD_ERROR
            result.message = refused or useful_build_errors(log)
            result.seconds = round(time.monotonic() - started, 1)
            return result

        with self.settings.gpus or contextlib.nullcontext():
            result.tests = self._verdicts(job, lab, rubric, number)
        result.possible = sum(t.possible for t in result.tests.values())
        for test, category in workbook.categories(lab).items():
            part = result.categories.setdefault(category, Points())
            part.earned += result.tests[test].points
            part.possible += result.tests[test].possible
        result.seconds = round(time.monotonic() - started, 1)
        return result

    def possible(self, lab: str) -> float:
        """The points of `lab` on this backend: its tests but those that skip here (all of them
        when no job has run yet to tell)."""
        return sum(pts for test, pts in workbook.points(lab).items() if test not in self.skipped.get(lab, ()))

    def _verdicts(self, job: Path, lab: str, rubric: dict[str, float], number: int) -> dict[str, TestResult]:
        """Each test of the rubric, run. A test that skips on this backend (self.skipped) is not
        run, stays skipped and counts for nothing; one that runs here and reports "skipped" fails."""
        results = {}
        for test, points in rubric.items():
            if test in self.skipped[lab]:
                results[test] = TestResult(TestVerdict.SKIPPED, 0.0)
                continue
            result = self._run_test(job, lab, test, number, points)
            if result.verdict == TestVerdict.SKIPPED:
                result.verdict = TestVerdict.FAILED
                result.message = "reported as skipped, but this test runs on this backend\n" + result.message
            results[test] = result
        return results

    def _run_test(self, job: Path, lab: str, test: str, number: int, points: float) -> TestResult:
        """The test's verdict and what the student should read; a timing test's ratio and the
        facts the verdict took from the runner, from the checker's report (never from what the
        student's code prints)."""
        done = self._run_gtest(job, lab, number, test, self.settings.test_limits)
        verdict, message = decide(test, done.ending, done.report, done.output)
        ratio, needed = report_speed(done.report, test) or (None, None)
        maps = wrong_maps(done.records) if verdict == TestVerdict.FAILED else []
        return TestResult(
            verdict,
            points,
            message[-6000:],
            ratio,
            needed,
            report_runner_reported(done.report, test),
            maps[0] if maps else None,
        )

    def _run_gtest(self, job: Path, lab: str, number: int, test: str, limits: Limits) -> TestRun:
        """Runs `lab`'s tests matching `test` against the code of `job`: the instructor's checker
        runs outside the sandbox, decides, and writes GoogleTest's report into a folder of the
        grader's; the job's test program runs in the sandbox only as the checker's runner
        (common/remote), talking to it over a socket."""
        out_dir = job / "out"
        remove_tree(out_dir)  # what the previous test left in its working folder
        out_dir.mkdir()
        self.sandbox.prepare(out_dir, number)
        binary = f"{self._inside(job, BUILD)}/labs/{lab}-labs"
        checker = self.checkers / f"{lab}-checker"
        with tempfile.TemporaryDirectory(prefix="checker-", dir=self.work) as private:
            report_path = Path(private) / "result.json"
            records_path = Path(private) / "records.jsonl"
            checker_end, runner_end = socket.socketpair()
            with checker_end, runner_end:
                fd = checker_end.fileno()
                process = subprocess.Popen(
                    [str(checker), f"--gtest_filter={test}", f"--gtest_output=json:{report_path}"],
                    cwd=private,
                    env={
                        "PATH": os.environ.get("PATH", ""),
                        "LANG": "C.UTF-8",
                        "CUDALAB_RUNNER_FD": str(fd),
                        "CUDALAB_RECORDS": str(records_path),
                        # the checker names the harness's arrays from its source, compiled in the sandbox
                        "CUDALAB_SOURCE_MAP": f"{SRC}={self.base / HOST_PART[SRC]}",
                    },
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    pass_fds=(fd,),
                    start_new_session=True,
                    preexec_fn=functools.partial(_limit_checker, limits),
                )
                checker_end.close()
                printed = bytearray()
                reader = threading.Thread(
                    target=keep_output, args=(process.stdout, printed, limits.output_bytes), daemon=True
                )
                reader.start()
                outcome = self.sandbox.run(
                    [binary, "--serve", str(runner_end.fileno())],
                    binds=self._binds(job, (SRC, BUILD, OUT)),
                    writable={out_dir},
                    cwd=self._inside(job, OUT),
                    limits=limits,
                    slot=number,
                    env={"CUDALAB_EMU_THREADS": "1"},
                    gpu=self.settings.backend == "cuda",
                    pass_fds=(runner_end.fileno(),),
                    scratch=(OUT,),  # nothing there is read back: a folder of memory, held to its size
                )
            try:  # the runner has ended, and with it the checker's reason to wait
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            reader.join(timeout=10)
            report = read_regular_file(report_path, 4 << 20)
            found = read_file(records_path)
        output = printed.decode("utf-8", "replace") + outcome.output
        return TestRun(self._ending(outcome, process.returncode, limits), report, output, found)

    @staticmethod
    def _ending(runner: Outcome, checker_status: int | None, limits: Limits) -> Ending:
        """How a test ended: the limit that stopped the student's code or the signal that crashed
        it, else the checker's exit status."""
        if runner.timed_out:
            return Ending(None, timed_out_after=limits.wall_seconds)
        if runner.over_limit:
            return Ending(runner.returncode, stopped=runner.over_limit)
        if signal_of(runner.returncode):
            return Ending(runner.returncode)
        return Ending(checker_status)

    def _tests_that_skip(self, lab: str, number: int) -> set[str]:
        """The tests of `lab` that skip on this backend, as the instructor's build (the skeleton,
        all tests in one run) reports them: whatever a submission's process says, they count
        neither way."""
        limits = dataclasses.replace(
            self.settings.test_limits, wall_seconds=self.settings.build_limits.wall_seconds
        )
        done = self._run_gtest(self.base, lab, number, "*", limits)
        data = done.report
        if data is None:
            raise RuntimeError(
                f"the instructor's tests of {lab} wrote no GoogleTest report in the sandbox:\n"
                + done.output[-4000:]
            )
        return {test for test, verdict in report_verdicts(data).items() if verdict == TestVerdict.SKIPPED}
