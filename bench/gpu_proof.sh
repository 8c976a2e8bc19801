#!/usr/bin/env bash
# The cuda backend on a real GPU. Logs go to $OUT (default: build/gpu-proof); docs/benchmarks.md
# and docs/diagnostics.md record what they showed.
#   bench/gpu_proof.sh tests        build; make test; make check on the skeletons; the
#                                   performance tests' ratios; make bench (bench.json)
#   bench/gpu_proof.sh sanitizers   compute-sanitizer on every solution and on every planted bug
#   bench/gpu_proof.sh grade        the grader on the cuda backend, all nine labs, with the sample
#                                   corpus's alice (every solution), sam (every skeleton), hana
#                                   (honest forms), bob, gary, otto, felix and sybil (raw system
#                                   calls in the runner) (grader/tests/make_corpus.py)
# The front end's libclang (.deps/python, from ./setup.sh): a machine without internet gets it from
# the PyPI wheel carried as build/wheels/libclang-*.whl, unpacked here.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -d .deps/python/clang ] && compgen -G "build/wheels/libclang-*.whl" > /dev/null; then
  wheel=$(ls build/wheels/libclang-*.whl | head -1)
  python3 -m zipfile -e "$wheel" build/wheels/unpacked
  mkdir -p .deps/python && cp -r build/wheels/unpacked/libclang-*.data/platlib/clang .deps/python/
fi
OUT=${OUT:-build/gpu-proof}
PHASE=${1:-tests}
mkdir -p "$OUT"
log() { printf '\n######## %s\n' "$*"; }

tests() {
  log "machine"
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv
  nvcc --version | tail -2
  cmake --version | head -1

  log "make test BACKEND=cuda (solutions pass, skeletons fail, runtime conformance, fast kernels)"
  make test BACKEND=cuda 2>&1 | tail -25; echo "exit status: ${PIPESTATUS[0]}"

  log "performance tests of the solutions (ratios measured in this run)"
  for lab in build/cuda/labs/*-solutions; do
    "$lab" --gtest_filter='*Performance*:*Banks*' 2>&1 | grep -E '^\[ (PERF|  FAILED|       OK|  SKIPPED) '
  done

  log "make check BACKEND=cuda on the untouched skeletons: every lab fails"
  make check BACKEND=cuda 2>&1 | tail -14; echo "exit status: ${PIPESTATUS[0]}"

  log "make bench BACKEND=cuda"
  make bench BACKEND=cuda; echo "exit status: $?"
  cp build/cuda/bench.json "$OUT/bench.json"
}

grade() {
  log "machine"
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv
  local corpus=build/gpu-corpus
  rm -rf "$corpus" build/gpu-corpus-all
  python3 grader/tests/make_corpus.py build/gpu-corpus-all > /dev/null
  mkdir -p "$corpus"
  for student in alice sam hana bob gary otto felix sybil; do cp -r "build/gpu-corpus-all/$student" "$corpus/"; done
  log "grader/grade, backend cuda, every lab"
  python3 grader/grade "$corpus" --backend cuda --jobs 4 --test-timeout 60 --out "$OUT/grading"
  echo "exit status: $?"
  log "each lab's points and the timing tests' ratios (from the checker's report)"
  python3 - "$OUT/grading/results.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
for student, entry in sorted(results["students"].items()):
    for lab, r in sorted(entry["labs"].items()):
        tests = r.get("tests", {})
        ratios = {t: (v["ratio"], v["needed"]) for t, v in tests.items() if v.get("ratio") is not None}
        failed = sorted(t for t, v in tests.items() if v["result"] == "failed")
        print(student, lab, r["status"], f"{r['earned']:g}/{r['possible']:g}", "ratios", ratios,
              "failed", failed if student in ("alice", "hana") else len(failed))
        probes = [line for v in tests.values() for line in v.get("message", "").splitlines() if "PROBE" in line]
        if probes:
            print(student, lab, "what the runner's system-call filter left of its raw calls:", probes[0])
PY
}

sanitizers() {
  [ "${BUGS_ONLY:-0}" = 1 ] || solution_sanitizers
  planted_bugs
}

solution_sanitizers() {
  for lab in build/cuda/labs/*-solutions; do
    log "compute-sanitizer memcheck, $(basename "$lab")"
    compute-sanitizer --tool memcheck --leak-check full "$lab" --gtest_brief=1 \
      --gtest_filter='-*Performance*' 2>&1 | tail -3
  done
  for lab in build/cuda/labs/0[4-9]_*-solutions; do
    log "compute-sanitizer racecheck and synccheck, $(basename "$lab")"
    compute-sanitizer --tool racecheck "$lab" --gtest_brief=1 --gtest_filter='-*Performance*' 2>&1 | tail -2
    compute-sanitizer --tool synccheck "$lab" --gtest_brief=1 --gtest_filter='-*Performance*' 2>&1 | tail -2
  done
}

planted_bugs() {
  log "planted bugs (common/tests/bugs) under compute-sanitizer: the first report of each tool"
  for bug in $(build/cuda/common/tests/run_planted_bug); do
    for tool in memcheck racecheck synccheck initcheck; do
      printf '\n--- %s, %s: ' "$bug" "$tool"
      timeout 15 compute-sanitizer --tool "$tool" build/cuda/common/tests/run_planted_bug "$bug" > /tmp/bug.log 2>&1
      status=$?
      if [ $status -eq 124 ]; then echo "still running after 15 s (killed)"; continue; fi
      grep -m1 -E '^========= (Invalid|Error|Race|Barrier|Uninitialized|Program hit|.*hazard)' /tmp/bug.log || echo "nothing reported"
      grep -m1 -E '^=========     at .*planted_bugs.cu' /tmp/bug.log
      grep -m1 -E "^$bug: " /tmp/bug.log
      grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/bug.log
    done
  done
}

"$PHASE" 2>&1 | tee "$OUT/gpu-proof-$PHASE.log"
