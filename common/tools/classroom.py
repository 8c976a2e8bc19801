#!/usr/bin/env python3
"""GitHub Classroom's autograding results from `make check REPORT=junit`.

    classroom.py BUILD_DIR    prints result=<base64 JSON> for $GITHUB_OUTPUT

The JSON is what classroom-resources/autograding-grading-reporter reads from the environment
variable <RUNNER>_RESULTS: a version, a status, the maximum score, and one entry per test.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path


def results(points_file: Path) -> dict:
    labs = json.loads(points_file.read_text())
    tests = []
    for lab, r in labs.items():
        if r["build_error"]:
            possible = sum(r["points"].values())
            tests.append(
                {
                    "name": f"{lab} (build)",
                    "status": "error",
                    "score": 0,
                    "max_score": possible,
                    "message": r["build_error"][-2000:],
                }
            )
            continue
        for test in r["passed"] + r["failed"]:
            ok = test in r["passed"]
            tests.append(
                {
                    "name": f"{lab}/{test}",
                    "status": "pass" if ok else "fail",
                    "score": r["points"].get(test, 0) if ok else 0,
                    "max_score": r["points"].get(test, 0),
                    "message": "" if ok else r["messages"].get(test, "")[-2000:],
                }
            )
    failed = any(t["status"] != "pass" for t in tests)
    return {
        "version": 1,
        "status": "fail" if failed else "pass",
        "max_score": sum(t["max_score"] for t in tests),
        "tests": tests,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    points = Path(argv[1]) / "check-points.json"
    if not points.exists():
        print(f"classroom: error: {points} is missing: run `make check REPORT=junit` first", file=sys.stderr)
        return 1
    data = json.dumps(results(points)).encode()
    print("result=" + base64.b64encode(data).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
