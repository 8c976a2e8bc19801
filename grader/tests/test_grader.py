"""The grader's own tests on the sample class (made by make_corpus.py), graded once for the module:
every verdict, that no grade is lost or leaked, the outputs, reruns and Slurm. The grader's modes
and limits that need no class are in test_grader_alone.py (ctest runs the two side by side)."""

from __future__ import annotations

import csv
import hashlib
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from cudalab_grader.files import remove_tree
from cudalab_grader.sandbox import Sandbox
from support import CORPUS, HERE, ROOT, grade

STUDENTS = 43  # in the corpus, with the two entries the `corpus` fixture adds
ESCAPES = ["/tmp/cudalab-escape-ivan", "/work/cudalab-escape-ivan", "/root/cudalab-escape-ivan"]
ISOLATED = Sandbox().bwrap
needs_isolation = pytest.mark.skipif(
    not ISOLATED, reason="bubblewrap does not work here: no isolation to test"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The sample corpus (make_corpus.py), and two entries a file system keeps badly: a submission
    folder 1100 levels deep, and an entry whose name is not UTF-8 (a hostile zip, refused)."""
    copy = tmp_path_factory.mktemp("corpus") / "corpus"
    shutil.copytree(CORPUS, copy)
    deep = copy / "deepak"
    subprocess.run(["mkdir", "-p", str(deep.joinpath(*["d"] * 1100))], check=True)  # pathlib recurses
    (deep / "labs/01_vector_add").mkdir(parents=True)
    (deep / "labs/01_vector_add/vector_add.cu").write_text("// nothing\n")
    with zipfile.ZipFile(os.fsdecode(bytes(copy) + b"/\xff\xfeevil.zip"), "w") as z:
        z.writestr("../../evil-was-here.txt", "outside")
    yield copy
    remove_tree(copy)  # pytest's own clean-up recurses once per level of the deep folder


@pytest.fixture(scope="module")
def graded(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    for p in ESCAPES:
        Path(p).unlink(missing_ok=True)
    out = tmp_path_factory.mktemp("grading")
    listener = socket.socket()  # judy scans ports 1024-32767 of this machine: she must not reach this one
    for port in range(23456, 23556):
        try:
            listener.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    listener.listen(8)
    listener.setblocking(False)
    run = grade(str(corpus), "--jobs", "2", "--test-timeout", "8", "--out", str(out))  # every lab
    assert run.returncode == 0, run.stdout + run.stderr
    try:
        conn, _ = listener.accept()
        conn.close()
        reached = True
    except BlockingIOError:
        reached = False
    listener.close()
    results = json.loads((out / "results.json").read_text())
    results["judy_reached_listener"] = reached
    return out, results, run.stdout


def lab(results: dict, student: str, name: str = "01_vector_add") -> dict:
    return results["students"][student]["labs"][name]


def failed(results: dict, student: str) -> dict[str, str]:
    return {
        t: r.get("message", "") for t, r in lab(results, student)["tests"].items() if r["result"] == "failed"
    }


def test_correct_submissions_get_every_point(graded: tuple) -> None:
    _, results, _ = graded
    for student in ("alice", "dave", "hana", "walter", "xavier", "yolanda"):
        assert lab(results, student)["earned"] == 22, (student, failed(results, student))
    # alice hands in every lab's reference solution: every point this backend can give, on all nine
    for name, result in results["students"]["alice"]["labs"].items():
        assert result["status"] == "graded" and result["possible"] > 0, (name, result.get("message"))
        assert result["earned"] == result["possible"], (name, result)
    assert len(results["students"]["alice"]["labs"]) == 9


def test_untouched_skeletons_get_nothing(graded: tuple) -> None:
    """sam hands in every lab as it was handed out: each builds, is graded, and earns 0."""
    _, results, _ = graded
    for name, result in results["students"]["sam"]["labs"].items():
        assert result["status"] == "graded" and result["earned"] == 0, (name, result.get("message"))
    assert len(results["students"]["sam"]["labs"]) == 9


def test_honest_forms_get_every_point(graded: tuple) -> None:
    """hana's lab 01 has a byte-order mark and CRLF line ends, a header of her own and a second .cu,
    a template, a lambda, a grid-stride loop and blocks of 128 threads: nvcc takes all of it."""
    _, results, _ = graded
    hana = lab(results, "hana")
    assert hana["status"] == "graded" and hana["earned"] == hana["possible"] == 22, failed(results, "hana")


def test_a_global_operator_of_their_own_is_a_build_error(graded: tuple) -> None:
    _, results, _ = graded
    otto = lab(results, "otto")
    assert otto["status"] == "build error" and otto["earned"] == 0
    assert "defines the global operator delete(void*), which replaces the C++ library's" in otto["message"]


def test_partly_right_and_wrong(graded: tuple) -> None:
    _, results, _ = graded
    bob = failed(results, "bob")
    assert (
        "VectorAddKernel.GuardsTheEnd" in bob and "outside every array" in bob["VectorAddKernel.GuardsTheEnd"]
    )
    assert "outside every array" in bob["VectorAdd.Size257"]
    # The harness's own arrays are named in the sandbox too (the checker sends the names).
    assert re.search(r"allocated at test_vector_add\.cu:\d+ \(d_[AB]\)", bob["VectorAddKernel.GuardsTheEnd"])
    assert 0 < lab(results, "bob")["earned"] < 22
    kinds = lab(results, "bob")["categories"]  # partial credit by kind, from the rubric
    assert kinds["diagnostics"] == {"earned": 3.0, "possible": 5.0} and kinds["correctness"]["possible"] == 15
    carol = failed(results, "carol")
    assert "elements are wrong" in carol["VectorAdd.Size257"]
    assert lab(results, "carol")["earned"] < 10


def test_build_error_is_reported_with_the_compiler_message(graded: tuple) -> None:
    _, results, _ = graded
    erin = lab(results, "erin")
    assert erin["status"] == "build error" and erin["earned"] == 0
    assert "vector_add.cu" in erin["message"] and "error" in erin["message"]


def test_hang_crash_fork_bomb_and_flood_cost_one_test_each(graded: tuple) -> None:
    _, results, _ = graded
    assert set(failed(results, "frank")) == {"VectorAdd.Size257"}
    assert "time limit" in failed(results, "frank")["VectorAdd.Size257"]
    assert set(failed(results, "grace")) == {"VectorAdd.One"}
    assert "crashed (signal 11)" in failed(results, "grace")["VectorAdd.One"]
    assert set(failed(results, "mallory")) == {"VectorAdd.Size256"}
    assert set(failed(results, "oscar")) == {"VectorAdd.Size255"}
    assert "output cut" in failed(results, "oscar")["VectorAdd.Size255"]
    assert len(failed(results, "oscar")["VectorAdd.Size255"]) <= 6000


@needs_isolation
def test_no_reading_other_submissions_or_solutions(graded: tuple) -> None:
    _, results, _ = graded
    assert lab(results, "heidi")["earned"] == 22, failed(results, "heidi")
    assert "LEAK" not in json.dumps(results)


@needs_isolation
def test_no_writing_outside(graded: tuple) -> None:
    _, results, _ = graded
    assert lab(results, "ivan")["earned"] == 22
    for p in ESCAPES:
        assert not Path(p).exists(), p
    assert not (CORPUS / "cudalab-escape-ivan").exists()


@needs_isolation
def test_no_network(graded: tuple) -> None:
    _, results, _ = graded
    assert lab(results, "judy")["earned"] == 22, failed(results, "judy")
    assert not results["judy_reached_listener"]


def test_hostile_archives_are_refused_with_the_reason(graded: tuple) -> None:
    _, results, _ = graded
    assert "leaves the archive" in lab(results, "peggy")["message"]
    assert "is a link" in lab(results, "trent")["message"]
    assert "more than 50 MiB" in lab(results, "victor")["message"]
    for student in ("peggy", "trent", "victor"):
        assert lab(results, student)["status"] == "rejected"
    assert not (CORPUS.parent / "peggy-was-here.txt").exists()


def test_nothing_submitted(graded: tuple) -> None:
    _, results, _ = graded
    assert lab(results, "zed")["status"] == "missing"
    assert "no labs/01_vector_add/vector_add.cu" in lab(results, "zed")["message"]


def test_outputs(graded: tuple) -> None:
    out, results, stdout = graded
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert len(rows) == len(results["students"]) == STUDENTS
    alice = next(r for r in rows if r["student"] == "alice")
    everything = sum(r["possible"] for r in results["students"]["alice"]["labs"].values())
    assert (alice["01_vector_add"], alice["04_tiled_matmul"]) == ("22", "27")
    assert float(alice["total"]) == everything
    class_page = (out / "class.html").read_text(encoding="utf-8")
    for student, entry in results["students"].items():
        assert (out / "feedback" / f"{student}.md").read_text().startswith(f"# Feedback: {student}")
        page = (out / "feedback" / f"{student}.html").read_text(encoding="utf-8")
        assert f"<h1>Feedback: {html.escape(student)}</h1>" in page
        # A picture for each failed test whose message maps its wrong elements, and none else.
        mapped = [
            t
            for r in entry["labs"].values()
            for t in r.get("tests", {}).values()
            if t["result"] == "failed" and "Where the wrong elements are" in t.get("message", "")
        ]
        assert page.count('<img class="wrong-elements"') == len(mapped)
        assert f'href="{quote(f"feedback/{student}.html")}"' in class_page
    assert "protection:" in stdout and results["protections"]
    assert "alice" in stdout and f"{everything:g}" in stdout


def test_what_a_student_prints_stays_inside_the_feedback_code_block(graded: tuple) -> None:
    """felix prints a fence, a heading, a table row with a total, a script and terminal escapes."""
    out, results, _ = graded
    assert "Size255" in " ".join(failed(results, "felix"))
    md = (out / "feedback" / "felix.md").read_text(encoding="utf-8")
    page = (out / "feedback" / "felix.html").read_text(encoding="utf-8")
    assert "alert(1)" in md and "<script>alert" not in page and "\x1b" not in md + page
    # outside its code blocks, the file has only the grader's headings and rows
    outside, fence = [], None
    for line in md.splitlines():
        if fence is None and line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            outside.append(line)
    assert not any("999" in line or line.startswith("## 01_vector_add: 22 of 22") for line in outside)
    assert sum(line.startswith("## ") for line in outside) == len(results["labs"])


def test_rerun_grades_only_what_changed(corpus: Path, graded: tuple) -> None:
    out, results, _ = graded
    run = grade(str(corpus), "--jobs", "2", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert "0 lab(s) to grade" in run.stdout
    again = json.loads((out / "results.json").read_text())
    assert again["students"]["alice"] == results["students"]["alice"]
    # a build error is out of a graded lab's points, also when the rerun built nothing
    assert lab(again, "mona")["possible"] == lab(results, "mona")["possible"] == 22


def test_a_damaged_cache_entry_is_regraded(corpus: Path, graded: tuple) -> None:
    """An interrupted run may leave half a cache file: the rerun grades that lab again."""
    out, results, _ = graded
    cached = out / "cache" / hashlib.sha256(b"alice").hexdigest()[:16] / "01_vector_add.json"
    cached.write_text(cached.read_text()[:40])
    run = grade(str(corpus), "--jobs", "2", "--out", str(out))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 lab(s) to grade" in run.stdout
    again = json.loads((out / "results.json").read_text())
    assert lab(again, "alice")["earned"] == 22
    assert json.loads(cached.read_text())["result"]["earned"] == 22


def test_a_forged_main_is_a_build_error_naming_what_it_defines_and_calls(graded: tuple) -> None:
    """mona's main() would write a passing report for any test: her code may not define main()
    nor open files (common/tools/cudalab_tools/symbols.py), and the grader says so as a build error."""
    _, results, _ = graded
    mona = lab(results, "mona")
    assert mona["status"] == "build error" and mona["earned"] == 0
    assert mona["possible"] == lab(results, "alice")["possible"] == 22  # this backend's points
    assert lab(results, "zed")["possible"] == 22  # missing: the same points as a graded lab
    assert "vector_add.cu defines main()" in mona["message"]
    assert "vector_add.cu calls fopen()" in mona["message"]


def test_an_exit_handler_that_rewrites_the_report_is_a_build_error(graded: tuple) -> None:
    """trudy's atexit() handler would write a passing report after GoogleTest's and leave with
    status 0: her code may not open files through C++ streams nor make a system call itself."""
    _, results, _ = graded
    trudy = lab(results, "trudy")
    assert trudy["status"] == "build error" and trudy["earned"] == 0
    assert "vector_add.cu calls std::basic_ofstream" in trudy["message"]
    assert "vector_add.cu makes a system call itself (an instruction in forge())" in trudy["message"]


def test_an_answer_computed_on_the_host_earns_nothing(graded: tuple) -> None:
    """quinn adds on the host; rupert too, and copies the sums to the device and back. Their kernel
    is the solution's, so the tests that launch it directly pass; every test of vecAdd's result
    fails, saying that no kernel computed it (the emu follows each byte from its writer), or, where
    the sums went to the device (rupert's, over 64 bytes), that the host sent it what the test did
    not give."""
    _, results, _ = graded
    for student in ("quinn", "rupert"):
        failures = failed(results, student)
        for test in ("VectorAdd.One", "VectorAdd.Size257", "VectorAdd.Size1M"):
            said = "none of the test's inputs" if student == "rupert" and test != "VectorAdd.One" else ""
            assert (said or "no kernel computed") in failures[test], (student, test)
        assert "VectorAddKernel.GuardsTheEnd" not in failures
        assert lab(results, student)["categories"]["correctness"]["earned"] == 6  # kernel tests, n = 0


def test_an_answer_sent_from_the_host_and_copied_by_a_kernel_earns_nothing(graded: tuple) -> None:
    """gary computes C on the host, sends it to the device and has a kernel copy it into the output:
    the runner compares each upload with what the checker gave, and the bytes that are none of its
    inputs fail the test (his vecAddKernel, which the harness launches itself, still earns its own)."""
    _, results, _ = graded
    gary = failed(results, "gary")
    for test in ("VectorAdd.Size255", "VectorAdd.Size257", "VectorAdd.Size1M"):
        assert "bytes that are none of the test's inputs" in gary[test], gary.get(test)
    assert "VectorAddKernel.GuardsTheEnd" not in gary
    assert lab(results, "gary")["earned"] < 10


def test_a_report_forged_past_the_symbol_rules_earns_nothing(graded: tuple) -> None:
    """forrest computes nothing, and his vecAdd writes a report that every VectorAdd test passed
    where the test program once wrote it, then leaves with status 0, through the C library's
    system call (no symbol rule sees it). The checker, outside the sandbox, keeps its own report."""
    _, results, _ = graded
    forrest = lab(results, "forrest")
    assert forrest["status"] == "graded" and forrest["earned"] == 0, forrest
    assert "the code under test ended its process" in failed(results, "forrest")["VectorAdd.Size255"]


def test_a_report_made_a_fifo_or_a_link_to_dev_zero_fails_only_that_test(graded: tuple) -> None:
    _, results, _ = graded
    for student in ("fiona", "zoe"):
        assert set(failed(results, student)) == {"VectorAdd.Size255"}, student
        # (the report is the checker's, out of the student's reach: the runner's end fails the test)
        assert "the code under test ended its process" in failed(results, student)["VectorAdd.Size255"]


def test_the_runner_refuses_sockets_files_and_hidden_memory(graded: tuple) -> None:
    """sybil's vecAdd makes raw system calls in the runner (past the symbol rules): each is refused
    with EPERM (-1) by the runner's system-call filter, with bubblewrap or without."""
    _, results, _ = graded
    assert set(failed(results, "sybil")) == {"VectorAdd.Size255"}, failed(results, "sybil")
    assert "PROBE socket -1 open -1 memfd -1" in failed(results, "sybil")["VectorAdd.Size255"]


def test_the_facts_a_verdict_took_from_the_runner_are_listed(graded: tuple) -> None:
    """The checker compares outputs itself; whether the device computed them, which allocations
    are live and the memory counters only the runner can tell: each passed test lists those it
    used, and the grader counts their points for the instructor."""
    _, results, stdout = graded
    tests = lab(results, "alice")["tests"]
    assert tests["VectorAdd.Size255"]["runner_reported"] == ["device_work"]
    assert "live_allocations" in tests["VectorAdd.FreesDeviceMemory"]["runner_reported"]
    assert "counters" in tests["VectorAddPerformance.CoalescedTraffic"]["runner_reported"]
    assert "runner_reported" not in tests["VectorAddKernel.GuardsTheEnd"]  # the checker launched it
    assert re.search(r"\d+ of the \d+ points earned rest on facts that only the runner", stdout)


def test_a_folder_3000_levels_deep_is_cleaned_up(graded: tuple) -> None:
    _, results, stdout = graded
    assert lab(results, "dirk")["earned"] == 22, failed(results, "dirk")
    work = re.search(r"work folder: (\S+)", stdout)[1]
    assert not Path(work).exists()


def test_unreadable_and_too_deep_submissions_are_refused_with_the_reason(graded: tuple) -> None:
    _, results, _ = graded
    reasons = {
        "nina": "password-protected",
        "olga": "compression method",
        "tess": "damaged or cut short",
        "ursula": "more than 32 levels deep",
        "deepak": "more than 32 levels deep",
        "__evil": "leaves the archive",
    }
    for student, reason in reasons.items():
        assert lab(results, student)["status"] == "rejected", student
        assert reason in lab(results, student)["message"], (student, lab(results, student)["message"])


def test_names_keep_their_unicode_and_collisions_are_both_graded(graded: tuple) -> None:
    out, results, stdout = graded
    assert lab(results, "李明")["earned"] == 22
    assert lab(results, "王芳")["status"] == "missing"
    assert {"José", "José (2)"} <= set(results["students"])
    assert "two submissions are named 'José'" in stdout
    rows = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert rows["李明"]["total"] == "22" and "José (2)" in rows
    assert "01_vector_add: missing" in rows["王芳"]["not graded"]
    assert "李明" in (out / "feedback" / "李明.html").read_text(encoding="utf-8")


SLURM_STUDENTS = ("alice", "bob", "grace", "sam")
SLURM = shutil.which("slurmctld") is not None and shutil.which("sbatch") is not None and os.geteuid() == 0


@pytest.mark.skipif(not SLURM, reason="needs root and Debian's slurm-wlm and munge (.ci/run installs them)")
def test_slurm_shards_merge_to_the_local_gradebook(graded: tuple, tmp_path: Path) -> None:
    """A real single-node Slurm, started here with its own configuration: the job array's shards,
    merged, give the local run's grades (four students of the corpus, two shards);
    resubmitting regrades nothing."""
    corpus = tmp_path / "corpus"
    for student in SLURM_STUDENTS:
        shutil.copytree(CORPUS / student, corpus / student)
    cluster = tmp_path / "slurm"
    script = str(HERE / "slurm_cluster.sh")
    start = subprocess.run([script, "start", str(cluster)], capture_output=True, text=True)
    assert start.returncode == 0, start.stdout + start.stderr
    env = {**os.environ, "SLURM_CONF": str(cluster / "slurm.conf")}
    out = tmp_path / "out"
    base = [sys.executable, str(ROOT / "grader" / "grade")]
    submit = [
        *base,
        str(corpus),
        "--labs",
        "01",
        "--slurm",
        "2",
        "--wait",
        "--jobs",
        "1",
        "--test-timeout",
        "8",
    ]
    try:
        run = subprocess.run([*submit, "--out", str(out)], capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stdout + run.stderr
        merged = subprocess.run([*base, "--merge", "--out", str(out)], capture_output=True, text=True)
        assert (
            merged.returncode == 0 and f"merged 2 shard(s), {len(SLURM_STUDENTS)} student(s)" in merged.stdout
        ), merged.stdout
        again = subprocess.run([*submit, "--out", str(out)], capture_output=True, text=True, env=env)
        assert again.returncode == 0, again.stdout + again.stderr
    finally:
        subprocess.run([script, "stop", str(cluster)], capture_output=True)
    local_out, _, _ = graded
    local = {
        r["student"]: r["01_vector_add"]
        for r in csv.DictReader((local_out / "gradebook.csv").open())
        if r["student"] in SLURM_STUDENTS
    }
    sharded = {r["student"]: r["01_vector_add"] for r in csv.DictReader((out / "gradebook.csv").open())}
    assert sharded == local
    for k in range(2):
        assert "0 lab(s) to grade" in (out / "slurm" / f"shard-{k}.log").read_text()
