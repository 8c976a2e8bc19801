"""Unit tests of the emu translator (common/emu/translate.py): what a program's output cannot show.
What the translator makes of CUDA's forms is proven by running them (common/tests/forms, on emu and
on a GPU: common/tools/test_forms.py); here are its errors with their lines, the lines it keeps,
and which kernels get loop forms (the engine a kernel runs on, not visible in its output).
"""

from __future__ import annotations

import re
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import translate  # noqa: E402


def body(src: str) -> str:
    """The translation without its two header lines."""
    return translate.translate(src, "lab.cu").split("\n", 2)[2]


# What a launch's lambda calls the kernel with (launch.h: kernel_argument).
ARGS = "(::cudalab::emu::kernel_argument(cudalab_args)...)"
# How a proven stretch's call of stretch_fine begins (its records built without checks)
PROVEN_CALL = '[&]() __attribute__((no_sanitize("thread"))) { return '

# Declarations that the launches of these tests use: each test's text is a whole program, as Clang
# (the translator's front end) reads it.
DECLARATIONS = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(float* x, float* y = nullptr) {}\n"
    "namespace ns { template <class T, int N> __global__ void k(T* p) {} }\n"
    "dim3 g, b; size_t s; cudaStream_t st; float *x, *y, *p, *a; int n;\n"
)


def program(code: str) -> str:
    """A program: the declarations (on its first lines) and `code` in a function."""
    return DECLARATIONS + "void run() {\n" + code + "\n}\n"


def launches(code: str) -> str:
    """What the translation makes of `code` in a program (the lines after the declarations)."""
    out = body(program(code))
    return out.split("void run() {\n", 1)[1].rsplit("\n}\n", 1)[0]


class Launches(unittest.TestCase):
    def test_lines_are_kept(self) -> None:
        code = "k<<<(n + 255)\n / 256,\n 256>>>(\n x,\n y);\nint after;"
        out = launches(code)
        self.assertEqual(out.count("\n"), code.count("\n"))
        self.assertTrue(out.endswith("\nint after;"))

    def test_a_launch_clang_cannot_read_is_an_error_with_its_line(self) -> None:
        for code in ("int a;\nk<<<1, 1(x);", "int a;\nk<<<1, 1>>>;", "int a;\nundeclared<<<1, 1>>>(x);"):
            with self.subTest(code=code), self.assertRaises(translate.TranslateError) as e:
                translate.translate(program(code), "lab.cu")
            self.assertEqual(e.exception.line, DECLARATIONS.count("\n") + 3)
            self.assertIn("cannot read this launch (Clang: line", str(e.exception))


class Output(unittest.TestCase):
    def test_prelude_and_line_directive(self) -> None:
        out = translate.translate("x;\n", "/abs/lab.cu")
        self.assertTrue(out.startswith('#include "cudalab/emu/prelude.h"\n#line 1 "/abs/lab.cu"\nx;\n'))


class SharedVariables(unittest.TestCase):
    def test_a_file_scope_variable_used_in_a_macro_is_an_error(self) -> None:
        src = "__shared__ int counter;\n#define COUNT counter\n__global__ void k() {\n  COUNT = 1;\n}\n"
        message = "the __shared__ variable 'counter' is used in a macro"
        with self.assertRaisesRegex(translate.TranslateError, message):
            translate.translate(src, "lab.cu")


class LocalHeaders(unittest.TestCase):
    def test_a_launch_after_a_headers_include_runs_its_kernels_loop_form(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "wait.cuh").write_text("__global__ void waits(float* x) { __syncthreads(); }\n")
            (root / "inner.cuh").write_text('#include "wait.cuh"\n__device__ void f(int v) { assert(v); }\n')
            # A header with no CUDA of its own that includes one with a launch (Rodinia's myocyte):
            # translated too, so that its #include names the translated one.
            (root / "launches.cuh").write_text("void go(float* x) { waits<<<1, 1>>>(x); }\n")
            (root / "plain.h").write_text('#include "wait.cuh"\n#include "launches.cuh"\n')
            (root / "main.cu").write_text(
                "__global__ void waits(float* x);\n"
                "void before(float* x) { waits<<<1, 1>>>(x); }\n"
                '#include "inner.cuh"\n'
                "void after(float* x) { waits<<<1, 1>>>(x); }\n"
            )
            (root / "other.cu").write_text('#include "plain.h"\nvoid run(float* x) { waits<<<1, 1>>>(x); }\n')
            target = root / "out" / "main.cu.cpp"
            translate.Translation(root / "out" / "main.cu.cpp.headers").file(root / "main.cu", target)
            before, after = target.read_text().split("\n")[3:6:2]
            self.assertNotIn("cudalab_loops_waits", before)
            self.assertIn(f"return cudalab_loops_waits{ARGS};", after)
            other = root / "out" / "other.cu.cpp"
            translate.Translation(root / "out" / "other.cu.cpp.headers").file(root / "other.cu", other)
            self.assertIn(f"return cudalab_loops_waits{ARGS};", other.read_text())
            header = next((root / "out").rglob("wait.cuh.cpp")).read_text()
            self.assertIn("::cudalab::emu::ThreadLoops cudalab_loops_waits(float* x)", header)
            plain = next((root / "out").rglob("other.cu.cpp.headers/**/plain.h.cpp")).read_text()
            self.assertIn("launches.cuh.cpp", plain)
            nested = next((root / "out").rglob("other.cu.cpp.headers/**/launches.cuh.cpp")).read_text()
            self.assertIn('::cudalab::emu::Launch("waits"', nested)


class DeviceCode(unittest.TestCase):
    def test_other_inline_ptx_is_refused_with_its_line(self) -> None:
        with self.assertRaises(translate.TranslateError) as e:
            translate.translate(
                '__device__ int f(int w) {\n  int r; asm("prmt.b32 %0, %1;" : "=r"(r) : "r"(w));\n}', "x.cu"
            )
        self.assertEqual(e.exception.line, 2)
        self.assertIn("inline PTX", str(e.exception))

    def test_device_codes_shifts_by_an_amount_from_a_variable_shift_as_a_gpus(self) -> None:
        """Shifts by a variable amount in device code become the GPU's (which the runtime test
        Surface.ShiftsByTheWidthOrMoreClampAsOnTheGpu proves); by a literal, and in host code,
        they stay as written."""
        translated = body(
            "__global__ void k(unsigned* x, int n) { x[0] = (1u << n) - 1; x[1] <<= n + 1; "
            "x[2] = x[3] >> 4; }\n"
            "int host(int a, int n) { return a << n; }\n"
        )
        kernel, host = translated.splitlines()[:2]
        self.assertIn("x[0] = (::cudalab::emu::shift_left(1u , n)) - 1;", kernel)
        self.assertIn("::cudalab::emu::shift_left_assign(x[1] , n + 1);", kernel)
        self.assertIn("x[2] = x[3] >> 4;", kernel)
        self.assertEqual(host, "int host(int a, int n) { return a << n; }")


class LoopForms(unittest.TestCase):
    """Which kernels run as loops between their waits when unchecked (thread_loops.py), and which
    keep fibers: each refusal is a case where loops would compute otherwise."""

    FENCE = "__device__ void fence() { __syncthreads(); }\n__device__ void deeper() { fence(); }\n"

    REDUCE = (
        "__global__ void reduce(const float* in, float* out) {\n"
        "  __shared__ float s[256];\n"
        "  s[threadIdx.x] = in[threadIdx.x];\n"
        "  __syncthreads();\n"
        "  if (threadIdx.x != 0) return;\n"
        "  out[0] = s[0] + fmaxf(s[1], 0.0f);\n"
        "}\n"
    )

    def form(self, kernel_body: str, before: str = "") -> str | None:
        """ "loops" or None (fibers) for a kernel k with this body."""
        out = body(f"{before}__global__ void k(float* x) {{\n{kernel_body}\n}}\n")
        return "loops" if "ThreadLoops cudalab_loops_k(" in out else None

    def stretches(self, kernel_body: str) -> list[str]:
        """The stretches of kernel k's loop form, in order; each must end before the next starts
        (one that held another would run it once per thread)."""
        out = body(f"__global__ void k(int* x) {{\n{kernel_body}\n}}\n")
        form = out[out.index("ThreadLoops cudalab_loops_k(") :]
        form = re.sub(r"\n#ifdef CUDALAB_EMU_CHECKED\n.*?#endif\n", "", form, flags=re.S)  # (proven copies)
        found = []
        for piece in form.split("cudalab_threads.run")[1:]:
            self.assertIn("return false; });", piece, "a stretch holds the next")
            found.append(piece[: piece.index("return false; });")])
        return found

    def test_each_stretch_ends_before_the_next_and_sets_threadidx_where_it_is_read(self) -> None:
        found = self.stretches(
            "int v = x[threadIdx.x];\n  __syncthreads();\n  x[0] = v;\n"
            "  v += __shfl_down_sync(0xffffffff, v, 1);\n  int w = __shfl_sync(0xffffffff, v, threadIdx.x);\n"
            "  x[1] = v + w;"
        )
        self.assertEqual([s.split("(", 1)[0] for s in found], ["", "<false>", "<false, true>", "", ""])
        self.assertIn("x[0] = v;", found[1])
        # (the block's mask and delta, given once; the kept copies read where they are, by the
        # threads in order even in a launch run again last first)
        self.assertIn("v += cudalab_warps.down_result_in(cudalab_kept_v_", found[2])
        self.assertIn("idx(cudalab_t, __FILE__, __LINE__, (0xffffffff), (v), (threadIdx.x))", found[3])

    def test_a_shuffled_value_that_is_not_a_kept_variable_is_put_first(self) -> None:
        found = self.stretches(
            "int v = x[threadIdx.x];\n  __syncthreads();\n  v += __shfl_down_sync(0xffffffff, v + 1, 1);\n"
            "  x[threadIdx.x] = v;"
        )
        self.assertIn("put(cudalab_t, (v + 1))", found[1])
        self.assertIn("down_result<", found[2])

    def template_form(self, kernel_body: str) -> str:
        """The loop form of a template kernel k<N> with this body, in a file that declares an
        `operator+=` (as cuda_fp16.h does), so that Clang leaves `v += <a value of a type the
        template does not know yet>` an unresolved call of it."""
        out = body(
            "struct Half { unsigned short bits; };\n"
            "__device__ Half& operator+=(Half& a, Half b);\n"
            f"template <int N> __global__ void k(float* x) {{\n{kernel_body}\n}}\n"
            "void run(float* x) { k<64><<<1, 64>>>(x); }\n"
        )
        return out[out.index("ThreadLoops cudalab_loops_k(") :]

    def test_a_sum_by_an_unresolved_operator_stays_each_threads(self) -> None:
        form = self.template_form(
            "  __shared__ float tile[N];\n  tile[threadIdx.x] = x[threadIdx.x];\n  __syncthreads();\n"
            "  float sum = 0.0f;\n  for (int k = 0; k < 4; ++k) sum += tile[(threadIdx.x + k) % N];\n"
            "  x[threadIdx.x] = sum;"
        )
        # (declared in the stretch, not once for the block: every thread adds into its own)
        self.assertIn("-> bool {  \n  float sum = 0.0f;", form)

    def test_a_stretch_captures_by_name_the_block_constants_it_names(self) -> None:
        form = self.template_form(
            "  const int per_thread = N / 16;\n  float r[per_thread];\n"
            "  for (int k = 0; k < per_thread; ++k) r[k] = x[threadIdx.x * per_thread + k];\n"
            "  __syncthreads();\n  x[threadIdx.x] = r[0];"
        )
        self.assertIn("cudalab_threads.run([&, per_thread](unsigned cudalab_t", form)

    def test_a_value_from_the_threads_index_alone_is_computed_again(self) -> None:
        found = self.stretches(
            "const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n  int v = x[t];\n"
            "  __syncthreads();\n  x[i] = v + t;"
        )
        self.assertIn("const int t = threadIdx.x;", found[1])  # (computed again)
        self.assertIn("RESTORE(i, cudalab_kept_i_", found[1])  # (it names a variable of the thread's)
        self.assertIn("RESTORE(v, cudalab_kept_v_", found[1])  # (from memory)

    def test_a_stretch_for_the_first_threads_of_a_row_visits_only_those(self) -> None:
        for code, runs_while in (
            ("int t = threadIdx.x; __syncthreads(); if (t < blockDim.x / 2) x[t] = 0;", True),
            ("__syncthreads(); if (threadIdx.x < 4u) x[threadIdx.x] = 0;", True),
            ("int t = threadIdx.x; __syncthreads(); if (t < x[0]) x[t] = 0;", False),  # (memory)
            ("int t = threadIdx.x; __syncthreads(); if (t < 4) x[t] = 0; else x[t] = 1;", False),
            ("int t = threadIdx.x + 1; __syncthreads(); if (t < 4) x[t] = 0;", False),
            ("char t = threadIdx.x; __syncthreads(); if (t < 4) x[t] = 0;", False),  # (narrow)
            ("int t = threadIdx.y; __syncthreads(); if (t < 4) x[t] = 0;", False),
        ):
            with self.subTest(code=code):
                self.assertEqual(
                    "run_while(" in body(f"__global__ void k(int* x) {{\n{code}\n}}\n"), runs_while
                )

    def test_a_value_that_may_differ_where_it_is_needed_is_kept(self) -> None:
        for code in (
            "int t = threadIdx.x; __syncthreads(); t += 1; x[t] = 0;",  # changed
            "int t = threadIdx.x + x[0]; __syncthreads(); x[t] = 0;",  # read from memory
            "int t = threadIdx.x + min(1, 2); __syncthreads(); x[t] = 0;",  # a call
            "int t = threadIdx.x; __syncthreads(); { int threadIdx = 0; x[t] = threadIdx; }",  # shadowed
        ):
            with self.subTest(code=code):
                found = self.stretches(code)
                self.assertIn("CUDALAB_LOOPS_RESTORE(t, cudalab_kept_t_", found[-1])

    def test_the_form_follows_the_kernel_and_launches_run_it(self) -> None:
        out = body(self.REDUCE + "void run(const float* a, float* b) { reduce<<<1, 256>>>(a, b); }\n")
        form = out[
            out.index("::cudalab::emu::ThreadLoops cudalab_loops_reduce(") - len('#line 1 "lab.cu"\n') :
        ]
        self.assertTrue(
            form.startswith('#line 1 "lab.cu"\n::cudalab::emu::ThreadLoops cudalab_loops_reduce(')
        )
        self.assertIn(
            "s[threadIdx.x] = in[threadIdx.x];  return false; });\n  cudalab_threads.barrier(", form
        )
        # (for checked and unchecked code alike: each stretch's second parameter is the index that
        # checked code's stretches read, thread_loops.h)
        self.assertIn("(unsigned cudalab_t, CUDALAB_LOOPS_INDEX) -> bool {", form)
        # (and checked code's own only where a stretch is proven: s's store of what it loads)
        self.assertEqual(form[: form.index("void run(")].count("CUDALAB_EMU_CHECKED"), 1)
        call = f"CUDALAB_EMU_CHECKED\nif ({PROVEN_CALL}::cudalab::emu::stretch_fine(__FILE__, {{}}, {{{{in, "
        self.assertIn(call, form)
        self.assertIn('return {}; }\n#line 8 "lab.cu"\nvoid run(', form)
        self.assertIn(
            "::cudalab::emu::LoopFormCall{[&](auto&... cudalab_args) { return "
            f"cudalab_loops_reduce{ARGS}; }}}}, a, b);",
            out,
        )
        # The kernel itself is unchanged, and so are the numbers of its lines.
        self.assertIn("  __syncthreads();\n  if (threadIdx.x != 0) return;", out)

    def test_template_and_namespace_of_a_launch_are_kept(self) -> None:
        src = (
            "namespace ns {\ntemplate <int TILE_WIDTH>\n__global__ void tiled(float* p) {\n"
            "  __syncthreads();\n}\n}\nvoid run(float* p) { ns::tiled<16><<<1, 1>>>(p); }\n"
        )
        out = body(src)
        self.assertIn("template <int TILE_WIDTH>\n::cudalab::emu::ThreadLoops cudalab_loops_tiled(", out)
        self.assertIn(f"{{ return ns::cudalab_loops_tiled<16>{ARGS}; }}", out)

    def test_a_launch_before_the_definition_runs_the_kernel(self) -> None:
        src = (
            "__global__ void k(float*);\nvoid run(float* p) { k<<<1, 1>>>(p); }\n"
            + "__global__ void k(float* x) { __syncthreads(); }\n"
        )
        self.assertIn("cudalab_loops_k(", body(src))
        self.assertNotIn("LoopFormCall", body(src))

    def test_a_kernel_without_a_wait_has_none(self) -> None:
        self.assertIsNone(self.form("x[0] = 1;"))

    def test_a_kernel_defined_in_a_macro_keeps_its_fibers(self) -> None:
        for src in (
            "#define K __global__ void k(float* x) { __syncthreads(); }\nK\n",
            "#define K \\\n  __global__ void k(float* x) { __syncthreads(); }\nK\n",
        ):
            with self.subTest(src=src):
                self.assertNotIn("cudalab_loops_k", body(src))

    def test_the_checkers_translation_has_none(self) -> None:
        out = translate.translate_for_checker(
            self.REDUCE + "void run(const float* a, float* b) { reduce<<<1, 256>>>(a, b); }\n", "lab.cu"
        )
        self.assertNotIn("cudalab_loops", out)

    def test_barriers_and_shuffles_reached_by_every_thread_run_as_loops(self) -> None:
        for code in (
            "x[threadIdx.x] = 1; __syncthreads(); x[0] += x[1];",
            "for (int s = blockDim.x / 2; s > 0; s >>= 1) { x[threadIdx.x] += s; __syncthreads(); }",
            "#pragma unroll\n  for (int s = 0; s < 4; ++s) { x[threadIdx.x] += s; __syncthreads(); }",
            "float v = x[threadIdx.x];\n  v += __shfl_down_sync(0xffffffff, v, 16);\n  x[0] = v;",
            # (a loop over tiles whose bounds are variables of the block's values: NVIDIA's matrixMul)
            "int by = blockIdx.y;\n  int first = by * 4, last = first + 3;\n"
            "  for (int a = first; a <= last; a += 1) { x[threadIdx.x] += a; __syncthreads(); }",
        ):
            with self.subTest(code=code):
                self.assertEqual(self.form(code), "loops")

    def test_a_return_is_the_threads_and_a_lambdas_return_is_its_own(self) -> None:
        out = body(
            "__global__ void k(float* x) {\n  if (threadIdx.x > 40) return;\n  __syncthreads();\n"
            "  auto at = [&](int i) { return x[i]; };\n  x[0] = at(1);\n}\n"
        )
        form = out[out.index("ThreadLoops") :]
        self.assertIn("if (threadIdx.x > 40) return true;", form)
        self.assertIn("[&](int i) { return x[i]; }", form)

    TILE_SUM = (
        "  __shared__ float tile[16][16];\n  float sum = 0;\n"
        "  tile[threadIdx.y][threadIdx.x] = x[threadIdx.x];\n  __syncthreads();\n"
        "  for (int k = 0; k < 16; ++k) sum += tile[threadIdx.y][k] * tile[k][threadIdx.x];\n"
        "  __syncthreads();\n  x[threadIdx.x] = sum;"
    )

    def proven(self, code: str, before: str = "") -> list[str]:
        """The proven stretches' calls of stretch_fine in kernel k(float* x) of `code` (after the
        declarations `before`), in order."""
        out = body(f"{before}__global__ void k(float* x) {{\n{code}\n}}\n")
        form = out[out.index("ThreadLoops cudalab_loops_k(") :]
        opening = r"#ifdef CUDALAB_EMU_CHECKED\nif \(" + re.escape(PROVEN_CALL)
        return re.findall(opening + r"(::cudalab::emu::stretch_fine\(.*?\)); \}\(\)\) cudalab_threads", form)

    def test_stretches_whose_accesses_are_proven_get_a_copy_without_checks(self) -> None:
        out = body(f"__global__ void k(float* x) {{\n{self.TILE_SUM}\n}}\n")
        form = out[out.index("ThreadLoops cudalab_loops_k(") :]
        tile, sums, output = self.proven(self.TILE_SUM)
        # the tile's: a load of x at threadIdx.x, a store of tile at (y, x); no loop
        s = "static_cast<long long>"
        self.assertTrue(
            tile.startswith(
                "::cudalab::emu::stretch_fine(__FILE__, {}, {{x, ::cudalab::emu::Space::global, false, 4, "
            )
        )
        self.assertIn(f"{{{{{s}(0), {s}(sizeof(x[0])), {s}(0), {s}(1), {s}(0), {s}(0), {{0}}}}}}}}", tile)
        self.assertIn("{&tile, ::cudalab::emu::Space::shared, true, 4, ", tile)
        self.assertTrue(tile.endswith(", cudalab_threads.returned(), true)"))
        # the sums': k's bounds and step; tile's first load: y then k, as the coefficients of
        # (constant, x, y, z, k)
        self.assertTrue(
            sums.startswith(f"::cudalab::emu::stretch_fine(__FILE__, {{{{{s}(0), {s}(16), {s}(1)}}}}, ")
        )
        coefficients = ", ".join(f"{s}({c})" for c in (0, 0, 1, 0))
        self.assertIn(f"sizeof(tile[0])), {coefficients}, {{{s}(0)}}}}", sums)
        # the output's: a store to x, after a barrier (nothing of the block touched memory since)
        self.assertIn("{&tile, ::cudalab::emu::Space::shared, false, 6, ", sums)
        self.assertIn("{{x, ::cudalab::emu::Space::global, true, 8, ::cudalab::emu::kEveryThread, ", output)
        call = f"CUDALAB_EMU_CHECKED\nif ({PROVEN_CALL}::cudalab::emu::stretch_fine(__FILE__, {{{{"
        proven = form[form.index(call) :]
        proven = proven[: proven.index("#endif")]
        self.assertIn('__attribute__((no_sanitize("thread"))) -> bool', proven)
        # the copy names the kept sum itself; it keeps the kernel's line (5), and the checked stretch too
        self.assertIn("CUDALAB_LOOPS_REFER(sum, cudalab_kept_sum_", proven)
        self.assertIn("\n#line 5\n\n  for (int k = 0; k < 16; ++k) sum += tile[threadIdx.y][k]", proven)
        self.assertIn("#endif\n#line 5\ncudalab_threads.run(", form)

    def proven_lines(self, code: str, before: str = "") -> set[int]:
        """The lines of the accesses of the proven stretches of kernel k(float* x) of `code`."""
        calls = self.proven(code, before)
        return {int(n) for call in calls for n in re.findall(r"(?:true|false), (\d+), ", call)}

    def test_a_stretch_with_an_access_the_record_cannot_prove_keeps_its_checks(self) -> None:
        sums = "sum += tile[threadIdx.y][k] * tile[k][threadIdx.x];"
        tile = "tile[threadIdx.y][threadIdx.x] = x[threadIdx.x];"
        self.assertEqual(self.proven_lines(self.TILE_SUM), {4, 6, 8})
        for change, line in (
            ((sums, "if (k > 0) tile[k][threadIdx.x] += sum;"), 6),  # a store under another if
            ((sums, "{ float local[2] = {sum, 1}; sum += local[k % 2]; }"), 6),  # local memory
            (("tile[threadIdx.y][k]", "tile[threadIdx.y * k][0]"), 6),  # a product of two indices
            (("tile[threadIdx.y][k]", "tile[threadIdx.y][(int)x[0]]"), 6),  # an index from memory
            (("k < 16; ++k", "k < threadIdx.x; ++k"), 6),  # a bound of the thread's
            ((sums, "{ float* p = x; sum += p[k]; }"), 6),  # a pointer other than a parameter
            ((tile, f"if (threadIdx.x > 0) {tile}"), 4),  # a store some threads make
            ((tile, "tile[threadIdx.y][threadIdx.x] = x[0] = 1;"), 4),  # a store inside an expression
            ((tile, f"if (threadIdx.x > 0) x += 1; {tile}"), 4),  # a parameter moved by some threads
        ):
            with self.subTest(change=change[1]):
                code = self.TILE_SUM.replace(*change)
                self.assertNotEqual(code, self.TILE_SUM)
                out = body(f"__global__ void k(float* x) {{\n{code}\n}}\n")
                self.assertIn("ThreadLoops cudalab_loops_k(", out)
                self.assertNotIn(line, self.proven_lines(code))

    def test_a_global_store_is_proven_whatever_came_before_it_in_the_epoch(self) -> None:
        # (the launch asks that no checked access touched global memory since the barrier:
        # stretch_fine; the translator proves the store after a loop whose body ends at a barrier,
        # a tiled product's output, and after stretches that touched memory alike)
        loop = "  __shared__ float t[64];\n"
        loop += "  for (int s = 0; s < 2; ++s) { t[threadIdx.x] = s; __syncthreads(); }\n"
        self.assertEqual(self.proven_lines(loop + "  x[threadIdx.x] = t[threadIdx.x];"), {3, 4})
        ends_otherwise = loop.replace(
            "t[threadIdx.x] = s; __syncthreads();", "__syncthreads(); t[threadIdx.x] = s;"
        )
        self.assertIn(4, self.proven_lines(ends_otherwise + "  x[threadIdx.x] = t[threadIdx.x];"))
        touched = loop.replace("  for", "  x[0] = 1;\n  for")
        self.assertIn(5, self.proven_lines(touched + "  x[threadIdx.x] = t[threadIdx.x];"))
        self.assertEqual(
            self.proven_lines(loop + "  __syncthreads();\n  x[threadIdx.x] = t[threadIdx.x];"), {3, 5}
        )
        self.assertEqual(self.proven_lines("  x[threadIdx.x] = 1;\n  __syncthreads();"), {2})

    def test_a_loop_that_steps_by_a_block_value_is_proven_with_its_step(self) -> None:
        code = "  __shared__ float t[8][8];\n"
        code += "  for (int j = 0; j < 8; j += blockDim.y) t[threadIdx.y + j][threadIdx.x] = x[j];\n"
        code += "  __syncthreads();"
        (stretch,) = self.proven(code)
        s = "static_cast<long long>"
        self.assertIn(f"{{{{{s}(0), {s}(8), {s}(blockDim . y)}}}}", stretch)
        for step in ("j += threadIdx.y", "j *= 2", "j -= 1"):  # (the thread's step; other forms)
            with self.subTest(step=step):
                self.assertEqual(self.proven_lines(code.replace("j += blockDim.y", step)), set())

    def test_loads_of_a_constant_array_are_proven_and_stores_to_it_are_not(self) -> None:
        weights = "__constant__ float w[3];\n"
        code = "  __shared__ float t[66];\n  t[threadIdx.x] = x[threadIdx.x];\n  __syncthreads();\n"
        code += "  float sum = 0;\n  for (int j = 0; j < 3; ++j) sum += w[j] * t[threadIdx.x + j];\n"
        code += "  x[threadIdx.x] = sum;"
        out = body(f"{weights}__global__ void k(float* x) {{\n{code}\n}}\n")
        self.assertIn("{&w, ::cudalab::emu::Space::constant, false, 7, ", out)
        # (a kernel cannot store to constant memory; the record does not admit it either)
        stored = body(
            f"{weights}__global__ void k(float* x) {{\n  w[threadIdx.x] = 1;\n  __syncthreads();\n}}\n"
        )
        self.assertNotIn("stretch_fine", stored)

    def test_a_pointer_moved_once_at_the_kernels_level_is_proven_at_its_offset(self) -> None:
        move = "  int base = blockIdx.x * 64 + threadIdx.x;\n  x += base;\n"
        (stretch,) = self.proven(move + "  x[1] = 2;\n  __syncthreads();")
        # (its subscript: the move's offset, blockIdx.x * 64 + threadIdx.x, plus 1)
        self.assertIn("{x, ::cudalab::emu::Space::global, true, 4, ::cudalab::emu::kEveryThread, ", stretch)
        self.assertIn("(((blockIdx . x) * (64)) + (1)), static_cast<long long>((0) + (1))", stretch)
        step = "__device__ void step(float*& p) { p += 1; }\n"
        for moved_otherwise in (
            "  int base = threadIdx.x;\n  if (base > 0) x += base;\n",  # under an if
            "  int base = threadIdx.x;\n  x += base;\n  x += 1;\n",  # moved twice
            "  int base = threadIdx.x;\n  x = x + base;\n",  # another form
            "  int base = threadIdx.x;\n  x += base;\n  step(x);\n  __syncthreads();\n",  # and by a call
        ):
            with self.subTest(moved=moved_otherwise):
                code = moved_otherwise + "  x[1] = 2;\n  __syncthreads();"
                self.assertEqual(self.proven_lines(code, step), set())

    TREE = (
        "  __shared__ float part[64];\n  part[threadIdx.x] = 1;\n  __syncthreads();\n"
        "  for (int s = 32; s > 0; s >>= 1) {\n"
        "    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];\n"
        "    __syncthreads();\n  }\n  x[0] = part[0];"
    )

    def test_accesses_below_a_thread_bound_are_proven_for_the_threads_it_bounds(self) -> None:
        out = body(f"__global__ void k(float* x) {{\n{self.TREE}\n}}\n")
        first, step, _ = self.proven(self.TREE)  # (and the output after the loop)
        self.assertIn("{&part, ::cudalab::emu::Space::shared, true, 3, ::cudalab::emu::kEveryThread, ", first)
        # the step: a load and a store of the thread's own element, a load s further on, for x < s
        bound = "static_cast<long long>(::cudalab::emu::bound_of<unsigned int>(s))"
        bounded = "::cudalab::emu::Space::shared, {}, 6, " + bound + ", "
        self.assertEqual([step.count(bounded.format(f)) for f in ("false", "true")], [2, 1])
        self.assertIn("run_proven_while([&](unsigned, CUDALAB_LOOPS_INDEX) __attribute__", out)
        # (the stencil's halo: stores of a few threads beside every thread's)
        halo = "part[threadIdx.x + 2] = x[0];\n  if (threadIdx.x < 2) { part[threadIdx.x] = 0; "
        halo += "part[threadIdx.x + 66] = 0; }"
        (stretch,) = self.proven(f"  __shared__ float part[68];\n  {halo}\n  __syncthreads();")
        bound = "static_cast<long long>(::cudalab::emu::bound_of<unsigned int>(2)), 0u, false, 1u, {{"
        self.assertEqual(stretch.count(bound), 2)
        # (the block's result, stored by its first thread: the threads below 1)
        result = self.TREE.replace("x[0] = part[0];", "if (threadIdx.x == 0) x[blockIdx.x] = part[0];")
        *_, output = self.proven(result)
        first = ", 9, static_cast<long long>(1), 0u, false, "
        self.assertEqual(
            [
                output.count(f"Space::{space}, {store}{first}")
                for space, store in (("shared", "false"), ("global", "true"))
            ],
            [1, 1],
        )

    def test_a_store_by_each_warps_first_lane_is_proven_for_those_threads(self) -> None:
        # (`i / 32` of those threads: the block's part divided, where 32 divides it; `warp` and
        # `lane` stand for their initializers)
        code = "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float v = 1.0f;\n  __syncthreads();\n"
        code += "  if (threadIdx.x % 32 == 0 && i < 64) x[i / 32] = v;"
        (store,) = self.proven(code)[1:]
        block = "(blockIdx . x) * (blockDim . x)"
        self.assertIn(f"Space::global, true, 5, static_cast<long long>((({block}) % 32 == 0) ? ", store)
        self.assertIn(": ::cudalab::emu::kNoBound), 0u, false, 32u, {{", store)
        self.assertIn(f"static_cast<long long>(({block}) / 32), static_cast<long long>(1), ", store)
        shared = "  __shared__ float sums[8];\n  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n"
        shared += "  __syncthreads();\n  if (lane == 0) sums[warp] = 1.0f;\n  __syncthreads();\n"
        shared += "  x[threadIdx.x] = sums[0];"
        lanes = self.proven(shared)[1]
        self.assertIn("Space::shared, true, 5, ::cudalab::emu::kEveryThread, 0u, false, 32u, {{", lanes)
        # (a division of another kind, a lane other than the first, or another test: no proof)
        for other in ("x[i / 16]", "x[i % 32]"):
            self.assertEqual(len(self.proven(code.replace("x[i / 32]", other))), 1, other)
        for other in ("threadIdx.x % 32 == 1", "threadIdx.x % 32 != 0", "threadIdx.x / 32 == 0"):
            self.assertEqual(len(self.proven(code.replace("threadIdx.x % 32 == 0", other))), 1, other)
        self.assertEqual(len(self.proven(code.replace("x[i / 32] = v", "x[i] = v"))), 2)
        # (the same lanes and warps by bits)
        bits = shared.replace("threadIdx.x % 32", "threadIdx.x & 31")
        bits = bits.replace("threadIdx.x / 32", "threadIdx.x >> 5")
        self.assertEqual(self.proven(bits)[1], lanes)
        # (and by nvcc's built-in warpSize, 32)
        built_in = shared.replace("% 32", "% warpSize").replace("/ 32", "/ warpSize")
        self.assertEqual(self.proven(built_in)[1], lanes)
        for other in ("threadIdx.x & 30", "threadIdx.x >> 4"):
            changed = shared.replace("threadIdx.x % 32" if "&" in other else "threadIdx.x / 32", other)
            self.assertEqual(len(self.proven(changed)), 2, other)

    def test_each_access_says_the_loops_it_is_in_and_whether_a_thread_may_skip_it(self) -> None:
        # (for the counters: each value of an enclosing loop is a visit, a skipped load none)
        k = "for (int k = 0; k < 4; ++k) sum += part[k]"
        code = "  __shared__ float part[64];\n  part[threadIdx.x] = 1;\n  __syncthreads();\n"
        code += f"  float sum = 0;\n  {k};\n  for (int j = 0; j < 2; ++j) {{ {k} * j; }}\n"
        code += "  sum += threadIdx.x % 2 ? part[1] : 0;\n  sum += sum > 0 && part[2] > 0;\n"
        code += "  if (sum > 1) sum += part[3];\n  x[threadIdx.x] = sum + part[4];\n"
        _, sums = self.proven(code)
        self.maxDiff = None
        flags = re.findall(r"Space::(\w+), (true|false), (\d+), [^,]+, (\d+)u, (true|false),", sums)
        self.assertEqual(
            flags,
            [
                ("shared", "false", "6", "1", "false"),  # in the first loop
                ("shared", "false", "7", "6", "false"),  # in the second and the third
                ("shared", "false", "8", "0", "true"),  # under ?:
                ("shared", "false", "9", "0", "true"),  # on the right of &&
                ("shared", "false", "10", "0", "true"),  # under an if
                ("shared", "false", "11", "0", "false"),
                ("global", "true", "11", "0", "false"),
            ],
        )

    def test_a_store_under_the_guard_of_the_global_index_is_proven_below_its_bound(self) -> None:
        # (x's bound is the limit less the index's offset, where the index cannot wrap: index_bound)
        code = "  __shared__ float part[64];\n  part[threadIdx.x] = 1;\n  __syncthreads();\n"
        guarded = code + "  {}g = blockIdx.x * blockDim.x + threadIdx.x;\n"
        guarded += "  if (g < {}) x[g] = part[threadIdx.x];"
        _, output = self.proven(guarded.format("int ", "100"))
        bound = "static_cast<long long>(::cudalab::emu::index_bound(100, "
        self.assertIn(f"Space::global, true, 6, {bound}", output)
        # an unsigned index or limit compares as unsigned numbers, which the bound would not be
        for declared, limit in (("unsigned ", "100"), ("int ", "100u")):
            with self.subTest(declared=declared, limit=limit):
                self.assertEqual(len(self.proven(guarded.format(declared, limit))), 1, "the first only")

    def test_a_load_under_a_threads_bound_in_an_expression_is_the_threads_below_it(self) -> None:
        # (`g < 100 ? x[g] : 0` and `g < 100 && x[g] > 0`: x[g] by the threads below the bound)
        code = "  __shared__ float part[64];\n  int g = blockIdx.x * blockDim.x + threadIdx.x;\n"
        code += "  part[threadIdx.x] = g < 100 ? x[g] : x[0];\n  part[threadIdx.x] += g < 100 && x[g] > 0;"
        (stretch,) = self.proven(code + "\n  __syncthreads();")
        access = r"\{&?(\w+), ::cudalab::emu::Space::\w+, (true|false), \d+, (.*?), \d+u, (true|false),"
        flags = re.findall(access, stretch)
        self.assertEqual(
            [(array, store, "index_bound" in bound, sometimes) for array, store, bound, sometimes in flags],
            [
                ("x", "false", False, "true"),  # x[0], the other branch: some threads
                ("x", "false", True, "false"),  # x[g]: the threads below the bound
                ("part", "true", False, "false"),
                ("x", "false", True, "false"),
                ("part", "false", False, "false"),
                ("part", "true", False, "false"),
            ],
        )

    def test_a_stretch_that_touches_no_memory_is_proven_wherever_it_lies(self) -> None:
        # (no barrier after `tid`'s stretch: nothing in it can race with a later access)
        code = "  const int tid = threadIdx.x;\n  const int base = blockIdx.x * 64;\n"
        code += "  x[base + tid] = 1;\n  __syncthreads();"
        first, store = self.proven(code)
        self.assertTrue(first.startswith("::cudalab::emu::stretch_fine(__FILE__, {}, {}, "), first)
        self.assertIn("Space::global, true, 4, ", store)
        # (a stretch with a store keeps its checks where no barrier follows; the store after it
        # is proven where the launch finds that no checked access touched global memory since)
        (after,) = self.proven(code.replace("const int base", "x[tid] = 2;\n  const int base"))
        self.assertIn("Space::global, true, 5, ", after)

    def test_a_stretch_of_warp_shuffles_of_numbers_is_proven_and_its_copy_still_shuffles(self) -> None:
        # (the sum's loop, a shuffle per step, touches no memory; the shuffle's own waiting is
        # the warp's, as in the checked code)
        code = "  float v = 1.0f;\n"
        code += "  for (int offset = 16; offset > 0; offset /= 2)\n"
        code += "    v += __shfl_down_sync(0xffffffff, v, offset);\n"
        code += "  __syncthreads();\n  x[threadIdx.x] = v;"
        start, loop, store = self.proven(code)
        returned = "cudalab_threads.returned()"
        self.assertEqual(loop, f"::cudalab::emu::stretch_fine(__FILE__, {{}}, {{}}, {returned}, false)")
        self.assertIn("Space::global, true, 6, ", store)
        form = body(f"__global__ void k(float* x) {{\n{code}\n}}\n")
        form = form[form.index("ThreadLoops cudalab_loops_k(") :]
        second_copy = form[form.index(PROVEN_CALL, form.index(PROVEN_CALL) + 1) :]
        self.assertIn("down_result_in(", second_copy[: second_copy.index("#endif")])
        # a shuffle of a value loaded from memory keeps its checks
        shuffled_load = code.replace("v, offset)", "x[threadIdx.x], offset)")
        self.assertEqual(self.proven(shuffled_load), [start, store])
        # a load before the shuffles is proven (told that a warp's meeting follows); a store is not
        loaded = code.replace("float v = 1.0f;", "float v = x[threadIdx.x];")
        load = self.proven(loaded)[0]
        self.assertIn("{x, ::cudalab::emu::Space::global, false, 2, ", load)
        self.assertTrue(load.endswith(", cudalab_threads.returned(), false)"), load)
        stored = code.replace("float v = 1.0f;", "float v = 1.0f;\n  x[threadIdx.x] = v;")
        self.assertEqual(self.proven(stored)[0], loop)

    def test_the_dynamic_shared_array_is_proven_where_the_kernel_declares_it(self) -> None:
        # (its extent: the launch's, extent_of giving kDynamicExtent for an array of unknown bound)
        dynamic = self.TREE.replace("__shared__ float part[64];", "extern __shared__ float part[];")
        self.assertEqual(len(self.proven(dynamic)), 3)
        self.assertIn("extent_of<::std::remove_reference_t<decltype(part)>, 0>", self.proven(dynamic)[1])
        at_file_scope = dynamic.replace("  extern __shared__ float part[];\n", "")
        self.assertEqual(self.proven(at_file_scope, "extern __shared__ float part[];\n"), [])

    GLOBAL_TREE = (
        "  const int tid = threadIdx.x;\n  float *y = x + blockDim.x * blockIdx.x + 1;\n"
        "  for (int s = 32; s > 0; s >>= 1) {\n    if (tid < s) y[tid] += y[tid + s];\n"
        "    __syncthreads();\n  }\n  if (tid == 0) x[blockIdx.x] = y[0];"
    )

    def test_a_pointer_moved_from_a_parameter_stands_for_the_parameter(self) -> None:
        # (`y`: x moved by the block's offset, its steps x's elements at that offset; the loop's
        # first step begins the block's interval, as a stretch of locals alone comes before it)
        _, step, output = self.proven(self.GLOBAL_TREE)
        s = "static_cast<long long>"
        offset = "((0) + (1)) + ((blockDim . x) * (blockIdx . x))"
        self.assertIn("{x, ::cudalab::emu::Space::global, true, 5, ", step)
        self.assertEqual(step.count(f"{s}(sizeof(x[0])), {s}({offset}), {s}((0) + (1))"), 2, step)
        self.assertIn(f"{s}(sizeof(x[0])), {s}(({offset}) + ((0) + (s))), {s}((0) + (1))", step)
        self.assertIn("{x, ::cudalab::emu::Space::global, false, 8, ", output)
        two = self.GLOBAL_TREE.replace("float *y = x", "float2 *y = (float2 *)x").replace("+= y", "= y")
        for changed in (
            self.GLOBAL_TREE + "\n  y = x;",  # (changed)
            self.GLOBAL_TREE.replace("float *y = x", "float *y = (float *)(int *)x"),
            two.replace("= y[0];", "= y[0].x;"),  # (another element)
        ):
            with self.subTest(code=changed):
                found = self.proven(changed)
                self.assertEqual([call for call in found if "Space::global, true, 5, " in call], [], found)

    def test_a_store_under_another_condition_keeps_its_checks(self) -> None:
        store = "part[threadIdx.x] += part[threadIdx.x + s];"
        for condition in (
            f"if (threadIdx.x > s) {store}",
            f"if (threadIdx.y < s) {store}",
            f"if (threadIdx.x < s) {store} else part[threadIdx.x] = 0;",
            f"if (threadIdx.x < s) if (threadIdx.x < 4) {store}",
            f"if (threadIdx.x < x[0]) {store}",  # (a limit from memory)
            f"if (threadIdx.x == 1) {store}",
            f"if (threadIdx.x == s) {store}",
        ):
            with self.subTest(condition=condition):
                code = self.TREE.replace(f"if (threadIdx.x < s) {store}", condition)
                self.assertNotEqual(code, self.TREE)
                self.assertEqual(len(self.proven(code)), 2, "the first stores and the output only")

    def test_a_parameter_the_kernel_changes_is_each_threads_from_the_argument(self) -> None:
        found = self.stretches(
            "x += blockIdx.x * 64;\n  x[threadIdx.x] = 1;\n  __syncthreads();\n  x[0] += x[1];"
        )
        out = body("__global__ void k(int* x) {\n  x += 1;\n  __syncthreads();\n  x[0] = 1;\n}\n")
        form = out[out.index("ThreadLoops cudalab_loops_k(") :]
        self.assertRegex(form, r"PerThread<::std::remove_cv_t<int \*>> (cudalab_kept_x_\d+);")
        self.assertRegex(form, r"for \(unsigned cudalab_t = 0; cudalab_t < ::cudalab::emu::block_threads\(\)")
        for stretch in found:
            self.assertIn("CUDALAB_LOOPS_RESTORE(x, cudalab_kept_x_", stretch)
        # (a reference parameter the kernel changes is the caller's object: the kernel stays on fibers)
        out = body("__global__ void r(float* x, int& n) {\n  n += 1;\n  __syncthreads();\n  x[0] = n;\n}\n")
        self.assertNotIn("cudalab_loops_r(", out)

    GROUPS = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"

    def test_the_blocks_barrier_of_cooperative_groups_is_a_barrier_of_the_loops(self) -> None:
        for sync in ("cg::sync(cta);", "cta.sync();", "cg::this_thread_block().sync();"):
            with self.subTest(sync=sync):
                code = f"cg::thread_block cta = cg::this_thread_block();\n  x[threadIdx.x] = 1;\n  {sync}\n"
                code += "  x[0] += x[1];"
                out = body(f"{self.GROUPS}__global__ void k(float* x) {{\n  {code}\n}}\n")
                form = out[out.index("ThreadLoops cudalab_loops_k(") :]
                self.assertIn("cudalab_threads.barrier(__FILE__, __LINE__);", form)
                self.assertNotIn(sync, form)
                # (the block's handle touches no memory: the store beside it is proven)
                self.assertIn(
                    "stretch_fine(__FILE__, {}, {{x, ::cudalab::emu::Space::global, true, 5, ", form
                )

    def test_a_template_that_calls_a_function_that_waits_keeps_its_threads(self) -> None:
        # (Clang cannot resolve `step<N>(x)` before N is known: the call is read by its candidates)
        out = body(
            "template <int N> __device__ void step(float* x) { __syncthreads(); x[0] = N; }\n"
            "template <int N> __global__ void k(float* x) {\n  x[threadIdx.x] = 1;\n  __syncthreads();\n"
            "  step<N>(x);\n}\nvoid run(float* x) { k<2><<<1, 32>>>(x); }\n"
        )
        self.assertIn("Launch(", out)
        self.assertNotIn("cudalab_loops_k", out)

    def test_the_other_waits_of_cooperative_groups_keep_their_threads(self) -> None:
        for code in (
            "auto t = cg::tiled_partition<32>(cg::this_thread_block());\n  x[0] = t.shfl_down(x[1], 1);\n"
            "  __syncthreads();",
            "cg::this_grid().sync(); __syncthreads();",
            "auto t = cg::tiled_partition<32>(cg::this_thread_block());\n  t.sync(); __syncthreads();",
        ):
            with self.subTest(code=code):
                self.assertNotEqual(self.form(code, self.GROUPS), "loops")

    def test_kernels_that_loops_would_compute_otherwise_keep_their_threads(self) -> None:
        for code, before in (
            ("x[0] = 1; fence(); __syncthreads();", self.FENCE),  # a function that waits
            ("x[0] = 1; deeper(); __syncthreads();", self.FENCE),  # through another
            ("if (threadIdx.x < 16) __syncthreads();", ""),  # a barrier some threads skip
            ("for (int k = 0; k < threadIdx.x; ++k) __syncthreads();", ""),
            ("int a[4] = {1}; int* p = a; __syncthreads(); x[0] = p[0];", ""),  # an address kept
            ("x[threadIdx.x] = 1; __syncwarp(); x[0] = x[1];", ""),  # another wait
            ("x[0] = __shfl_sync(~0u, x[1], 0) + __shfl_sync(~0u, x[2], 0);", ""),  # two in one
            ("x[0] = __ballot_sync(~0u, x[1] > 0); __syncthreads();", ""),  # a vote
            ("int threadIdx = 1; __syncthreads(); x[0] = threadIdx;", ""),  # a stretch's parameter
            ("int last = blockIdx.x; last += 1; for (int a = 0; a < last; ++a) __syncthreads();", ""),
            # (run once, 8 / blockIdx.x would be computed in block 0, whose threads all returned)
            (
                "if (blockIdx.x == 0) return; int q = 8 / blockIdx.x;\n"
                "  for (int a = 0; a < q; ++a) __syncthreads();",
                "",
            ),
            (  # (the same, const)
                "if (blockIdx.x == 0) return; const int q = 8 / blockIdx.x;\n"
                "  for (int a = 0; a < q; ++a) __syncthreads();",
                "",
            ),
            (  # (a return later in the loop: in block 0's second turn no thread is left)
                "for (int a = 0; a < 2; ++a) { const int q = 8 / (blockIdx.x + 1 - a);\n"
                "  for (int b = 0; b < q; ++b) __syncthreads();\n  if (blockIdx.x == 0) return; }",
                "",
            ),
        ):
            with self.subTest(code=code):
                self.assertNotEqual(self.form(code, before), "loops")


if __name__ == "__main__":
    unittest.main()


class ProvenForms(unittest.TestCase):
    """A kernel whose accesses its code proves: its copy without checks and its ranges, in checked
    code, and launches that pass them (the front end decides which kernels: test_cuda_ast.py)."""

    ADD = (
        "namespace ns {\n"
        "__global__ void add(const float* a, float* c, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) c[i] = a[i] + 1.0f;\n"
        "}\n}\n"
    )

    def test_the_copy_and_its_ranges_follow_the_kernel_and_launches_pass_them(self) -> None:
        out = body(self.ADD + "void run(const float* a, float* c, int n) { ns::add<<<4, 256>>>(a, c, n); }\n")
        form = out[out.index("#ifdef CUDALAB_EMU_CHECKED") :]
        self.assertIn(
            '#line 2 "lab.cu"\n__attribute__((no_sanitize("thread"))) inline void cudalab_proven_add(', form
        )
        self.assertIn("{ const ::uint3& threadIdx = ::cudalab::emu::thread_index();\n", form)
        self.assertIn(
            "{ return {__FILE__, ::cudalab::emu::bound_of<int>(n), {{a, 4, false, 4}, {c, 4, true, 4}}, 2, "
            "false, -1, 0, {",
            form,
        )
        # each access of the text, for the counters: the thread's element (column 1), outside a loop
        own = ", ".join(f"static_cast<long long>({c})" for c in (0, 1, 0, 0, 0, 1))
        visits = f"{{{{c, sizeof(*c), true, 4, {own}}}, {{a, sizeof(*a), false, 4, {own}}}}}, 2}}; }}"
        self.assertIn(visits, form)
        self.assertIn('#endif\n#line 6 "lab.cu"\n}', form)  # (the namespace's brace, on its line)
        self.assertIn("CUDALAB_KERNEL_PROVEN(([&](auto&... cudalab_args) { ns::add", out)
        self.assertIn("ns::cudalab_proven_add(::cudalab::emu::proven_argument(cudalab_args)...)", out)
        self.assertIn("return ns::cudalab_proven_ranges_add(", out)

    def test_an_overloaded_kernel_keeps_its_checks(self) -> None:
        other = "namespace ns { __global__ void add(const double* a, double* c, int n); }\n"  # (elsewhere)
        out = body(
            self.ADD + other + "void run(const float* a, float* c, int n) { ns::add<<<4, 256>>>(a, c, n); }\n"
        )
        self.assertNotIn("cudalab_proven_add", out)
        self.assertNotIn("CUDALAB_KERNEL_PROVEN", out)

    def test_a_kernel_that_calls_a_function_that_waits_keeps_its_checks(self) -> None:
        src = (
            "__device__ float after_a_barrier(float x) { __syncthreads(); return x; }\n"
            "__global__ void k(const float* a, float* c, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) c[i] = after_a_barrier(a[i]);\n"
            "}\n"
        )
        self.assertNotIn("cudalab_proven_k", body(src))
        self.assertIn("cudalab_proven_k", body(src.replace("__syncthreads(); ", "")))
