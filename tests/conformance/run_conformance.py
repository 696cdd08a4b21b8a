#!/usr/bin/env python3
"""Conformance corpus: rr's own test programs, recorded and replayed by rewind.

rr's sources are fetched at run time from Debian's source package (never kept
in this repository), checked against the SHA256 of Debian's signed source
index, and cached under $REWIND_CACHE (default /var/cache/rewind). The
programs of rr's BASIC_TESTS list are built there the way rr's CMakeLists.txt
builds them, then each one is run natively, recorded with `rewind record` and
replayed with `rewind replay --autopilot`, and classified. See README.md
beside this file.

Exit status: 0 when every test that passes natively passes under rewind (or
is an expected refusal), 1 otherwise, 77 when rr's sources cannot be had or
nothing could be built.

The modules beside this file, in the order a run uses them: rr_source (fetch),
rr_corpus (build), isolation and phase_wrapper (run one phase, kill what it
leaves), phases and phase_output (one test's phases, its class), gdb_sample,
report (the table), name_lists (the subset and the expected refusals).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import sys
import tempfile
import time

from bounded_command import run_quiet
from gdb_sample import check_under_gdb, pick_sample
from isolation import IsolatedRunner
from name_lists import BadList, read_expected, read_names
from outcome_classes import FAILING, PASSED
from phases import PhaseRunner
from report import format_table, write_json
from rr_corpus import Corpus
from rr_source import DEFAULT_SUITES, SourceUnavailable, get_rr_source

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CACHE = os.environ.get("REWIND_CACHE", "/var/cache/rewind")


def log(msg):
    print(msg, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rewind", default=os.environ.get("REWIND", "rewind"), help="the rewind binary")
    ap.add_argument("--work", help="scratch directory (default: a new /tmp/conf-run-*)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30, help="seconds per phase")
    ap.add_argument("--only", nargs="+", metavar="NAMES", help="tests to run (names, commas or spaces)")
    ap.add_argument("--subset", help="file of test names, one a line, # comments")
    ap.add_argument("--list-file", default=os.path.join(HERE, "expected_refusals.txt"),
                    help="expected refusals: lines 'testname  reason'")
    ap.add_argument("--json", help="write per-test results here")
    ap.add_argument("--text", help="write the summary table here too")
    ap.add_argument("--gdb-sample", type=int, default=0, metavar="N",
                    help="also replay N passing tests under gdb (break main, reverse-stepi)")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="where rr's sources and test builds are cached")
    ap.add_argument("--suites", default=DEFAULT_SUITES, help="Debian suites to take rr's source from, in order")
    ap.add_argument("--offline", action="store_true", help="use the cached source only")
    ap.add_argument("--rebuild", action="store_true", help="rebuild every test program")
    ap.add_argument("--build-only", action="store_true", help="fetch and build, run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the traces of passing tests")
    ap.add_argument("--strict-native", action="store_true",
                    help="a test passes natively only if it also exits 0 (default: EXIT-SUCCESS on stdout, "
                         "as rr's test harness checks)")
    return ap.parse_args()


def selected_names(args, corpus):
    """The tests --only and --subset name (all of the corpus without them), in
    the order given; names not in the corpus are reported and left out."""
    if not (args.only or args.subset):
        return sorted(corpus.tests)
    wanted = []
    for item in args.only or []:
        wanted += [x for x in re.split(r"[,\s]+", item) if x]
    if args.subset:
        wanted += read_names(args.subset)
    wanted = [os.path.basename(w) for w in wanted]
    unknown = [w for w in wanted if w not in corpus.tests]
    if unknown:
        log(f"unknown tests (not in BASIC_TESTS): {' '.join(unknown)}")
    return [n for n in dict.fromkeys(wanted) if n in corpus.tests]


def run_tests(args, names, built, phases, isolated, results):
    """Runs the built tests, then the gdb sample, on args.jobs threads; appends
    to results. Returns (gdb sample summary or None, whether interrupted)."""
    gdb_info = None
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    futures = []
    try:
        futures = [pool.submit(phases.test, n) for n in names if n in built]
        for fut in concurrent.futures.as_completed(futures):
            results.append(fut.result())
        if args.gdb_sample > 0:
            sample = pick_sample(results, args.gdb_sample)
            log(f"gdb: replaying {len(sample)} passing tests under gdb")
            checked = list(pool.map(lambda r: check_under_gdb(phases, r), sample))
            gdb_info = {"checked": len(checked), "ok": sum(r["gdb"]["ok"] for r in checked),
                        "tests": {r["name"]: r["gdb"] for r in checked}}
            for r in checked:
                log(f"gdb: {r['name']:32s} {'ok' if r['gdb']['ok'] else 'FAILED: ' + r['message']}")
        pool.shutdown(wait=True)
        return gdb_info, False
    except KeyboardInterrupt:
        log("interrupted: killing the running phases")
        phases.stopping = True
        pool.shutdown(wait=False, cancel_futures=True)
        isolated.kill_all()
        pool.shutdown(wait=True)
        isolated.kill_all()
        # The tests that ended meanwhile are in the table too.
        seen = {r["name"] for r in results}
        for fut in futures:
            if fut.done() and not fut.cancelled() and fut.result()["name"] not in seen:
                results.append(fut.result())
        return None, True
    finally:
        isolated.close()


def interrupt(signum, frame):
    raise KeyboardInterrupt()


def main():
    args = parse_args()
    # `kill RUNNER` ends a run as Ctrl-C does: the phases running are killed.
    signal.signal(signal.SIGTERM, interrupt)
    start = time.monotonic()
    try:
        expected = read_expected(args.list_file)
    except (BadList, OSError) as e:
        log(f"error: {e}")
        return 1
    if os.geteuid() != 0 and not args.build_only:
        log("SKIP: recording needs root (or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE)")
        return SKIP
    if args.gdb_sample > 0 and not shutil.which("gdb"):
        # The rest still runs; the reason is printed where skip-reasons.py finds it.
        log("SKIP gdb-sample: gdb is not installed")
        args.gdb_sample = 0
    try:
        os.makedirs(args.cache, exist_ok=True)
        source, notes = get_rr_source(args.cache, [s for s in args.suites.split(",") if s], args.offline)
    except (SourceUnavailable, OSError) as e:
        log(f"SKIP: {e}")
        return SKIP
    for n in notes:
        log(f"source: {n}")
    log(f"source: rr {source['upstream_version']} (Debian {source['suite']} {source['debian_version']}), "
        f"{os.path.basename(source['tarball'])} SHA256 {source['sha256']} (matches the signed source index)")

    corpus = Corpus(source, args.cache, args.jobs)
    for n in corpus.notes:
        log(f"build: {n}")
    names = selected_names(args, corpus)
    bt = time.monotonic()
    builds = corpus.build(names, rebuild=args.rebuild)
    built = {n: b for n, (b, _) in builds.items() if b}
    log(f"build: {len(built)} of {len(names)} test programs built in {corpus.out} "
        f"({corpus.newly_built} compiled now, {time.monotonic() - bt:.0f} s); {len(names) - len(built)} failed")
    if not built:
        log("SKIP: no test program could be built")
        return SKIP
    if args.build_only:
        for n, (b, why) in sorted(builds.items()):
            if not b:
                log(f"build-failed {n}: {why}")
        return 0

    rewind = shutil.which(args.rewind) or args.rewind
    if not os.access(rewind, os.X_OK):
        log(f"SKIP: no rewind binary at {args.rewind}")
        return SKIP
    args.rewind = os.path.abspath(rewind)
    _, ver = run_quiet([args.rewind, "--version"], timeout=30)
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="conf-run-", dir="/tmp"))
    os.makedirs(args.work, exist_ok=True)
    log(f"running {len(built)} tests with {args.rewind} ({ver.strip()}), {args.jobs} jobs, "
        f"{args.timeout} s per phase, in {args.work}")

    isolated = IsolatedRunner()
    phases = PhaseRunner(args, built, expected, isolated)
    phases.total = len(built)
    results = [{"name": n, "class": "build-failed", "message": why, "phases": {}}
               for n, (b, why) in builds.items() if not b]
    gdb_info, interrupted = run_tests(args, names, built, phases, isolated, results)
    for r in results:
        if not r.get("kept", True) and r["class"] in PASSED:
            shutil.rmtree(os.path.join(args.work, r["name"]), ignore_errors=True)

    stale = sorted(n for n in expected if any(r["name"] == n and r["class"] == "pass" for r in results))
    meta = {"rr_version": source["upstream_version"],
            "source": f"Debian {source['suite']} rr {source['debian_version']}, {os.path.basename(source['tarball'])}"
                      f" sha256 {source['sha256']}",
            "rewind": f"{args.rewind} ({ver.strip()})", "basic_tests": corpus.basic_count,
            "conditional_tests": corpus.conditional, "cpp_tests": corpus.cpp_count,
            "selected": len(names), "built": len(built), "build_failed": len(names) - len(built),
            "jobs": args.jobs, "timeout": args.timeout, "wall_time": time.monotonic() - start, "work": args.work,
            "gdb_sample": gdb_info, "stale_expected": stale, "interrupted": interrupted}
    table = format_table(results, meta)
    log("")
    log(table)
    if args.text:
        with open(args.text, "w") as f:
            f.write(table)
    if args.json:
        write_json(args.json, results, meta)
    if interrupted:
        return 1
    return 1 if any(r["class"] in FAILING for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
