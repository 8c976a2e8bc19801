"""Tests of the records (common/tools/cudalab_tools/records.py, written by
common/include/cudalab/records.h): what is read, what is refused, and the records a real run
writes (the planted bugs' program, and the comparison's unit test)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from cudalab_tools import records
from cudalab_tools.records import Diagnostic, LineCounters, Site, WrongElements

BUILD = os.environ.get("CUDALAB_BUILD")  # the emu build, where CTest runs these tests

OUT_OF_BOUNDS = {
    "kind": "diagnostic",
    "error": "cudaErrorIllegalAddress",
    "check": "global_out_of_bounds",
    "kernel": "vecAddKernel",
    "launch": {"file": "vector_add.cu", "line": 30},
    "block": [3, 0, 0],
    "thread": [231, 0, 0],
    "at": {"file": "vector_add.cu", "line": 12},
    "problem": "a read of memory outside every array: ...",
    "text": "kernel 'vecAddKernel' (launched at vector_add.cu:30), ...",
}


class Reading(unittest.TestCase):
    def test_a_diagnostic_with_its_places(self) -> None:
        (d,) = records.typed([OUT_OF_BOUNDS])
        assert isinstance(d, Diagnostic)
        self.assertEqual((d.kernel, d.block, d.thread), ("vecAddKernel", (3, 0, 0), (231, 0, 0)))
        self.assertEqual((d.launch, d.at), (Site("vector_add.cu", 30), Site("vector_add.cu", 12)))
        self.assertEqual(
            d.problem_key(), "an access outside every array in kernel 'vecAddKernel' at vector_add.cu:12"
        )
        self.assertEqual(
            records.first_error([OUT_OF_BOUNDS]), "cudaErrorIllegalAddress: " + OUT_OF_BOUNDS["text"]
        )

    def test_a_refused_call_is_its_words(self) -> None:
        refused = {
            "kind": "diagnostic",
            "problem": "cudaMemcpy: the destination ...",
            "text": "cudaMemcpy: ...",
        }
        (d,) = records.typed([refused])
        self.assertEqual(d.problem_key(), refused["problem"])
        self.assertEqual(records.first_error([refused]), "")  # no error: nothing was stopped
        self.assertEqual(records.first_problem([refused]), refused["problem"])

    def test_a_warning_is_no_problem_of_the_test(self) -> None:
        warning = {**OUT_OF_BOUNDS, "severity": "warning"}
        del warning["error"]
        self.assertIsNone(records.first_problem([warning]))

    def test_lines_that_are_no_record_are_left_out(self) -> None:
        counters = {
            "kind": "counters",
            "kernel": "k",
            "launches": 1,
            "at": {"file": "k.cu", "line": 4},
            "access": "global load",
            "requests": 8,
            "units": 32,
            "ideal_units": 8,
        }
        lines = [
            "not JSON",
            "[1, 2]",
            json.dumps({"kind": "unknown"}),
            json.dumps({**counters, "requests": "8"}),  # a number as text
            json.dumps({**counters, "requests": True}),  # a boolean is no count
            json.dumps({**counters, "at": {"file": "k.cu"}}),  # a site without its line
            json.dumps({"kind": "wrong_elements", "output": "C", "elements": 4}),  # fields missing
            json.dumps(counters),
        ]
        (c,) = records.typed(records.parse_lines("\n".join(lines)))
        assert isinstance(c, LineCounters)
        self.assertEqual((c.per_request, c.efficiency, c.wasteful), (4.0, 25, True))

    def test_a_map_with_other_marks_is_not_drawn(self) -> None:
        found = {
            "kind": "wrong_elements",
            "output": "C",
            "elements": 4,
            "wrong": 1,
            "text": "C: 1 of 4 elements are wrong",
            "rows": 1,
            "cols": 4,
            "mark_rows": 1,
            "mark_cols": 1,
        }
        (w,) = records.typed([{**found, "cells": ["..<b>"]}])
        assert isinstance(w, WrongElements)
        self.assertIsNone(w.map)
        self.assertEqual(records.wrong_maps([{**found, "cells": ["..X."]}])[0].cells, ("..X.",))

    def test_the_stores_of_listed_elements_are_typed(self) -> None:
        stored = {
            "element": 40,
            "kernel": "vecAdd",
            "launch": {"file": "vector_add.cu", "line": 24},
            "block": [1, 0, 0],
            "thread": [8, 0, 0],
            "atomic": 0,
            "at": {"file": "vector_add.cu", "line": 6},
            "loads": [{"kind": "line", "at": {"file": "vector_add.cu", "line": 5}}],
        }
        unstored = {"element": 99, "kernel": "vecAdd", "launch": {"file": "vector_add.cu", "line": 24}}
        found = {"kind": "wrong_elements", "output": "C", "elements": 100, "wrong": 2, "text": "C: ..."}
        (w,) = records.typed([{**found, "stores": [stored, unstored, {"element": "40"}]}])
        assert isinstance(w, WrongElements)
        self.assertEqual(len(w.stores), 2)  # the one without its fields is left out
        self.assertEqual((w.stores[0].thread, w.stores[0].at), ((8, 0, 0), records.Site("vector_add.cu", 6)))
        self.assertEqual(w.stores[0].loads, (records.Site("vector_add.cu", 5),))
        self.assertIsNone(w.stores[1].thread)


def run_with_records(
    command: list[str], **env: str
) -> tuple[subprocess.CompletedProcess[str], list[records.Record]]:
    with tempfile.TemporaryDirectory() as scratch:
        written = Path(scratch) / "records.jsonl"
        env = {**os.environ, **env, "CUDALAB_RECORDS": str(written)}
        done = subprocess.run(command, capture_output=True, text=True, errors="replace", env=env, timeout=300)
        return done, records.typed(records.read_file(written))


def built(test: unittest.TestCase, target: str) -> Path:
    """The emu build's `target`, which must exist there (CUDALAB_BUILD names the build: CTest does
    in an emu build; elsewhere the test skips)."""
    if BUILD is None:
        test.skipTest("needs an emu build: CUDALAB_BUILD=build/default")
    program = Path(BUILD) / target
    if not program.is_file():
        test.fail(f"{program} is not built")
    return program


class Written(unittest.TestCase):
    """The records a built program writes: the same places and words its message has."""

    def test_a_planted_bug_is_recorded_with_its_check_thread_and_line(self) -> None:
        program = built(self, "common/tests/run_planted_bug")
        done, found = run_with_records([str(program), "read_past_end"])
        errors = [r for r in found if isinstance(r, Diagnostic) and r.error]
        self.assertTrue(errors, done.stderr)
        d = errors[0]
        self.assertEqual((d.check, d.error), ("global_out_of_bounds", "cudaErrorIllegalAddress"))
        self.assertIsNotNone(d.at)
        self.assertIsNotNone(d.thread)
        self.assertIn(d.text, done.stderr)  # the words the student read are the record's
        self.assertIn(f"at {d.at.file}:{d.at.line}:", d.text)

    def test_a_wrong_result_is_recorded_with_its_map(self) -> None:
        program = built(self, "common/tests/test_common")
        done, found = run_with_records([str(program), "--gtest_filter=WrongResult.OnlyTheBorderOfAnImage"])
        self.assertEqual(done.returncode, 0, done.stdout)
        (wrong,) = [r for r in found if isinstance(r, WrongElements)]
        self.assertEqual((wrong.elements, wrong.wrong), (1500, 1500 - 26 * 46))
        assert wrong.map is not None
        self.assertEqual((wrong.map.rows, wrong.map.cols, len(wrong.map.cells)), (30, 50, 12))
        self.assertEqual(set(wrong.map.cells[0]), {"X"})  # the top border
        self.assertIn(".", wrong.map.cells[5])  # the inside is right
        self.assertIn("\n    " + wrong.map.cells[0] + "\n", wrong.text)  # the message's map is the record's

    def test_every_planted_bug_is_recorded_at_its_line(self) -> None:
        """The catalogue (common/tests/bugs) through its records: each bug's first error names its
        check and the line of its `// BUG:` mark; a check in a kernel names the block, thread and
        line, a refused call its line (a race's line may be the other access's, which the words
        name too)."""
        program = built(self, "common/tests/run_planted_bug")
        source = Path(__file__).resolve().parents[1] / "tests" / "bugs" / "planted_bugs.cu"
        marks = {
            line.split("// BUG: ")[1].split()[0]: number
            for number, line in enumerate(source.read_text().splitlines(), start=1)
            if "// BUG: " in line
        }
        names = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.split()
        self.assertTrue(names)
        self.assertLessEqual(set(names), marks.keys())  # each bug has its mark
        for name in names:
            with self.subTest(bug=name):
                done, found = run_with_records([str(program), name], CUDALAB_EMU_TIMEOUT="1")
                said = [r for r in found if isinstance(r, Diagnostic) and r.severity == "error"]
                self.assertTrue(said, done.stderr)
                first = said[0]
                self.assertIn(f"planted_bugs.cu:{marks[name]}", first.text)
                self.assertTrue(first.check)
                if first.check not in ("barrier_divergence", "warp_divergence"):  # (their words)
                    self.assertEqual(first.at.file if first.at else None, "planted_bugs.cu")
                if first.kernel:
                    self.assertIsNotNone(first.block)
                    self.assertIsNotNone(first.thread)
