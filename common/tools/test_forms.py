"""The CUDA forms of common/tests/forms: programs in the forms that the translator must carry to
the CPU (launches, __shared__ at every scope, macros, local headers, device code, kernels that
wait, Thrust, a file's encoding). Each prints what a GPU computes, as its `// expect:` lines say;
a form passes when its output is exactly those lines and it exits with status 0.

On emu (CTest, in the emu build: CUDALAB_TOOLCHAIN names its runtime) each runs through
`cudalab run`, with the checks and without (`--unchecked`: the loop forms of kernels that wait).
With CUDALAB_FORMS_NVCC=1 each is compiled by nvcc and run on the GPU instead: the
expected lines are a GPU's (docs/runs/2026-11-28-h200-forms.log)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORMS = ROOT / "common" / "tests" / "forms"
INCLUDE = f"-I{FORMS / 'include'}"  # (headers found through the include path, as nvcc finds them)
ON_GPU = os.environ.get("CUDALAB_FORMS_NVCC") == "1"


def expected(program: Path) -> list[str]:
    """The lines the program must print: its `// expect: ` comments, in order."""
    text = program.read_bytes().decode("utf-8", errors="replace")
    return [line.split("// expect: ", 1)[1] for line in text.splitlines() if line.startswith("// expect: ")]


def programs() -> list[Path]:
    return sorted(FORMS.glob("*.cu"))


class Forms(unittest.TestCase):
    def run_form(self, program: Path, build: list[str], binary: Path) -> None:
        want = expected(program)
        self.assertTrue(want, f"{program.name} has no // expect: lines")
        built = subprocess.run(build, capture_output=True, text=True, errors="replace", timeout=900)
        self.assertEqual(built.returncode, 0, f"{program.name} did not build:\n{built.stdout}{built.stderr}")
        ran = subprocess.run([str(binary)], capture_output=True, text=True, errors="replace", timeout=300)
        self.assertEqual(ran.stdout.splitlines(), want, f"{program.name}:\n{ran.stdout}{ran.stderr}")
        self.assertEqual(ran.returncode, 0, f"{program.name} exited with {ran.returncode}:\n{ran.stderr}")

    def each_form(self, build: Callable[[Path, Path], list[str]]) -> None:
        """Every form, built by the command `build(program, binary)` gives, then run."""
        self.assertTrue(programs(), f"no programs in {FORMS}")
        with tempfile.TemporaryDirectory() as scratch:
            for program in programs():
                with self.subTest(form=program.name):
                    binary = Path(scratch) / program.stem
                    self.run_form(program, build(program, binary), binary)

    @unittest.skipIf(ON_GPU, "on a GPU the forms run once, with nvcc")
    def test_checked_on_emu(self) -> None:
        self.each_form(lambda p, b: [str(ROOT / "cudalab"), "cc", INCLUDE, str(p), "-o", str(b)])

    @unittest.skipIf(ON_GPU, "on a GPU the forms run once, with nvcc")
    def test_unchecked_on_emu(self) -> None:
        self.each_form(
            lambda p, b: [str(ROOT / "cudalab"), "cc", "--unchecked", INCLUDE, str(p), "-o", str(b)]
        )

    @unittest.skipUnless(ON_GPU, "CUDALAB_FORMS_NVCC=1 on a GPU machine")
    def test_with_nvcc_on_a_gpu(self) -> None:
        flags = ["-std=c++20", "-arch=native", INCLUDE, f"-I{ROOT / 'common' / 'include'}"]
        self.each_form(lambda p, b: ["nvcc", *flags, str(p), "-o", str(b)])


if __name__ == "__main__":
    unittest.main()
