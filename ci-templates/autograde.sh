#!/usr/bin/env bash
# What a course's CI runs on a student's push (the templates beside this call it):
#   ci-templates/autograde.sh [emu|cuda] [LAB]
# Runs make check (of LAB: one assignment's lab, 03 or 03_matmul_variants; else every lab) with
# JUnit XML and a points summary, writes GitHub Classroom's result to $GITHUB_OUTPUT when there is
# one, and exits with make check's status.
set -uo pipefail
cd "$(dirname "$0")/.."
backend=${1:-emu}
lab=${2:-}
make check BACKEND="$backend" LAB="$lab" REPORT=junit
status=$?
python3 common/tools/classroom.py "build/$backend" > "build/$backend/classroom-result.txt" || exit 1
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  cat "build/$backend/classroom-result.txt" >> "$GITHUB_OUTPUT"
fi
exit $status
