"""What grading produces: the gradebook, the full results, one feedback file per student, and the
Gradescope results of a single submission."""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from pathlib import Path
from urllib.parse import quote

from cudalab_tools import report as pages
from cudalab_tools.records import WrongMap

from .results import ClassResults, LabResult, LabStatus, StudentResult, TestVerdict


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one starting with = + - @ would be a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_gradebook(path: Path, results: ClassResults) -> None:
    """One row per student, a column per lab, the total, and which labs were not graded and why:
    importable into Canvas or Moodle."""
    labs = results.labs
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *labs, "total", "not graded"])
        for student, entry in sorted(results.students.items()):
            not_graded = [
                f"{lab}: {r.status}" for lab, r in entry.labs.items() if r.status != LabStatus.GRADED
            ]
            w.writerow(
                [
                    _cell(student),
                    *(f"{entry.labs[lab].score:g}" for lab in labs),
                    f"{entry.score:g}",
                    "; ".join(not_graded),
                ]
            )


def write_results(path: Path, results: ClassResults) -> None:
    path.write_text(json.dumps(results.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _lab_lines(lab: str, r: LabResult) -> tuple[str, list[tuple[str, str, str, WrongMap | None]]]:
    """The lab's headline and its (title, status, message, map of wrong elements) items, for both
    feedback formats."""
    head = f"{lab}: {r.score:g} of {r.possible:g} points"
    if r.penalty:
        head += f" (late: {r.earned:g} minus {r.penalty * 100:g}%)"
    if len(r.categories) > 1:
        head += " - " + ", ".join(f"{k} {v.earned:g}/{v.possible:g}" for k, v in sorted(r.categories.items()))
    items = []
    if r.status != LabStatus.GRADED:
        items.append((r.status.title, r.status.value, without_escapes(r.message), None))
    else:
        for test, t in r.tests.items():
            if t.verdict == TestVerdict.FAILED:
                items.append(
                    (
                        f"{test} (0 of {t.possible:g} points)",
                        "failed",
                        without_escapes(t.message),
                        t.wrong_map,
                    )
                )
            elif t.verdict == TestVerdict.SKIPPED:
                items.append((f"{test} (skipped on this backend, not counted)", "skipped", "", None))
    return head, items


# What a student's output may not bring into a page or a terminal: escape sequences (ESC and
# what follows it, CSI and OSC forms) and control characters but tab and newline.
TERMINAL_ESCAPES = re.compile(
    r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.?)"  # CSI, OSC, and any other ESC form
    r"|[\x00-\x08\x0b-\x1f\x7f\x9b]"
)


def without_escapes(text: str) -> str:
    """`text` as a page or a terminal may show it: no escape sequences, no control characters."""
    return TERMINAL_ESCAPES.sub("", text.replace("\r\n", "\n"))


def code_block(text: str) -> list[str]:
    """`text` as a Markdown code block that nothing in it can close: its fence is longer than any
    run of backticks the text holds (CommonMark closes a fence only with one at least as long)."""
    text = text.rstrip()
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return [f"{fence}text", text, fence]


def feedback_markdown(student: str, entry: StudentResult, results: ClassResults) -> str:
    out = [f"# Feedback: {student}", "", f"Backend: {results.backend}. Graded {results.graded_at}.", ""]
    out += ["| lab | points |", "| --- | --- |"]
    for lab in results.labs:
        r = entry.labs[lab]
        out.append(f"| {lab} | {r.score:g} / {r.possible:g} |")
    out += [f"| total | {entry.score:g} |", ""]
    for lab in results.labs:
        head, items = _lab_lines(lab, entry.labs[lab])
        out += [f"## {head}", ""]
        if not items:
            out += ["Every test passed.", ""]
        for title, _, message, _ in items:
            out += [f"### {title}", ""]
            if message:
                out += [*code_block(message), ""]
    return "\n".join(out)


def feedback_html(student: str, entry: StudentResult, results: ClassResults) -> str:
    """The same as a page, made of make check's report page's parts (a picture of the map of wrong
    elements where a message has one)."""
    labs = []
    for lab in results.labs:
        r = entry.labs[lab]
        head, items = _lab_lines(lab, r)
        labs.append(
            pages.FeedbackLab(
                name=lab,
                head=head,
                points=f"{r.score:g} / {r.possible:g}",
                full=r.full_marks,
                items=[
                    pages.FeedbackItem(title, status, message.rstrip(), wrong_map)
                    for title, status, message, wrong_map in items
                ],
            )
        )
    return pages.render_feedback(
        student=student,
        backend=results.backend,
        graded_at=results.graded_at,
        labs=labs,
        total=f"{entry.score:g}",
    )


def write_feedback(folder: Path, results: ClassResults) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for student, entry in results.students.items():
        (folder / f"{student}.md").write_text(feedback_markdown(student, entry, results), encoding="utf-8")
        (folder / f"{student}.html").write_text(feedback_html(student, entry, results), encoding="utf-8")


def write_class_page(path: Path, results: ClassResults, figures: list[Path]) -> Path:
    """The instructor's page: points per student and lab, linked to each feedback page, and the
    plots (`figures`, beside it)."""
    rows = []
    for student, entry in sorted(results.students.items()):
        cells = []
        for lab in results.labs:
            r = entry.labs[lab]
            points = f"{r.score:g}" if r.status == LabStatus.GRADED else f"{r.score:g} ({r.status.value})"
            cells.append(pages.ClassCell(points=points, full=r.full_marks))
        feedback = quote(f"feedback/{student}.html")
        rows.append(pages.ClassRow(student, feedback, cells, f"{entry.score:g}"))
    html = pages.render_class(
        backend=results.backend,
        graded_at=results.graded_at,
        labs=results.labs,
        students=rows,
        figures=[
            pages.Figure(f.stem.replace("_", " "), f.relative_to(path.parent).as_posix()) for f in figures
        ],
    )
    return pages.write(path, html)


def gradescope(entry: StudentResult, results: ClassResults) -> dict:
    """Gradescope's autograder results format for one submission."""
    tests = []
    for lab in results.labs:
        r = entry.labs[lab]
        if r.status != LabStatus.GRADED:
            tests.append(
                {
                    "name": lab,
                    "score": 0,
                    "max_score": r.possible,
                    "status": "failed",
                    "output": without_escapes(r.message),
                }
            )
            continue
        for test, t in r.tests.items():
            if t.verdict == TestVerdict.SKIPPED:
                continue
            tests.append(
                {
                    "name": f"{lab}/{test}",
                    "score": t.points * (1.0 - r.penalty),
                    "max_score": t.possible,
                    "status": "passed" if t.verdict == TestVerdict.PASSED else "failed",
                    "output": without_escapes(t.message),
                }
            )
    return {"score": entry.score, "tests": tests, "output": f"Graded on the {results.backend} backend."}


def summary(results: ClassResults) -> str:
    rows = [["student", *(lab[:2] for lab in results.labs), "total"]]
    marks = {
        LabStatus.BUILD_ERROR: " (build error)",
        LabStatus.REJECTED: " (refused)",
        LabStatus.MISSING: " (missing)",
    }
    for student, entry in sorted(results.students.items()):
        labs = [entry.labs[lab] for lab in results.labs]
        cells = [f"{r.score:g}/{r.possible:g}{marks.get(r.status, '')}" for r in labs]
        rows.append([student, *cells, f"{entry.score:g}"])
    widths = [max(_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c + " " * (w - _width(c)) for c, w in zip(r, widths, strict=True)) for r in rows
    )


def runner_reported(results: ClassResults) -> str:
    """The points earned whose verdict took a fact from the runner (TestResult.runner_reported),
    in one line for the instructor; empty when there are none."""
    earned = reported = 0.0
    by_fact: dict[str, float] = {}
    for entry in results.students.values():
        for lab in entry.labs.values():
            for test in lab.tests.values():
                earned += test.points
                if test.points and test.runner_reported:
                    reported += test.points
                    for fact in test.runner_reported:
                        by_fact[fact] = by_fact.get(fact, 0.0) + test.points
    if not reported:
        return ""
    facts = ", ".join(f"{fact.replace('_', ' ')} {points:g}" for fact, points in sorted(by_fact.items()))
    return (
        f"{reported:g} of the {earned:g} points earned rest on facts that only the runner, which holds "
        f"the student's code, reported ({facts}; per test in results.json, runner_reported): "
        'docs/instructor-guide.md, "Untrusted code"'
    )


def _width(text: str) -> int:
    """Columns `text` takes in a terminal: Chinese, Japanese and Korean characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
