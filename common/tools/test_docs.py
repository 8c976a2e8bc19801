"""The docs' evidence: docs/runs holds the logs and JSON files that the docs and code cite, and
each one they cite is there."""

from __future__ import annotations

import re
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs" / "runs"
TEXT_SUFFIXES = {".md", ".py", ".sh", ".cmake", ".txt", ".cpp", ".h", ".cu", ".cuh", ".toml", ".yml", ""}
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


if __name__ == "__main__":
    unittest.main()
