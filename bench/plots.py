#!/usr/bin/env python3
"""Figures of a `make bench` run (its JSON): one per lab (rate against size, per kernel), the
fraction of the measured ceiling each kernel reaches, the bank-conflict curve, the matrix
products side by side, and the roofline of every kernel at its largest size (the run's own
ceilings: the copy bandwidth and cuBLAS SGEMM). Given the JSON of counters_vs_gpu.py too, the
emu's memory counters beside the GPU's.

Usage: PYTHONPATH=common/tools plots.py BENCH.json OUT_FOLDER [COUNTERS_VS_GPU.json]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from cudalab_tools import roofline as roofline_of  # noqa: E402 (PYTHONPATH=common/tools)

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


def roofline(data: dict, out: Path, title: str) -> Path | None:
    """Each lab kernel at its largest size under the roofs the same run measured
    (cudalab_tools/roofline.py)."""
    points = roofline_of.points_of(data, set(LAB_NAMES))
    if not points:
        return None  # a run from before make bench counted the work
    fig, ax = plt.subplots(figsize=(10, 5))
    roofline_of.draw(ax, [roofline_of.roofs_of(data, data.get("device", "this device"))], points)
    ax.set_title(f"roofline of the labs' kernels, largest sizes\n({title})", fontsize=10)
    return save(fig, out / "roofline.png")


def counters(path: Path, out: Path) -> Path:
    """Per launch of bench_counters, the sectors (global) and wavefronts (shared) per load request
    as the emu counted them and as Nsight Compute counted them on the GPU."""
    kernels = json.loads(path.read_text())["kernels"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, access, unit in ((axes[0], "global load", "sectors"), (axes[1], "shared load", "wavefronts")):
        names = [k for k, both in kernels.items() if both["emu"].get(f"{access} requests")]
        width = 0.4
        for shift, tool, colour in ((-width / 2, "emu", "tab:blue"), (width / 2, "gpu", "tab:orange")):
            per_request = [
                kernels[k][tool].get(f"{access} units", 0)
                / max(kernels[k][tool].get(f"{access} requests", 0), 1)
                for k in names
            ]
            ax.bar(
                [i + shift for i in range(len(names))], per_request, width, label=tool.upper(), color=colour
            )
        ax.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=7)
        ax.set_ylabel(f"{unit} per request")
        ax.set_title(f"{access}s")
        ax.legend(fontsize=8)
    fig.suptitle("the emu's memory counters against Nsight Compute's, same launches", fontsize=10)
    return save(fig, out / "counters_vs_gpu.png")


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    data = load(Path(argv[1]))
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    title = f"{data.get('device', '?')}, {data.get('backend', '?')}, {data.get('date', '?')}"
    made = per_lab(data, out, title) + [fractions(data, out, title)]
    made += [
        p
        for p in (bank_conflicts(data, out, title), matmuls(data, out, title), roofline(data, out, title))
        if p
    ]
    if len(argv) == 4:
        made.append(counters(Path(argv[3]), out))
    for p in made:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
