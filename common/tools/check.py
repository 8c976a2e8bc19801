#!/usr/bin/env python3
"""`make check`: builds the student's labs, runs their tests and totals the points.

Each lab builds on its own, so a lab that does not compile costs that lab's points only. Tests run
through CTest, one process per test, with a time limit. The summary table ends the output; the
exit status is 0 only when every test passed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rubric  # noqa: E402
import symbols  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GTEST_NOISE = re.compile(
    r"^(Running main\(\)|Note: Google Test filter|\[(==========|----------|  PASSED  | RUN      |"
    r"       OK |   SEED   |  FAILED  )\]|Failed$|\s*\d+ FAILED TESTS?$|$)"
)


@dataclass
class LabResult:
    lab: str
    build_error: str = ""
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    points: dict[str, float] = field(default_factory=dict)

    def earned(self) -> float:
        return sum(self.points.get(t, 0.0) for t in self.passed)

    def possible(self) -> float:
        if self.build_error:
            return sum(self.points.values())
        return sum(self.points.get(t, 0.0) for t in self.passed + self.failed)


def find_labs(selector: str | None) -> list[str]:
    labs = sorted(p.name for p in (ROOT / "labs").glob("[0-9][0-9]_*") if p.is_dir())
    if not selector:
        return labs
    chosen = [lab for lab in labs if selector in (lab, lab[:2], lab[3:])]
    if not chosen:
        sys.exit(f"check: error: no lab named '{selector}'; the labs are: {', '.join(labs)}")
    return chosen


def run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    # The counters report is printed once per lab at the end, not by every test.
    env = {k: v for k, v in os.environ.items() if k != "CUDALAB_REPORT"}
    return subprocess.run(cmd, text=True, capture_output=True, env=env)


def configure(build: Path, backend: str | None) -> None:
    if (build / "CMakeCache.txt").exists():
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


def student_files(lab_dir: Path) -> list[str]:
    """The files a student writes in a lab: its .cu files other than tests and demos."""
    return sorted(p.name for p in lab_dir.glob("*.cu") if not p.name.startswith(("test_", "demo_")))


def build_lab(build: Path, lab: str, jobs: int) -> str:
    """The build's errors, or what the student's code defines or calls against the rules
    (symbols.py); "" when it built and keeps them."""
    r = run(["cmake", "--build", str(build), "--target", f"{lab}-labs", "-j", str(jobs)])
    if r.returncode != 0:
        return useful_build_errors(r.stdout + r.stderr)
    return symbols.check(build, lab, student_files(ROOT / "labs" / lab))


def run_tests(build: Path, labs: list[str], jobs: int, junit: Path) -> None:
    """All tests but the performance ones in parallel, then those one at a time (a timing taken
    while other tests share the GPU is neither stable nor fair); one JUnit file for both."""
    pattern = "^(" + "|".join(re.escape(lab) for lab in labs) + ")/"
    parts = [junit.with_suffix(".1.xml"), junit.with_suffix(".2.xml")]
    passes = (["-R", pattern, "-E", "Performance"], ["-R", pattern + ".*Performance"])
    for part, select, j in zip(parts, passes, (jobs, 1), strict=True):
        part.unlink(missing_ok=True)
        cmd = ["ctest", "--test-dir", str(build), "-L", "^check$", *select, "-j", str(j)]
        run([*cmd, "--output-junit", str(part)])
    merged = ET.Element("testsuite", name="check")
    for part in parts:
        if part.exists():
            merged.extend(ET.parse(part).getroot().iter("testcase"))
            part.unlink()
    ET.ElementTree(merged).write(junit, encoding="utf-8", xml_declaration=True)


def read_junit(junit: Path, results: dict[str, LabResult]) -> dict[str, str]:
    """Fills in each lab's passed/failed/skipped tests; returns the failed tests' messages."""
    messages: dict[str, str] = {}
    if not junit.exists():
        return messages
    for case in ET.parse(junit).getroot().iter("testcase"):
        lab, _, test = case.get("name", "").partition("/")
        if lab not in results:
            continue
        out = case.findtext("system-out") or ""
        status = case.get("status")
        if status == "run":
            results[lab].passed.append(test)
        elif status in ("notrun", "disabled") or "[  SKIPPED ]" in out:
            results[lab].skipped.append(test)
        else:
            results[lab].failed.append(test)
            lines = [line for line in out.splitlines() if not GTEST_NOISE.match(line)]
            silent = "(the test printed nothing: it crashed or timed out)"
            messages[f"{lab}/{test}"] = "\n".join(lines) or silent
    return messages


def counters_report(build: Path, lab: str) -> str:
    """CUDALAB_REPORT=1 on emu: the memory counters of the lab's kernels over all its tests."""
    program = build / "labs" / f"{lab}-labs"
    if not program.exists():
        return ""
    env = {**os.environ, "CUDALAB_REPORT": "1"}
    r = subprocess.run([str(program)], text=True, capture_output=True, env=env)
    start = r.stderr.find("cudalab emu report")
    return r.stderr[start:].strip() if start >= 0 else "(no instrumented kernel ran)"


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


def feedback(results: dict[str, LabResult], messages: dict[str, str]) -> str:
    """The student's feedback file: the table, then every failure with its message."""
    out = ["# make check", "", "```text", table(list(results.values())), "```", ""]
    for lab, r in results.items():
        if r.build_error:
            out += [f"## {lab}: does not build", "", "```text", r.build_error, "```", ""]
        for test in r.failed:
            out += [f"## {lab}/{test} failed ({r.points.get(test, 0):g} points)", ""]
            out += ["```text", messages.get(f"{lab}/{test}", ""), "```", ""]
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
    configure(build, args.backend)
    labs = find_labs(args.lab)
    results = {lab: LabResult(lab) for lab in labs}
    for lab in labs:
        try:
            results[lab].points = rubric.load(ROOT / "labs" / lab / "rubric.toml")
        except rubric.RubricError as e:
            sys.exit(f"check: error: {e}")
        print(f"building {lab} ...", flush=True)
        results[lab].build_error = build_lab(build, lab, args.jobs)

    built = [lab for lab in labs if not results[lab].build_error]
    junit = build / "check-junit.xml"
    junit.unlink(missing_ok=True)
    if built:
        print(f"testing {', '.join(built)} ...", flush=True)
        run_tests(build, built, args.jobs, junit)
    messages = read_junit(junit, results)

    for lab in labs:
        r = results[lab]
        if r.build_error:
            print(f"\n=== {lab}: does not build\n{r.build_error}")
        for test in r.failed:
            points = r.points.get(test, 0)
            print(f"\n=== FAILED {lab}/{test} ({points:g} points)\n{messages.get(f'{lab}/{test}', '')}")
    on_emu = "BACKEND:STRING=emu" in (build / "CMakeCache.txt").read_text()
    if os.environ.get("CUDALAB_REPORT") and on_emu:
        for lab in built:
            print(f"\n=== {lab}: {counters_report(build, lab)}")
    print()
    print(table(list(results.values())))

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
                "messages": {t: messages.get(f"{lab}/{t}", "") for t in r.failed},
            }
            for lab, r in results.items()
        }
        (build / "check-points.json").write_text(json.dumps(summary, indent=2) + "\n")
        (build / "check-feedback.md").write_text(feedback(results, messages))
        print(f"\nJUnit XML: {junit}\npoints:    {build / 'check-points.json'}")
        print(f"feedback:  {build / 'check-feedback.md'}")
    ok = all(not r.build_error and not r.failed for r in results.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
