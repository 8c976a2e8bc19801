"""Unit tests of the emu translator (common/emu/translate.py)."""

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


# An `extern __shared__` array of a type: the start of the launch's dynamic shared memory.
DYNAMIC = "reinterpret_cast<::std::remove_extent_t<{}>*>(::cudalab::emu::builtins.dynamic_shared)"

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
    def test_simple_launch(self) -> None:
        self.assertEqual(
            launches("k<<<g, b>>>(x, y);"),
            '::cudalab::emu::Launch("k", __FILE__, __LINE__, g, b)'
            f"([&](auto&... cudalab_args) {{ k{ARGS}; }}, x, y);",
        )

    def test_no_arguments(self) -> None:
        src = DECLARATIONS + "__global__ void none() {}\nvoid run() { none<<<1, 1>>>(); }\n"
        self.assertIn(f"{{ none{ARGS}; }});", body(src))

    def test_template_and_namespace(self) -> None:
        out = launches("ns::k<float, 4> <<<g, b, s, st>>>(p);")
        self.assertIn('Launch("ns::k<float,4>", __FILE__, __LINE__, g, b, s, st)', out)
        self.assertIn(f"{{ ns::k<float,4>{ARGS}; }}", out)

    def test_lines_are_kept(self) -> None:
        code = "k<<<(n + 255)\n / 256,\n 256>>>(\n x,\n y);\nint after;"
        out = launches(code)
        self.assertEqual(out.count("\n"), code.count("\n"))
        self.assertTrue(out.endswith("\nint after;"))

    def test_comments_strings_and_skipped_code_are_left_alone(self) -> None:
        code = (
            '// k<<<1,1>>>(x)\nconst char* s1 = "k<<<1,1>>>(x)"; /* k<<<1,1>>>() */\n'
            'const char* s2 = R"(k<<<1, 1>>>(x))";\n#if 0\nthis is not C++: k<<<1, 1>>>(x);\n#endif'
        )
        self.assertEqual(launches(code), code)

    def test_shift_inside_configuration(self) -> None:
        out = launches("k<<<(n >> 1), 32>>>(a);")
        self.assertIn('Launch("k", __FILE__, __LINE__, (n >> 1), 32)', out)

    def test_a_launch_clang_cannot_read_is_an_error_with_its_line(self) -> None:
        for code in ("int a;\nk<<<1, 1(x);", "int a;\nk<<<1, 1>>>;", "int a;\nundeclared<<<1, 1>>>(x);"):
            with self.subTest(code=code), self.assertRaises(translate.TranslateError) as e:
                translate.translate(program(code), "lab.cu")
            self.assertEqual(e.exception.line, DECLARATIONS.count("\n") + 3)
            self.assertIn("cannot read this launch (Clang: line", str(e.exception))

    def test_a_reference_parameter_gets_the_object_itself(self) -> None:
        src = (
            DECLARATIONS + "struct Box { int v; };\n__global__ void inc(Box& box, int by) { box.v += by; }\n"
            "void run(Box* box) { inc<<<1, 1>>>(*box, 1); }\n"
        )
        self.assertIn(", ::cudalab::emu::by_reference(*box), 1);", body(src))

    def test_a_file_with_a_byte_order_mark_and_a_byte_that_is_not_utf8(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            source = Path(d) / "prog.cu"
            source.write_bytes(b"\xef\xbb\xbf// caf\xe9\n" + program("k<<<1, 1>>>(x);").encode())
            translate.Translation(Path(d) / "out").file(source, Path(d) / "prog.cu.cpp")
            out = (Path(d) / "prog.cu.cpp").read_bytes()
        self.assertIn(b"// caf\xe9\n", out)
        self.assertIn(b'Launch("k", __FILE__, __LINE__, 1, 1)', out)


class ExternShared(unittest.TestCase):
    def test_rewritten_inside_kernel(self) -> None:
        out = body("__global__ void k() { extern __shared__ __align__(16) float tile[]; }")
        self.assertIn(f"auto* const tile = {DYNAMIC.format('float[]')};", out)

    def test_rows_of_a_2d_array_keep_their_length(self) -> None:
        src = "#include <cuda_fp16.h>\n#define CHUNK 4\n#define K 2\n"
        out = body(src + "__global__ void k() { extern __shared__ half shmem[][CHUNK * K + 8]; }")
        self.assertIn(f"auto* const shmem = {DYNAMIC.format('half[][16]')};", out)

    def test_at_file_scope_each_use_is_the_dynamic_shared_memory(self) -> None:
        out = body("extern __shared__ int s[];\n__global__ void k() { s[1] = 2; }\n")
        self.assertTrue(out.startswith(";\n"), out)
        self.assertIn(f"({DYNAMIC.format('int[]')})[1] = 2;", out)

    def test_in_a_macros_body_from_its_tokens(self) -> None:
        """The CUDA samples' SharedMemory<T>: a macro that declares the array of its parameter."""
        src = (
            "#define SHARED_ARRAY(t, n) \\\n"
            "  __device__ t* n##_start() {  \\\n"
            "    extern __shared__ __align__(8) t n[];  \\\n"
            "    return n;  \\\n"
            "  }\n"
            "SHARED_ARRAY(int, s_int)\n"
        )
        out = body(src)
        self.assertIn(f"    auto* const n = {DYNAMIC.format('t[]')};  \\\n", out)
        self.assertEqual(out.count("\n"), src.count("\n"))

    def test_an_undeclared_type_stays_as_written(self) -> None:
        out = body("__global__ void k() { extern __shared__ Unknown s[]; }")
        self.assertIn("extern __shared__ Unknown s[];", out)

    def test_alignment_of_a_type(self) -> None:
        out = body("__global__ void k() { __shared__ alignas(alignof(float4)) float As[2][16]; }")
        self.assertIn("shared<float[2][16]>", out)


class Output(unittest.TestCase):
    def test_prelude_and_line_directive(self) -> None:
        out = translate.translate("x;\n", "/abs/lab.cu")
        self.assertTrue(out.startswith('#include "cudalab/emu/prelude.h"\n#line 1 "/abs/lab.cu"\nx;\n'))


if __name__ == "__main__":
    unittest.main()


class SharedVariables(unittest.TestCase):
    def test_each_declarator_gets_a_checked_slot(self) -> None:
        out = body("template <int T>\n__global__ void k() {\n  __shared__ float As[T][T], Bs[T][T];\n}\n")
        self.assertIn('static ::cudalab::emu::SharedSlot cudalab_slot_As{"As", __FILE__, __LINE__};', out)
        self.assertIn("auto& As = ::cudalab::emu::shared<float[T][T]>(cudalab_slot_As);", out)
        self.assertIn("auto& Bs = ::cudalab::emu::shared<float[T][T]>(cudalab_slot_Bs);", out)

    def test_qualifiers_templates_and_lines(self) -> None:
        src = (
            "__global__ void k() {\n  // a comment; with a semicolon\n"
            "  static __shared__ volatile int\n    count;\n  count = 1;\n}\n"
        )
        out = body(src)
        self.assertIn("shared<volatile int>(cudalab_slot_count);", out)
        self.assertIn("// a comment; with a semicolon", out)
        self.assertEqual(out.count("\n"), src.count("\n"))
        pair = "template <class A, class B> struct Pair { A a; B b; };\n"
        out = body(pair + "__global__ void k() { __shared__ Pair<int, float> p[2]; }")
        self.assertIn("shared<Pair<int, float>[2]>", out)

    def test_file_scope_variables_live_in_the_block(self) -> None:
        src = "__shared__ int counter, last[2];\n__global__ void k() { counter = last[1]; }\n"
        out = body(src)
        slot = 'static ::cudalab::emu::SharedSlot cudalab_slot_counter{"counter", __FILE__, __LINE__}, '
        self.assertIn(slot, out)
        self.assertIn("(::cudalab::emu::shared<int>(cudalab_slot_counter)) = ", out)
        self.assertIn("(::cudalab::emu::shared<int[2]>(cudalab_slot_last))[1]", out)

    def test_a_file_scope_variable_used_in_a_macro_is_an_error(self) -> None:
        src = "__shared__ int counter;\n#define COUNT counter\n__global__ void k() {\n  COUNT = 1;\n}\n"
        message = "the __shared__ variable 'counter' is used in a macro"
        with self.assertRaisesRegex(translate.TranslateError, message):
            translate.translate(src, "lab.cu")

    def test_an_initialized_declaration_stays(self) -> None:
        self.assertIn("__shared__ float f(3)", body("__global__ void k() { __shared__ float f(3); }"))


class RealCode(unittest.TestCase):
    """Constructs of programs beyond the labs (CUDA samples, course examples)."""

    def test_spaces_inside_the_chevrons(self) -> None:
        out = launches("k<< <g, b>> >(x);")
        self.assertIn('Launch("k", __FILE__, __LINE__, g, b)', out)
        self.assertTrue(out.endswith(f"{{ k{ARGS}; }}, x);"))

    def test_launch_through_an_expression_evaluates_it_once(self) -> None:
        out = launches("void (*kernels[2])(float*, float*) = {k, k};\nkernels[n]<<<g, b>>>(x, y);")
        self.assertIn("[cudalab_kernel = (kernels[n])]", out)
        out = launches("void (*pointer)(float*, float*) = k;\n(*pointer)<<<g, b>>>(x, y);")
        self.assertIn("[cudalab_kernel = ((*pointer))]", out)

    def test_launch_in_a_macro_keeps_the_continuation(self) -> None:
        src = program("") + "#define RUN(kernel) kernel<<<g, \\\n   b>>>(a)\nvoid next() { RUN(k); }\n"
        out = body(src)
        self.assertIn("#define RUN(kernel) ::cudalab::emu::Launch(", out)
        self.assertEqual(out.count("\n"), src.count("\n"))
        self.assertIn("\\\n", out)

    def test_launch_in_a_macros_argument(self) -> None:
        """The CUDA samples' checkKernelErrors((k<<<g, b>>>(a))): the launch is in the file's text."""
        src = (
            program("")
            + "#define CHECK(expr) do { expr; } while (0)\nvoid next() { CHECK((k<<<g, b>>>(a))); }\n"
        )
        out = body(src)
        self.assertIn('CHECK((::cudalab::emu::Launch("k", __FILE__, __LINE__, g, b)(', out)

    def test_assert_fails_the_launch_but_includes_stay(self) -> None:
        out = body("#include <assert.h>\nvoid f(int x) { assert(x > 0); static_assert(1); }\n")
        self.assertIn("#include <assert.h>", out)
        self.assertIn("cudalab_assert(x > 0)", out)
        self.assertIn("static_assert(1)", out)

    def test_void_cast_of_a_launched_kernel_is_removed(self) -> None:
        kernels = "__global__ void reduce(int* x) {}\ntemplate <class T> __global__ void k(T* x) {}\n"
        head = kernels + "void f(dim3 g, dim3 b, void** args) {\n"
        out = body(head + "  cudaLaunchCooperativeKernel((void *)reduce, g, b, args);\n}\n")
        self.assertIn("\n  cudaLaunchCooperativeKernel(reduce, g, b, args);\n", out)
        out = body(head + "  cudaLaunchKernel(reinterpret_cast<void*>(k<int>), g, b, args);\n}\n")
        self.assertIn("\n  cudaLaunchKernel(k<int>, g, b, args);\n", out)


class LocalHeaders(unittest.TestCase):
    def test_header_with_a_launch_is_translated_and_included_from_there(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "src").mkdir()
            (root / "src" / "kernels.cuh").write_text(
                '#include "plain.h"\n__global__ void k(float* x) { extern __shared__ float s[]; }\n'
                "void run(float* x) { k<<<1, 1>>>(x); }\n"
            )
            (root / "src" / "plain.h").write_text("int plain();\n")
            (root / "src" / "main.cu").write_text('#include "kernels.cuh"\n#include <cstdio>\n')
            target = root / "out" / "main.cu.cpp"
            translation = translate.Translation(root / "out" / "main.cu.cpp.headers")
            translation.file(root / "src" / "main.cu", target)
            main = target.read_text()
            header = next((root / "out").rglob("kernels.cuh.cpp"))
            self.assertIn(f'#include "{header}"', main)
            self.assertIn("#include <cstdio>", main)
            text = header.read_text()
            self.assertIn("::cudalab::emu::Launch(", text)
            self.assertIn("cudalab::emu::builtins.dynamic_shared", text)
            self.assertIn(f'#include "{(root / "src" / "plain.h").resolve()}"', text)
            self.assertIn((root / "src" / "plain.h").resolve(), translation.read)

    def test_a_headers_file_scope_shared_variable_is_the_blocks_copy_where_it_is_used(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "src" / "inc").mkdir(parents=True)
            (root / "src" / "inc" / "shm.cuh").write_text("#pragma once\n__shared__ int counter;\n")
            main_cu = root / "src" / "main.cu"
            main_cu.write_text('#include "../src/inc/shm.cuh"\n__global__ void k() { counter = 0; }\n')
            target = root / "out" / "main.cu.cpp"
            translate.Translation(root / "out" / "main.cu.cpp.headers").file(main_cu, target)
            self.assertIn("(::cudalab::emu::shared<int>(cudalab_slot_counter)) = 0;", target.read_text())
            header = next((root / "out").rglob("shm.cuh.cpp")).read_text()
            self.assertIn('static ::cudalab::emu::SharedSlot cudalab_slot_counter{"counter"', header)

    def test_the_workbooks_kernel_header_is_translated_from_anywhere(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "main.cu").write_text('#include "cudalab/textbook_kernels.cuh"\n')
            target = root / "out" / "main.cu.cpp"
            translate.Translation(root / "out" / "main.cu.cpp.headers").file(root / "main.cu", target)
            header = next((root / "out").rglob("textbook_kernels.cuh.cpp"))
            self.assertIn(f'#include "{header}"', target.read_text())
            self.assertIn("::cudalab::emu::shared<float[TILE_WIDTH][TILE_WIDTH]>", header.read_text())

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
            self.assertIn("::cudalab::emu::ThreadTask cudalab_coroutine_waits(float* x)", header)


class DeviceCode(unittest.TestCase):
    def test_clock_in_device_code_is_the_device_clock(self) -> None:
        out = body(
            "__global__ void k(long* t) { t[0] = clock(); }\n"
            "__device__ int g;\n"
            "int main() { return clock(); }\n"
        )
        self.assertIn("t[0] = ::cudalab::emu::device_clock();", out)
        self.assertIn("int main() { return clock(); }", out)

    def test_inline_ptx_reads_of_special_registers_become_calls(self) -> None:
        out = body(
            '__global__ void k(unsigned* o) { unsigned lane; asm("mov.u32 %0, %%laneid;" : "=r"(lane)); }\n'
            "__device__ unsigned long long now() { unsigned long long t;\n"
            '  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }\n'
            'int main() { asm("nop"); }\n'
        )
        self.assertIn("(lane = ::cudalab::emu::ptx::laneid());", out)
        self.assertIn("(t = ::cudalab::emu::ptx::globaltimer());", out)
        self.assertIn('asm("nop")', out)  # host code's assembly is the host compiler's
        out = body(
            '__device__ unsigned f(unsigned w) { unsigned r; asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(w)); }'
        )
        self.assertIn("(r = ::cudalab::emu::ptx::bfind(w));", out)

    def test_other_inline_ptx_is_refused_with_its_line(self) -> None:
        with self.assertRaises(translate.TranslateError) as e:
            translate.translate(
                '__device__ int f(int w) {\n  int r; asm("prmt.b32 %0, %1;" : "=r"(r) : "r"(w));\n}', "x.cu"
            )
        self.assertEqual(e.exception.line, 2)
        self.assertIn("inline PTX", str(e.exception))

    def test_extern_shared_with_the_qualifier_after_the_type(self) -> None:
        out = body("__global__ void k() { extern double __shared__ sdata[]; }")
        self.assertIn(f"auto* const sdata = {DYNAMIC.format('double[]')};", out)


class Thrust(unittest.TestCase):
    def test_a_file_that_uses_thrust_gets_what_thrusts_cuda_system_brings(self) -> None:
        with_thrust = translate.translate("#include <thrust/sort.h>\nint x;\n", "a.cu")
        self.assertIn("#include <thrust/system_error.h>", with_thrust)
        self.assertNotIn("thrust", translate.translate("int x;\n", "a.cu"))


class KernelRegistration(unittest.TestCase):
    def test_kernels_are_registered_by_address(self) -> None:
        out = body(
            "__global__ void __launch_bounds__(256) k(float* x) { x[0] = 1; }\n"
            "template <class T> __global__ void t(T* x) {}\n"
            "template <> __global__ void t<int>(int* x) {}\n"
            "__device__ int helper() { return 1; }\n"
        )
        self.assertIn(
            "} static const ::cudalab::emu::KernelEntry cudalab_kernel_entry_k"
            "{static_cast<void (*)(float *)>(k)};",
            out,
        )
        self.assertNotIn("cudalab_kernel_entry_t", out)
        self.assertNotIn("cudalab_kernel_entry_helper", out)
        self.assertEqual(out.count("\n"), 4)

    def test_comments_in_the_parameters_stay_out_of_the_registration(self) -> None:
        out = body("__global__ void fill(int* out,  // where\n int n /* how many ) */) {}\n")
        self.assertIn("{static_cast<void (*)(int *, int)>(fill)};", out)
        self.assertEqual(out.count("\n"), 2)


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

    def test_the_twin_waits_with_co_await_and_returns_with_co_return(self) -> None:
        out = body(self.REDUCE + "void run(const float* a, float* b) { reduce<<<1, 256>>>(a, b); }\n")
        twin = out[out.index("#ifndef CUDALAB_EMU_CHECKED") :]
        self.assertIn('#line 1 "lab.cu"\n::cudalab::emu::ThreadTask cudalab_coroutine_reduce(', twin)
        self.assertIn("co_await ::cudalab::emu::syncthreads_arrival();", twin)
        self.assertIn("if (threadIdx.x != 0) co_return;", twin)
        self.assertIn('#endif\n#line 8 "lab.cu"\nvoid run(', twin)
        self.assertIn(
            f"CUDALAB_KERNEL_THREADS(([&](auto&... cudalab_args) {{ reduce{ARGS}; }}), "
            f"([&](auto&... cudalab_args) {{ return cudalab_coroutine_reduce{ARGS}; }})), a, b);",
            out,
        )
        # The kernel itself is unchanged, and so are the numbers of its lines.
        self.assertIn("  __syncthreads();\n  if (threadIdx.x != 0) return;", out)

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
        self.assertIn("template <int TILE_WIDTH>\n::cudalab::emu::ThreadTask cudalab_coroutine_tiled(", out)
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
            twins = [n for n in range(len(calls)) if f"ThreadTask cudalab_coroutine_k{n}(" in text]
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
            self.assertNotIn("cudalab_coroutine_k", texts[0])  # lerp: a function of unknown body
            self.assertIn("::cudalab::emu::ThreadTask cudalab_coroutine_k(float* x)", texts[1])
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
