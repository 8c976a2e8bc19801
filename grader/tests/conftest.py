"""pytest's set-up for the grader's tests: the grader's package and these tests' helpers
(support.py, make_corpus.py) importable."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "grader"), str(HERE)]
