# Thin wrapper over CMake. The two commands the README gives:
#   make bench   -- install what is missing, build, run the benchmark suite (quick mode)
#   make test    -- install what is missing, build, run the whole test suite through ctest
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test bench bench-full test-sanitize test-valgrind clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: build
	@bench/run.sh --build $(BUILD) --quick

bench-full: build
	@bench/run.sh --build $(BUILD) --full

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-sanitize: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DRC_SANITIZE=address,undefined >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) --timeout 900

# The whole suite under valgrind memcheck (ctest's memcheck driver).
test-valgrind: build
	@cd $(BUILD) && ctest -T memcheck --output-on-failure -j $(JOBS) --timeout 1800

clean:
	rm -rf $(BUILD) $(BUILD)-asan
