"""Grading on a Slurm cluster: a job array of one task per shard of the class, and the merge of
the shards' results into one gradebook."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from .results import ClassResults


class MergeError(Exception):
    pass


def submit(args: argparse.Namespace) -> int:
    """Writes a job array of one task per shard and submits it with sbatch. Each shard grades into
    its own folder with its own cache, so a task that failed is simply run again."""
    if shutil.which("sbatch") is None:
        print("grader: error: --slurm needs sbatch (Slurm's client) on this machine", file=sys.stderr)
        return 2
    out = args.out.resolve()
    (out / "slurm").mkdir(parents=True, exist_ok=True)
    n = args.slurm
    grade = Path(__file__).resolve().parents[1] / "grade"
    task = [
        sys.executable,
        str(grade),
        str(args.submissions.resolve()),
        "--jobs",
        str(args.jobs),
        "--test-timeout",
        str(args.test_timeout),
        "--shard",
        f"${{SLURM_ARRAY_TASK_ID}}/{n}",
        "--out",
        f"{out}/shard-${{SLURM_ARRAY_TASK_ID}}",
    ]
    if args.labs:
        task += ["--labs", args.labs]
    if args.backend:
        task += ["--backend", args.backend]
    if args.deadlines:
        task += ["--deadlines", str(args.deadlines.resolve())]
    lines = [
        "#!/bin/bash",
        "#SBATCH --job-name=cudalab-grade",
        f"#SBATCH --array=0-{n - 1}",
        f"#SBATCH --cpus-per-task={args.jobs}",
        f"#SBATCH --output={out}/slurm/shard-%a.log",
    ]
    if args.gpus_per_task:
        lines.append(f"#SBATCH --gres=gpu:{args.gpus_per_task}")
    quoted = " ".join(shlex.quote(a) if "$" not in a else f'"{a}"' for a in task)
    lines += ["set -e", f"exec {quoted}", ""]
    script = out / "slurm" / "grade.sbatch"
    script.write_text("\n".join(lines))
    cmd = ["sbatch", "--parsable"] + (["--wait"] if args.wait else []) + [str(script)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"grader: error: sbatch failed: {run.stderr.strip()}", file=sys.stderr)
        return 1
    job = run.stdout.strip().split(";")[0]
    print(f"submitted Slurm job {job}: {n} shard(s), logs in {out}/slurm/")
    print(f"when it is done: grader/grade --merge --out {args.out}")
    return 0


def merge(out: Path) -> ClassResults:
    """One set of results from the shards' results in out/shard-*/."""
    shards = sorted(out.glob("shard-*/results.json"))
    if not shards:
        raise MergeError(f"{out}: no shard-*/results.json to merge")
    parts = [(path, ClassResults.from_json(json.loads(path.read_text()))) for path in shards]
    graded = [(path, part) for path, part in parts if part.students]
    merged = dataclasses.replace(graded[0][1] if graded else parts[0][1], students={})
    for path, part in graded:
        if part.labs != merged.labs or part.backend != merged.backend:
            raise MergeError(f"{path}: graded other labs or on another backend")
        merged.students.update(part.students)
    merged.students = dict(sorted(merged.students.items()))
    print(f"merged {len(shards)} shard(s), {len(merged.students)} student(s)")
    return merged
