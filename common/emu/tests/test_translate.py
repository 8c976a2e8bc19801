"""Unit tests of the emu translator (common/emu/translate.py): what a program's output cannot show.
What the translator makes of CUDA's forms is proven by running them (common/tests/forms, on emu and
on a GPU: common/tools/test_forms.py); here are its errors with their lines, the lines it keeps,
and which kernels get coroutine twins (the engine a kernel runs on, not visible in its output).
"""

from __future__ import annotations

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
    def test_a_launch_after_a_headers_include_runs_its_kernels_twin(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "wait.cuh").write_text("__global__ void waits(float* x) { __syncthreads(); }\n")
            (root / "inner.cuh").write_text('#include "wait.cuh"\n__device__ void f(int v) { assert(v); }\n')
            (root / "plain.h").write_text('#include "wait.cuh"\n')  # included as it is: no twins
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
            self.assertNotIn("cudalab_coroutine_waits", before)
            self.assertIn(f"return cudalab_coroutine_waits{ARGS};", after)
            other = root / "out" / "other.cu.cpp"
            translate.Translation(root / "out" / "other.cu.cpp.headers").file(root / "other.cu", other)
            self.assertNotIn("cudalab_coroutine_waits", other.read_text())
            header = next((root / "out").rglob("wait.cuh.cpp")).read_text()
            self.assertIn("::cudalab::emu::ThreadLoops cudalab_coroutine_waits(float* x)", header)


class DeviceCode(unittest.TestCase):
    def test_other_inline_ptx_is_refused_with_its_line(self) -> None:
        with self.assertRaises(translate.TranslateError) as e:
            translate.translate(
                '__device__ int f(int w) {\n  int r; asm("prmt.b32 %0, %1;" : "=r"(r) : "r"(w));\n}', "x.cu"
            )
        self.assertEqual(e.exception.line, 2)
        self.assertIn("inline PTX", str(e.exception))


class LoopForms(unittest.TestCase):
    """Which kernels run as loops between their waits when unchecked (thread_loops.py), and which
    keep a coroutine twin or fibers: each refusal is a case where loops would compute otherwise."""

    FENCE = "__device__ void fence() { __syncthreads(); }\n__device__ void deeper() { fence(); }\n"

    def form(self, kernel_body: str, before: str = "") -> str | None:
        """ "loops", "twin" or None (fibers) for a kernel k with this body."""
        out = body(f"{before}__global__ void k(float* x) {{\n{kernel_body}\n}}\n")
        if "ThreadLoops cudalab_coroutine_k(" in out:
            return "loops"
        return "twin" if "ThreadTask cudalab_coroutine_k(" in out else None

    def test_barriers_and_shuffles_reached_by_every_thread_run_as_loops(self) -> None:
        for code in (
            "x[threadIdx.x] = 1; __syncthreads(); x[0] += x[1];",
            "for (int s = blockDim.x / 2; s > 0; s >>= 1) { x[threadIdx.x] += s; __syncthreads(); }",
            "#pragma unroll\n  for (int s = 0; s < 4; ++s) { x[threadIdx.x] += s; __syncthreads(); }",
            "float v = x[threadIdx.x];\n  v += __shfl_down_sync(0xffffffff, v, 16);\n  x[0] = v;",
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

    def test_kernels_that_loops_would_compute_otherwise_keep_their_threads(self) -> None:
        for code, before in (
            ("x[0] = 1; fence(); __syncthreads();", self.FENCE),  # a function that waits
            ("x[0] = 1; deeper(); __syncthreads();", self.FENCE),  # through another
            ("if (threadIdx.x < 16) __syncthreads();", ""),  # a barrier some threads skip
            ("for (int k = 0; k < threadIdx.x; ++k) __syncthreads();", ""),
            ("int a[4] = {1}; int* p = a; __syncthreads(); x[0] = p[0];", ""),  # an address kept
            ("x[threadIdx.x] = 1; __syncwarp(); x[0] = x[1];", ""),  # another wait
            ("x[0] = __shfl_sync(~0u, x[1], 0) + __shfl_sync(~0u, x[2], 0);", ""),  # two in one
        ):
            with self.subTest(code=code):
                self.assertNotEqual(self.form(code, before), "loops")


class CoroutineTwins(unittest.TestCase):
    """Kernels whose own body waits at __syncthreads() get a twin whose threads are coroutines."""

    REDUCE = (
        "__global__ void reduce(const float* in, float* out) {\n"
        "  __shared__ float s[256];\n"
        "  s[threadIdx.x] = in[threadIdx.x];\n"
        "  __syncthreads();\n"
        "  if (threadIdx.x != 0) return;\n"
        "  out[0] = s[0] + fmaxf(s[1], 0.0f);\n"
        "}\n"
    )

    def qualifies(self, kernel_body: str, before: str = "") -> bool:
        src = f"{before}__global__ void k(float* x) {{\n{kernel_body}\n  __syncthreads();\n}}\n"
        return "k" in translate.coroutine_kernels(src)

    def test_a_kernel_that_waits_at_barriers_only_runs_as_loops_between_them(self) -> None:
        out = body(self.REDUCE + "void run(const float* a, float* b) { reduce<<<1, 256>>>(a, b); }\n")
        form = out[out.index("#ifndef CUDALAB_EMU_CHECKED") :]
        self.assertIn('#line 1 "lab.cu"\n::cudalab::emu::ThreadLoops cudalab_coroutine_reduce(', form)
        self.assertIn(
            "s[threadIdx.x] = in[threadIdx.x];  return false; });\n  cudalab_threads.barrier(", form
        )
        self.assertIn("if (threadIdx.x != 0) return true;", form)
        self.assertIn('#endif\n#line 8 "lab.cu"\nvoid run(', form)
        self.assertIn(
            f"CUDALAB_KERNEL_THREADS(([&](auto&... cudalab_args) {{ reduce{ARGS}; }}), "
            f"([&](auto&... cudalab_args) {{ return cudalab_coroutine_reduce{ARGS}; }})), a, b);",
            out,
        )
        # The kernel itself is unchanged, and so are the numbers of its lines.
        self.assertIn("  __syncthreads();\n  if (threadIdx.x != 0) return;", out)

    def test_a_twin_waits_with_co_await_and_returns_with_co_return(self) -> None:
        src = self.REDUCE.replace("__syncthreads();", "__syncwarp();")
        twin = body(src)[body(src).index("#ifndef CUDALAB_EMU_CHECKED") :]
        self.assertIn('#line 1 "lab.cu"\n::cudalab::emu::ThreadTask cudalab_coroutine_reduce(', twin)
        self.assertIn("co_await ::cudalab::emu::syncwarp_arrival();", twin)
        self.assertIn("if (threadIdx.x != 0) co_return;", twin)

    def test_shuffles_are_awaited(self) -> None:
        src = (
            "__global__ void warp_sum(float* x) {\n"
            "  float v = x[threadIdx.x];\n"
            "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
            "  x[threadIdx.x] = __shfl_sync<float>(~0u, v, 0);\n"
            "  x[threadIdx.x] += __shfl_xor_sync(~0u, v, 1);\n"
            "}\n"
        )
        out = body(src)
        twin = out[out.index("cudalab_coroutine_warp_sum") :]
        self.assertIn("v += co_await ::cudalab::emu::shfl_down_arrival(0xffffffff, v, o);", twin)
        self.assertIn("= co_await ::cudalab::emu::shfl_arrival<float>(~0u, v, 0);", twin)
        self.assertIn("+= co_await ::cudalab::emu::shfl_xor_arrival(~0u, v, 1);", twin)

    def test_votes_matches_reductions_and_syncwarp_are_awaited(self) -> None:
        src = (
            "__global__ void votes(unsigned* x) {\n"
            "  unsigned b = __ballot_sync(~0u, x[0] > 0);\n"
            "  b += __any_sync(~0u, 1);\n"
            "  b += __all_sync(~0u, 1);\n"
            "  __syncwarp();\n"
            "  b += __match_any_sync(~0u, b) + __activemask();\n"
            "  b += __reduce_add_sync(~0u, b);\n"
            "  const int any = __syncthreads_or(b);\n"
            "  x[0] = any + __syncthreads_and(b);\n"
            "  x[1] = __syncthreads_count(b > 1);\n"
            "}\n"
        )
        twin = body(src)[body(src).index("cudalab_coroutine_votes") :]
        for wait in (
            "ballot",
            "any",
            "all",
            "syncwarp",
            "match_any",
            "reduce_add",
            "syncthreads_or",
            "syncthreads_and",
            "syncthreads_count",
        ):
            with self.subTest(wait=wait):
                self.assertIn(f"co_await ::cudalab::emu::{wait}_arrival(", twin)
        self.assertIn("+ __activemask();", twin)  # a query: it does not wait

    def test_template_and_namespace_of_a_launch_are_kept(self) -> None:
        src = (
            "namespace ns {\ntemplate <int TILE_WIDTH>\n__global__ void tiled(float* p) {\n"
            "  __syncthreads();\n}\n}\nvoid run(float* p) { ns::tiled<16><<<1, 1>>>(p); }\n"
        )
        out = body(src)
        self.assertIn("template <int TILE_WIDTH>\n::cudalab::emu::ThreadLoops cudalab_coroutine_tiled(", out)
        self.assertIn(f"{{ return ns::cudalab_coroutine_tiled<16>{ARGS}; }}", out)

    def test_a_launch_before_the_definition_runs_the_kernel(self) -> None:
        src = (
            "__global__ void k(float*);\nvoid run(float* p) { k<<<1, 1>>>(p); }\n"
            + "__global__ void k(float* x) { __syncthreads(); }\n"
        )
        self.assertNotIn("CUDALAB_KERNEL_THREADS", body(src))

    def test_a_kernel_without_a_barrier_has_no_twin(self) -> None:
        self.assertEqual(translate.coroutine_kernels("__global__ void k(float* x) { x[0] = 1; }"), {})

    def test_waits_other_than_the_kernels_own_barriers_keep_it_on_fibers(self) -> None:
        for code in (
            "x[0] = __shfl_down(x[0], 1);",
            "x[0] = __shfl_sync(~0u, x[0], 0) + __shfl_xor_sync(~0u, x[0], 1);",  # two in a statement
            "if (__any_sync(~0u, x[0] > 0) && __all_sync(~0u, x[0] > 0)) x[1] = 0;",
            "x[0] = __match_all_sync(~0u, x[0], &p);",
            "__nanosleep(100);",
            "cg::this_thread_block().sync();",
            "auto f = [&](int i) { return x[i]; };",
            "struct S { int a; };",
            "goto out;",
        ):
            with self.subTest(code=code):
                self.assertFalse(self.qualifies(code))

    def test_calls_must_be_known_not_to_wait(self) -> None:
        self.assertTrue(
            self.qualifies("x[0] = sqrtf(fmaxf(x[1], 0.f)) + __ldg(x) + float(atomicAdd(x, 1.f));")
        )
        self.assertTrue(self.qualifies("curandState s; curand_init(1, 0, 0, &s); x[0] = curand_normal(&s);"))
        self.assertFalse(self.qualifies("x[0] = mystery(x[1]);"))  # defined elsewhere: may wait
        self.assertFalse(self.qualifies("x[0] = v.get();"))  # a method of unknown body
        calm = "__device__ float square(float v) { return v * v; }\n"
        self.assertTrue(self.qualifies("x[0] = square(x[1]);", before=calm))
        self.assertFalse(
            self.qualifies(
                "x[0] = square(x[1]);", before=calm + "__device__ int square(int v) { __syncwarp(); }\n"
            )
        )

    def test_device_functions_that_wait_are_awaited_as_their_twins(self) -> None:
        src = (
            "template <class T>\n"
            "__inline__ __device__ T warpReduceSum(T val) {\n"
            "  for (int offset = 16; offset > 0; offset /= 2)\n"
            "    val += __shfl_down_sync(0xffffffff, val, offset);\n"
            "  return val;\n"
            "}\n"
            "__device__ __forceinline__ float blockReduceSum(float val) {\n"
            "  static __shared__ float shared[32];\n"
            "  val = warpReduceSum<float>(val);\n"
            "  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = val;\n"
            "  __syncthreads();\n"
            "  return threadIdx.x < 32 ? shared[threadIdx.x] : 0;\n"
            "}\n"
            "__device__ float unused(float v) { __syncthreads(); return v; }\n"
            "__global__ void sum(const float* in, float* out) {\n"
            "  float s = blockReduceSum(in[threadIdx.x]);\n"
            "  if (threadIdx.x == 0) out[0] = s;\n"
            "}\n"
        )
        self.assertEqual(set(translate.twin_functions(src).callees), {"warpReduceSum", "blockReduceSum"})
        out = body(src)
        self.assertIn(
            "template <class T>\n"
            "__inline__ ::cudalab::emu::DeviceTask<T> cudalab_coroutine_warpReduceSum(T val) {",
            out,
        )
        self.assertIn("  co_return val;\n", out)
        self.assertIn("::cudalab::emu::DeviceTask<float> cudalab_coroutine_blockReduceSum(float val) {", out)
        self.assertIn("  val = co_await cudalab_coroutine_warpReduceSum<float>(val);\n", out)
        self.assertIn("  float s = co_await cudalab_coroutine_blockReduceSum(in[threadIdx.x]);\n", out)
        self.assertNotIn("cudalab_coroutine_unused", out)  # no twin calls it

    def test_a_callee_must_be_defined_before_and_called_by_name(self) -> None:
        waits = "__device__ void helper(float* x) { __syncthreads(); }\n"
        self.assertTrue(self.qualifies("helper(x);", before=waits))
        for code, before in (
            ("ns::helper(x);", waits),
            ("x[0] = helper(x) + helper(x);", waits),  # two waits in a statement
            ("auto& r = helper(x);", "__device__ float& helper(float* x) { __syncwarp(); return *x; }\n"),
        ):
            with self.subTest(code=code):
                self.assertFalse(self.qualifies(code, before=before))
        after = "__device__ void helper(float*);\n__global__ void k(float* x) { helper(x); }\n" + waits
        self.assertEqual(translate.coroutine_kernels(after), {})

    def test_functions_and_macros_of_the_local_headers_are_read_as_callees(self) -> None:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "math.cuh").write_text(
                '#include "inner.h"\n#define IDX(r, c) ((r) * 16 + (c))\n'
                "__device__ float square(float v) { return v * v; }\n"
                "__device__ void fence() { __syncthreads(); }\n"
            )
            (root / "inner.h").write_text("inline __host__ __device__ float twice(float v) { return v + v; }")
            body = "__global__ void k{n}(float* x) {{ {call}; __syncthreads(); }}\n"
            calls = ["x[IDX(0, 1)] = square(x[1])", "x[0] = twice(x[1])", "fence()", "x[0] = unknown(x[1])"]
            (root / "main.cu").write_text(
                '#include "math.cuh"\n' + "".join(body.format(n=n, call=c) for n, c in enumerate(calls))
            )
            target = root / "out" / "main.cu.cpp"
            translation = translate.Translation(root / "out" / "main.cu.cpp.headers")
            translation.file(root / "main.cu", target)
            text = target.read_text()
            # A header's function that waits is no callee here (its twin would be the header's).
            twins = [n for n in range(len(calls)) if f" cudalab_coroutine_k{n}(" in text]
            self.assertEqual(twins, [0, 1])
            self.assertEqual({root / "inner.h", root / "math.cuh"} - set(translation.read), set())

    def test_headers_on_the_include_path_are_read_not_translated(self) -> None:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "common").mkdir()
            (root / "common" / "helper_math.h").write_text(
                "inline __host__ __device__ float lerp(float a, float b, float t) { return a + t * b; }\n"
            )
            (root / "main.cu").write_text(
                "#include <helper_math.h>\n"
                "__global__ void k(float* x) { x[0] = lerp(x[1], x[2], 0.5f); __syncthreads(); }\n"
            )
            texts = []
            for include_path in ([], [root / "common"]):
                target = root / "out" / f"main{len(include_path)}.cu.cpp"
                translation = translate.Translation(target.parent / "h", include_path=include_path)
                translation.file(root / "main.cu", target)
                texts.append(target.read_text())
            self.assertIn("::cudalab::emu::ThreadLoops cudalab_coroutine_k(float* x)", texts[1])
            self.assertIn("#include <helper_math.h>", texts[1])  # (the compiler finds it, as it is)
            self.assertIn(root / "common" / "helper_math.h", translation.read)  # (the depfile)

    def test_macros_of_the_file_are_read_as_callees(self) -> None:
        self.assertTrue(self.qualifies("x[IDX(1, 2)] = 0;", before="#define IDX(r, c) ((r) * 16 + (c))\n"))
        self.assertFalse(self.qualifies("SYNC;", before="#define SYNC __syncthreads()\n"))
        self.assertFalse(self.qualifies("DONE;", before="#define DONE if (x[0]) return\n"))

    def test_the_block_group_of_cooperative_groups_syncs_as_a_barrier(self) -> None:
        src = (
            "__global__ void k(float* x) {\n"
            "  cg::thread_block cta = cg::this_thread_block();\n"
            "  x[cta.thread_rank()] = cta.size();\n"
            "  cg::sync(cta);\n"
            "  cta.sync();\n"
            "}\n"
        )
        out = body(src)
        twin = out[out.index("cudalab_coroutine_k") :]
        self.assertIn("x[cta.thread_rank()] = cta.size();", twin)
        self.assertEqual(twin.count("co_await ::cudalab::emu::syncthreads_arrival();"), 2)
        # Any other use of the group, or a group the translator does not know, keeps fibers.
        for code in ("reduce(cta, x);", "auto t = cg::coalesced_threads();", "cta.foo();"):
            with self.subTest(code=code):
                self.assertEqual(translate.coroutine_kernels(src.replace("cta.sync();", code)), {})

    def test_a_block_group_given_to_a_function_syncs_as_a_barrier(self) -> None:
        for parameter in ("cg::thread_block cta", "const cooperative_groups::thread_block& cta"):
            with self.subTest(parameter=parameter):
                src = (
                    f"__device__ void stage(float* x, {parameter}) {{ x[0] = 1; cg::sync(cta); }}\n"
                    "__global__ void k(float* x) {\n"
                    "  cg::thread_block block = cg::this_thread_block();\n"
                    "  stage(x, block);\n"
                    "}\n"
                )
                out = body(src)
                self.assertIn(f"DeviceTask<void> cudalab_coroutine_stage(float* x, {parameter})", out)
                self.assertIn("x[0] = 1; co_await ::cudalab::emu::syncthreads_arrival(); }", out)
                self.assertIn("co_await cudalab_coroutine_stage(x, block);", out)

    def test_a_tile_of_a_warp_awaits_its_own_waits(self) -> None:
        src = (
            "__device__ float sum(const cg::thread_block_tile<32>& g, float v) {\n"
            "  for (int o = 16; o > 0; o /= 2) v += g.shfl_down(v, o);\n"
            "  return v;\n"
            "}\n"
            "__global__ void k(float* x) {\n"
            "  cg::thread_block cta = cg::this_thread_block();\n"
            "  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);\n"
            "  auto half = cooperative_groups::tiled_partition<16>(tile);\n"
            "  const auto quarter = cg::tiled_partition<8>(cg::this_thread_block());\n"
            "  float v = sum(tile, x[tile.thread_rank()]);\n"
            "  tile.sync();\n"
            "  cg::sync(half);\n"
            "  x[half.meta_group_rank()] = cg::reduce(half, v, cg::plus<float>());\n"
            "  x[0] = half.ballot(v > 0);\n"
            "  x[1] = quarter.all(v > 1);\n"
            "}\n"
        )
        self.assertEqual(translate.twin_functions(src), ({"k": src.rindex("}")}, {"sum": src.index("}")}))
        out = body(src)
        twin = out[out.index("cudalab_coroutine_k") :]
        for awaited in (
            "v += co_await g.shfl_down_arrival(v, o);",
            "float v = co_await cudalab_coroutine_sum(tile, x[tile.thread_rank()]);",
            "co_await tile.sync_arrival();",
            "co_await half.sync_arrival();",
            "= co_await ::cooperative_groups::reduce_arrival(half, v, cg::plus<float>());",
            "x[0] = co_await half.ballot_arrival(v > 0);",
            "x[1] = co_await quarter.all_arrival(v > 1);",
        ):
            self.assertIn(awaited, out if awaited.startswith("v +=") else twin)
        # A tile of a size the translator cannot read waits as a tile (cooperative_groups.h knows
        # whether it is a warp's or several warps')...
        sized = "cg::thread_block_tile<TILE> t = cg::tiled_partition<TILE>(cta);\n  t.sync();"
        sized = src.replace("tile.sync();", sized)
        self.assertIn("co_await t.sync_arrival();", body(sized))
        # ... but its collectives, as those of a tile of several warps, an unknown use of a tile, a
        # coalesced group, a collective not named as cooperative groups' and two waits in a
        # statement keep the kernel on fibers.
        for code in (
            "auto t = cg::tiled_partition<64>(cta); x[0] = cg::reduce(t, v, cg::plus<float>());",
            "auto t = cg::tiled_partition<N>(cta); x[0] = cg::reduce(t, v, cg::plus<float>());",
            "auto t = cg::coalesced_threads(); t.sync();",
            "tile.foo();",
            "s.tile.sync();",  # another object's member named as the tile
            "x[0] = reduce(tile, v, cg::plus<float>());",
            "x[0] = tile.shfl(v, 0) + tile.shfl(v, 1);",
        ):
            with self.subTest(code=code):
                self.assertEqual(translate.coroutine_kernels(src.replace("tile.sync();", code)), {})

    def test_a_thread_group_awaits_its_sync(self) -> None:
        src = (
            "__device__ int sum(cg::thread_group g, int* x, int v) {\n"
            "  x[g.thread_rank()] = v;\n"
            "  g.sync();\n"
            "  return x[0];\n"
            "}\n"
            "__global__ void k(int* x) {\n"
            "  cg::thread_block cta = cg::this_thread_block();\n"
            "  cg::thread_group eight = cg::tiled_partition(cta, 8);\n"
            "  x[1] = sum(eight, x, 1);\n"
            "  cg::sync(eight);\n"
            "}\n"
        )
        out = body(src)
        for awaited in ("co_await g.sync_arrival();", "co_await cudalab_coroutine_sum(eight, x, 1);"):
            self.assertIn(awaited, out)
        self.assertIn("co_await eight.sync_arrival();", out[out.index("cudalab_coroutine_k") :])
        # Its size is not known: its collectives keep fibers.
        reduce = "x[2] = cg::reduce(eight, 1, cg::plus<int>());"
        self.assertEqual(translate.coroutine_kernels(src.replace("cg::sync(eight);", reduce)), {})

    def test_an_explicit_specialisation_gets_its_own_twin(self) -> None:
        src = (
            "template <class T> __device__ T sum(unsigned mask, T v) {\n"
            "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(mask, v, o);\n"
            "  return v;\n"
            "}\n"
            "template <> __device__ unsigned sum<unsigned>(unsigned mask, unsigned v) {\n"
            "  return __reduce_add_sync(mask, v);\n"
            "}\n"
            "__global__ void k(unsigned* x) { x[0] = sum<unsigned>(0xff, x[1]); }\n"
        )
        out = body(src)
        self.assertIn("template <class T> ::cudalab::emu::DeviceTask<T> cudalab_coroutine_sum(", out)
        specialisation = "template <> ::cudalab::emu::DeviceTask<unsigned> cudalab_coroutine_sum<unsigned>("
        self.assertIn(specialisation, out)
        # A definition whose head the twin cannot copy keeps every caller on fibers (its twin would
        # be missing, and the call would take the other definition's).
        self.assertEqual(translate.coroutine_kernels(src.replace("unsigned sum<", "unsigned& sum<")), {})

    def test_classes_of_the_file_that_do_not_wait_are_made_in_twins(self) -> None:
        shared_memory = (
            "template <class T> struct SharedMemory {\n"
            "  __device__ inline operator T*() { extern __shared__ int smem[]; return (T*)smem; }\n"
            "};\n"
        )
        made = "float* s = SharedMemory<float>(); s[uint(x[0])] = 0;"
        self.assertTrue(self.qualifies(made, before=shared_memory))
        waits = "struct Sync { __device__ Sync() { __syncthreads(); } };\n"
        self.assertFalse(self.qualifies("Sync s = Sync();", before=waits))

    def test_a_kernel_defined_in_a_macro_keeps_its_fibers(self) -> None:
        for src in (
            "#define K __global__ void k(float* x) { __syncthreads(); }\n",
            "#define K \\\n  __global__ void k(float* x) { __syncthreads(); }\n",
        ):
            self.assertEqual(translate.coroutine_kernels(src), {})

    def test_checker_translation_has_no_twins(self) -> None:
        out = translate.translate_for_checker(
            self.REDUCE + "void run(const float* a, float* b) { reduce<<<1, 256>>>(a, b); }\n", "lab.cu"
        )
        self.assertNotIn("coroutine", out)


if __name__ == "__main__":
    unittest.main()
