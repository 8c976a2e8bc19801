# cudalab: a thin wrapper around CMake and CTest. See README.md.
#   make check [LAB=01_vector_add] [BACKEND=emu|cuda] [REPORT=junit]   the student's labs
#   make test                                                          the project's own suite
#   make bench [SOURCE=labs]                                           benchmarks (JSON in build/)
#   make plots                                        figures of the last make bench, docs/figures
#   make demo                                         the grader on the bundled sample submissions
#   make student-release DEST=<folder>                the workbook without solutions, checked
BACKEND ?=
LAB ?=
REPORT ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/$(or $(BACKEND),default)
PYTHON ?= python3
# The grader and its tests use the system's Python, where setup.sh installs matplotlib and pytest.
SYSTEM_PYTHON := $(or $(wildcard /usr/bin/python3),$(PYTHON))

.PHONY: check test bench plots build configure setup format clean demo student-release

check:
	@$(PYTHON) common/tools/check.py --build-dir $(BUILD) --jobs $(JOBS) \
	  $(if $(BACKEND),--backend $(BACKEND)) $(if $(LAB),--lab $(LAB)) $(if $(REPORT),--report $(REPORT))

configure:
	@cmake -S . -B $(BUILD) $(if $(BACKEND),-DBACKEND=$(BACKEND)) | grep -E '^-- cudalab|rror' || true

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Performance tests run one at a time after the others: timings taken while other tests share the
# GPU would be neither stable nor fair.
test: build
	cd $(BUILD) && status=0; \
	  ctest -L selftest -E Performance --output-on-failure -j $(JOBS) || status=1; \
	  ctest -L selftest -R Performance --output-on-failure -j 1 || status=1; \
	  exit $$status

bench: configure
	cmake --build $(BUILD) --target bench_foundation bench_labs -j $(JOBS)
	$(BUILD)/bench/bench_foundation
	$(BUILD)/bench/bench_labs $(BUILD)/bench.json

plots:
	$(SYSTEM_PYTHON) bench/plots.py $(BUILD)/bench.json docs/figures

demo:
	$(SYSTEM_PYTHON) grader/tests/make_corpus.py build/demo-corpus
	$(SYSTEM_PYTHON) grader/grade build/demo-corpus --labs 01,04 --test-timeout 10 --out build/demo

student-release:
	@test -n "$(DEST)" || { echo "usage: make student-release DEST=<folder>"; exit 2; }
	$(SYSTEM_PYTHON) grader/release.py $(DEST)

setup:
	./setup.sh

format:
	find common labs solutions bench \( -name '*.cu' -o -name '*.h' -o -name '*.cpp' \) | xargs clang-format -i

clean:
	rm -rf build
