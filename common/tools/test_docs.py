"""The docs' evidence: docs/runs holds the logs and JSON files that the docs and code cite, each
one they cite is there, and each table the docs make from a bench JSON is what bench/tables.py
makes of it."""

from __future__ import annotations

import importlib.util
import re
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs" / "runs"
TEXT_SUFFIXES = {
    ".md",
    ".py",
    ".sh",
    ".cmake",
    ".txt",
    ".cpp",
    ".h",
    ".cu",
    ".cuh",
    ".def",
    ".toml",
    ".yml",
    "",
}
CITED = re.compile(r"docs/runs/([\w.+-]+\.(?:log|json|csv|txt))")


def project_text() -> str:
    """Every text file of the project but build folders and docs/runs itself."""
    texts = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if parts[0] in ("build", ".git", ".deps") or parts[:2] == ("docs", "runs") or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


@unittest.skipUnless(RUNS.is_dir(), "no docs/runs (a student release leaves it out)")
class Runs(unittest.TestCase):
    text = ""

    @classmethod
    def setUpClass(cls) -> None:
        cls.text = project_text()

    def test_every_file_is_cited(self) -> None:
        uncited = sorted(p.name for p in RUNS.iterdir() if p.name not in self.text)
        self.assertEqual(uncited, [], "docs/runs files that nothing cites: delete them")

    def test_every_cited_file_is_there(self) -> None:
        missing = sorted({name for name in CITED.findall(self.text) if not (RUNS / name).exists()})
        self.assertEqual(missing, [])


@unittest.skipUnless(RUNS.is_dir(), "no docs/runs (a student release leaves it out)")
class BenchTables(unittest.TestCase):
    def test_each_bench_table_is_made_from_its_json(self) -> None:
        spec = importlib.util.spec_from_file_location("tables", ROOT / "bench" / "tables.py")
        assert spec is not None and spec.loader is not None
        tables = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tables)
        for doc in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
            with self.subTest(doc=doc.name):
                stale = tables.stale_tables(doc.read_text())
                self.assertEqual(stale, [], f"run: bench/tables.py --write {doc.relative_to(ROOT)}")


if __name__ == "__main__":
    unittest.main()
