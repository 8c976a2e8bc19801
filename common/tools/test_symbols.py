"""Unit tests of symbols.py: what a lab's compiled code may define and call. Each case compiles a
few lines with the system's C++ compiler and reads the object file, as make check and the grader do."""

from __future__ import annotations

import subprocess
import tempfile
import unittest
from pathlib import Path

from cudalab_tools import symbols

ALLOWED = """
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
static std::vector<int> table = {1, 2, 3};  // static initialisation: the compiler's constructor
__attribute__((noinline)) static int helper(int x) { return x + table[0]; }
template <class T> __attribute__((noinline)) T twice(T x) { return x + x; }
int vecAdd(const float* a, float* b, int n) {
  std::printf("%d\\n", n);
  std::vector<float> v(a, a + n);
  std::sort(v.begin(), v.end(), [](float x, float y) { return x > y; });
  std::string s = std::to_string(n) + " elements";
  return helper(n) + (a == b) + int(std::sqrt(float(twice(n)))) + int(s.size() + v.size());
}
"""


def verdict(source: str) -> list[str]:
    """The rules' verdict on `source`, linked (as a lab's test program is) with the C, C++ and
    maths libraries."""
    provided = {}
    for library in symbols.IMPLICIT_LIBRARIES:
        provided.update((name, library) for name in symbols._defined(symbols._library(library)))
    maths = symbols._defined(symbols._library(symbols.MATHS_LIBRARY))
    with tempfile.TemporaryDirectory() as d:
        src, obj = Path(d) / "lab.cpp", Path(d) / "lab.o"
        src.write_text(source)
        subprocess.run(["c++", "-std=c++20", "-c", str(src), "-o", str(obj)], check=True)
        libraries = symbols.Libraries(provided, frozenset(), maths)
        return symbols.violations(obj, "labs/01_vector_add/vector_add.cu", libraries)


def called(found: list[str]) -> set[str]:
    """The names of the calls that `found` refuses."""
    return {v.split(" calls ")[1].split("(")[0] for v in found if " calls " in v}


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
        self.assertEqual(called(found), {"fopen", "signal", "_exit"})

    def test_streams_threads_descriptors_and_mappings(self) -> None:
        found = verdict(
            ALLOWED
            + "#include <fstream>\n#include <thread>\n#include <sys/mman.h>\n#include <unistd.h>\n"
            + 'void f() { std::ofstream("report.json") << "{}"; std::ifstream("/proc/self/cmdline"); }\n'
            + 'void g() { std::thread([] {}).join(); write(1, "x", 1); }\n'
            + "void h(void* p) { mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC); }\n"
        )
        self.assertEqual(
            called(found), {"std::basic_ofstream", "std::basic_ifstream", "std::thread", "write", "mprotect"}
        )

    def test_asking_the_emu_runtime_what_the_harness_asks(self) -> None:
        found = verdict(
            ALLOWED + "namespace cudalab::emu { void clear_diagnostic(); }\n"
            "void f() { cudalab::emu::clear_diagnostic(); }\n"
        )
        self.assertEqual(
            found,
            [
                "labs/01_vector_add/vector_add.cu calls cudalab::emu::clear_diagnostic(), "
                "which belongs to the harness"
            ],
        )

    def test_an_inline_function_of_the_harness(self) -> None:
        # An inline definition is weak: the linker could keep the student's copy for the harness.
        found = verdict(
            ALLOWED + "namespace testing { inline int forged(int x) { return x; } }\n"
            "int use(int x) { return testing::forged(x); }\n"
        )
        self.assertEqual(len(found), 1)
        self.assertIn("defines testing::forged(int), which belongs to the harness", found[0])

    def test_replacing_a_library_function(self) -> None:
        # An fwrite of its own would see (and could edit) the report GoogleTest writes.
        found = verdict(
            ALLOWED + "size_t fwrite(const void*, size_t, size_t, FILE*) { return 0; }\n"
            "__attribute__((weak)) int fclose(FILE*) { return 0; }\n"
        )
        self.assertEqual(len(found), 2, found)
        self.assertIn("defines fclose, which replaces the one in libc.so.6", found[0])
        self.assertIn("defines fwrite, which replaces the one in libc.so.6", found[1])

    def test_a_system_call_of_its_own(self) -> None:
        found = verdict(
            ALLOWED + 'long raw(long n) { long r; asm volatile("syscall" : "=a"(r) : "a"(n) :'
            ' "rcx", "r11", "memory"); return r; }\n'
        )
        self.assertEqual(len(found), 1, found)
        self.assertIn("makes a system call itself (an instruction in raw(long))", found[0])

    def test_a_destructor_function(self) -> None:
        found = verdict(ALLOWED + "__attribute__((destructor)) static void late() { table.clear(); }\n")
        self.assertEqual(len(found), 1)
        self.assertIn("has a destructor function (late()) that runs after main()", found[0])

    def test_a_constructor_function(self) -> None:
        found = verdict(ALLOWED + "__attribute__((constructor)) static void early() { table.clear(); }\n")
        self.assertEqual(len(found), 1)
        self.assertIn("has a constructor function (early()) that runs before main()", found[0])

    def test_only_the_listed_calls(self) -> None:
        # each built and ran in the sandbox when the rules listed what was refused instead
        found = verdict(
            ALLOWED
            + "#include <fcntl.h>\n#include <signal.h>\n#include <sys/mman.h>\n#include <sys/socket.h>\n"
            + "#include <unistd.h>\n#include <ctime>\n"
            + 'extern "C" int __open64_2(const char*, int);\n'
            + 'extern "C" int execveat(int, const char*, char* const[], char* const[], int);\n'
            + 'extern "C" pid_t _Fork();\n'
            + 'void f(char* b) { int fd = __open64_2("/proc/self/maps", 0); read(fd, b, 9); }\n'
            + "void g(int s, char* b) { send(s, b, 1, 0); recv(s, b, 1, 0); int p[2]; pipe(p); }\n"
            + "void h(union sigval v) { sigqueue(1, SIGUSR1, v); sysv_signal(SIGUSR1, SIG_IGN); }\n"
            + "void i(timer_t* t) { timer_create(CLOCK_REALTIME, nullptr, t); _Fork(); }\n"
            + 'void j() { execveat(0, "", nullptr, nullptr, 0); shm_open("x", O_RDWR, 0); }\n'
        )
        self.assertEqual(
            called(found),
            {
                "__open64_2",
                "read",
                "send",
                "recv",
                "pipe",
                "sigqueue",
                "sysv_signal",
                "timer_create",
                "_Fork",
                "execveat",
                "shm_open",
            },
        )
        self.assertIn("which a lab's code may not call", found[0])

    def test_a_global_operator_delete(self) -> None:
        # (a replaced operator delete once read the checker's questions from the runner's socket)
        found = verdict(
            ALLOWED + "#include <cstdlib>\nvoid operator delete(void* p) noexcept { std::free(p); }\n"
            "void operator delete(void* p, std::size_t) noexcept { std::free(p); }\n"
        )
        self.assertEqual(len(found), 2, found)
        self.assertIn("defines the global operator delete(void*), which replaces the C++ library's", found[0])
        self.assertIn("defines the global operator delete(void*, unsigned long), which", found[1])

    def test_an_ifunc(self) -> None:
        found = verdict(
            ALLOWED + 'extern "C" int chosen(int x) { return x; }\n'
            'extern "C" void* resolve() { return (void*)&chosen; }\n'
            'extern "C" int picked(int) __attribute__((ifunc("resolve")));\n'
        )
        self.assertEqual(len(found), 1, found)
        self.assertIn("defines picked as an ifunc, whose resolver runs before main()", found[0])

    def test_code_in_init_and_fini_sections(self) -> None:
        found = verdict(
            ALLOWED
            + 'asm(".section .init,\\"ax\\"\\n\\tnop\\n\\t"\n'
            + '    ".section .fini,\\"ax\\"\\n\\tnop\\n\\t.text");\n'
        )
        self.assertEqual(
            sorted(found),
            [
                "labs/01_vector_add/vector_add.cu has a .fini section, whose code the loader runs by itself",
                "labs/01_vector_add/vector_add.cu has a .init section, whose code the loader runs by itself",
            ],
        )


if __name__ == "__main__":
    unittest.main()
