# Thin wrapper over CMake. The two commands the README gives:
#   make bench   -- install what is missing, build, run the benchmark suite (quick mode)
#   make test    -- install what is missing, build, run the whole test suite through ctest
# and for users who only install: `make install` (library and idlc, PREFIX, DESTDIR) and
# `make deb` (Debian packages) -- docs/install.md.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

PREFIX  ?= /usr/local
DEB_BUILD ?= build-deb

.PHONY: all deps configure build test bench bench-full test-sanitize test-tsan test-valgrind soak fuzz \
	install deb clean

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

# The library (libremotecall.a, libremotecall.so.0) and idlc under PREFIX, built in
# $(BUILD)-install without the tests, benchmarks and examples, so only what building them needs
# is installed first (install-deps.sh --build-only: no cmocka, libtirpc, valgrind, clang...).
install:
	@scripts/install-deps.sh --build-only
	@cmake -S . -B $(BUILD)-install -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
		-DRC_BUILD_TESTS=OFF -DRC_BUILD_BENCH=OFF -DRC_BUILD_EXAMPLES=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-install -j $(JOBS)
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD)-install

# Debian packages libremotecall0, libremotecall-dev and idlc in $(DEB_BUILD)/, lintian-checked
# (scripts/build-deb.sh; packaging in scripts/debian/).
deb:
	@scripts/install-deps.sh --deb
	@scripts/build-deb.sh $(DEB_BUILD)

bench-full: build
	@bench/run.sh --build $(BUILD) --full

# Fail a sanitizer pass if any process wrote a report to the log folder $(1): an error ends
# the process that meets it, but a leak found at the exit of a server stopped by a signal, say,
# would only change an exit status that no script looks at.
define san_check
	if [ -n "$$(ls -A $(1))" ]; then \
		cat $(1)/*; echo "$@: sanitizer reports above ($(1))"; exit 1; \
	fi
endef

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included);
# every process's reports go to asan-logs/.
ASAN_LOGS = $(abspath $(BUILD)-asan)/asan-logs
test-sanitize: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DRC_SANITIZE=address,undefined >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@rm -rf $(ASAN_LOGS) && mkdir -p $(ASAN_LOGS)
	@cd $(BUILD)-asan && ASAN_OPTIONS="log_path=$(ASAN_LOGS)/asan $${ASAN_OPTIONS:-}" \
		UBSAN_OPTIONS="log_path=$(ASAN_LOGS)/ubsan $${UBSAN_OPTIONS:-}" \
		ctest --output-on-failure -j $(JOBS) --timeout 900; st=$$?; \
	$(call san_check,$(ASAN_LOGS)); exit $$st

# The whole suite under ThreadSanitizer -- the client's lock-free fast path, the server's worker
# threads and jobs, and every remotecall program the test scripts start (benchmark clients in
# async, multi and threaded modes, threaded servers). Each process writes its reports to
# tsan-logs/ (a server stopped by a signal exits 0 all the same, so a script would not notice
# them), and any report fails the pass. Run without address-space randomisation (setarch -R):
# with the kernel's larger mmap_rnd_bits, TSAN's fixed shadow layout can collide with a random
# mapping.
TSAN_LOGS = $(abspath $(BUILD)-tsan)/tsan-logs
test-tsan: deps
	@cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Debug -DRC_SANITIZE=thread -DRC_BUILD_BENCH=ON >/dev/null
	@cmake --build $(BUILD)-tsan -j $(JOBS)
	@rm -rf $(TSAN_LOGS) && mkdir -p $(TSAN_LOGS)
	@cd $(BUILD)-tsan && TSAN_OPTIONS="log_path=$(TSAN_LOGS)/tsan $${TSAN_OPTIONS:-}" \
		setarch $$(uname -m) -R ctest --output-on-failure -j $(JOBS) --timeout 900; st=$$?; \
	$(call san_check,$(TSAN_LOGS)); exit $$st

# The whole suite under valgrind memcheck: ctest's memcheck driver runs each test program under
# valgrind, and RC_VALGRIND=1 makes the test scripts run remotecall's own programs (servers,
# clients, relay, examples) under valgrind too, failing on any error or definite leak.
test-valgrind: build
	@cd $(BUILD) && RC_VALGRIND=1 ctest -T memcheck --output-on-failure -j $(JOBS) --timeout 1800

# 4 client processes x SOAK_MINUTES of mixed calls against one server; the server's RSS curve
# goes to $(BUILD)/soak/rss.csv (docs/runtime.md, "Faults and load").
SOAK_MINUTES ?= 10
soak: build
	@timeout $$(( $(SOAK_MINUTES) * 60 + 300 )) bash tests/faults/soak.sh --bin $(BUILD)/bench \
		--self $(BUILD)/tests/faults --minutes $(SOAK_MINUTES) --clients 4 --out $(BUILD)/soak

# Build the libFuzzer targets with clang (build-fuzz; installs clang if missing) and run each
# for FUZZ_SECONDS. CI runs it with FUZZ_SECONDS=20.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/install-deps.sh --fuzz
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-install $(DEB_BUILD) build-fuzz
