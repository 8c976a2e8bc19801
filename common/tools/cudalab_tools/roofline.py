"""The roofline of `make bench`'s kernels, drawn once for `make plots` (every lab's kernels on the
run's own ceilings) and for `make check`'s page (a lab's reference kernels as measured on the
course's GPUs, beside the student's own: timed where `make bench SOURCE=labs` ran on a GPU, counted
where the counting tests ran on emu).

A kernel's point: its least operations per least bytes moved (make bench's count of the work,
`flops` and `bytes` in its JSON) against the rate it attained, at its largest size. A roof: a
device's copy bandwidth (sloped) up to its cuBLAS SGEMM rate (flat). A kernel counted on emu has
no time: its intensity is the operations of its formula per byte of the sectors its loads and
stores moved, and it is drawn on the roof at that intensity (the rate its traffic allows if every
sector came from DRAM; caches let a kernel that rereads beat it), with a dotted line down.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Roofs:
    name: str
    bandwidth: float  # GB/s: GFLOP/s per FLOP/byte
    compute: float | None  # GFLOP/s (cuBLAS SGEMM); None: not measured

    def attainable(self, intensity: float) -> float:
        """The most GFLOP/s at an intensity: under the sloped roof, and the flat one if known."""
        sloped = self.bandwidth * intensity
        return min(sloped, self.compute) if self.compute else sloped


@dataclass(frozen=True)
class Point:
    label: str
    intensity: float  # FLOP per byte
    gflops: float
    mine: bool = False  # the student's kernel (drawn hollow)
    counted: bool = False  # counted on emu: at its intensity on the roof, not timed


def roofs_of(bench: dict, name: str) -> Roofs:
    sgemm = [r["value"] for r in bench["results"] if r["kernel"] == "cuBLAS SGEMM"]
    return Roofs(name, bench["copy_gbps"], max(sgemm) if sgemm else None)


def points_of(bench: dict, labs: set[str], mine: bool = False) -> list[Point]:
    """Each kernel of `labs` at its largest size, where make bench counted its work."""
    largest: dict[tuple[str, str], dict] = {}
    for r in bench["results"]:
        key = (r["lab"], r["kernel"])
        if r["lab"] in labs and r.get("flops", 0) > 0 and r.get("bytes", 0) > 0:
            if key not in largest or largest[key]["n"] < r["n"]:
                largest[key] = r
    return [
        Point(f"{lab} {kernel}", r["flops"] / r["bytes"], r["flops"] / r["ms"] / 1e6, mine)
        for (lab, kernel), r in sorted(largest.items())
    ]


def counted_point(label: str, flops: float, sectors: int, roofs: Roofs) -> Point:
    """A kernel counted on emu (a counting test's [ ROOFLINE ] line), on `roofs` at its intensity."""
    intensity = flops / (32.0 * sectors)
    return Point(label, intensity, roofs.attainable(intensity), mine=True, counted=True)


def draw(ax, roofs: list[Roofs], points: list[Point]) -> None:  # noqa: ANN001 (a matplotlib Axes)
    """The roofs and the points on log-log axes, the ridges in view."""
    tops = [r.compute or max(p.gflops for p in points) for r in roofs]
    ridges = [top / r.bandwidth for top, r in zip(tops, roofs, strict=True)]
    lo = min([p.intensity / 2 for p in points] + [ridge / 4 for ridge in ridges])
    hi = max([p.intensity * 2 for p in points] + [ridge * 4 for ridge in ridges])
    for i, (r, top, ridge) in enumerate(zip(roofs, tops, ridges, strict=True)):
        label = f"{r.name}: copy {r.bandwidth:.0f} GB/s" + (
            f", SGEMM {r.compute / 1e3:.1f} TFLOP/s" if r.compute else ""
        )
        ax.plot([lo, ridge, hi], [r.bandwidth * lo, top, top], "k-" if i == 0 else "k--", lw=1.3, label=label)
    markers = "os^Dv<>px*"
    floor = min(p.gflops for p in points) / 4
    for i, p in enumerate(points):
        colour = f"C{i % 10}"
        look = {"facecolors": "none", "edgecolors": colour} if p.mine else {"color": colour}
        label = p.label + (" (yours, emu: if no cache helped)" if p.counted else " (yours)" if p.mine else "")
        ax.scatter(
            p.intensity, p.gflops, marker=markers[i % len(markers)], s=40, zorder=3, label=label, **look
        )
        if p.counted:
            ax.plot([p.intensity, p.intensity], [floor, p.gflops], ":", color=colour, lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    moved = "\n(timed: least bytes that must move; emu: bytes of the sectors moved)"
    ax.set_xlabel("arithmetic intensity, FLOP per byte" + (moved if any(p.counted for p in points) else ""))
    ax.set_ylabel("GFLOP/s")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
