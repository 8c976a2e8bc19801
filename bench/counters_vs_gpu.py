#!/usr/bin/env python3
"""The emu's memory counters beside a GPU's, for the launches of bench_counters: the emu's report
(`CUDALAB_REPORT=1 bench_counters 2> EMU.txt` on emu) against Nsight Compute's counts of the same
launches on a GPU (`ncu --csv --metrics $(counters_vs_gpu.py --metrics) bench_counters > GPU.csv`).
Writes the comparison as JSON (which `make plots` draws when it lies beside the bench JSON) and
prints it as a table.

Usage: counters_vs_gpu.py EMU.txt GPU.csv OUT.json
       counters_vs_gpu.py --metrics
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

# What each tool calls the same count: requests are warp-wide accesses, units are 32-byte sectors
# (global) or wavefronts (shared).
NCU = {
    ("global load", "requests"): "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    ("global load", "units"): "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ("global store", "requests"): "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    ("global store", "units"): "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ("shared load", "requests"): "sm__sass_inst_executed_op_shared_ld.sum",
    ("shared load", "units"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ("shared store", "requests"): "sm__sass_inst_executed_op_shared_st.sum",
    ("shared store", "units"): "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}
KERNEL = re.compile(r"^kernel (\S+), \d+ launch", re.M)
LINE = re.compile(r"^\s+\S+:\d+\s+((?:global|shared) (?:load|store))\s+(\d+)\s+(\d+)\s", re.M)
NAME = re.compile(r"(\w+(?:<[^<>()]*>)?)\(")  # "void ns::tiledMatMul<16>(const float *, ...)"


def emu_counts(report: str) -> dict[str, dict[str, int]]:
    """Per kernel, "global load requests" and so on, summed over its lines."""
    counts: dict[str, dict[str, int]] = {}
    heads = list(KERNEL.finditer(report))
    for head, after in zip(heads, heads[1:] + [None], strict=True):
        body = report[head.end() : after.start() if after else len(report)]
        totals: dict[str, int] = defaultdict(int)
        for access, requests, units in LINE.findall(body):
            totals[f"{access} requests"] += int(requests)
            totals[f"{access} units"] += int(units)
        counts[head[1]] = dict(totals)
    return counts


def gpu_counts(table: str) -> dict[str, dict[str, int]]:
    """The same from Nsight Compute's CSV (one row per launch and metric)."""
    by_metric = {metric: f"{access} {kind}" for (access, kind), metric in NCU.items()}
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    rows = csv.DictReader(line for line in table.splitlines() if line.startswith('"'))
    for row in rows:
        name = NAME.findall(row["Kernel Name"])
        if row["Metric Name"] in by_metric and name:
            counts[name[0]][by_metric[row["Metric Name"]]] = int(float(row["Metric Value"].replace(",", "")))
    return dict(counts)


def main(argv: list[str]) -> int:
    if argv[1:] == ["--metrics"]:
        print(",".join(NCU.values()))
        return 0
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    emu = emu_counts(Path(argv[1]).read_text(errors="replace"))
    gpu = gpu_counts(Path(argv[2]).read_text(errors="replace"))
    kernels = {k: {"emu": emu[k], "gpu": gpu[k]} for k in sorted(emu) if k in gpu}
    if not kernels:
        print("counters_vs_gpu: error: no kernel is in both inputs", file=sys.stderr)
        return 1
    Path(argv[3]).write_text(json.dumps({"kernels": kernels}, indent=2) + "\n")
    print(f"{'kernel':20} {'count':30} {'emu':>10} {'GPU':>10}")
    for kernel, both in kernels.items():
        for count in sorted(set(both["emu"]) | set(both["gpu"])):
            e, g = both["emu"].get(count, 0), both["gpu"].get(count, 0)
            print(f"{kernel:20} {count:30} {e:>10} {g:>10}{'' if e == g else '   differ'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
