"""make check's own decisions (check.py) that need no build: when it configures the build, what
its page holds, and that `cudalab run` compiles against the runtime make check built."""

from __future__ import annotations

import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import check
import cudalab
from cudalab_tools.lab_result import LabResult


class Configure(unittest.TestCase):
    def test_a_lab_folder_added_since_the_last_configure_configures_again(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            build = Path(folder)
            (build / "CMakeCache.txt").write_text("")
            (build / "CMakeFiles" / "01_vector_add-labs.dir").mkdir(parents=True)
            commands: list[list[str]] = []

            def run(command: list[str]) -> subprocess.CompletedProcess[str]:
                commands.append(command)
                return subprocess.CompletedProcess(command, 0, "", "")

            with mock.patch.object(check, "run", run):
                check.configure(build, None, ["01_vector_add"])
                self.assertEqual(commands, [], "a build that knows the lab is not configured again")
                check.configure(build, None, ["01_vector_add", "10_histogram"])
            self.assertEqual(commands, [["cmake", "-S", str(check.ROOT), "-B", str(build)]])


class Page(unittest.TestCase):
    def test_the_page_keeps_every_labs_latest_result(self) -> None:
        """make check LAB=01, then LAB=02, then LAB=01 again: the page holds both labs, 01's latest."""
        with tempfile.TemporaryDirectory() as folder:
            build = Path(folder)
            first = LabResult("01_vector_add", failed=["VectorAdd.One"], points={"VectorAdd.One": 1.0})
            check.save_results(build, {first.lab: first}, [first.lab], on_emu=False)
            other = LabResult(
                "02_thread_indexing", passed=["Picture.OnePixel"], points={"Picture.OnePixel": 2.0}
            )
            check.save_results(build, {other.lab: other}, [other.lab], on_emu=False)
            fixed = LabResult("01_vector_add", passed=["VectorAdd.One"], points={"VectorAdd.One": 1.0})
            check.save_results(build, {fixed.lab: fixed}, [fixed.lab], on_emu=False)
            latest = check.latest_results(build)
        self.assertEqual([(r, counted) for r, counted in latest], [(fixed, []), (other, [])])


class SharedBuild(unittest.TestCase):
    def test_cudalab_run_uses_the_emu_build_make_check_made(self) -> None:
        with tempfile.TemporaryDirectory() as folder, mock.patch.object(cudalab, "ROOT", Path(folder)):
            default, emu = Path(folder) / "build" / "default", Path(folder) / "build" / "emu"
            self.assertEqual(cudalab.emu_build(), emu, "where none is: make check BACKEND=emu's folder")
            default.mkdir(parents=True)
            (default / "CMakeCache.txt").write_text("CUDALAB_BACKEND:INTERNAL=cuda\n")
            self.assertEqual(cudalab.emu_build(), emu, "make check's build is the GPU's")
            (default / "CMakeCache.txt").write_text("CUDALAB_BACKEND:INTERNAL=emu\n")
            self.assertEqual(cudalab.emu_build(), default)


if __name__ == "__main__":
    unittest.main()
