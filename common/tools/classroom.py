#!/usr/bin/env python3
"""GitHub Classroom's autograding results from `make check REPORT=junit`.

    classroom.py BUILD_DIR    prints result=<base64 JSON> for $GITHUB_OUTPUT

The JSON is what classroom-resources/autograding-grading-reporter reads from the environment
variable <RUNNER>_RESULTS: a version, a status, the maximum score, and one entry per test with its
points. Linux holds one environment variable to 128 KiB (MAX_ARG_STRLEN): the failed tests'
messages are cut, keeping their ends, until the result is within MAX_RESULT_BYTES.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

MAX_RESULT_BYTES = 64 << 10  # the result in base64: half of what Linux allows one variable
MESSAGE_BYTES = 2000  # the end of a failed test's message, at most


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
                    "message": r["build_error"][-MESSAGE_BYTES:],
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
                    "message": "" if ok else r["messages"].get(test, "")[-MESSAGE_BYTES:],
                }
            )
    failed = any(t["status"] != "pass" for t in tests)
    return within_limit(
        {
            "version": 1,
            "status": "fail" if failed else "pass",
            "max_score": sum(t["max_score"] for t in tests),
            "tests": tests,
        }
    )


def encoded(result: dict) -> str:
    return base64.b64encode(json.dumps(result).encode()).decode()


def within_limit(result: dict) -> dict:
    """`result` with its messages cut to their last half, again and again, until it fits."""
    keep = MESSAGE_BYTES
    while len(encoded(result)) > MAX_RESULT_BYTES and keep > 0:
        keep //= 2
        for test in result["tests"]:
            if len(test["message"]) > keep:
                test["message"] = "[...] " + test["message"][-keep:] if keep else ""
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    points = Path(argv[1]) / "check-points.json"
    if not points.exists():
        print(f"classroom: error: {points} is missing: run `make check REPORT=junit` first", file=sys.stderr)
        return 1
    print("result=" + encoded(results(points)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
