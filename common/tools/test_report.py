"""Tests of make check's report page (common/tools/cudalab_tools/report.py): what it reads from the
records of the tests and the emu's counters, what the page holds, and the page in a real browser
(headless Chromium, where installed: .ci/run installs it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from cudalab_tools import records
from cudalab_tools.lab_result import LabResult

missing = ""
try:  # Jinja2 and matplotlib: ./setup.sh installs them (the GPU machines lack Jinja2)
    import matplotlib  # noqa: F401 (the page's pictures)
    from cudalab_tools import report
except ImportError as e:
    report, missing = None, e.name
needs_the_libraries = unittest.skipIf(report is None, f"the page needs {missing}: ./setup.sh installs it")

# The tail of a real failure of lab 04 (the store's guard with I and K swapped), as compare.h words it,
# and its record.
MESSAGE = """P: 20 of 45 elements are wrong (an element passes when |got - expected| <= 1e-05 * |expected|)
  P[5] = (never written), expected 0
  Columns 0..4 are right; the wrong elements are in columns 5..8: does the grid cover every column?
  Where the wrong elements are (5 x 9, each mark 1 x 1 elements; X wrong, o never written, . right):
    .....oooo
    .....oooo
    ....XXooo
    .....oooo
    .....oooo
With TILE_WIDTH 16: <are there> ceil(J / TILE_WIDTH) phases?"""
WRONG_ELEMENTS = {
    "kind": "wrong_elements",
    "output": "P",
    "elements": 45,
    "wrong": 20,
    "rows": 5,
    "cols": 9,
    "mark_rows": 1,
    "mark_cols": 1,
    "cells": [".....oooo", ".....oooo", "....XXooo", ".....oooo", ".....oooo"],
    "text": MESSAGE,
}

# The records of lab 04's counting test (CUDALAB_REPORT), with one line made uncoalesced.
KERNEL = {"kernel": "tiledMatMulKernel<TILE_WIDTH>", "launches": 2}


def counters(line: int, access: str, requests: int, units: int, ideal_units: int) -> dict:
    counted = {"access": access, "requests": requests, "units": units, "ideal_units": ideal_units}
    return {"kind": "counters", **KERNEL, "at": {"file": "kernel.cu", "line": line}, **counted}


COUNTERS = "".join(
    json.dumps(r) + "\n"
    for r in [
        counters(3, "global load", 1536, 6144, 6144),
        counters(3, "shared store", 1536, 1536, 1536),
        counters(4, "global load", 1536, 49152, 6144),
        counters(6, "shared load", 67584, 67584, 67584),
        {
            "kind": "events",
            **KERNEL,
            "at": {"file": "kernel.cu", "line": 5},
            "event": "barrier",
            "count": 138,
        },
    ]
)

# The counting tests' roofline records (performance.h): lab 04's tiled kernel, and a skeleton's that
# moved nothing.
ROOFLINE = "".join(
    json.dumps({"kind": "roofline", "name": name, "flops": 983040, "sectors": sectors} | kernel) + "\n"
    for name, sectors, kernel in [
        ("tiledMatMul16", 8320, {"launches": 1, "kernel": "tiledMatMulKernel<16>"}),
        ("tiledMatMul32", 0, {"launches": 1, "kernel": "tiledMatMulKernel<16>"}),
    ]
)


def typed(text: str) -> list:
    return records.typed(records.parse_lines(text))


# make bench's JSON, cut to what the roofline reads: the ceilings and one lab 04 kernel.
REFERENCE = {
    "device": "NVIDIA H100",
    "copy_gbps": 2911.0,
    "results": [
        {"lab": "-", "kernel": "cuBLAS SGEMM", "n": 4096, "ms": 2.7, "value": 50600.0},
        {
            "lab": "04",
            "kernel": "tiledMatMul16",
            "n": 4096,
            "ms": 16.9,
            "flops": 2.0 * 4096**3,
            "bytes": 12.0 * 4096**2,
        },
        {
            "lab": "04",
            "kernel": "tiledMatMul16",
            "n": 512,
            "ms": 0.1,
            "flops": 2.0 * 512**3,
            "bytes": 12.0 * 512**2,
        },
    ],
}

SOURCE = """__global__ void k(const float* M, const float* N, float* P) {
  // line 2
  Mds[ty][tx] = M[Row * Width + tx];
  Nds[ty][tx] = N[tx * Width + Row];
  __syncthreads();
  for (int k = 0; k < TILE_WIDTH; ++k) Pvalue += Mds[ty][k] * Nds[k][tx];
}
"""


def a_page(folder: Path) -> Path:
    (folder / "kernel.cu").write_text(SOURCE)
    lab = LabResult(
        "04_tiled_matmul",
        passed=["Tiled16.OneByOne"],
        failed=["Tiled16.NotMultiplesOfTile", "Tiled16.Empty"],
        points={"Tiled16.OneByOne": 2, "Tiled16.NotMultiplesOfTile": 3, "Tiled16.Empty": 1},
        messages={"Tiled16.NotMultiplesOfTile": MESSAGE, "Tiled16.Empty": "returned <cudaErrorInvalidValue>"},
        records={"Tiled16.NotMultiplesOfTile": [WRONG_ELEMENTS], "Tiled16.Empty": []},
    )
    broken = LabResult(
        "05_convolution_halo", build_error="convolution.cu:12: error: 'Mask_Width' was not declared"
    )
    html = report.render(
        [lab, broken],
        backend="emu",
        counted={"04_tiled_matmul": records.parse_lines(ROOFLINE + COUNTERS)},
        lab_folders={"04_tiled_matmul": folder, "05_convolution_halo": folder},
        references=[REFERENCE],
    )
    return report.write(folder / "report" / "index.html", html)


@needs_the_libraries
class Reading(unittest.TestCase):
    def test_the_map_of_wrong_elements_is_read_from_its_record(self) -> None:
        (m,) = records.wrong_maps([WRONG_ELEMENTS])
        self.assertEqual((m.rows, m.cols), (5, 9))
        self.assertEqual(len(m.cells), 5)
        self.assertEqual(m.cells[2], "....XXooo")
        unmapped = {k: v for k, v in WRONG_ELEMENTS.items() if k not in ("rows", "cols", "cells")}
        self.assertEqual(records.wrong_maps([unmapped]), [])

    def test_the_counting_tests_kernels_are_read_for_the_roofline(self) -> None:
        self.assertEqual(report.counted_work(typed(ROOFLINE + COUNTERS)), {"tiledMatMul16": (983040.0, 8320)})

    def test_counters_are_read_per_line_and_access(self) -> None:
        c = report.line_counters(typed(COUNTERS))
        self.assertEqual(sorted(c), [("kernel.cu", 3), ("kernel.cu", 4), ("kernel.cu", 6)])
        self.assertEqual([x.access for x in c[("kernel.cu", 3)]], ["global load", "shared store"])
        (uncoalesced,) = c[("kernel.cu", 4)]
        self.assertEqual((uncoalesced.requests, uncoalesced.units, uncoalesced.efficiency), (1536, 49152, 12))
        self.assertTrue(uncoalesced.wasteful)


@needs_the_libraries
class Page(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = Path(tempfile.mkdtemp())
        self.html = a_page(self.folder).read_text()

    def tearDown(self) -> None:
        shutil.rmtree(self.folder)

    def test_results_points_and_messages_escaped(self) -> None:
        self.assertIn("make check (emu): 2 of 6 points", self.html)
        self.assertIn("Tiled16.NotMultiplesOfTile failed (3 points)", self.html)
        self.assertIn("returned &lt;cudaErrorInvalidValue&gt;", self.html)
        self.assertNotIn("<cudaErrorInvalidValue>", self.html)
        self.assertIn("Does not build", self.html)
        self.assertIn("&#39;Mask_Width&#39; was not declared", self.html)

    def test_a_roofline_for_the_lab_the_reference_run_timed(self) -> None:
        self.assertEqual(self.html.count('<img class="roofline" src="data:image/png;base64,'), 1)
        self.assertLess(self.html.index('id="04_tiled_matmul"'), self.html.index('class="roofline"'))
        self.assertLess(self.html.index('class="roofline"'), self.html.index('id="05_convolution_halo"'))

    def test_a_roofline_point_per_kernel_at_its_largest_size(self) -> None:
        from cudalab_tools import roofline

        (point,) = roofline.points_of(REFERENCE, {"04"})
        self.assertEqual(point.label, "04 tiledMatMul16")
        self.assertAlmostEqual(point.intensity, 4096 / 6)
        self.assertAlmostEqual(point.gflops, 2.0 * 4096**3 / 16.9 / 1e6)

    def test_a_counted_kernel_sits_on_the_roof_at_its_intensity(self) -> None:
        from cudalab_tools import roofline

        roofs = roofline.roofs_of(REFERENCE, "H100")
        point = roofline.counted_point("tiledMatMul16", 983040, 8320, roofs)
        self.assertAlmostEqual(point.intensity, 983040 / (32 * 8320))
        self.assertAlmostEqual(point.gflops, 2911.0 * point.intensity)  # below the ridge: sloped roof
        self.assertTrue(point.mine and point.counted)
        self.assertAlmostEqual(roofline.counted_point("k", 1e9, 1, roofs).gflops, 50600.0)  # flat roof

    def test_a_lab_with_counted_kernels_only_gets_a_roofline(self) -> None:
        counted = report.counted_work(typed(ROOFLINE))
        self.assertIsNotNone(report.lab_roofline("07_averaging_filter", REFERENCE, None, counted))
        self.assertIsNone(report.lab_roofline("07_averaging_filter", REFERENCE, None, {}))

    def test_a_picture_for_the_mapped_failure_only(self) -> None:
        self.assertEqual(self.html.count('<img class="wrong-elements" src="data:image/png;base64,'), 1)

    def test_the_source_with_its_counters_and_the_wasteful_line_marked(self) -> None:
        self.assertIn("kernel.cu: memory traffic per line", self.html)
        rows = [r for r in self.html.split("<tr") if 'class="number">' in r]
        self.assertEqual(len(rows), len(SOURCE.splitlines()))
        self.assertIn("wasteful", rows[3])  # line 4: 12% efficiency
        self.assertIn("global load: 1536 requests, 32.00 sectors each, 12%", rows[3])
        self.assertIn("measured", rows[2])
        self.assertNotIn("wasteful", rows[2])
        self.assertIn(" hot", rows[5])  # line 6: the most requests
        self.assertNotIn(" hot", rows[2])
        self.assertEqual(rows[1].count("requests"), 0)
        self.assertIn("barrier: 138 block passes", rows[4])  # line 5: __syncthreads()
        self.assertIn("measured", rows[4])


@unittest.skipIf(shutil.which("chromium") is None, "needs Chromium (Debian's chromium; .ci/run installs it)")
@needs_the_libraries
class InABrowser(unittest.TestCase):
    """The page as Chromium renders it: the DOM after loading, and a screenshot."""

    def setUp(self) -> None:
        self.folder = Path(tempfile.mkdtemp())
        self.page = a_page(self.folder)

    def tearDown(self) -> None:
        shutil.rmtree(self.folder)

    def chromium(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        return subprocess.run(
            [*command, *args, self.page.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.folder,
        )

    def test_the_rendered_page_holds_the_picture_and_the_annotated_source(self) -> None:
        dom = self.chromium("--dump-dom")
        self.assertEqual(dom.returncode, 0, dom.stderr)
        self.assertIn('class="wrong-elements"', dom.stdout)
        self.assertIn('class="source"', dom.stdout)
        self.assertIn("32.00 sectors each, 12%", dom.stdout)

    def test_the_screenshot_shows_the_picture(self) -> None:
        import matplotlib.image

        shot = self.folder / "page.png"
        done = self.chromium("--window-size=1000,1400", f"--screenshot={shot}")
        self.assertTrue(shot.is_file(), done.stderr)
        pixels = matplotlib.image.imread(shot)
        self.assertEqual(pixels.shape[:2], (1400, 1000))
        # The picture's red (wrong) and grey (never written) cells are drawn: colours no text has.
        red = ((pixels[..., 0] > 0.75) & (pixels[..., 1] < 0.25) & (pixels[..., 2] < 0.25)).sum()
        grey = ((abs(pixels[..., 0] - 0.5) < 0.02) & (abs(pixels[..., 1] - 0.5) < 0.02)).sum()
        self.assertGreater(red, 50)
        self.assertGreater(grey, 200)


if __name__ == "__main__":
    unittest.main()
