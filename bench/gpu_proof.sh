#!/usr/bin/env bash
# The cuda backend on a real GPU, in one run: build, make check on the skeleton and on the
# solution, make test, compute-sanitizer on lab 01 (clean and with a planted bug), make bench.
# Logs go to $OUT (default: build/gpu-proof). Used for docs/benchmarks.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-proof}
mkdir -p "$OUT"
log() { printf '\n######## %s\n' "$*"; }

{
  log "machine"
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  nvcc --version | tail -2
  cmake --version | head -1

  log "make check, no BACKEND given: must choose cuda; untouched skeleton: must fail"
  make check; echo "exit status: $?"

  log "make test BACKEND=cuda (solutions pass, skeletons fail, runtime conformance)"
  make test BACKEND=cuda; echo "exit status: $?"

  log "make check BACKEND=cuda with the solution copied into labs/"
  rm -rf /tmp/solved && mkdir /tmp/solved && cp -r CMakeLists.txt Makefile cmake common labs bench /tmp/solved/
  for lab in solutions/*/; do cp "$lab"*.cu "/tmp/solved/labs/$(basename "$lab")/"; done
  make -C /tmp/solved check BACKEND=cuda; echo "exit status: $?"

  for lab in build/cuda/labs/*-solutions; do
    log "compute-sanitizer memcheck, $(basename "$lab")"
    compute-sanitizer --tool memcheck --leak-check full "$lab" --gtest_brief=1 2>&1 | tail -4
    echo "exit status: $?"
  done
  for lab in build/cuda/labs/0[45]_*-solutions; do
    log "compute-sanitizer racecheck and synccheck, $(basename "$lab")"
    compute-sanitizer --tool racecheck "$lab" --gtest_brief=1 2>&1 | tail -3
    compute-sanitizer --tool synccheck "$lab" --gtest_brief=1 2>&1 | tail -3
  done

  log "compute-sanitizer memcheck, lab 01 with a planted bug (no bounds check)"
  sed 's/if (i < n) C\[i\]/C[i]/' solutions/01_vector_add/vector_add.cu > /tmp/solved/labs/01_vector_add/vector_add.cu
  grep -n "C\[i\] = A" /tmp/solved/labs/01_vector_add/vector_add.cu
  cmake --build /tmp/solved/build/cuda --target 01_vector_add-labs -j > /dev/null
  compute-sanitizer --tool memcheck /tmp/solved/build/cuda/labs/01_vector_add-labs \
    --gtest_filter='VectorAdd.Size257' 2>&1 | head -40; echo "exit status: $?"

  log "compute-sanitizer racecheck and synccheck, runtime tests (barriers, shared memory)"
  compute-sanitizer --tool racecheck build/cuda/common/tests/test_runtime --gtest_brief=1; echo "exit status: $?"
  compute-sanitizer --tool synccheck build/cuda/common/tests/test_runtime --gtest_brief=1; echo "exit status: $?"

  log "make bench BACKEND=cuda"
  make bench BACKEND=cuda; echo "exit status: $?"
} 2>&1 | tee "$OUT/gpu-proof.log"
