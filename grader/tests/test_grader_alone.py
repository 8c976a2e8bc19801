"""The grader's modes and limits that need no graded class: Gradescope, arguments, late penalties,
SIGTERM, bounded reports, per-job limits, grading without bubblewrap, the plots, make demo's
command. The sample class's grading is test_grader.py's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cudalab_grader import deadlines, plots, submissions
from cudalab_grader.files import remove_tree
from cudalab_grader.results import (
    ClassResults,
    LabResult,
    LabStatus,
    StudentResult,
    TestResult,
    TestVerdict,
)
from cudalab_grader.sandbox import Limits, Sandbox
from support import CORPUS, ROOT, grade


def test_without_bubblewrap_limits_still_apply(tmp_path: Path) -> None:
    """Where bubblewrap cannot run, the jobs run one at a time in the base's own build, each with
    its own files: grace's crash costs her one test, and alice, graded next, gets every point.
    (First in this file: its build needs no kept base, so it runs while test_grader.py builds the
    base that the tests below wait for.)"""
    from cudalab_grader.grading import Grader, Settings

    sandbox = Sandbox(use_bwrap=False)
    assert any("NO bubblewrap" in p for p in sandbox.protections())
    work = Path(tempfile.mkdtemp(prefix="cudalab-grade-test-"))  # reachable by the jobs' users
    work.chmod(0o711)
    grader = Grader(Settings(backend="emu", jobs=1), sandbox, work)
    grader.prepare_base(["01_vector_add"])
    for student in ("grace", "alice"):
        submissions.unpack(submissions.Submission(student, CORPUS / student, 0), tmp_path / student)
    grace = grader.grade(tmp_path / "grace", "grace", "01_vector_add")  # every test but the crash
    assert grace.tests["VectorAdd.One"].verdict == "failed" and grace.earned == 21
    alice = grader.grade(tmp_path / "alice", "alice", "01_vector_add")
    assert alice.earned == alice.possible == 22, alice
    shutil.rmtree(work, ignore_errors=True)


def test_make_demo_grades_this_corpus_on_every_lab() -> None:
    """`make demo` runs what the `graded` fixture runs (make_corpus.py, then grader/grade on every
    lab): its commands, without running them a second time."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    run = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    corpus, grade_line = [line for line in run.stdout.splitlines() if "grader/" in line]
    assert "grader/tests/make_corpus.py build/demo-corpus" in corpus
    assert "grader/grade build/demo-corpus" in grade_line and "--labs" not in grade_line


def test_a_test_that_skips_on_this_backend_never_counts_as_passed() -> None:
    """Which tests skip comes from the instructor's build; a submission's process cannot turn one
    into a pass (24 of 22 points before), nor skip a test that runs here."""
    from cudalab_grader.grading import Grader, Settings

    grader = Grader(Settings(backend="emu", jobs=1), Sandbox(use_bwrap=False), Path("/nonexistent"))
    grader.skipped = {"01_vector_add": {"Timing.OnAGpu"}}
    ran = []

    def forged(job: Path, lab: str, test: str, number: int, points: float) -> TestResult:
        ran.append(test)
        return TestResult(TestVerdict.SKIPPED if test == "VectorAdd.One" else TestVerdict.PASSED, points)

    grader._run_test = forged  # type: ignore[method-assign]
    verdicts = grader._verdicts(
        Path("/job"), "01_vector_add", {"Timing.OnAGpu": 2, "VectorAdd.One": 1, "VectorAdd.Empty": 1}, 1
    )
    assert verdicts["Timing.OnAGpu"].verdict == "skipped" and verdicts["Timing.OnAGpu"].possible == 0
    assert "Timing.OnAGpu" not in ran
    one = verdicts["VectorAdd.One"]
    assert one.verdict == "failed" and "runs on this backend" in one.message
    assert verdicts["VectorAdd.Empty"].verdict == "passed"


def test_sigterm_stops_the_jobs_and_removes_the_work_folder(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    shutil.copytree(CORPUS / "alice", subs / "alice")
    grader = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "grader" / "grade"),
            str(subs),
            "--labs",
            "01",
            "--out",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert grader.stdout is not None
    work = None
    for line in grader.stdout:
        if "work folder:" in line:
            work = Path(line.split("work folder:")[1].split()[0])
        if "the instructor's workbook: building it" in line:
            break
    time.sleep(2)  # inside the build, or (where a kept build is taken) inside alice's job
    grader.send_signal(signal.SIGTERM)
    rest = grader.stdout.read()
    assert grader.wait(timeout=60) == 130, rest
    assert work is not None and not work.exists()
    assert "stopped" in rest and not (tmp_path / "out" / "gradebook.csv").exists()


def test_reports_are_read_only_when_regular_and_bounded(tmp_path: Path) -> None:
    from cudalab_grader.files import read_regular_file
    from cudalab_tools.gtest import report_verdicts

    def read_report(path: Path) -> str:  # as the grader reads a test's report
        return report_verdicts(read_regular_file(path, 4 << 20)).get("A.B", "missing")

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with (tmp_path / "huge.json").open("wb") as f:
        f.truncate(64 << 20)
    for name in ("fifo.json", "zero.json", "huge.json", "absent.json"):
        assert read_report(tmp_path / name) == "missing", name
    (tmp_path / "ok.json").write_text(
        json.dumps(
            {
                "testsuites": [
                    {"name": "A", "testsuite": [{"name": "B", "status": "RUN", "result": "COMPLETED"}]}
                ]
            }
        )
    )
    assert read_report(tmp_path / "ok.json") == "passed"


@pytest.mark.parametrize("what", ["memory", "disk"])
def test_a_job_is_stopped_at_its_memory_and_disk_limits(what: str) -> None:
    sandbox = Sandbox()
    base = Path(tempfile.mkdtemp(prefix="cudalab-limits-"))  # reachable by the jobs' users
    base.chmod(0o711)
    folder = base / "job"
    folder.mkdir()
    number = sandbox.claim()
    try:
        sandbox.prepare(folder, number)
        inside = "/job" if sandbox.bwrap else str(folder)
        program = {  # two processes of 150 MiB each, or a 300 MiB file, held for 10 s
            "memory": "import os,time; os.fork(); b=bytearray(150<<20); time.sleep(10)",
            "disk": "import time; open('big','wb').write(bytes(300<<20)); time.sleep(10)",
        }[what]
        limits = Limits(wall_seconds=30, job_memory_bytes=200 << 20, job_disk_bytes=200 << 20)
        outcome = sandbox.run(
            ["python3", "-c", program],
            binds={folder: "/job"},
            writable={folder},
            cwd=inside,
            limits=limits,
            slot=number,
        )
    finally:
        sandbox.release(number)
        remove_tree(base)
    assert not outcome.timed_out and outcome.over_limit is not None, outcome
    assert ("memory" if what == "memory" else "wrote") in outcome.over_limit


def test_a_build_folder_is_held_to_the_disk_limit_by_the_kernel() -> None:
    """fallocate outruns any watch: where the grader may mount (as root), a job's build folder is a
    tmpfs of the job's disk limit, and the bytes past it are refused at once."""
    sandbox = Sandbox()
    if not sandbox.mounts:
        pytest.skip("the grader may not mount a tmpfs here (not root, or a container forbids it)")
    base = Path(tempfile.mkdtemp(prefix="cudalab-limits-"))  # reachable by the jobs' users
    base.chmod(0o711)
    folder = base / "build"
    number = sandbox.claim()
    try:
        with sandbox.folder_of_size(folder, 200 << 20) as mounted:
            assert mounted
            sandbox.prepare(folder, number)
            program = "import os; os.posix_fallocate(os.open('big', os.O_WRONLY | os.O_CREAT), 0, 300 << 20)"
            outcome = sandbox.run(
                ["python3", "-c", program],
                binds={folder: "/build"},
                writable={folder},
                cwd="/build" if sandbox.bwrap else str(folder),
                limits=Limits(wall_seconds=30, job_disk_bytes=1 << 30),  # (the watch would let it)
                slot=number,
            )
    finally:
        sandbox.release(number)
        remove_tree(base)
    assert outcome.returncode not in (0, None) and "No space left on device" in outcome.output, outcome
    assert outcome.over_limit is None


def test_gradescope_mode(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    run = grade(
        "--gradescope", "--submission", str(CORPUS / "alice"), "--results", str(target), "--labs", "01"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(target.read_text())
    assert data["score"] == 22
    assert {t["name"] for t in data["tests"]} >= {
        "01_vector_add/VectorAdd.Empty",
        "01_vector_add/VectorAdd.Size257",
    }


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    run = grade(str(tmp_path / "nowhere"))
    assert run.returncode == 2 and "nowhere: not a folder of submissions" in run.stderr
    run = grade(str(CORPUS), "--labs", "42")
    assert run.returncode == 2 and "no lab named '42'" in run.stderr
    for text, says in (
        ("penalty_per_day = 'ten'\n", "must be numbers"),
        ("[deadlines]\n01_vector_add = 'Friday'\n", "must be a date or date-time"),
        ("[deadlines\n", "deadlines.toml"),
    ):
        (tmp_path / "deadlines.toml").write_text(text)
        run = grade(str(CORPUS), "--deadlines", str(tmp_path / "deadlines.toml"))
        assert run.returncode == 2 and "argument --deadlines" in run.stderr and says in run.stderr, run.stderr
        assert "Traceback" not in run.stderr


def test_late_penalty() -> None:
    rules = deadlines.Deadlines(
        per_day=10,
        maximum=50,
        due={"01_vector_add": deadlines.dt.datetime(2026, 1, 1, tzinfo=deadlines.dt.timezone.utc)},
    )
    due = rules.due["01_vector_add"].timestamp()
    assert rules.penalty("01_vector_add", due - 1) == 0
    assert rules.penalty("01_vector_add", due + 3600) == pytest.approx(0.1)
    assert rules.penalty("01_vector_add", due + 30 * 86400) == pytest.approx(0.5)
    assert rules.penalty("04_tiled_matmul", time.time()) == 0


def test_non_utf8_names_are_kept_printable(tmp_path: Path) -> None:
    dest = tmp_path / "x"
    submissions.unpack(submissions.Submission("xavier", CORPUS / "xavier.tar.gz", 0), dest)
    names = [p.name for p in dest.rglob("*")]
    assert "vector_add.cu" in names and any(n.startswith("notes-") for n in names)


def test_performance_ratio_plot(tmp_path: Path) -> None:
    """GPU grading records each timing test's ratio; the instructor sees them per student."""
    from cudalab_tools.gtest import report_speed

    def report(test: dict) -> bytes:
        return json.dumps({"testsuites": [{"name": "VectorAddPerformance", "testsuite": [test]}]}).encode()

    timed = {"name": "NearCopyBandwidth", "speed_ratio": "0.920000", "needed_ratio": "0.700000"}
    assert report_speed(report(timed), "VectorAddPerformance.NearCopyBandwidth") == (0.92, 0.7)
    # only the harness's properties in the checker's report count: a ratio the test did not record,
    # or one that is not a number, is no ratio
    test = "VectorAddPerformance.NearCopyBandwidth"
    assert report_speed(report({"name": "NearCopyBandwidth"}), test) is None
    assert report_speed(report(dict(timed, speed_ratio="fast")), test) is None

    def lab(ratio: float) -> LabResult:
        test = TestResult(
            TestVerdict.PASSED if ratio >= 0.7 else TestVerdict.FAILED, 2, ratio=ratio, needed=0.7
        )
        return LabResult(
            "01_vector_add", LabStatus.GRADED, 2, {"VectorAddPerformance.NearCopyBandwidth": test}
        )

    results = ClassResults("cuda", ["01_vector_add"], "now")
    results.students = {
        name: StudentResult(0, {"01_vector_add": lab(r)}) for name, r in (("ann", 0.92), ("ben", 0.41))
    }
    made = plots.write(tmp_path, results)
    assert tmp_path / "performance_ratios.png" in made


def test_a_kept_base_is_taken_by_a_later_run_and_removed_only_when_unused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bases.py: a run takes a kept base of its workbook whose labs include its own; keeping a base
    removes those it makes unneeded (another workbook's, or a subset of its labs), but not one that
    another run holds; no job's user may write to a kept base."""
    from cudalab_grader import bases

    monkeypatch.setattr(bases, "CACHE", tmp_path / "cache")

    def built(labs: list[str]) -> bases.Base:
        folder = tmp_path / "work" / "-".join(labs)
        for part in ("src", "build"):
            (folder / part).mkdir(parents=True, exist_ok=True)
            (folder / part / "file").write_text(part)
            (folder / part / "file").chmod(0o666)
        return bases.Base(folder, labs, {lab: {"Timing.OnAGpu"} for lab in labs})

    assert bases.find("new", ["01_vector_add"]) is None
    assert "kept in" in bases.keep("old", built(["01_vector_add"]))
    held = bases.find("old", ["01_vector_add"])  # another run, still grading with it
    assert held is not None and held.skipped == {"01_vector_add": {"Timing.OnAGpu"}}
    assert "kept in" in bases.keep("new", built(["01_vector_add"]))
    assert "kept in" in bases.keep("new", built(["01_vector_add", "02_thread_indexing"]))
    assert bases.find("old", ["01_vector_add"]) is not None  # in use: kept
    names = sorted(p.name for p in bases.CACHE.iterdir())
    assert len(names) == 2 and sum(n.startswith("new-") for n in names) == 1, names  # the subset went
    taken = bases.find("new", ["02_thread_indexing"])
    assert taken is not None and taken.labs == ["01_vector_add", "02_thread_indexing"]
    assert (taken.folder / "build" / "file").stat().st_mode & 0o022 == 0
    assert bases.find("new", ["03_matmul_variants"]) is None  # a lab no kept base holds
    held.release()
    taken.release()
    bases.keep("newer", built(["03_matmul_variants"]))
    assert [p.name.split("-")[0] for p in bases.CACHE.iterdir()] == ["newer"]
    assert bases.key("emu") != bases.key("cuda")


def test_a_run_waits_for_another_that_builds_a_base_holding_its_labs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from cudalab_grader import bases

    monkeypatch.setattr(bases, "CACHE", tmp_path / "cache")
    waited = threading.Event()

    def wait(labs: list[str]) -> None:
        bases.wait_for_builder("k", labs)
        waited.set()

    with bases.building("k", ["01_vector_add", "02_thread_indexing"]):
        bases.wait_for_builder("k", ["03_matmul_variants"])  # not a lab of that base: no wait
        waiter = threading.Thread(target=wait, args=(["01_vector_add"],))
        waiter.start()
        assert not waited.wait(1.0)
    assert waited.wait(10.0)
    waiter.join()
    assert not list(bases.CACHE.glob("*.building"))
