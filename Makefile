# cudalab: a thin wrapper around CMake and CTest. See README.md.
#   make check [LAB=01_vector_add] [BACKEND=emu|cuda] [REPORT=junit]   the student's labs
#   make test                                                          the project's own suite
#   make bench [SOURCE=labs]                                           benchmarks (JSON in build/)
#   make plots                                        figures of the last make bench, docs/figures
#   make demo, make student-release DEST=<folder>     the instructor's: grader/grader.mk
BACKEND ?=
LAB ?=
REPORT ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/$(or $(BACKEND),default)
PYTHON ?= python3
# make check, the grader and their tests use the system's Python, where setup.sh installs
# matplotlib, Jinja2 and pytest.
SYSTEM_PYTHON := $(or $(wildcard /usr/bin/python3),$(PYTHON))

.PHONY: check test bench plots build configure setup format clean

check:
	@$(SYSTEM_PYTHON) common/tools/check.py --build-dir $(BUILD) --jobs $(JOBS) \
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
	cmake --build $(BUILD) --target bench_foundation bench_labs bench_counters -j $(JOBS)
	$(BUILD)/bench/bench_foundation
	$(BUILD)/bench/bench_labs $(BUILD)/bench.json

plots:
	PYTHONPATH=common/tools $(SYSTEM_PYTHON) bench/plots.py $(BUILD)/bench.json docs/figures \
	  $(wildcard $(BUILD)/counters_vs_gpu.json)

setup:
	./setup.sh

format:
	find common labs solutions bench \( -name '*.cu' -o -name '*.h' -o -name '*.cpp' \) | xargs clang-format -i

clean:
	rm -rf build

# The grader's targets live with the grader, which a student's copy of the workbook leaves out.
-include grader/grader.mk
