#!/usr/bin/env python3
"""`make check`: builds the student's labs, runs their tests and totals the points.

Each lab builds on its own, so a lab that does not compile costs that lab's points only. Each test
runs in a process of its own with a time limit, and its verdict is decided as the grader decides
it (cudalab_tools/gtest.py). The summary table ends the output, with the path of the report page
(cudalab_tools/report.py: the same results drawn, and on emu the student's source with its memory
traffic per line); the exit status is 0 only when every test passed.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from cudalab_tools import gtest, labs, records, rubric, symbols
from cudalab_tools.build_log import useful_build_errors
from cudalab_tools.gtest import TestVerdict
from cudalab_tools.lab_result import LabResult

ROOT = labs.ROOT
TEST_SECONDS = 120  # each test's time limit
# make bench's JSON of the reference kernels on the course's GPUs (an H100's and an H200's): the
# report page's rooflines, one per GPU.
REFERENCE_BENCHES = [
    ROOT / "docs" / "runs" / "2026-11-24-h100-run41-bench.json",
    ROOT / "docs" / "runs" / "2026-11-24-h200-run43-bench.json",
]


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    # The counters report is printed once per lab at the end, not by every test.
    env = {k: v for k, v in os.environ.items() if k != "CUDALAB_REPORT"}
    return subprocess.run(cmd, text=True, capture_output=True, env=env)


def configure(build: Path, backend: str | None, chosen: list[str]) -> None:
    """Configures the build where it is new, or where a chosen lab has no target in it yet (a lab
    folder added since: CMake finds lab folders when it configures)."""
    known = (build / "CMakeFiles" / f"{lab}-labs.dir" for lab in chosen)
    if (build / "CMakeCache.txt").exists() and all(d.is_dir() for d in known):
        return
    cmd = ["cmake", "-S", str(ROOT), "-B", str(build)]
    if backend:
        cmd.append(f"-DBACKEND={backend}")
    r = run(cmd)
    for line in r.stdout.splitlines():
        if line.startswith("-- cudalab:"):
            print(line[3:])
    if r.returncode != 0:
        sys.exit(f"check: error: cmake could not configure the build:\n{r.stdout}{r.stderr}")


def build_lab(build: Path, lab: str, jobs: int) -> str:
    """The build's errors, or what the student's code defines or calls against the rules
    (symbols.py); "" when it built and keeps them."""
    r = run(["cmake", "--build", str(build), "--target", f"{lab}-labs", "-j", str(jobs)])
    if r.returncode != 0:
        return useful_build_errors(r.stdout + r.stderr)
    return symbols.check(build, lab, labs.student_files(lab))


def run_tests(build: Path, lab: str, result: LabResult, jobs: int) -> None:
    """Runs the lab's tests, each in a process of its own: all but the performance ones in
    parallel, then those one at a time (a timing taken while other tests share the GPU is neither
    stable nor fair); fills in `result`."""
    program = build / "labs" / f"{lab}-labs"
    env = {k: v for k, v in os.environ.items() if k != "CUDALAB_REPORT"}  # reported once per lab, at the end
    tests = gtest.list_tests(program)
    for chosen, workers in (
        ([t for t in tests if "Performance" not in t], jobs),
        ([t for t in tests if "Performance" in t], 1),
    ):
        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            runs = pool.map(lambda t: gtest.run_test(program, t, TEST_SECONDS, env), chosen)
            for test, done in zip(chosen, runs, strict=True):
                if done.verdict == TestVerdict.PASSED:
                    result.passed.append(test)
                elif done.verdict == TestVerdict.SKIPPED:
                    result.skipped.append(test)
                else:
                    result.failed.append(test)
                    result.messages[test] = done.message or "(the test printed nothing)"
                    result.records[test] = done.records


def write_junit(path: Path, results: dict[str, LabResult]) -> None:
    """make check's verdicts as JUnit XML (REPORT=junit), one testcase per test."""
    suite = ET.Element("testsuite", name="check")
    for lab, r in results.items():
        if r.build_error:
            case = ET.SubElement(suite, "testcase", name=f"{lab}/build", classname=lab)
            ET.SubElement(case, "error", message="does not build").text = r.build_error
        for test in r.passed + r.failed + r.skipped:
            case = ET.SubElement(suite, "testcase", name=f"{lab}/{test}", classname=lab)
            if test in r.failed:
                ET.SubElement(case, "failure", message="failed").text = r.messages[test]
            elif test in r.skipped:
                ET.SubElement(case, "skipped")
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def counted_run(build: Path, lab: str, tests: str = "*") -> tuple[list[dict], str]:
    """CUDALAB_REPORT=1 on emu, over the tests of the lab that `tests` (a GoogleTest filter)
    selects: the records of its kernels' memory counters and of its counting tests' rooflines
    (records.py), and the table of the counters as the emu printed it."""
    program = build / "labs" / f"{lab}-labs"
    if not program.exists():
        return [], ""
    with tempfile.TemporaryDirectory(prefix="cudalab-counted-") as scratch:
        written = Path(scratch) / "records.jsonl"
        env = {**os.environ, "CUDALAB_REPORT": "1", "CUDALAB_RECORDS": str(written)}
        try:
            r = subprocess.run(
                [str(program), f"--gtest_filter={tests}"],
                text=True,
                errors="replace",
                capture_output=True,
                env=env,
                timeout=TEST_SECONDS,
            )
        except subprocess.TimeoutExpired:
            return [], "(the counted run took longer than its time limit)"
        start = r.stderr.find("cudalab emu report")
        table = r.stderr[start:].strip() if start >= 0 else "(no instrumented kernel ran)"
        return [o for o in records.read_file(written) if o["kind"] != "diagnostic"], table


def save_results(build: Path, results: dict[str, LabResult], built: list[str], on_emu: bool) -> None:
    """Each checked lab's result, with the counters of its counting tests on emu, where the page
    finds every lab's latest (build/report/labs/NN_name.json): `make check LAB=` checks one lab."""
    saved = build / "report" / "labs"
    saved.mkdir(parents=True, exist_ok=True)
    for lab, r in results.items():
        tests = labs.counting_tests(lab) if on_emu and lab in built else []
        counted = counted_run(build, lab, ":".join(tests))[0] if tests else []
        record = {"result": dataclasses.asdict(r), "counted": counted}
        (saved / f"{lab}.json").write_text(json.dumps(record, indent=1) + "\n")


def latest_results(build: Path) -> list[tuple[LabResult, list[dict]]]:
    """Every lab's latest result and the records of its counting tests (save_results), in the
    labs' order."""
    found = []
    for lab in labs.select(None):
        saved = read_json(build / "report" / "labs" / f"{lab}.json")
        try:
            found.append((LabResult(**saved["result"]), saved["counted"]))
        except (TypeError, KeyError):  # none, or saved by an older make check: checked again later
            continue
    return found


def write_page(build: Path, on_emu: bool) -> str:
    """The report page (cudalab_tools/report.py) of every lab's latest result; its path, or why
    there is none."""
    try:
        from cudalab_tools import report
    except ImportError as e:  # Jinja2 or matplotlib missing
        return f"not written ({e.name} is not installed: run ./setup.sh)"
    own = read_json(build / "bench.json")  # the student's kernels, if make bench SOURCE=labs timed them
    latest = latest_results(build)
    html = report.render(
        [r for r, _ in latest],
        references=[r for r in map(read_json, REFERENCE_BENCHES) if r],
        own=own if own and own.get("backend") == "cuda" and own.get("source") == "labs" else None,
        backend="emu" if on_emu else "cuda",
        counted={r.lab: counted for r, counted in latest if counted},
        lab_folders={r.lab: ROOT / "labs" / r.lab for r, _ in latest},
    )
    return str(report.write(build / "report" / "index.html", html))


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def table(results: list[LabResult]) -> str:
    rows = [("lab", "passed", "failed", "skipped", "points")]
    for r in results:
        pts = f"{r.earned():g}/{r.possible():g}"
        if r.build_error:
            rows.append((r.lab, "-", "build error", "-", pts))
        else:
            rows.append((r.lab, str(len(r.passed)), str(len(r.failed)), str(len(r.skipped)), pts))
    total = f"{sum(r.earned() for r in results):g}/{sum(r.possible() for r in results):g}"
    rows.append(("total", "", "", "", total))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]

    def line(row: tuple[str, ...]) -> str:
        cells = zip(row, widths, strict=True)
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells))

    rule = "-" * len(line(rows[0]))
    return "\n".join([line(rows[0]), rule, *map(line, rows[1:-1]), rule, line(rows[-1])])


def print_failures(lab: str, r: LabResult) -> None:
    """Each failed test with its message; tests that failed for the same problem the emu diagnosed
    once, the others named ("and 6 more for the same problem")."""
    reasons = {test: records.first_problem(r.records.get(test, [])) for test in r.failed}
    told: set[str] = set()
    for test in r.failed:
        reason = reasons[test]
        if reason in told:
            continue
        same = [t for t in r.failed if t != test and reason is not None and reasons[t] == reason]
        points = f"{r.points.get(test, 0):g} points"
        if same:
            told.add(reason)
            print(f"\n=== FAILED {lab}/{test} ({points}) and {len(same)} more for the same problem: {reason}")
            print(f"    also: {', '.join(same)}")
        else:
            print(f"\n=== FAILED {lab}/{test} ({points})")
        print(r.messages[test])


def feedback(results: dict[str, LabResult]) -> str:
    """The student's feedback file: the table, then every failure with its message."""
    out = ["# make check", "", "```text", table(list(results.values())), "```", ""]
    for lab, r in results.items():
        if r.build_error:
            out += [f"## {lab}: does not build", "", "```text", r.build_error, "```", ""]
        for test in r.failed:
            out += [f"## {lab}/{test} failed ({r.points.get(test, 0):g} points)", ""]
            out += ["```text", r.messages[test], "```", ""]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lab", help="one lab: 01_vector_add, 01 or vector_add")
    ap.add_argument("--backend", choices=["cuda", "emu"])
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "default")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--report", choices=["junit"], help="also write JUnit XML and a points summary")
    args = ap.parse_args()
    if not shutil.which("cmake"):
        sys.exit("check: error: cmake not found; run ./setup.sh first")

    build = args.build_dir.resolve()
    try:
        chosen = labs.select(args.lab)
    except ValueError as e:
        sys.exit(f"check: error: {e}")
    configure(build, args.backend, chosen)
    results = {lab: LabResult(lab) for lab in chosen}
    for lab in chosen:
        try:
            results[lab].points = labs.points(lab)
        except rubric.RubricError as e:
            sys.exit(f"check: error: {e}")
        print(f"building {lab} ...", flush=True)
        results[lab].build_error = build_lab(build, lab, args.jobs)

    built = [lab for lab in chosen if not results[lab].build_error]
    for lab in built:
        print(f"testing {lab} ...", flush=True)
        run_tests(build, lab, results[lab], args.jobs)

    for lab in chosen:
        r = results[lab]
        if r.build_error:
            print(f"\n=== {lab}: does not build\n{r.build_error}")
        print_failures(lab, r)
    on_emu = "CUDALAB_BACKEND:INTERNAL=emu" in (build / "CMakeCache.txt").read_text()
    if os.environ.get("CUDALAB_REPORT") and on_emu:
        for lab in built:
            print(f"\n=== {lab}: {counted_run(build, lab)[1]}")
    print()
    print(table(list(results.values())))
    save_results(build, results, built, on_emu)
    print(f"\nreport: {write_page(build, on_emu)} (every lab's latest make check)")

    if args.report == "junit":
        summary = {
            lab: {
                "earned": r.earned(),
                "possible": r.possible(),
                "passed": r.passed,
                "failed": r.failed,
                "skipped": r.skipped,
                "build_error": r.build_error,
                "points": r.points,
                "messages": r.messages,
            }
            for lab, r in results.items()
        }
        junit = build / "check-junit.xml"
        write_junit(junit, results)
        (build / "check-points.json").write_text(json.dumps(summary, indent=2) + "\n")
        (build / "check-feedback.md").write_text(feedback(results))
        print(f"\nJUnit XML: {junit}\npoints:    {build / 'check-points.json'}")
        print(f"feedback:  {build / 'check-feedback.md'}")
    ok = all(not r.build_error and not r.failed for r in results.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
