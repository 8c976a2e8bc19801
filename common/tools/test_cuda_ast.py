"""The Clang front end (cudalab_tools/cuda_ast.py) and the lab interface read with it
(cudalab_tools/interface.py): what each record says of programs written the ways nvcc accepts."""

from __future__ import annotations

import os
import tempfile
import unittest
from pathlib import Path

from cudalab_tools import cuda_ast, interface, precompiled, proven_accesses

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = r"""#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
struct Box {
  int v;
  Box(int x) : v(x) {}
};
__global__ void increment(Box& box) { box.v++; }
template <int N>
__global__ void fill(float* p,  // the data
                     int n /* its count, with a ) and a >>> */) {
  __shared__ float tile[N];
  extern __shared__ float dynamic[];
  tile[threadIdx.x] = dynamic[0];
  if (threadIdx.x < n) p[threadIdx.x] = tile[0];
}
__shared__ int at_file_scope[4];
__constant__ float weights[3];
__device__ float twice(float x) { return 2 * x; }
#define LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)
int main() {
  float* p = nullptr;
  Box* box = nullptr;
  std::vector<std::vector<std::vector<int>> > nested;
  increment<<<1, 1>>>(*box);
  fill<32><< <1, 32, 4 >> >(p, 32);
#if 0
  this line is not C++: fill<32><<<1, 1>>>(p);
#endif
  const char* text = R"(fill<<<1, 1>>>(p))";
  void (*pointer)(float*, int) = fill<8>;
  pointer<<<dim3(1), dim3(8, 1)>>>(p, 8);
  LAUNCH(fill<4>, 1, 4, p, 4);
  return text[0] == 0;
}
"""


def parse(text: bytes, name: str = "program.cu") -> cuda_ast.Source:
    folder = Path(tempfile.mkdtemp())
    (folder / name).write_bytes(text)
    return cuda_ast.parse(folder / name)


class Program(unittest.TestCase):
    source: cuda_ast.Source
    data: bytes

    @classmethod
    def setUpClass(cls) -> None:
        cls.data = PROGRAM.encode()
        cls.source = parse(cls.data)

    def written(self, span: cuda_ast.Span) -> str:
        return self.data[span.start : span.end].decode()

    def test_kernels_and_their_parameters(self) -> None:
        functions = {f.name: f for f in self.source.functions if f.span.file == str(self.source.path)}
        self.assertEqual([k.name for k in self.source.kernels()], ["increment", "fill"])
        (box,) = functions["increment"].parameters
        self.assertTrue(box.reference, "a reference parameter stays a reference")
        fill = [(p.name, p.type) for p in functions["fill"].parameters]
        self.assertEqual(fill, [("p", "float *"), ("n", "int")])
        self.assertTrue(functions["fill"].template)
        self.assertEqual(functions["twice"].spaces, {"device"})
        self.assertEqual(functions["main"].spaces, frozenset())

    def test_variables_in_each_space_and_scope(self) -> None:
        found = {v.name: v for v in self.source.variables}
        self.assertEqual(set(found), {"tile", "dynamic", "at_file_scope", "weights"})
        self.assertEqual((found["tile"].space, found["tile"].at_file_scope), ("shared", False))
        self.assertTrue(found["dynamic"].extern)
        file_scope = found["at_file_scope"]
        self.assertEqual((file_scope.space, file_scope.at_file_scope), ("shared", True))
        self.assertEqual(found["weights"].space, "constant")
        self.assertEqual(self.written(found["tile"].span), "__shared__ float tile[N]")

    def test_launches_in_code_only(self) -> None:
        """Not in `#if 0`, not in a raw string; `<< <` and `>> >` as nvcc reads them; a launch
        through a pointer and one in a macro's expansion."""
        launches = self.source.launches
        kernels = [launch.kernel_text for launch in launches]
        self.assertEqual(kernels, ["increment", "fill<32>", "pointer", "fill<4>"])
        self.assertEqual([launch.kernel_function for launch in launches], ["increment", "fill", None, "fill"])
        self.assertEqual([launch.in_macro for launch in launches], [False, False, False, True])
        first = launches[0]
        self.assertEqual(self.written(first.opening), "<<<")
        self.assertEqual(self.written(first.closing), ">>>")
        self.assertEqual(self.written(first.arguments), "(*box)")
        self.assertEqual(first.reference_parameters, (True,))
        self.assertEqual(launches[2].reference_parameters, (False, False), "through a pointer too")
        spaced = launches[1]
        self.assertEqual((spaced.opening.line, spaced.closing.line), (26, 26))
        self.assertEqual(self.written(spaced.arguments), "(p, 32)")
        self.assertEqual(self.data[spaced.opening.start : spaced.closing.end].decode(), "<< <1, 32, 4 >> >")


class MacroLaunches(unittest.TestCase):
    """A launch in a macro's body, read from Clang's tokens there: the kernel expression before
    its `<<<`, the configuration up to `>>>`, the `(` of the arguments."""

    def launches(self, body: str) -> list[tuple[str, str, str]]:
        data = f"__global__ void k(int* p) {{}}\n#define L(p) {body}\n".encode()
        found = []
        for m in parse(data).macro_launches:
            if m.problem:
                found.append(("", "", m.problem))
                continue
            kernel = data[m.kernel_start : m.opening.start].decode().strip()
            config = data[m.opening.end : m.closing_start].decode().strip()
            found.append((kernel, config, data[m.paren : m.paren + 1].decode()))
        return found

    def test_the_parts_of_each_form(self) -> None:
        for body, kernel, config in (
            ("k<<<1, 2>>>(p)", "k", "1, 2"),
            ("::k<<<(1 + 1), dim3(2, 1)>>>(p)", "::k", "(1 + 1), dim3(2, 1)"),
            ("ns::k<int, 4><<<1, 2>>>(p)", "ns::k<int, 4>", "1, 2"),
            ("table.kernels[choose(1)]<<<1, 2>>>(p)", "table.kernels[choose(1)]", "1, 2"),
            ("if (p) (*fp)<<<1, 2>>>(p)", "(*fp)", "1, 2"),
            ("do { k<<<1, 2>>>(p); } while (0)", "k", "1, 2"),
        ):
            with self.subTest(body=body):
                self.assertEqual(self.launches(body), [(kernel, config, "(")])

    def test_a_launch_that_is_not_whole_says_what_is_missing(self) -> None:
        self.assertEqual(self.launches("k<<<1, 2(p)")[0][2], "'<<<' without a matching '>>>'")
        self.assertEqual(
            self.launches("k<<<1, 2>>>;")[0][2], "expected '(' and the kernel's arguments after '>>>'"
        )


class Lambdas(unittest.TestCase):
    def test_a_launch_in_a_lambda_made_a_function_pointer(self) -> None:
        data = (
            b"#include <cuda_runtime.h>\n__global__ void k(float* p) {}\n"
            b"int run(void (*f)(float*)) { f(nullptr); return 0; }\n"
            b"int main() { return run([](float* p) { k<<<1, 1>>>(p); }); }\n"
        )
        source = parse(data)
        self.assertEqual([launch.kernel_function for launch in source.launches], ["k"])
        self.assertEqual(source.unread_launches, [])


class Encodings(unittest.TestCase):
    def test_byte_offsets_in_a_file_that_is_not_utf8(self) -> None:
        """A byte-order mark and a Windows-1252 byte in a comment: spans are bytes of the file."""
        data = b"\xef\xbb\xbf// caf\xe9\n__global__ void k(int* p) { *p = 1; }\n"
        data += b"int main() { k<<<1, 1>>>(nullptr); }\n"
        source = parse(data)
        (launch,) = source.launches
        self.assertEqual(data[launch.kernel.start : launch.arguments.end], b"k<<<1, 1>>>(nullptr)")
        self.assertEqual(launch.kernel.line, 3)

    def test_includes_name_the_headers_the_preprocessor_found(self) -> None:
        """Beside the file and through -I, in quotes and in angle brackets; none in `#if 0`, none
        for a header that is not there; a name's span holds its quotes or brackets."""
        folder = Path(tempfile.mkdtemp())
        (folder / "inc").mkdir()
        (folder / "beside.h").write_text("int beside;\n")
        (folder / "inc" / "found.h").write_text("int found;\n")
        data = (
            b'#include "beside.h"\n#include "found.h"\n#include <found.h>\n'
            b'#if 0\n#include "beside.h"\n#endif\n#include "missing.h"\nint main() {}\n'
        )
        (folder / "main.cu").write_bytes(data)
        source = cuda_ast.parse(folder / "main.cu", [folder / "inc"])
        written = [data[i.name.start : i.name.end].decode() for i in source.includes]
        self.assertEqual(written, ['"beside.h"', '"found.h"', "<found.h>"])
        self.assertEqual([i.quoted for i in source.includes], [True, True, False])
        found = str((folder / "inc" / "found.h").resolve())
        self.assertEqual([i.included for i in source.includes][1:], [found, found])
        self.assertEqual(source.includes[0].spelled, "beside.h")

    def test_a_launch_of_an_undeclared_kernel_is_unread(self) -> None:
        source = parse(b"int main() {\n  float* p = nullptr;\n  missing<<<1, 1>>>(p);\n}\n")
        self.assertEqual([span.line for span in source.unread_launches], [3])
        self.assertIn("missing", source.errors[0].message)

    def test_split_closing_chevrons_of_templates_stay(self) -> None:
        data = b"#include <vector>\nstd::vector<std::vector<int> > v;\nint main() { return 0; }\n"
        self.assertEqual(parse(data).errors, [])


PROVEN = b"""
__global__ void add(const float* A, const float* B, float* C, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) C[i] = A[i] + B[i];
}
__global__ void gelu(float* out, const double* inp, unsigned N) {
  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;
  if (N <= i) return;
  float x = inp[i];
  out[i] += 0.5f * x * (1.0f + tanhf(0.8f * x));
}
__global__ void guard_past_the_end(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = in[i];
}
__global__ void no_block(float* out, const float* in, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = in[i];
}
__global__ void neighbour(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + 1];
}
__global__ void atomic(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[i], 1.0f);
}
__global__ void two_lines(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = 1.0f;
    out[i] *= 2.0f;
  }
}
__global__ void index_changed(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    i += 1;
    out[i] = 1.0f;
  }
}
__global__ void a_loop(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < 4; ++k) out[i] = k;
}
__global__ void conditional_store(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (in[i] > 0) out[i] = in[i];
  }
}
__global__ void return_after_the_guard(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (in[i] < 0) return;
  out[i] = in[i];
}
__global__ void store_in_a_condition(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) in[i] > 0 && (out[i] = 1.0f);
}
__global__ void strided(float* out, const float* in, long n) {
  for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i];
}
__global__ void strided_by_a_block(float* out, const float* in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) out[i] = in[i];
}
__global__ void picture(const float* in, float* out, int n, int m) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < m && Col < n) out[Row * n + Col] = 2 * in[Row * n + Col];
}
__global__ void transposed(float* out, const float* in, int w, int h) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < h && col < w) out[col * h + row] = in[row * w + col];
}
__global__ void either_guard(float* out, int w, int h) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < h || col < w) out[row * w + col] = 1.0f;
}
__device__ float twice(float x) { return 2 * x; }
__global__ void rows_of_a_helper(float* out, const float* in, int B, int T) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < B * T) out[i] = twice(in[i]);
}
__global__ void limit_from_memory(float* out, const int* n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n[0]) out[i] = 1.0f;
}
__device__ float* table;
__device__ float from_a_pointer(const float* p) { return *p; }
__global__ void helper_with_a_pointer(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = from_a_pointer(table);
}
__global__ void qualified_builtin(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ::threadIdx.x;
}
__shared__ float staged;
__global__ void through_shared(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __shared__ float mine;
    mine = in[i];
    out[i] = mine;
  }
}
__global__ void through_file_shared(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + staged;
}
__global__ void a_counting_barrier(int* out, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __syncthreads_count(in[i]);
}
__global__ void a_shuffle(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __shfl_down_sync(0xffffffffu, in[i], 1);
}
template <class T>
__global__ void templated(T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0;
}
__global__ void product(const float* M, const float* N, float* P, int Width) {
  int Row = blockIdx.y * blockDim.y + threadIdx.y;
  int Col = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row < Width && Col < Width) {
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) Pvalue += M[Row * Width + k] * N[k * Width + Col];
    P[Row * Width + Col] = Pvalue;
  }
}
__global__ void counter_changed(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0;
    for (int k = 0; k < n; ++k) s += in[k++];
    out[i] = s;
  }
}
__global__ void nested_loops(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) s += in[k * n + j];
    out[i] = s;
  }
}
__global__ void squared_index(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = 0;
    for (int k = 0; k < n; ++k) s += in[k * k];
    out[i] = s;
  }
}
__global__ void bound_from_memory(float* out, const float* in, const int* n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 64) {
    float s = 0;
    for (int k = 0; k < n[0]; ++k) s += in[k];
    out[i] = s;
  }
}
__global__ void unsigned_neighbour(float* out, const float* in, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i - 1];
}
__global__ void strided_neighbour(float* out, const float* in, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = in[i + 1];
}
__global__ void unguarded(float* out, const float* in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2 * in[i];
}
__global__ void unguarded_product(const float* A, const float* B, float* C, int M, int K, float beta) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  float sum = 0.f;
  for (int i = 0; i < K; ++i) sum += A[row * K + i] * B[i * K + col];
  C[row * M + col] = sum + beta * C[row * M + col];
}
__global__ void unguarded_conditional_store(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (in[i] > 0) out[i] = 1;
}
__global__ void unguarded_return(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  out[i] = in[i];
}
__global__ void aliased_picture(const float* in, float* out, int w, int h) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int idx = row * w + col;
  if (row < h && col < w) out[idx] = 2 * in[idx];
}
__global__ void aliased_window(const float* in, float* out, int n, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int start = i - (width / 2);
    float sum = 0;
    for (int j = 0; j < width; j++) sum += in[start + j];
    out[i] = sum;
  }
}
__global__ void alias_changed(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int idx = i;
    idx += 1;
    out[idx] = in[i];
  }
}
__global__ void alias_from_memory(float* out, const float* in, const int* map, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = map[i];
  if (i < n) out[i] = in[j];
}
__global__ void load_before_the_guard(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = static_cast<int>(in[i]);
  if (i < n) out[i] = v;
}
__global__ void repeated(int* g_data, int* factor, int num_iterations) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < num_iterations; i++) {
    g_data[idx] += *factor;
  }
}
__global__ void store_through_a_dereference(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) *out = i;
}
__global__ void store_in_a_loop_elsewhere(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < 4; ++k) out[4 * i + k] = k;
}
#define REPEAT 10
__global__ void repeated_by_a_macro(int* out, const int* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < REPEAT; k++) out[i] = in[i] + k;
}
const int ELEMENTS = 1000;
__global__ void limit_a_constant(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ELEMENTS) out[i] = 1.0f;
}
__device__ int device_limit;
__global__ void limit_a_device_variable(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < device_limit) out[i] = 1.0f;
}
__global__ void limit_a_local_const(float* out) {
  const int m = 2 * threadIdx.y;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) out[i] = 1.0f;
}
"""


class ProvenAccesses(unittest.TestCase):
    """The kernels whose accesses their code proves (proven_accesses.py), and only those."""

    def test_only_the_programs_own_device_functions_may_be_called(self) -> None:
        """A device function of a header the front end does not read as the program's (the
        toolkit's, the emu's) might wait: the kernel that calls it is not proven."""
        system_or_emu = cuda_ast.system_or_emu
        cuda_ast.system_or_emu = lambda file: file.endswith("program.cu") or system_or_emu(file)
        try:
            found = {f.name: f.proven for f in parse(PROVEN).kernels()}
        finally:
            cuda_ast.system_or_emu = system_or_emu
        self.assertIsNone(found["rows_of_a_helper"])
        self.assertIsNotNone(found["add"])

    def test_each_access_of_the_text_is_a_visit_unless_a_thread_may_skip_a_load(self) -> None:
        """The counters' visits: every access of the text (P[i] += v: a load and a store), its
        index's terms and its loop's bounds; none where a load is under `?:`, `&&`, `||` or `if`."""
        source = b"""
__global__ void scaled(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += in[i] * in[0];
}
__global__ void chosen(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i % 2 ? in[i] : 0.0f;
}
"""
        found = {f.name: f.proven for f in parse(PROVEN + source).kernels()}
        Visit, AffineIndex = proven_accesses.Visit, proven_accesses.AffineIndex
        scaled, chosen = found["scaled"], found["chosen"]
        assert scaled is not None and chosen is not None
        line = scaled.visits[0].line if scaled.visits else 0
        self.assertEqual(
            scaled.visits,
            (
                Visit(0, False, line, None, None),
                Visit(0, True, line, None, None),
                Visit(1, False, line, None, None),
                Visit(1, False, line, AffineIndex(), None),
            ),
        )
        self.assertIsNone(chosen.visits)
        product = found["product"]
        assert product is not None and product.visits is not None
        self.assertEqual(
            [(v.parameter, v.store, v.loop) for v in product.visits],
            [(0, False, ("0", "Width")), (1, False, ("0", "Width")), (2, True, None)],
        )
        repeated = found["repeated"]
        assert repeated is not None and repeated.visits is not None
        loop = ("0", "num_iterations")
        self.assertEqual(
            [(v.parameter, v.store, v.index, v.loop) for v in repeated.visits],
            [(0, False, None, loop), (0, True, None, loop), (1, False, AffineIndex(), loop)],
        )

    def test_only_guarded_accesses_at_the_threads_index_are_proven(self) -> None:
        found = {f.name: f.proven for f in parse(PROVEN).kernels()}

        def proven(name: str) -> proven_accesses.ProvenKernel:
            kernel = found.pop(name)
            assert kernel is not None, name
            return kernel

        def accesses(kernel: proven_accesses.ProvenKernel) -> list[tuple[int, int, bool, int]]:
            return [(a.parameter, a.element_bytes, a.store, a.line) for a in kernel.accesses]

        add = proven("add")
        self.assertEqual(add.limit, "n")
        self.assertEqual(accesses(add), [(0, 4, False, 4), (1, 4, False, 4), (2, 4, True, 4)])
        gelu = proven("gelu")
        self.assertEqual(gelu.limit, "N")
        self.assertEqual(accesses(gelu), [(0, 4, False, 10), (0, 4, True, 10), (1, 8, False, 9)])
        strided = proven("strided")
        self.assertTrue(strided.grid_stride)
        self.assertEqual(strided.limit, "n")
        self.assertEqual([(a.parameter, a.store) for a in strided.accesses], [(0, True), (1, False)])
        self.assertEqual(proven("rows_of_a_helper").limit, "B * T")
        picture = proven("picture")
        self.assertEqual((picture.limit, picture.rows, picture.pitch), ("n", "m", "n"))
        # Loads at other elements: each index's terms, the loop's counter from 0 up to Width.
        (neighbour,) = [a.index for a in proven("neighbour").accesses if a.index is not None]
        self.assertEqual((neighbour.constant, neighbour.column, neighbour.step), ("(0) + (1)", "1", "0"))
        product = proven("product")
        self.assertEqual((product.limit, product.rows, product.pitch), ("Width", "Width", "Width"))
        self.assertEqual(accesses(product), [(2, 4, True, 133), (0, 4, False, 132), (1, 4, False, 132)])
        row, column = (a.index for a in product.accesses[1:])
        self.assertEqual((row.row, row.column, row.step), ("(Width) * (1)", "0", "(0) + (1)"))
        self.assertEqual((column.row, column.column, column.step), ("0", "(0) + (1)", "(Width) * (1)"))
        self.assertEqual((row.first, row.end, column.first, column.end), ("0", "Width", "0", "Width"))
        # No guard: every thread of the grid touches its element (the launch checks the ranges).
        unguarded = proven("unguarded")
        self.assertEqual((unguarded.limit, unguarded.rows), (proven_accesses.UNGUARDED, None))
        self.assertEqual([(a.parameter, a.store) for a in unguarded.accesses], [(0, True), (1, False)])
        sgemm = proven("unguarded_product")
        self.assertEqual((sgemm.limit, sgemm.rows, sgemm.pitch), (proven_accesses.UNGUARDED,) * 2 + ("M",))
        loads_and_stores = [(a.parameter, a.store, a.index is None) for a in sgemm.accesses]
        self.assertEqual(
            loads_and_stores, [(2, False, True), (2, True, True), (0, False, False), (1, False, False)]
        )
        # Integers that one initializer gives and nothing changes stand for their initializers.
        picture = proven("aliased_picture")
        self.assertEqual((picture.limit, picture.rows, picture.pitch), ("w", "h", "w"))
        self.assertEqual(
            [(a.parameter, a.store, a.index) for a in picture.accesses], [(0, False, None), (1, True, None)]
        )
        (window,) = [a.index for a in proven("aliased_window").accesses if a.index is not None]
        self.assertEqual(
            (window.constant, window.column, window.step), ("(0) - (width / 2)", "1", "(0) + (1)")
        )
        self.assertEqual((window.first, window.end), ("0", "width"))
        # A store in a loop is at the thread's element, made where the loop runs; `*P` is P[0].
        (stored,) = [a for a in proven("a_loop").accesses if a.store]
        self.assertEqual((stored.line, stored.loop), (45, ("0", "4")))
        # A bound a macro gives is written as the kernel writes it (its name, not its definition's).
        (by_a_macro,) = [a for a in proven("repeated_by_a_macro").accesses if a.store]
        self.assertEqual(by_a_macro.loop, ("0", "REPEAT"))
        repeated = proven("repeated")
        self.assertEqual(repeated.limit, proven_accesses.UNGUARDED)
        loads_and_stores = [(a.parameter, a.store, a.index, a.loop) for a in repeated.accesses]
        self.assertEqual(
            loads_and_stores,
            [
                (0, False, None, None),
                (0, True, None, ("0", "num_iterations")),
                (1, False, proven_accesses.AffineIndex(), None),
            ],
        )
        # A const integer outside any function is a constant (device code reads no other host
        # variable); a __device__ variable and a function's const local are not.
        self.assertEqual(proven("limit_a_constant").limit, "ELEMENTS")
        self.assertEqual(found, dict.fromkeys(found), "none of the others is proven")
        self.assertEqual(
            set(found),
            {
                "guard_past_the_end",
                "no_block",
                "atomic",
                "two_lines",
                "index_changed",
                "conditional_store",
                "return_after_the_guard",
                "store_in_a_condition",
                "strided_by_a_block",
                "qualified_builtin",
                "transposed",
                "either_guard",
                "limit_from_memory",
                "helper_with_a_pointer",
                "through_shared",
                "through_file_shared",
                "a_counting_barrier",
                "a_shuffle",
                "templated",
                "counter_changed",
                "nested_loops",
                "squared_index",
                "bound_from_memory",
                "strided_neighbour",
                "unsigned_neighbour",
                "unguarded_conditional_store",
                "unguarded_return",
                "alias_changed",
                "alias_from_memory",
                "load_before_the_guard",
                "store_through_a_dereference",
                "store_in_a_loop_elsewhere",
                "limit_a_device_variable",
                "limit_a_local_const",
            },
        )


class Interface(unittest.TestCase):
    def write(self, header: str, harness: str) -> tuple[Path, Path]:
        folder = Path(tempfile.mkdtemp())
        (folder / "lab.h").write_text(header)
        (folder / "test_lab.cu").write_text('#include "lab.h"\n' + harness)
        return folder / "lab.h", folder / "test_lab.cu"

    def test_overloads_kernels_and_symbols(self) -> None:
        header, harness = self.write(
            "#include <cuda_runtime.h>\n"
            "cudaError_t scale(const float* in, float* out, int n);\n"
            "cudaError_t scale(const int* in, int* out, int n);\n"
            "inline int blocks(int n) { return (n + 255) / 256; }\n"
            "__global__ void scaleKernel(const float* in, float* out, int n);\n",
            "__constant__ float weights[3];\n__device__ int counter;\n"
            "__global__ void probe(int* out) { *out = counter; }\n",
        )
        read = interface.read(header.resolve(), harness.resolve())
        self.assertEqual(
            [interface.signature(f) for f in read.host_functions],
            [
                "const float * in, float * out, int n",
                "const int * in, int * out, int n",
            ],
        )
        self.assertEqual(read.kernels, ["scaleKernel", "probe"])
        self.assertEqual(read.symbols, ["weights", "counter"])

    def test_a_parameter_without_a_name_is_an_error_with_its_line(self) -> None:
        unnamed = "#include <cuda_runtime.h>\n\ncudaError_t scale(const float*, int n);\n"  # (line 3)
        header, harness = self.write(unnamed, "")
        with self.assertRaisesRegex(cuda_ast.FrontEndError, r"lab\.h:3: error: scale: every parameter"):
            interface.read(header.resolve(), harness.resolve())

    def test_an_output_made_again_unchanged_is_newer_than_its_inputs(self) -> None:
        """make runs the interface's command when an input (cuda_ast.py, say) is newer than its
        outputs: unchanged outputs are touched, or make would run it on every build."""
        header, harness = self.write("#include <cuda_runtime.h>\ncudaError_t f(int n);\n", "")
        checker, runner = header.parent / "checker.cu", header.parent / "runner.cu"
        argv = ["interface", str(header), str(harness), str(checker), str(runner)]
        self.assertEqual(interface.main(argv), 0)
        for output in (checker, runner):
            os.utime(output, (1, 1))  # older than every input
        self.assertEqual(interface.main(argv), 0)
        for output in (checker, runner):
            self.assertGreater(output.stat().st_mtime, harness.stat().st_mtime, output.name)

    def test_every_lab_has_an_interface(self) -> None:
        for lab in sorted((ROOT / "labs").glob("[0-9][0-9]_*")):
            with self.subTest(lab=lab.name):
                (header,) = lab.glob("*.h")
                (harness,) = lab.glob("test_*.cu")
                read = interface.read(header, harness)
                self.assertTrue(read.host_functions, "the checker asks the runner to run these")


class PrecompiledFrontEnd(unittest.TestCase):
    """The emu's CUDA declarations are precompiled once (precompiled.py): a file reads the same as
    with them as text, also one whose headers make libclang give up on the precompiled ones, and a
    header changed since is precompiled again."""

    def setUp(self) -> None:
        self.cache = Path(tempfile.mkdtemp())
        self.saved = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(self.cache)
        precompiled.made.cache_clear()

    def tearDown(self) -> None:
        if self.saved is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = self.saved
        precompiled.made.cache_clear()

    def records(self, source: cuda_ast.Source) -> tuple:
        kernels = [f.name for f in source.kernels()]
        launches = [(k.kernel_text, k.kernel.line, k.kernel.start) for k in source.launches]
        return kernels, launches, source.errors

    def test_a_file_reads_as_with_the_declarations_as_text(self) -> None:
        for text in (PROGRAM, "#include <memory>\n" + PROGRAM):  # (<memory>: read again as text)
            with self.subTest(memory="<memory>" in text):
                with_header = parse(text.encode())
                self.assertEqual(len(list((self.cache / "cudalab").glob("front-end-*.pch"))), 1)
                os.environ["XDG_CACHE_HOME"] = "/proc/no-cache-here"
                precompiled.made.cache_clear()
                as_text = parse(text.encode())
                os.environ["XDG_CACHE_HOME"] = str(self.cache)
                precompiled.made.cache_clear()
                self.assertEqual(self.records(with_header), self.records(as_text))
                self.assertEqual(self.records(as_text)[0], ["increment", "fill"])

    def test_only_definitions_its_files_mention_make_a_header_of_their_own(self) -> None:
        folder = Path(tempfile.mkdtemp())
        (folder / "program.cu").write_text(PROGRAM)
        pchs = lambda: len(list((self.cache / "cudalab").glob("front-end-*.pch")))  # noqa: E731
        cuda_ast.parse(folder / "program.cu", defines=['CUDALAB_LAB_DIR="/labs/01"', "NOT_A_NAME_THERE=1"])
        self.assertEqual(pchs(), 1)
        cuda_ast.parse(folder / "program.cu", defines=["CUDALAB_PROGRAM_CPLUSPLUS=201703L"])  # (prelude.h)
        self.assertEqual(pchs(), 2)

    def test_a_header_changed_since_is_precompiled_again(self) -> None:
        ci = cuda_ast.cindex()
        folder = Path(tempfile.mkdtemp())
        (folder / "decl.h").write_text("int first();\n")
        (folder / "use.cu").write_text("int main() { return first() + second(); }\n")
        language = tuple(cuda_ast.language((), "c++20", [folder]))

        def errors() -> list[str]:
            pch = precompiled.header(ci, list(language), (), "decl.h")
            self.assertIsNotNone(pch)
            options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
            tu = ci.Index.create().parse(
                str(folder / "use.cu"), args=[*language, "-include-pch", str(pch)], options=options
            )
            return [d.spelling for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]

        self.assertEqual(len(errors()), 1, "second() is not declared yet")
        (folder / "decl.h").write_text("int first();\nint second();\n")
        precompiled.made.cache_clear()  # (a new process)
        self.assertEqual(errors(), [])


if __name__ == "__main__":
    unittest.main()
