"""Unit tests of symbols.py: what a lab's compiled code may define and call. Each case compiles a
few lines with the system's C++ compiler and reads the object file, as make check and the grader do."""

from __future__ import annotations

import subprocess
import tempfile
import unittest
from pathlib import Path

import symbols

ALLOWED = """
#include <cstdio>
#include <vector>
static std::vector<int> table = {1, 2, 3};  // static initialisation: the compiler's constructor
__attribute__((noinline)) static int helper(int x) { return x + table[0]; }
int vecAdd(const float* a, float* b, int n) { std::printf("%d\\n", n); return helper(n) + (a == b); }
"""


def verdict(source: str) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        src, obj = Path(d) / "lab.cpp", Path(d) / "lab.o"
        src.write_text(source)
        subprocess.run(["c++", "-std=c++20", "-c", str(src), "-o", str(obj)], check=True)
        return symbols.violations(obj, "labs/01_vector_add/vector_add.cu")


class Rules(unittest.TestCase):
    def test_ordinary_code_keeps_them(self) -> None:
        self.assertEqual(verdict(ALLOWED), [])

    def test_a_main_of_its_own(self) -> None:
        found = verdict(ALLOWED + "int main() { return 0; }\n")
        self.assertEqual(len(found), 1)
        self.assertIn("defines main()", found[0])

    def test_standing_in_for_the_harness(self) -> None:
        found = verdict(ALLOWED + "namespace cudalab { bool compare(const float*, int) { return true; } }\n")
        self.assertIn("defines cudalab::compare(float const*, int), which belongs to the harness", found[0])

    def test_calling_the_harness_reference(self) -> None:
        found = verdict(
            ALLOWED + "namespace cudalab { void multiply(int); }\nvoid f() { cudalab::multiply(1); }\n"
        )
        self.assertIn("calls cudalab::multiply(int), which belongs to the harness", found[0])

    def test_files_exit_and_signals(self) -> None:
        found = verdict(
            ALLOWED
            + "#include <csignal>\n#include <cstdlib>\n#include <unistd.h>\n"
            + 'void f() { std::fopen("/proc/self/cmdline", "r"); signal(SIGSEGV, SIG_IGN); _exit(0); }\n'
            + "void g() { std::exit(1); }  // allowed: nvcc's host code calls it too\n"
        )
        self.assertEqual({v.split(" calls ")[1].split("(")[0] for v in found}, {"fopen", "signal", "_exit"})

    def test_a_constructor_function(self) -> None:
        found = verdict(ALLOWED + "__attribute__((constructor)) static void early() { table.clear(); }\n")
        self.assertEqual(len(found), 1)
        self.assertIn("has a constructor function (early()) that runs before main()", found[0])


if __name__ == "__main__":
    unittest.main()
