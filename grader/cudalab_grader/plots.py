"""Figures for the instructor: how the class scored per lab, and how often each test passed."""

from __future__ import annotations

from pathlib import Path

from .report import lab_score


def write(folder: Path, results: dict) -> list[Path]:
    """Writes the figures; returns their paths (none when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    labs, students = results["labs"], results["students"]
    made = []

    fig, axes = plt.subplots(1, len(labs), figsize=(3.2 * len(labs), 3), squeeze=False)
    for ax, lab in zip(axes[0], labs, strict=True):
        scores = [lab_score(s["labs"][lab]) for s in students.values()]
        possible = max((s["labs"][lab].get("possible", 0) for s in students.values()), default=0)
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
            for test, t in s["labs"][lab].get("tests", {}).items():
                if t["result"] != "skipped":
                    tests.setdefault(test, []).append(t["result"] == "passed")
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
    return made
