#!/usr/bin/env python3
"""Persistent landmarks with CRIU (replay/criu_landmark): a process seized at
a stop outside system calls is dumped and a copy restored into a new pid
namespace; the copy's registers and memory equal the original's, and both
print the same when run to completion. One thread, two threads, and a
100 MB process whose dump and restore times are printed.

  check_landmarks.py --rewind R --landmark-check L --program P --work W
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import SKIP, Run, Skipped, check, fresh_dir, machine_can, require_root, run_checks

CASES = [  # name, threads, megabytes
    ("one_thread", 1, 1),
    ("two_threads", 2, 1),
    ("heap_100mb", 1, 100),
]


def check_case(landmark_check, program, work, threads, megabytes):
    r = Run([landmark_check, program, str(threads), str(megabytes), work], timeout=600)
    out = r.stdout.decode(errors="replace")
    if r.status == SKIP:
        raise Skipped(out.strip().removeprefix("SKIP: "))
    check(r.status == 0 and out.rstrip().endswith("ok"), f"landmark_check failed\n{r.describe()}")
    for line in out.splitlines():
        if line.split(":")[0] in ("dump", "restore", "memory", "registers", "outputs"):
            print(f"     {line}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--landmark-check", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()

    def case(name, threads, megabytes):
        def run():
            if not machine_can(args.rewind, "criu"):
                raise Skipped("rewind doctor does not say ok for criu (scripts/install-criu.sh installs CRIU 4.1)")
            check_case(args.landmark_check, args.program, fresh_dir(os.path.join(args.work, name)), threads,
                       megabytes)
        return run

    return run_checks([(name, case(name, threads, mb)) for name, threads, mb in CASES])


if __name__ == "__main__":
    sys.exit(main())
