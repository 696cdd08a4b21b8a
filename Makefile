# rewind — top-level entry points. On a fresh Debian bookworm machine, as root:
#   make demo    install what is missing, build, record and replay the bundled example
#   make check   install what is missing, build, run every test
#   make conformance   build, then run all of rr's test programs under rewind and print the table
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
REWIND = $(BUILD)/cli/rewind

.PHONY: all deps build check conformance demo bench format clean sanitize fuzz

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# CTest prints nothing for a skipped test: its reasons follow the summary.
check: build
	@cd $(BUILD) && { ctest --output-on-failure -j $(JOBS); status=$$?; \
		$(CURDIR)/scripts/skip-reasons.py Testing/Temporary/LastTest.log; exit $$status; }

# rr's whole test corpus (tests/conformance/README.md): each program natively,
# recorded, replayed with --autopilot, CONFORMANCE_GDB_SAMPLE of them under gdb;
# the table by class is printed and kept in $(BUILD)/conformance.txt (.json per
# test). Exits 1 while any test that passes natively fails under rewind.
# `make check` runs the subset in tests/conformance/check_subset.txt.
CONFORMANCE_GDB_SAMPLE ?= 30
CONFORMANCE_ARGS ?=
conformance: build
	@./tests/conformance/run_conformance.py --rewind $(REWIND) --jobs $(JOBS) \
		--gdb-sample $(CONFORMANCE_GDB_SAMPLE) --work $(BUILD)/test-work/conformance \
		--text $(BUILD)/conformance.txt --json $(BUILD)/conformance.json $(CONFORMANCE_ARGS)

demo: build
	@./examples/demo.sh $(REWIND) $(BUILD)

bench: build
	@./bench/compare.sh $(REWIND) $(BUILD)

# A debug build with AddressSanitizer and UndefinedBehaviorSanitizer, unit tests only.
sanitize: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DREWIND_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS) --target rewind_unit_tests
	@cd $(BUILD)-asan && ctest -L unit --output-on-failure

# libFuzzer on the trace reader and the event decoder: FUZZ_SECONDS in all, shared
# between the targets (`make check` runs them for 24 s).
FUZZ_SECONDS ?= 300
fuzz: build
	@./tests/fuzz/run_fuzz.py --source . --build $(BUILD)-fuzz --rewind $(REWIND) --seconds $(FUZZ_SECONDS)

format:
	@git ls-files '*.cpp' '*.h' | grep -v '^bpf/vmlinux.h$$' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-fuzz
