"""Figures for the instructor: how the class scored per lab, and how often each test passed."""

from __future__ import annotations

from pathlib import Path

from .results import ClassResults, TestVerdict


def write(folder: Path, results: ClassResults) -> list[Path]:
    """Writes the figures; returns their paths (none when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    labs, students = results.labs, results.students
    made = []

    fig, axes = plt.subplots(1, len(labs), figsize=(3.2 * len(labs), 3), squeeze=False)
    for ax, lab in zip(axes[0], labs, strict=True):
        scores = [s.labs[lab].score for s in students.values()]
        possible = max((s.labs[lab].possible for s in students.values()), default=0)
        ax.hist(scores, bins=10, range=(0, max(possible, 1)), color="#4477aa")
        ax.set_title(lab, fontsize=9)
        ax.set_xlabel("points")
    axes[0][0].set_ylabel("students")
    fig.tight_layout()
    made.append(folder / "score_distribution.png")
    fig.savefig(made[-1], dpi=100)
    plt.close(fig)

    names, rates = [], []
    for lab in labs:
        tests: dict[str, list[bool]] = {}
        for s in students.values():
            for test, t in s.labs[lab].tests.items():
                if t.verdict != TestVerdict.SKIPPED:
                    tests.setdefault(test, []).append(t.verdict == TestVerdict.PASSED)
        for test, passes in tests.items():
            names.append(f"{lab[:2]} {test}")
            rates.append(100.0 * sum(passes) / len(passes))
    if names:
        fig, ax = plt.subplots(figsize=(7, 0.22 * len(names) + 1))
        ax.barh(names, rates, color="#228833")
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("students who pass (%)")
        ax.tick_params(axis="y", labelsize=7)
        fig.tight_layout()
        made.append(folder / "pass_rate_per_test.png")
        fig.savefig(made[-1], dpi=100)
        plt.close(fig)

    # Timing tests (GPU grading): each student's measured ratio against the one needed.
    ratios: dict[str, dict[str, float]] = {}
    for student, s in sorted(students.items()):
        for lab in labs:
            for test, t in s.labs[lab].tests.items():
                if t.ratio is not None and t.needed:
                    ratios.setdefault(f"{lab[:2]} {test}", {})[student] = t.ratio / t.needed
    if ratios:
        fig, axes = plt.subplots(len(ratios), 1, figsize=(7, 2.2 * len(ratios)), squeeze=False)
        for ax, (test, per_student) in zip(axes[:, 0], ratios.items(), strict=True):
            names = list(per_student)
            values = [per_student[n] for n in names]
            ax.bar(names, values, color=["#228833" if v >= 1 else "#cc3311" for v in values])
            ax.axhline(1.0, color="grey", linestyle="--")
            ax.set_title(test, fontsize=9)
            ax.set_ylabel("ratio / needed")
            ax.tick_params(axis="x", labelrotation=45, labelsize=7)
        fig.tight_layout()
        made.append(folder / "performance_ratios.png")
        fig.savefig(made[-1], dpi=100)
        plt.close(fig)
    return made
