"""What the grader's tests share: the sample corpus (made from
the solutions by make_corpus.py, once per test process) and the grader's command."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from make_corpus import make_corpus

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

CORPUS = Path(tempfile.mkdtemp(prefix="cudalab-corpus-")) / "corpus"
make_corpus(CORPUS)
atexit.register(shutil.rmtree, CORPUS.parent, True)


def grade(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "grader" / "grade"), *args], capture_output=True, text=True
    )
