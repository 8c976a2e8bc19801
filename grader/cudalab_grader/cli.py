"""grader/grade: grades a folder of submissions, or one submission for Gradescope.

grader/grade SUBMISSIONS [--labs 01,04] [--jobs N] [--out DIR] [--deadlines FILE]
grader/grade --gradescope [--submission DIR] [--results FILE]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import deadlines, plots, report, slurm, submissions, workbook
from .files import remove_tree, write_atomically
from .grading import Grader, Settings, not_graded
from .results import ClassResults, LabResult, LabStatus, StudentResult
from .sandbox import Sandbox, Stopped


def gpu_count() -> int:
    if shutil.which("nvidia-smi") is None:
        return 0
    r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return r.stdout.count("GPU ") if r.returncode == 0 else 0


class Progress:
    """A one-line progress bar with an estimate of the time left, on stderr."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.lock = threading.Lock()

    def step(self, what: str) -> None:
        with self.lock:
            self.done += 1
            elapsed = time.monotonic() - self.start
            left = elapsed / self.done * (self.total - self.done)
            bar = "#" * (30 * self.done // max(self.total, 1))
            sys.stderr.write(
                f"\r[{bar:<30}] {self.done}/{self.total} graded, {left:4.0f} s left  {what[:40]:<40}"
            )
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="grader/grade", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "submissions", nargs="?", type=Path, help="a folder with one folder, .zip or .tar.gz per student"
    )
    ap.add_argument("--labs", help="which labs: 01,04 or 01_vector_add (default: all)")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 2, help="labs graded at once (default: the cores)"
    )
    ap.add_argument("--out", type=Path, default=Path("grading"), help="where results go (default: ./grading)")
    ap.add_argument("--backend", choices=["cuda", "emu"], help="default: cuda if a GPU is visible, else emu")
    ap.add_argument("--deadlines", type=Path, help="a TOML file of deadlines and late penalties")
    ap.add_argument("--test-timeout", type=float, default=60, help="seconds per test (default 60)")
    ap.add_argument("--shard", help="K/N: grade only every N-th submission, starting with the K-th")
    ap.add_argument("--slurm", type=int, metavar="N", help="submit a Slurm job array of N shards")
    ap.add_argument("--gpus-per-task", type=int, default=0, help="with --slurm: GPUs per shard")
    ap.add_argument("--wait", action="store_true", help="with --slurm: wait until every shard is done")
    ap.add_argument("--merge", action="store_true", help="merge the shards in --out into one gradebook")
    ap.add_argument("--gradescope", action="store_true", help="grade one submission for Gradescope")
    ap.add_argument("--submission", type=Path, default=Path("/autograder/submission"))
    ap.add_argument("--results", type=Path, default=Path("/autograder/results/results.json"))
    args = ap.parse_args(argv)
    if not (args.gradescope or args.merge) and args.submissions is None:
        ap.error("give the folder of submissions (or --gradescope, or --merge)")
    if args.shard and not re.fullmatch(r"\d+/[1-9]\d*", args.shard):
        ap.error("--shard takes K/N, for example 0/4")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    try:
        args.rules = deadlines.load(args.deadlines)
    except deadlines.DeadlineError as e:
        ap.error(f"argument --deadlines: {e}")
    return args


def grade_all(
    args: argparse.Namespace, subs: list[submissions.Submission], labs: list[str], out: Path
) -> ClassResults:
    backend = args.backend or ("cuda" if gpu_count() > 0 else "emu")
    sandbox = Sandbox()
    print(f"grading {len(subs)} submission(s), labs {', '.join(labs)}, backend {backend}")
    for p in sandbox.protections():
        print(f"  protection: {p}")

    notes = []  # protections that depend on this run's settings
    work = Path(tempfile.mkdtemp(prefix="cudalab-grade-"))
    os.chmod(work, 0o711)  # the sandbox's users must reach their job folders
    print(f"  work folder: {work} (removed at the end, also on Ctrl-C or SIGTERM)")
    grader = None
    try:
        settings = Settings(backend=backend, jobs=args.jobs)
        if backend == "cuda":
            settings.gpus = threading.Semaphore(max(1, gpu_count()))
        settings.test_limits = dataclasses.replace(settings.test_limits, wall_seconds=args.test_timeout)
        if backend == "cuda":  # the CUDA driver reserves far more address space than any limit allows
            settings.test_limits = dataclasses.replace(settings.test_limits, memory_bytes=None)
            notes.append(
                "tests on the cuda backend run without a per-process address-space limit (the CUDA "
                "driver maps a large address space); the per-job memory limit still applies"
            )
        notes.append(fit_memory_to_machine(settings, args.jobs, sandbox.mounts))
        for note in notes:
            print(f"  protection: {note}")
        grader = Grader(settings, sandbox, work)

        results = ClassResults(backend, labs, now(), sandbox.protections() + notes)
        cache = out / "cache"
        todo, reused = [], 0
        for sub in subs:
            entry = results.students[sub.student] = StudentResult(sub.submitted_at)
            try:
                planned = plan(sub, entry, labs, grader, work, cache, backend)
                todo += planned.to_grade
                reused += planned.reused
            except Exception as e:  # one submission's trouble is that student's, not the class's
                for lab in labs:
                    entry.labs[lab] = not_graded(lab, LabStatus.GRADER_ERROR, f"not graded: {e!r}")

        print(f"{len(todo)} lab(s) to grade, {reused} unchanged since an earlier run")
        if todo:
            print("the instructor's workbook: building it, or taking a kept build ...", flush=True)
            said = grader.prepare_base([lab for lab in labs if any(item[1] == lab for item in todo)])
            print(f"the instructor's workbook: {said}", flush=True)
        progress = Progress(len(todo))

        def job(item: tuple) -> None:
            sub, lab, unpacked, key, cached = item
            try:
                r = grader.grade(unpacked, sub.student, lab)
            except Stopped:
                return
            except Exception as e:  # a job's own failure must not stop the class's grading
                r = not_graded(lab, LabStatus.GRADER_ERROR, f"not graded: {e!r}")
            results.students[sub.student].labs[lab] = r
            if r.status in (LabStatus.GRADED, LabStatus.BUILD_ERROR):  # the student's own result
                write_atomically(cached, json.dumps({"key": key, "result": r.to_json()}))
            progress.step(f"{sub.student} {lab}")

        pool = cf.ThreadPoolExecutor(max_workers=args.jobs)
        try:
            list(pool.map(job, todo))
        except KeyboardInterrupt:  # SIGINT, or SIGTERM (see main): stop the jobs, then clean up
            sandbox.stop_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        if grader is not None:
            grader.release_base()
        remove_tree(work)

    # A lab not graded is out of a graded lab's points: those of a graded result (this run's or the
    # cache's: a rerun may build nothing, and then knows no skipped tests), else the grader's.
    graded = {
        r.lab: r.possible for e in results.students.values() for r in e.labs.values() if r.status == "graded"
    }
    for sub in subs:
        entry = results.students[sub.student]
        for lab in labs:
            if entry.labs[lab].status != LabStatus.GRADED:
                entry.labs[lab].possible = graded.get(lab, grader.possible(lab))
            entry.labs[lab].penalty = args.rules.penalty(lab, sub.submitted_at)
        entry.labs = {lab: entry.labs[lab] for lab in labs}
    return results


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def fit_memory_to_machine(settings: Settings, jobs: int, build_in_memory: bool) -> str:
    """Lowers the per-job memory limit so that `jobs` jobs at once, with their build folders where
    those are memory (Sandbox.folder_of_size), fit in 80% of this machine's memory; says what it
    chose. A build folder in memory takes at most half of a job's share (its disk limit lowered
    to that where the share is small)."""
    machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    share = int(0.8 * machine / jobs)
    build = min(settings.build_limits.job_disk_bytes, share // 2) if build_in_memory else 0
    per_job = min(settings.test_limits.job_memory_bytes, share - build)
    settings.build_limits = dataclasses.replace(
        settings.build_limits,
        job_memory_bytes=per_job,
        job_disk_bytes=build or settings.build_limits.job_disk_bytes,
    )
    settings.test_limits = dataclasses.replace(settings.test_limits, job_memory_bytes=per_job)
    folder = f" (and its build folder up to {build >> 20} MiB)" if build else ""
    return (
        f"each job may hold {per_job >> 20} MiB of memory{folder}: {jobs} job(s) at once stay "
        f"within 80% of this machine's {machine >> 20} MiB"
    )


@dataclasses.dataclass
class Plan:
    to_grade: list[tuple]  # (submission, lab, unpacked folder, cache key, cache file)
    reused: int  # labs whose files are unchanged since an earlier run: their cached result


def plan(
    sub: submissions.Submission,
    entry: StudentResult,
    labs: list[str],
    grader: Grader,
    work: Path,
    cache: Path,
    backend: str,
) -> Plan:
    """Unpacks one submission and fills `entry` with what needs no build (refused, missing,
    unchanged since the last run); returns the labs left to grade."""
    unpacked = work / "unpacked" / submissions.folder_name(sub.student)
    try:
        submissions.unpack(sub, unpacked)
    except submissions.SubmissionError as e:
        for lab in labs:
            entry.labs[lab] = not_graded(lab, LabStatus.REJECTED, str(e))
        return Plan([], 0)
    todo, reused = [], 0
    for lab in labs:
        files = workbook.submitted_files(unpacked, lab)
        if not all(files.values()):  # nothing to build: the missing files are the verdict
            entry.labs[lab] = grader.grade(unpacked, sub.student, lab)
            continue
        key = "-".join([submissions.content_hash(list(files.values())), workbook.fingerprint(lab), backend])
        cached = cache / submissions.folder_name(sub.student) / f"{lab}.json"
        if (old := read_cached(cached, key)) is not None:
            entry.labs[lab], reused = old, reused + 1
            continue
        todo.append((sub, lab, unpacked, key, cached))
    return Plan(todo, reused)


def read_cached(path: Path, key: str) -> LabResult | None:
    """The result cached for `key`, or None where there is none, it is for other files, or it is
    damaged (then the lab is regraded)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LabResult.from_json(data["result"]) if data["key"] == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        labs = workbook.select(args.labs)
    except ValueError as e:
        print(f"grader: error: {e}", file=sys.stderr)
        return 2

    if args.merge:
        try:
            write_outputs(args.out, slurm.merge(args.out))
        except slurm.MergeError as e:
            print(f"grader: error: {e}", file=sys.stderr)
            return 2
        return 0
    if args.gradescope:
        if not args.submission.is_dir():
            print(f"grader: error: {args.submission}: no submission folder", file=sys.stderr)
            return 2
        sub = submissions.Submission("submission", args.submission, time.time())
        with tempfile.TemporaryDirectory() as scratch:
            results = grade_all(args, [sub], labs, Path(scratch))
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(
            json.dumps(report.gradescope(results.students["submission"], results), indent=2)
        )
        print(f"Gradescope results: {args.results}")
        return 0

    try:
        subs = submissions.find(args.submissions)
    except submissions.SubmissionError as e:
        print(f"grader: error: {e}", file=sys.stderr)
        return 2
    if not subs:
        print(f"grader: error: {args.submissions}: no folders, .zip or .tar.gz files in it", file=sys.stderr)
        return 2
    if args.shard:
        k, n = map(int, args.shard.split("/"))
        subs = [sub for i, sub in enumerate(subs) if i % n == k]
    if args.slurm:
        return slurm.submit(args)
    for sub in subs:
        if sub.renamed_from:
            print(
                f"note: two submissions are named '{sub.renamed_from}': "
                f"{submissions.printable(sub.path.name)} is graded as '{sub.student}'"
            )
    args.out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        results = grade_all(args, subs, labs, args.out) if subs else empty_results(labs)
    except KeyboardInterrupt:
        print(
            "\ngrader: stopped; nothing written, the work folder removed; what was graded is cached:"
            " run the same command again to go on",
            file=sys.stderr,
        )
        return 130
    write_outputs(args.out, results)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops the grader as Ctrl-C does: the running jobs are killed, the work folder removed."""
    raise KeyboardInterrupt


def empty_results(labs: list[str]) -> ClassResults:
    return ClassResults("none", labs, now())


def write_outputs(out: Path, results: ClassResults) -> None:
    report.write_gradebook(out / "gradebook.csv", results)
    report.write_results(out / "results.json", results)
    report.write_feedback(out / "feedback", results)
    figures = plots.write(out / "plots", results)
    page = report.write_class_page(out / "class.html", results, figures)
    print()
    print(report.summary(results))
    if line := report.runner_reported(results):
        print(line)
    print(
        f"\ngradebook: {out / 'gradebook.csv'}\nresults:   {out / 'results.json'}\n"
        f"feedback:  {out / 'feedback'}/<student>.md and .html\nclass:     {page}"
    )
    print(
        f"plots:     {', '.join(str(f) for f in figures)}"
        if figures
        else f"plots:     none: matplotlib is not installed for {sys.executable} (./setup.sh installs it "
        "for /usr/bin/python3)"
    )
