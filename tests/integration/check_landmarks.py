#!/usr/bin/env python3
"""Persistent landmarks with CRIU (replay/landmarks/criu_landmark): a process seized at
a stop outside system calls is dumped and a copy restored into a new pid
namespace; the copy's registers and memory equal the original's, and both
print the same when run to completion. One thread, two threads, and a
100 MB process whose dump and restore times are printed. Where CRIU passes
its own check but cannot dump, `rewind doctor` says so with CRIU's error.

  check_landmarks.py --rewind R --landmark-check L --program P --work W
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import SKIP, Run, Skipped, check, fresh_dir, require_machine, require_root, run_checks

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


FAILING_CRIU = """#!/bin/sh
case "$1" in
--version) echo "Version: 4.1.1";;
check) echo "Looks good.";;
*) while [ $# -gt 0 ]; do [ "$1" = -D ] && dir=$2; shift; done
   echo "(00.000001) Error (criu/files.c:1): the descriptor kind is not supported" > "$dir/dump.log"
   echo "(00.000002) Error (criu/cr-dump.c:2111): Dumping FAILED." >> "$dir/dump.log"
   exit 1;;
esac
"""


def check_doctor_probe(rewind, work):
    """A CRIU whose `criu check` passes but whose dumps fail: doctor says no,
    with CRIU's own error line, and the landmark command fails the same way."""
    fake = os.path.join(work, "criu")
    with open(fake, "w") as f:
        f.write(FAILING_CRIU)
    os.chmod(fake, 0o755)
    env = dict(os.environ, REWIND_CRIU=fake)
    r = Run([rewind, "doctor"], env=env)
    out = r.stdout.decode(errors="replace")
    line = next((l for l in out.splitlines() if " criu " in l), "")
    check(line.lstrip().startswith("no ") and "cannot be saved and restored" in line,
          f"doctor does not report a CRIU that cannot dump\n{r.describe()}")
    check("the descriptor kind is not supported" in out,
          f"doctor does not show CRIU's error line\n{r.describe()}")
    return "a CRIU that passes its check but cannot dump is reported with its error"


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
            require_machine(args.rewind, "criu", "persistent landmarks")
            check_case(args.landmark_check, args.program, fresh_dir(os.path.join(args.work, name)), threads,
                       megabytes)
        return run

    checks = [(name, case(name, threads, mb)) for name, threads, mb in CASES]
    checks.append(("doctor_probe", lambda: check_doctor_probe(args.rewind, fresh_dir(os.path.join(args.work,
                                                                                                 "probe")))))
    return run_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
