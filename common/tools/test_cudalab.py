"""Tests of `cudalab run` and `cudalab cc` (common/tools/cudalab.py) on standalone programs.

CUDALAB_TOOLCHAIN names the runtime of the build that runs these tests (set by CTest)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CUDALAB = ROOT / "cudalab"
PROGRAMS = ROOT / "common" / "tests" / "programs"


def cudalab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CUDALAB), *args], capture_output=True, text=True, timeout=600)


class Run(unittest.TestCase):
    def setUp(self) -> None:
        self.out = Path(tempfile.mkdtemp())

    def run_files(self, files: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
        """`cudalab run` on a program whose files (name -> text) are written first; its sources (.cu,
        .c, .cpp) are built in the order given, the others are headers they include."""
        for name, text in files.items():
            (self.out / name).write_text(text)
        sources = [str(self.out / n) for n in files if Path(n).suffix in (".cu", ".c", ".cpp")]
        return cudalab("run", *sources, *flags, "-o", str(self.out / Path(sources[0]).stem))

    def run_source(self, name: str, source: str, *flags: str) -> subprocess.CompletedProcess[str]:
        """`cudalab run` on a program of one file, `source`, written as `name`."""
        return self.run_files({name: source}, *flags)

    def test_a_correct_program_runs_with_its_arguments(self) -> None:
        r = cudalab("run", str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "va"), "--", "777")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 of 777 elements wrong", r.stdout)

    def test_nvcc_flags_are_understood_or_noted(self) -> None:
        r = cudalab(
            "run", "-arch=sm_90", "-lineinfo", "-O3", "-DN=33", "-Xcompiler", "-Wall",
            str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "va"),
        )  # fmt: skip
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 of 33 elements wrong", r.stdout)
        self.assertIn("-arch=sm_90: ignored", r.stderr)

    def test_report_writes_a_page_of_the_sources_with_their_traffic(self) -> None:
        r = cudalab(
            "run", "--report", str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "va"), "--", "1000"
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("cudalab emu report", r.stderr)  # passed through as the program printed it
        page = self.out / "va.html"
        self.assertIn(f"cudalab: report: {page}", r.stderr)
        html = page.read_text()
        self.assertIn("vector_add_kernel.cuh: memory traffic per line, as the program ran it", html)
        self.assertIn("global load: ", html)
        self.assertIn("Exit status 0.", html)

    def test_report_names_each_barriers_passes_and_each_atomics_operations(self) -> None:
        r = cudalab("run", "--report", str(PROGRAMS / "histogram.cu"), "-o", str(self.out / "h"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 of 8 bins wrong", r.stdout)
        rows = {}  # source line -> its row of the page
        for row in (self.out / "h.html").read_text().split("<tr")[1:]:
            number = int(row.split('class="number">')[1].split("<")[0])
            rows[number] = row
        source = (PROGRAMS / "histogram.cu").read_text().splitlines()

        def row_of(text: str) -> str:
            return rows[next(n for n, line in enumerate(source, 1) if text in line)]

        blocks = 4  # 1000 bytes, 256 threads per block
        self.assertEqual(
            [
                rows[n].count(f"barrier: {blocks} block passes")
                for n, t in enumerate(source, 1)
                if "__syncthreads" in t
            ],
            [1, 1],
        )
        self.assertIn("atomics: 1000 operations", row_of("atomicAdd(&local"))
        self.assertIn(f"atomics: {blocks * 8} operations", row_of("atomicAdd(&bins"))  # the last statement
        self.assertNotIn("requests", row_of("++expected"))  # host code is not a kernel's traffic

    def test_a_check_that_stops_a_kernel_fails_the_run_and_names_the_line(self) -> None:
        r = cudalab(
            "run", "-DPAST_THE_END", str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "va"),
            "--", "1000",
        )  # fmt: skip
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        header = (PROGRAMS / "vector_add_kernel.cuh").read_text().splitlines()
        bug = next(n for n, text in enumerate(header, 1) if "the planted bug" in text)
        self.assertIn(f"vector_add_kernel.cuh:{bug}: a read of memory outside every array", r.stderr)
        self.assertIn("past its last element", r.stderr)
        self.assertIn("a check stopped a kernel", r.stderr)

    def test_a_line_is_named_in_a_folder_whose_name_holds_a_space(self) -> None:
        folder = self.out / "03 Profiling"
        folder.mkdir()
        for name in ("vector_add.cu", "vector_add_kernel.cuh"):
            (folder / name).write_text((PROGRAMS / name).read_text())
        r = cudalab("run", "-DPAST_THE_END", str(folder / "vector_add.cu"), "-o", str(folder / "va"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        header = (PROGRAMS / "vector_add_kernel.cuh").read_text().splitlines()
        bug = next(n for n, text in enumerate(header, 1) if "the planted bug" in text)
        self.assertIn(f"vector_add_kernel.cuh:{bug}: a read of memory outside every array", r.stderr)

    def test_a_check_stops_a_thread_that_holds_an_object_with_a_destructor(self) -> None:
        program = PROGRAMS / "device_destructor.cu"
        r = cudalab("run", str(program), "-o", str(self.out / "dd"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("64 of 64 threads left the scope", r.stdout)  # destructors run on emu
        r = cudalab("run", "-DPAST_THE_END", str(program), "-o", str(self.out / "dd"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # a diagnosis, not a crash
        bug = next(n for n, text in enumerate(program.read_text().splitlines(), 1) if "i < 2 * n" in text)
        self.assertIn(f"thread (5,0,0), at device_destructor.cu:{bug}: a write", r.stderr)
        self.assertIn("0 of 64 threads left the scope", r.stdout)  # the stopped block runs none

    def test_reading_unwritten_memory_is_told_once_and_the_run_goes_on(self) -> None:
        r = cudalab("run", "-DFORGET_B", str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "va"))
        self.assertIn("cudalab emu: warning:", r.stderr)
        self.assertIn("which nobody wrote since cudaMalloc", r.stderr)
        self.assertEqual(r.stderr.count("which nobody wrote"), 1, r.stderr)
        self.assertIn("elements wrong", r.stdout)  # the program ran to its end

    def test_assert_stays_on(self) -> None:
        r = cudalab("run", str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "va"), "--", "0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Assertion `n > 0' failed", r.stderr)

    def test_a_device_assert_the_program_handles_leaves_it_the_exit_status(self) -> None:
        """A failed device assert stops its kernel as on a GPU (the message, cudaErrorAssert); a
        program that expects it and exits 0 is not failed by cudalab run."""
        r = self.run_source(
            "asserts.cu",
            "#include <cassert>\n#include <cstdio>\n"
            "__global__ void positive(const int* x) { assert(x[threadIdx.x] > 0); }\n"
            "int main() {\n  int* d;\n  cudaMalloc(&d, 4 * sizeof(int));\n"
            "  cudaMemset(d, 0, 4 * sizeof(int));\n  positive<<<1, 4>>>(d);\n"
            "  cudaError_t e = cudaDeviceSynchronize();\n"
            '  printf("%s\\n", cudaGetErrorName(e));\n  return e == cudaErrorAssert ? 0 : 1;\n}\n',
        )
        self.assertIn("cudaErrorAssert", r.stdout)
        self.assertIn("x[threadIdx.x] > 0", r.stderr)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_assert_needs_its_header_as_with_nvcc(self) -> None:
        """nvcc refuses an assert whose file includes neither <cassert> nor <assert.h>; so does
        the emu, naming assert, and with the include the program builds."""
        kernel = "__global__ void positive(const int* x) { assert(x[threadIdx.x] > 0); }\nint main() {}\n"
        refused = self.run_source("no_header.cu", "#include <cstdio>\n" + kernel)
        self.assertNotEqual(refused.returncode, 0, refused.stdout + refused.stderr)
        self.assertIn("assert", refused.stderr)
        self.assertIn("not declared", refused.stderr)
        built = self.run_source("with_header.cu", "#include <assert.h>\n#include <cstdio>\n" + kernel)
        self.assertEqual(built.returncode, 0, built.stdout + built.stderr)

    def test_host_code_may_touch_managed_memory_and_is_stopped_at_device_memory(self) -> None:
        """Host code of a checked file reads and writes managed memory freely (remembered a few
        arrays at a time), and a write to cudaMalloc memory is named with its line."""
        r = self.run_source(
            "host.cu",
            "#include <cstdio>\nint main() {\n  int *managed, *device;\n"
            "  cudaMallocManaged(&managed, 64 * sizeof(int));\n  cudaMalloc(&device, 64 * sizeof(int));\n"
            "  for (int i = 0; i < 64; ++i) managed[i] = i;\n  int sum = 0;\n"
            "  for (int i = 0; i < 64; ++i) sum += managed[i];\n"
            '  printf("sum %d\\n", sum);\n  fflush(stdout);\n  device[3] = sum;\n  return 0;\n}\n',
        )
        self.assertIn("sum 2016", r.stdout)
        self.assertIn("host.cu:11 makes a write to device memory", r.stderr)
        self.assertNotEqual(r.returncode, 0)

    def test_a_c_file_calls_the_runtime_as_with_nvcc(self) -> None:
        """A .c file includes <cuda_runtime.h> and calls the runtime's calls with plain arguments
        (Rodinia's b+tree sets its device from main.c); the kernels stay in the .cu file."""
        r = self.run_files(
            {
                "main.c": "#include <cuda_runtime.h>\n#include <stdio.h>\nint launch_fill(int n);\n"
                "int main(void) {\n  int count = 0;\n  cudaGetDeviceCount(&count);\n"
                "  cudaSetDevice(0);\n  int wrong = launch_fill(100);\n"
                "  cudaError_t e = cudaDeviceSynchronize();\n"
                '  printf("%d device(s), %s, %d wrong\\n", count, cudaGetErrorName(e), wrong);\n'
                "  return e != cudaSuccess || wrong != 0;\n}\n",
                "fill.cu": "__global__ void fill(int* x, int n) {\n"
                "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = i;\n}\n"
                'extern "C" int launch_fill(int n) {\n  int* x;\n  cudaMallocManaged(&x, n * sizeof(int));\n'
                "  fill<<<(n + 63) / 64, 64>>>(x, n);\n  cudaDeviceSynchronize();\n  int wrong = 0;\n"
                "  for (int i = 0; i < n; ++i) wrong += x[i] != i;\n  cudaFree(x);\n  return wrong;\n}\n",
            }
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 device(s), cudaSuccess, 0 wrong", r.stdout)

    def test_what_cuda_13_removed_runs_with_a_warning_naming_the_replacement(self) -> None:
        """cudaThreadSynchronize and cudaDeviceProp::clockRate, which nvcc 13 refuses: the call is
        told once when it runs, the field when the program is compiled, each with what replaces it."""
        r = self.run_source(
            "old.cu",
            "#include <cstdio>\n__global__ void k() {}\nint main() {\n  cudaDeviceProp p;\n"
            "  cudaGetDeviceProperties(&p, 0);\n  k<<<1, 1>>>();\n  cudaThreadSynchronize();\n"
            '  printf("clock %d\\n", p.clockRate > 0);\n}\n',
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("clock 1", r.stdout)
        self.assertIn("cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, device)", r.stderr)
        self.assertIn("old.cu:7: cudaThreadSynchronize() was removed in CUDA 13", r.stderr)

    def test_unchecked_build_runs_too(self) -> None:
        r = cudalab("run", "--unchecked", str(PROGRAMS / "vector_add.cu"), "-o", str(self.out / "u"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 of 1000 elements wrong", r.stdout)

    def test_cc_builds_without_running(self) -> None:
        program = self.out / "built"
        r = cudalab("cc", "-o", str(program), str(PROGRAMS / "vector_add.cu"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        done = subprocess.run([str(program), "5"], capture_output=True, text=True)
        self.assertIn("0 of 5 elements wrong", done.stdout)

    def test_includes_are_found_as_nvcc_finds_them(self) -> None:
        """The program's folder serves its quoted includes only: its own unistd.h does not hide the
        system's <unistd.h> (nvcc's search); a .c file is C in the host compiler's own dialect
        (struct timeval, which strict C11 leaves undeclared)."""
        r = self.run_files(
            {
                "unistd.h": "#error \"the program's own unistd.h, not the system's\"\n",
                "size.h": "#define SIZE 5\n",
                "main.cu": '#include <unistd.h>\n#include <cstdio>\n#include "size.h"\n'
                'extern "C" double seconds(void);\n'
                "__global__ void fill(int* x) { x[threadIdx.x] = threadIdx.x; }\n"
                "int main() {\n  int* d;\n  cudaMalloc(&d, SIZE * sizeof(int));\n  fill<<<1, SIZE>>>(d);\n"
                "  int h[SIZE];\n  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
                '  printf("last %d, pid %d, clock %d\\n", h[SIZE - 1], getpid() > 0, seconds() > 0);\n'
                "  cudaFree(d);\n}\n",
                "clock.c": "#include <stddef.h>\n#include <sys/time.h>\n"
                "double seconds(void) {\n  struct timeval tv;\n  gettimeofday(&tv, NULL);\n"
                "  return tv.tv_sec + tv.tv_usec * 1e-6;\n}\n",
            }
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("last 4, pid 1, clock 1", r.stdout)

    def test_two_headers_may_each_define_an_overload_of_one_kernel(self) -> None:
        """Each header's kernel is registered for cudaLaunchKernel under a name of its own, and
        each launch runs the overload its arguments choose."""
        r = self.run_files(
            {
                "plain.cuh": "__global__ void scale(float* x, int n) {\n"
                "  if (threadIdx.x < n) x[threadIdx.x] *= 2;\n}\n",
                "constant.cuh": "__global__ void scale(const float* x, float* y, int n) {\n"
                "  if (threadIdx.x < n) y[threadIdx.x] = 3 * x[threadIdx.x];\n}\n",
                "main.cu": '#include <cstdio>\n#include "plain.cuh"\n#include "constant.cuh"\n'
                "int main() {\n  float *x, *y;\n  cudaMallocManaged(&x, 4 * sizeof(float));\n"
                "  cudaMallocManaged(&y, 4 * sizeof(float));\n  for (int i = 0; i < 4; ++i) x[i] = i;\n"
                "  scale<<<1, 4>>>(x, 4);\n  scale<<<1, 4>>>(static_cast<const float*>(x), y, 4);\n"
                "  void (*plain)(float*, int) = scale;\n  int n = 4;\n  void* args[] = {&x, &n};\n"
                "  cudaLaunchKernel(reinterpret_cast<const void*>(plain), dim3(1), dim3(4), args, 0, 0);\n"
                '  printf("%s %g %g\\n", cudaGetErrorString(cudaDeviceSynchronize()), x[3], y[3]);\n}\n',
            }
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("no error 12 18", r.stdout)

    def test_a_static_object_may_free_device_memory_at_exit(self) -> None:
        """Its destructor runs after the runtime's own statics, made at its first call, were
        destroyed: the call must not crash the program (nor lose its buffered output)."""
        r = self.run_source(
            "pool.cu",
            "#include <cstdio>\n#include <vector>\n"
            "struct Pool {\n  std::vector<float*> blocks;\n"
            "  ~Pool() { for (float* b : blocks) cudaFree(b); }\n} pool;\n"
            "int main() {\n"
            "  for (int i = 0; i < 4000; ++i) {  // (the runtime's records of them: past 128 KiB)\n"
            "    pool.blocks.push_back(nullptr);\n    cudaMalloc(&pool.blocks.back(), 256);\n  }\n"
            '  printf("allocated\\n");\n}\n',
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("allocated", r.stdout)

    def test_a_copy_to_the_host_of_memory_nothing_wrote_is_told(self) -> None:
        """A copy back of an array none of whose copied bytes anything wrote is a warning naming
        the copy's line and the array's, told once; an array a kernel wrote in part is not."""
        r = self.run_source(
            "copy_back.cu",
            "#include <cstdio>\n"
            "__global__ void first(int* x) { x[0] = 7; }\n"
            "int main() {\n  int *written, *never, h[64];\n"
            "  cudaMalloc(&written, sizeof(h));\n  cudaMalloc(&never, sizeof(h));\n"
            "  first<<<1, 1>>>(written);\n"
            "  cudaMemcpy(h, written, sizeof(h), cudaMemcpyDeviceToHost);\n"
            "  cudaMemcpy(h, never, sizeof(h), cudaMemcpyDeviceToHost);\n"
            "  cudaMemcpy(h, never, sizeof(h), cudaMemcpyDeviceToHost);\n"
            "  int* rows;\n  size_t pitch;\n  cudaMallocPitch(&rows, &pitch, 8 * sizeof(int), 8);\n"
            "  cudaMemcpy2D(h, 8 * sizeof(int), rows, pitch, 8 * sizeof(int), 8, cudaMemcpyDeviceToHost);\n"
            '  printf("%d\\n", h[0]);\n}\n',
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        told = [line for line in r.stderr.splitlines() if "copies to the host" in line]
        self.assertEqual(len(told), 2, r.stderr)
        self.assertIn(
            "copy_back.cu:9 copies to the host 256 bytes of the array allocated at copy_back.cu:6 (never)",
            told[0],
        )
        self.assertIn("cudaMemcpy2D copies to the host", told[1])
        self.assertIn("3616 bytes of the array allocated at copy_back.cu:13", told[1])  # (7 pitches, a row)

    def test_a_device_function_like_a_host_function_is_named_by_its_own_line(self) -> None:
        """A __device__ function whose body equals a host function's (a CPU reference's twin) is
        compiled apart from it, so a check inside it names its line, not the host function's."""
        body = "{\n  *n = 0;\n  for (int i = 0; i < p->size; i++)\n    if (p->payload[i] == 7) (*n)++;\n}\n"
        r = self.run_source(
            "twins.cu",
            "#include <cstdio>\nstruct Packet {\n  char payload[8];\n  int size;\n};\n"
            f"void count_cpu(const Packet* p, int* n) {body}"
            f"__device__ void count_gpu(const Packet* p, int* n) {body}"
            "__global__ void count(const Packet* p, int* n) { count_gpu(p, n); }\n"
            "__global__ void count_both(const Packet* p, int* n) { count_gpu(p, n); count_gpu(p, n + 1); }\n"
            "int main() {\n  Packet h = {{7}, 8}, *p;\n  int c, *n;\n  count_cpu(&h, &c);\n"
            "  cudaMalloc(&p, sizeof(Packet));\n  cudaMalloc(&n, 2 * sizeof(int));\n  h.size = 100;\n"
            "  cudaMemcpy(p, &h, sizeof(Packet), cudaMemcpyHostToDevice);\n"
            "  count<<<1, 1>>>(p, n);\n"
            '  printf("%d %s\\n", c, cudaGetErrorString(cudaDeviceSynchronize()));\n}\n',
        )
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("at twins.cu:14: a read of memory outside every array", r.stderr)

    def test_file_is_the_path_as_written_as_nvcc_gives_it(self) -> None:
        """__FILE__ in a .cu file and in a .cpp file built with it is the path given to `cudalab
        cc`, relative where it was (a program that prints it prints what it prints on a GPU)."""
        (self.out / "sub").mkdir()
        (self.out / "sub" / "where.cu").write_text(
            "#include <cstdio>\nconst char* host_file();\n"
            'int main() { std::printf("%s %s\\n", __FILE__, host_file()); }\n'
        )
        (self.out / "sub" / "host.cpp").write_text("const char* host_file() { return __FILE__; }\n")
        built = subprocess.run(
            [str(CUDALAB), "cc", "-o", "where", "sub/where.cu", "sub/host.cpp"],
            cwd=self.out,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.assertEqual(built.returncode, 0, built.stdout + built.stderr)
        done = subprocess.run([str(self.out / "where")], capture_output=True, text=True)
        self.assertEqual(done.stdout, "sub/where.cu sub/host.cpp\n", done.stderr)

    def test_a_cxx17_program_compiles_as_nvcc_compiles_it(self) -> None:
        """What nvcc 13 accepts in a C++17 program (its default standard): a lerp() of its own
        (C++20's std::lerp is not declared), ::isfinite without an include (nvcc's headers bring
        math.h in), NULL for a kernel's pointer parameter, and `>>> (` with a space; -std=c++20
        gives std::lerp back."""
        (self.out / "older.cu").write_text(
            "#include <cstdio>\n"
            "__device__ float lerp(float a, float b, float w) { return a + w * (b - a); }\n"
            "__global__ void blend(float* out, const float* scale, int n) {\n"
            "  int i = threadIdx.x;\n"
            "  if (i < n) out[i] = lerp(0.f, 10.f, 0.5f) * (scale ? scale[i] : 1.f);\n}\n"
            "int main() {\n  float* d;\n  cudaMalloc(&d, 4 * sizeof(float));\n"
            "  blend<<<1, 4>>> (d, NULL, 4);\n  float h[4];\n"
            "  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
            '  printf("%g finite %d\\n", h[3], (int)isfinite(h[3]));\n  cudaFree(d);\n}\n'
        )
        r = cudalab("run", str(self.out / "older.cu"), "-std=c++17", "-o", str(self.out / "older"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("5 finite 1", r.stdout)
        (self.out / "newer.cu").write_text(
            "#include <cmath>\n#include <cstdio>\n"
            'int main() { printf("%g\\n", std::lerp(0.0, 10.0, 0.25)); }\n'
        )
        r = cudalab("run", str(self.out / "newer.cu"), "-o", str(self.out / "newer"))
        self.assertNotEqual(r.returncode, 0, "std::lerp without -std=c++20: nvcc 13 refuses it")
        self.assertIn("lerp", r.stderr)
        r = cudalab("run", str(self.out / "newer.cu"), "-std=c++20", "-o", str(self.out / "newer"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("2.5", r.stdout)

    def test_a_row_before_the_first_array_is_named_not_a_crash(self) -> None:
        """A kernel that reads the row above an image of 2048 floats a row (Rodinia's srad at its
        top border), in the program's first array: 8 KiB before the arena's first byte of data is
        still the emu's, so the check names the access instead of the program crashing; unchecked,
        the crash comes with the advice to run it checked."""
        r = self.run_source(
            "above.cu",
            "__global__ void north(const float* image, float* out, int cols) {\n"
            "  int j = threadIdx.x;\n  out[j] = image[j - cols];\n}\n"
            "int main() {\n  const int cols = 2048;\n  float *image, *out;\n"
            "  cudaMalloc(&image, 4 * cols * sizeof(float));\n  cudaMalloc(&out, cols * sizeof(float));\n"
            "  cudaMemset(image, 0, 4 * cols * sizeof(float));\n"
            "  north<<<1, 32>>>(image, out, cols);\n  return cudaDeviceSynchronize() != cudaSuccess;\n}\n",
        )
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("2048 element(s) of 4 bytes before the first element of the array", r.stderr)
        self.assertIn("above.cu:3", r.stderr)
        # Unchecked, the read faults (the gap is no memory): the run says where to look.
        r = cudalab("run", "--unchecked", str(self.out / "above.cu"), "-o", str(self.out / "above_u"))
        self.assertEqual(r.returncode, 128 + 11, r.stdout + r.stderr)
        self.assertIn("run it without --unchecked", r.stderr)

    def test_bad_input_is_a_clear_error(self) -> None:
        r = cudalab("run", str(self.out / "missing.cu"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.cu: no such file", r.stderr)
        r = cudalab("run", "--frobnicate", str(PROGRAMS / "vector_add.cu"))
        self.assertIn("unknown option --frobnicate", r.stderr)
        # A built program where a source belongs (`cudalab run ./prog`): the file named, no traceback.
        built = self.out / "built_program"
        built.write_bytes(b"\x7fELF")
        r = cudalab("run", str(built))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("built_program: not a CUDA or C++ source file", r.stderr)
        self.assertNotIn("Traceback", r.stderr)


class Headers(unittest.TestCase):
    def test_every_toolkit_header_name_has_the_emus_own(self) -> None:
        """A program's #include of any CUDA header finds the emu's (supported or a clear #error),
        never NVIDIA's with clashing types. Checked against the toolkit where one is installed."""
        toolkit = Path("/usr/local/cuda/include")
        if not toolkit.is_dir():
            self.skipTest("no CUDA toolkit here to compare with")
        ours = ROOT / "common" / "emu" / "include"
        names = [p.name for p in toolkit.glob("*.h")] + [
            f"cooperative_groups/{p.name}" for p in (toolkit / "cooperative_groups").glob("*.h")
        ]
        missing = [n for n in names if not (ours / n).exists()]
        self.assertEqual(missing, [])


if __name__ == "__main__":
    if "CUDALAB_TOOLCHAIN" not in os.environ:
        print("note: CUDALAB_TOOLCHAIN is not set: cudalab builds its own runtime", file=sys.stderr)
    unittest.main()
