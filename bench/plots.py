#!/usr/bin/env python3
"""Figures of a `make bench` run (its JSON): one per lab (rate against size, per kernel), the
fraction of the measured ceiling each kernel reaches, the bank-conflict curve, and the matrix
products side by side.

Usage: plots.py BENCH.json OUT_FOLDER
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LAB_NAMES = {
    "01": "vector add",
    "02": "RGB to grey",
    "03": "matmul variants",
    "04": "tiled matmul",
    "05": "2D convolution",
    "06": "SpMV",
    "07": "averaging filter",
    "08": "transpose",
    "09": "Jacobi sweep",
}


def save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plots: error: cannot read {path}: {e} (run make bench first)")
    if "results" not in data:
        sys.exit(f"plots: error: {path} has no results")
    return data


def per_lab(data: dict, out: Path, title: str) -> list[Path]:
    by_lab: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in data["results"]:
        if r["lab"] in LAB_NAMES and r["unit"] in ("GB/s", "GB/s eff.", "GFLOP/s"):
            by_lab[r["lab"]][r["kernel"]].append(r)
    made = []
    for lab, kernels in sorted(by_lab.items()):
        fig, ax = plt.subplots(figsize=(6.4, 4))
        unit = ""
        for kernel, rows in kernels.items():
            rows.sort(key=lambda r: r["n"])
            unit = rows[0]["unit"]
            ax.plot([r["n"] for r in rows], [r["value"] for r in rows], marker="o", label=kernel)
        if unit == "GB/s" and data.get("copy_gbps"):
            ax.axhline(data["copy_gbps"], color="grey", linestyle="--", label="device copy")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("problem size (elements, rows or matrix edge)")
        ax.set_ylabel(unit)
        ax.set_title(f"lab {lab}: {LAB_NAMES[lab]}\n({title})", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        made.append(save(fig, out / f"lab{lab}.png"))
    return made


def fractions(data: dict, out: Path, title: str) -> Path:
    """Each kernel at its largest size: small problems measure launch overheads, not the kernel."""
    largest: dict[tuple[str, str], dict] = {}
    for r in data["results"]:
        if r["fraction"] > 0 and r["lab"] in LAB_NAMES:
            key = (r["lab"], r["kernel"])
            if key not in largest or r["n"] > largest[key]["n"]:
                largest[key] = r
    best = {key: r["fraction"] for key, r in largest.items()}
    labels = [f"{lab} {kernel}" for lab, kernel in best]
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(labels) + 1.5))
    ax.barh(labels, [100 * v for v in best.values()], color="tab:blue")
    ax.axvline(100, color="grey", linestyle="--")
    ax.invert_yaxis()
    ax.set_xlabel("% of the ceiling measured in the same run\n(device copy bandwidth, or cuBLAS SGEMM)")
    ax.set_title(f"fraction of the ceiling at the largest size\n({title})", fontsize=10)
    ax.tick_params(axis="y", labelsize=7)
    return save(fig, out / "ceiling_fractions.png")


def bank_conflicts(data: dict, out: Path, title: str) -> Path | None:
    rows = [r for r in data["results"] if r["kernel"].startswith("shared read, stride")]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4))
    strides = [int(r["n"]) for r in rows]
    ax.plot(range(len(rows)), [r["value"] for r in rows], marker="o")
    ax.set_xticks(
        range(len(rows)), [f"{s}\n({r['size']})" for s, r in zip(strides, rows, strict=True)], fontsize=7
    )
    ax.set_xlabel("stride in 4-byte words (bank-conflict degree)")
    ax.set_ylabel("ns per warp-wide shared read, per SM")
    ax.set_title(f"lab 08: shared-memory reads by stride\n({title})", fontsize=10)
    ax.grid(alpha=0.3)
    return save(fig, out / "lab08_strides.png")


def matmuls(data: dict, out: Path, title: str) -> Path | None:
    rows = [r for r in data["results"] if r["unit"] == "GFLOP/s"]
    if not rows:
        return None
    # The largest size at which every variant ran (lab 03's only up to 2048).
    edge = (
        max(r["n"] for r in rows if r["lab"] == "03")
        if any(r["lab"] == "03" for r in rows)
        else rows[-1]["n"]
    )
    chosen = [r for r in rows if r["n"] == edge]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.bar([r["kernel"] for r in chosen], [r["value"] for r in chosen], color="tab:orange")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"matrix products at {int(edge)}^3\n({title})", fontsize=10)
    ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    return save(fig, out / "matmuls.png")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    data = load(Path(argv[1]))
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    title = f"{data.get('device', '?')}, {data.get('backend', '?')}, {data.get('date', '?')}"
    made = per_lab(data, out, title) + [fractions(data, out, title)]
    made += [p for p in (bank_conflicts(data, out, title), matmuls(data, out, title)) if p]
    for p in made:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
