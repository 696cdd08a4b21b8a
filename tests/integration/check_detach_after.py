#!/usr/bin/env python3
"""rewind record --detach-after: a program rewind starts is recorded for a
while, then runs on unrecorded, with nothing of the recording left (no
tracer, no seccomp filter, no rdtsc trap in any thread, address
randomization back, the vDSO as the kernel made it, a thread stopped in
rewind's vDSO code goes on right: detach_target checks each itself at
its end); rewind waits for it and exits with its status;
the trace ends at the detach, complete, and replays the part recorded
byte for byte. A program that ends before the time is recorded to its
end as without the option; a shell pipeline (processes the program
started, still running at the detach) and python3 with threads and
processes that start all the time run on too."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rwtest import Run, Skipped, check, fresh_dir, require_root, run_checks

CLEAN = (b"after: tracer 0/0, seccomp 0, tsc enabled/enabled, randomization on, vdso as the kernel's, "
         b"clock reader ok\n")


def info_of(rw, trace):
    r = Run([rw, "info", "--json", trace])
    check(r.status == 0, f"rewind info\n{r.describe()}")
    return json.loads(r.stdout)


def replay(rw, trace):
    r = Run([rw, "replay", "--autopilot", "--watchdog", "60", trace])
    check(r.status == 0, f"replay of {trace}\n{r.describe()}")
    return r


def check_runs_on(rw, work, target):
    trace = os.path.join(work, "t")
    rounds = 30
    rec = Run([rw, "record", "-o", trace, "--detach-after", "600ms", "--", target, str(rounds), "3"], timeout=120)
    check(rec.status == 3, f"rewind must exit with the program's status (3)\n{rec.describe()}")
    out = rec.stdout
    for who in (b"main", b"worker"):
        check(out.count(who + b" round") == rounds and b"WRONG" not in out,
              f"the program must run all its {rounds} rounds in both threads\n{rec.describe()}")
    check(out.endswith(CLEAN), f"the recording left something behind in the program\n{rec.describe()}")
    check(b"runs on unrecorded" in rec.stderr, f"rewind must say it detached\n{rec.describe()}")
    info = info_of(rw, trace)
    check(info["complete"] and info.get("detached"), f"the trace must be complete and detached: {info}")
    rep = replay(rw, trace)
    check(rep.stdout and out.startswith(rep.stdout) and len(rep.stdout) < len(out),
          f"the replay must print the part of the output recorded\n{rep.describe()}")
    check(b"detached" in rep.stderr, f"the replay must say where the recording ended\n{rep.describe()}")
    return f"{rep.stdout.count(b'round')} of {2 * rounds} rounds recorded and replayed, then ran on clean"


def check_ends_first(rw, work, target):
    trace = os.path.join(work, "t")
    rec = Run([rw, "record", "-q", "-o", trace, "--detach-after", "30s", "--", target, "3", "5"], timeout=120)
    check(rec.status == 5, f"rewind must exit with the program's status (5)\n{rec.describe()}")
    info = info_of(rw, trace)
    check(info["complete"] and not info.get("detached"), f"a program that ends first is recorded to its end: {info}")
    rep = Run([rw, "replay", "--autopilot", "--watchdog", "60", trace])
    check(rep.status == 5 and rep.stdout == rec.stdout, f"the replay differs\n{rep.describe()}")
    return "recorded to its end"


def check_pipeline(rw, work):
    trace = os.path.join(work, "t")
    script = "for i in $(seq 1 12); do echo line $i; sleep 0.1; done | cat -n | tr a-z A-Z"
    rec = Run([rw, "record", "-q", "-o", trace, "--detach-after", "400ms", "--", "/bin/bash", "-c", script],
              timeout=120)
    expected = b"".join(f"{i:6d}\tLINE {i}\n".encode() for i in range(1, 13))
    check(rec.status == 0 and rec.stdout == expected, f"the pipeline must run on to its end\n{rec.describe()}")
    info = info_of(rw, trace)
    check(info["complete"] and info.get("detached"), f"the trace must be complete and detached: {info}")
    replay(rw, trace)
    return f"{info['processes']} processes detached"


# Processes started by vfork and exec (subprocess's default) or by fork
# and exec: the detach comes while one has just exec'd, stopped at the
# rdtsc trap of its dynamic loader's first instructions (a trap of
# rewind's, not a signal to give it after the detach).
PYTHON_WORK = """
import subprocess, sys, threading, time
subprocess._USE_VFORK = sys.argv[1] == "vfork"
def work(n):
    for i in range(n):
        time.monotonic(); time.sleep(0.01)
threads = [threading.Thread(target=work, args=(120,)) for _ in range(3)]
for t in threads:
    t.start()
for i in range(12):
    r = subprocess.run(["ls", "/"], capture_output=True)
    print("tick", i, r.stdout != b"" or f"ls: status {r.returncode}, {r.stderr!r}", flush=True)
    time.sleep(0.1)
for t in threads:
    t.join()
print("done")
"""


def check_python_threads(rw, work):
    """Threads that sleep in short steps (their turns handed over at every
    call) and a process started every 100 ms: the detach comes while
    threads wait for their turn and processes are being made."""
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        raise Skipped("Debian's python3 is not installed")
    expected = b"".join(f"tick {i} True\n".encode() for i in range(12)) + b"done\n"
    for n in range(6):
        trace = os.path.join(work, f"t{n}")
        rec = Run([rw, "record", "-q", "-o", trace, "--detach-after", f"{500 + 50 * n}ms", "--", python, "-c",
                   PYTHON_WORK, "vfork" if n % 2 else "fork"], timeout=60)
        check(rec.status == 0 and rec.stdout == expected, f"python3 must run on to its end\n{rec.describe()}")
        info = info_of(rw, trace)
        check(info["complete"] and info.get("detached"), f"the trace must be complete and detached: {info}")
        rep = replay(rw, trace)
        check(expected.startswith(rep.stdout), f"the replay must print the part recorded\n{rep.describe()}")
    return "6 recordings (processes made by fork, by vfork) detached while threads and processes start"


def check_usage(rw, work):
    cases = [(["--detach-after", "1s", "--for", "2s"], b"excludes"),
             (["--detach-after", "1s", "--parallel"], b"cannot go with --parallel"),
             (["--detach-after", "soon"], b"--detach-after takes a duration")]
    for extra, said in cases:
        r = Run([rw, "record", "-o", os.path.join(work, "t")] + extra + ["--", "true"])
        check(r.status == 2 and said in r.stderr, f"a usage error (2) saying {said}\n{r.describe()}")
    return f"{len(cases)} usage errors"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)
    rw, target = args.rewind, args.target
    checks = [
        ("usage", lambda: check_usage(rw, fresh_dir(os.path.join(work, "usage")))),
        ("runs_on", lambda: check_runs_on(rw, fresh_dir(os.path.join(work, "runs_on")), target)),
        ("ends_first", lambda: check_ends_first(rw, fresh_dir(os.path.join(work, "ends_first")), target)),
        ("pipeline", lambda: check_pipeline(rw, fresh_dir(os.path.join(work, "pipeline")))),
        ("python_threads", lambda: check_python_threads(rw, fresh_dir(os.path.join(work, "python")))),
    ]
    return run_checks(checks, args.only)


if __name__ == "__main__":
    sys.exit(main())
