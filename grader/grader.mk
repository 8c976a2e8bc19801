# The instructor's targets, included by the workbook's Makefile (a student release has no grader/):
#   make demo                             the grader on the sample submissions (make_corpus.py)
#   make student-release DEST=<folder>    the workbook without solutions, checked
.PHONY: demo student-release

demo:
	$(SYSTEM_PYTHON) grader/tests/make_corpus.py build/demo-corpus
	$(SYSTEM_PYTHON) grader/grade build/demo-corpus --test-timeout 10 --out build/demo

student-release:
	@test -n "$(DEST)" || { echo "usage: make student-release DEST=<folder>"; exit 2; }
	$(SYSTEM_PYTHON) grader/release.py $(DEST)
