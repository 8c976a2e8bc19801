"""The pages that draw what the tests say. `make check`'s report page
(build/<backend>/report/index.html): per lab its tests and points and each failed test with its
message; where its records map the wrong elements of an output (compare.h), a picture of that
map; on emu, the student's source with what the counters measured beside each line, the lines that
waste traffic highlighted (as Nsight Compute's source view shows a kernel). `cudalab run
--report`'s page, and the grader's feedback page per student and class page, are made of the same
parts (report_parts.html.j2).

A page is one file that opens from the file system: pictures are PNGs drawn by matplotlib and
embedded as data, the style is inline, and Jinja2 writes the HTML with every message escaped.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from .lab_result import LabResult
from .records import LineCounters, LineEvent, Record, Roofline, WrongMap, typed, wrong_maps

TEMPLATE = Path(__file__).with_name("report.html.j2")


@dataclass
class SourceLine:
    number: int
    text: str
    counters: list[LineCounters] = field(default_factory=list)
    events: list[LineEvent] = field(default_factory=list)
    hot: bool = False  # among the lines that made the most requests of the file

    @property
    def wasteful(self) -> bool:
        return any(c.wasteful for c in self.counters)

    @property
    def requests(self) -> int:
        return sum(c.requests for c in self.counters)


@dataclass
class SourceView:
    name: str
    lines: list[SourceLine]


def _pyplot():  # noqa: ANN202 (matplotlib.pyplot, or None)
    """matplotlib's pyplot, drawing to files; None where matplotlib is not installed (the pages then
    go without pictures, as the grader's plots do)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _data_uri(plt, fig) -> str:  # noqa: ANN001
    """The figure as a PNG data URI (the page holds its pictures)."""
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def map_picture(m: WrongMap) -> str | None:
    """The map as a PNG data URI: right elements light, wrong ones red, never written grey."""
    plt = _pyplot()
    if plt is None:
        return None
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    value = {".": 0, "X": 1, "o": 2}
    colours = ["#e8f3e8", "#d62728", "#7f7f7f"]
    grid = [[value[c] for c in row] for row in m.cells]
    width = len(m.cells[0])
    fig, ax = plt.subplots(figsize=(min(9.0, 1.5 + width * 0.16), 1.2 + len(grid) * 0.16), dpi=100)
    ax.imshow(grid, cmap=ListedColormap(colours), vmin=0, vmax=2, aspect="auto", interpolation="nearest")
    ax.set_xticks([0, width - 1], ["0", str(m.cols - 1)])
    if m.rows == 1:  # a 1D output
        ax.set_yticks([])
        ax.set_xlabel("element")
    else:
        ax.set_yticks([0, len(grid) - 1], ["0", str(m.rows - 1)])
        ax.set_xlabel("column")
        ax.set_ylabel("row")
    labels = ["right", "wrong", "never written"]
    ax.legend(
        handles=[Patch(color=c, label=t) for c, t in zip(colours, labels, strict=True)],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
    )
    return _data_uri(plt, fig)


def line_counters(records: list[Record]) -> dict[tuple[str, int], list[LineCounters]]:
    """The counters of the records, by (file name, line). A line counted in several kernels or runs
    keeps, per kind of access, the entry with the most requests."""
    found: dict[tuple[str, int], dict[str, LineCounters]] = {}
    for c in records:
        if isinstance(c, LineCounters):
            at = found.setdefault((c.at.file, c.at.line), {})
            if c.access not in at or at[c.access].requests < c.requests:
                at[c.access] = c
    return {key: list(by_access.values()) for key, by_access in found.items()}


def line_events(records: list[Record]) -> dict[tuple[str, int], list[LineEvent]]:
    """The barrier passes and atomic operations of the records, by (file name, line)."""
    found: dict[tuple[str, int], list[LineEvent]] = {}
    for e in records:
        if isinstance(e, LineEvent):
            found.setdefault((e.at.file, e.at.line), []).append(e)
    return found


def source_views(records: list[Record], folders: list[Path]) -> list[SourceView]:
    """Each file of `folders` that the counters name (the first found), every line with its
    counters, barrier passes and atomics."""
    counters, events = line_counters(records), line_events(records)
    views = []
    for name in sorted({file for file, _ in [*counters, *events]}):
        path = next((f / name for f in folders if (f / name).is_file()), None)
        if path is None:
            continue
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        lines = [
            SourceLine(i, t, counters.get((name, i), []), events.get((name, i), []))
            for i, t in enumerate(text, start=1)
        ]
        most = max(line.requests for line in lines) if lines else 0
        for line in lines:
            line.hot = most > 0 and line.requests * 2 >= most
        views.append(SourceView(name, lines))
    return views


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE.parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def picture_of(found: list[dict]) -> str | None:
    """The picture of the first map of wrong elements among a test's records, if there is one (and
    matplotlib is installed: without it the text map has to do)."""
    maps = wrong_maps(found)
    return map_picture(maps[0]) if maps else None


def counted_work(found: list[Record]) -> dict[str, tuple[float, int]]:
    """The counting tests' kernels that declared their FLOPs: name -> (FLOPs, sectors moved); a
    kernel that moved nothing (a skeleton's) is left out."""
    return {r.name: (r.flops, r.sectors) for r in found if isinstance(r, Roofline) and r.sectors > 0}


def lab_roofline(
    lab: str, reference: dict, own: dict | None, counted: dict[str, tuple[float, int]]
) -> str | None:
    """A PNG data URI: the lab's reference kernels as `reference` (make bench's JSON of a GPU run
    the workbook ships) measured them under that GPU's roofs; the student's kernels where `own`
    (make bench SOURCE=labs on a GPU) timed them, under that GPU's roofs, and where the emu's
    counting tests counted them (`counted`: name -> FLOPs, sectors), on the reference GPU's roof."""
    from . import roofline

    labs = {lab[:2]}
    points = roofline.points_of(reference, labs)
    roofs = [roofline.roofs_of(reference, reference["device"] + " (reference kernels)")]
    points += [roofline.counted_point(name, f, s, roofs[0]) for name, (f, s) in counted.items()]
    if own:
        points += roofline.points_of(own, labs, mine=True)
        roofs.append(roofline.roofs_of(own, own["device"] + " (yours)"))
    plt = _pyplot()
    if not points or plt is None:
        return None
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=100)
    roofline.draw(ax, roofs, points)
    return _data_uri(plt, fig)


def render(
    results: list[LabResult],
    *,
    backend: str,
    counted: dict[str, list[dict]],
    lab_folders: dict[str, Path],
    references: tuple[dict, ...] | list[dict] = (),
    own: dict | None = None,
) -> str:
    """make check's page. `counted`: per lab, the records of its counting tests on emu;
    `references` and `own`: make bench's JSON of the shipped GPU runs and of the student's code."""
    labs = []
    for r in results:
        failures = []
        for test in r.failed:
            message = r.messages.get(test, "")
            failures.append(
                {
                    "test": test,
                    "points": r.points.get(test, 0.0),
                    "message": message,
                    "picture": picture_of(r.records.get(test, [])),
                }
            )
        found = typed(counted.get(r.lab, []))
        sources = source_views(found, [lab_folders[r.lab]])
        labs.append(
            {
                "result": r,
                "failures": failures,
                "sources": sources,
                "rooflines": [
                    p for p in (lab_roofline(r.lab, ref, own, counted_work(found)) for ref in references) if p
                ],
            }
        )
    earned = sum(r.earned() for r in results)
    possible = sum(r.possible() for r in results)
    page = _environment().get_template(TEMPLATE.name)
    return page.render(backend=backend, labs=labs, earned=earned, possible=possible)


@dataclass(frozen=True)
class FeedbackItem:
    """A failed or skipped test, or why a lab was not graded, on a student's feedback page."""

    title: str
    status: str  # "failed", "skipped", or a lab's status ("build error" ...)
    message: str
    wrong_map: WrongMap | None = None  # of the test's output, where the checker drew one

    @property
    def picture(self) -> str | None:
        return map_picture(self.wrong_map) if self.wrong_map else None


@dataclass(frozen=True)
class FeedbackLab:
    name: str
    head: str  # "01_vector_add: 14 of 17 points"
    points: str  # "14 / 17"
    full: bool
    items: list[FeedbackItem]


def render_feedback(
    *, student: str, backend: str, graded_at: str, labs: list[FeedbackLab], total: str
) -> str:
    """The grader's page for one student (feedback/<student>.html)."""
    page = _environment().get_template("feedback.html.j2")
    return page.render(student=student, backend=backend, graded_at=graded_at, labs=labs, total=total)


@dataclass(frozen=True)
class ClassCell:
    points: str  # "14", or "0 (missing)": why a lab was not graded
    full: bool


@dataclass(frozen=True)
class ClassRow:
    name: str
    feedback: str  # the student's feedback page, relative to the class page
    cells: list[ClassCell]
    total: str


@dataclass(frozen=True)
class Figure:
    title: str
    path: str  # relative to the class page


def render_class(
    *, backend: str, graded_at: str, labs: list[str], students: list[ClassRow], figures: list[Figure]
) -> str:
    """The grader's class page (class.html): every student's points per lab, each linking to the
    student's feedback page, and the class's plots."""
    page = _environment().get_template("class.html.j2")
    return page.render(backend=backend, graded_at=graded_at, labs=labs, students=students, figures=figures)


def render_run(*, program: str, status: int, stopped: str, found: list[dict], folders: list[Path]) -> str:
    """`cudalab run --report`'s page: how the program ended, the check that stopped a kernel (if
    one did), and its sources with their memory traffic per line (`found`: the run's records)."""
    page = _environment().get_template("run.html.j2")
    sources = source_views(typed(found), folders)
    return page.render(program=program, status=status, stopped=stopped, sources=sources)


def write(path: Path, html: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
