"""Unit tests of the emu translator (common/emu/translate.py)."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import translate  # noqa: E402


def body(src: str) -> str:
    """The translation without its two header lines."""
    return translate.translate(src, "lab.cu").split("\n", 2)[2]


class Launches(unittest.TestCase):
    def test_simple_launch(self) -> None:
        out = body("k<<<g, b>>>(x, y);")
        self.assertEqual(
            out,
            '::cudalab::emu::Launch("k", __FILE__, __LINE__, g, b)'
            "([&](auto&&... cudalab_args) { k(cudalab_args...); }, x, y);",
        )

    def test_no_arguments(self) -> None:
        self.assertIn("{ k(cudalab_args...); });", body("k<<<1, 1>>>();"))

    def test_template_and_namespace(self) -> None:
        out = body("ns::k<float, 4> <<<g, b, s, st>>>(p);")
        self.assertIn('Launch("ns::k<float,4>", __FILE__, __LINE__, g, b, s, st)', out)
        self.assertIn("{ ns::k<float,4>(cudalab_args...); }", out)

    def test_lines_are_kept(self) -> None:
        src = "a;\nk<<<(n + 255)\n / 256,\n 256>>>(\n x,\n y);\nafter;\n"
        out = body(src)
        self.assertEqual(out.count("\n"), src.count("\n"))
        self.assertTrue(out.endswith("\nafter;\n"))

    def test_comments_and_strings_are_left_alone(self) -> None:
        src = '// k<<<1,1>>>(x)\nconst char* s = "k<<<1,1>>>(x)"; /* k<<<1,1>>>() */\n'
        self.assertEqual(body(src), src)

    def test_shift_inside_configuration(self) -> None:
        self.assertIn('Launch("k", __FILE__, __LINE__, (n >> 1), 32)', body("k<<<(n >> 1), 32>>>(a);"))

    def test_missing_close_is_an_error_with_line(self) -> None:
        with self.assertRaises(translate.TranslateError) as e:
            translate.translate("int a;\nk<<<1, 1(x);\n", "lab.cu")
        self.assertEqual(e.exception.line, 2)

    def test_missing_arguments_is_an_error(self) -> None:
        with self.assertRaises(translate.TranslateError):
            translate.translate("k<<<1, 1>>>;", "lab.cu")


class ExternShared(unittest.TestCase):
    def test_rewritten_inside_kernel(self) -> None:
        out = body("void k() { extern __shared__ __align__(16) float tile[]; }")
        self.assertIn(
            "float* const tile = reinterpret_cast<float*>(::cudalab::emu::builtins.dynamic_shared);", out
        )

    def test_file_scope_is_an_error(self) -> None:
        with self.assertRaises(translate.TranslateError):
            translate.translate("extern __shared__ int s[];\n", "lab.cu")


class Output(unittest.TestCase):
    def test_prelude_and_line_directive(self) -> None:
        out = translate.translate("x;\n", "/abs/lab.cu")
        self.assertTrue(out.startswith('#include "cudalab/emu/prelude.h"\n#line 1 "/abs/lab.cu"\nx;\n'))


if __name__ == "__main__":
    unittest.main()


class SharedVariables(unittest.TestCase):
    def test_each_declarator_gets_a_checked_slot(self) -> None:
        out = body("__global__ void k() {\n  __shared__ float As[T][T], Bs[T][T];\n}\n")
        self.assertIn('static ::cudalab::emu::SharedSlot cudalab_slot_As{"As", __FILE__, __LINE__};', out)
        self.assertIn("auto& As = ::cudalab::emu::shared<float[T][T]>(cudalab_slot_As);", out)
        self.assertIn("auto& Bs = ::cudalab::emu::shared<float[T][T]>(cudalab_slot_Bs);", out)

    def test_qualifiers_templates_and_lines(self) -> None:
        src = (
            "void k() {\n  // a comment; with a semicolon\n"
            "  static __shared__ volatile int\n    count;\n  x;\n}\n"
        )
        out = body(src)
        self.assertIn("shared<volatile int>(cudalab_slot_count);", out)
        self.assertIn("// a comment; with a semicolon", out)
        self.assertEqual(out.count("\n"), src.count("\n"))
        self.assertIn("shared<Pair<int, float>[2]>", body("void k() { __shared__ Pair<int, float> p[2]; }"))

    def test_namespace_scope_and_unreadable_declarations_stay(self) -> None:
        self.assertEqual(body("__shared__ int counter;\n"), "__shared__ int counter;\n")
        self.assertIn("__shared__ float f(3)", body("void k() { __shared__ float f(3); }"))
