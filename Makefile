# cudalab: a thin wrapper around CMake and CTest. See README.md.
#   make check [LAB=01_vector_add] [BACKEND=emu|cuda] [REPORT=junit]   the student's labs
#   make test                                                          the project's own suite
#   make bench                                                         benchmarks
BACKEND ?=
LAB ?=
REPORT ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/$(or $(BACKEND),default)
PYTHON ?= python3

.PHONY: check test bench build configure setup format clean

check:
	@$(PYTHON) common/tools/check.py --build-dir $(BUILD) --jobs $(JOBS) \
	  $(if $(BACKEND),--backend $(BACKEND)) $(if $(LAB),--lab $(LAB)) $(if $(REPORT),--report $(REPORT))

configure:
	@cmake -S . -B $(BUILD) $(if $(BACKEND),-DBACKEND=$(BACKEND)) | grep -E '^-- cudalab|rror' || true

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest -L selftest --output-on-failure -j $(JOBS)

bench: configure
	cmake --build $(BUILD) --target bench_foundation -j $(JOBS)
	$(BUILD)/bench/bench_foundation

setup:
	./setup.sh

format:
	find common labs solutions bench \( -name '*.cu' -o -name '*.h' -o -name '*.cpp' \) | xargs clang-format -i

clean:
	rm -rf build
