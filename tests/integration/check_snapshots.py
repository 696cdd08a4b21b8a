#!/usr/bin/env python3
"""Snapshots of the replayed world: take one at an event, replay to the end,
restore it, replay again, several times; every round prints exactly what
the recorded program printed after that point, and a snapshot taken while
two processes live restores both, and one taken while threads run
restores every thread.

  check_snapshots.py --rewind R --snapshot-check S --programs DIR --work W
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import Run, check, fresh_dir, require_root, run_checks

CASES = [  # program, event to snapshot at (the first one that can be, from there)
    ("debug_target", 60),
    ("fork_exec", 40),
    ("sigalrm_loop", 38),
    # Threads made again from their saved state, rounding modes included.
    ("threads_rounding", 300),
    # Pages kept out of fork children (MADV_DONTFORK, MADV_WIPEONFORK).
    ("fork_advice", 55),
    # Execs after the snapshot: by a relative path after a chdir, of a file
    # in a detached mount, from threads that do not lead their process.
    ("exec_at", 60),
    ("exec_detached", 30),
    ("threads_exec", 40),
    ("threads_exec_other", 200),
]


def check_case(rw, snapshot_check, programs, work, name, event, rounds=3):
    # Named relative to where the replay runs, which the replayed processes'
    # working directory need not be.
    trace = name + ".trace"
    rec = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, name)], cwd=work)
    check(rec.status == 0, f"recording {name} failed\n{rec.describe()}")
    r = Run([snapshot_check, trace, str(event), str(rounds)], cwd=work, timeout=600)
    check(r.status == 0, f"snapshot_check failed\n{r.describe()}")
    parts = r.stdout.split(b"--- round ")
    outputs = [p.split(b"\n", 1)[1] if b"\n" in p else b"" for p in parts[1:]]
    check(len(outputs) == rounds, f"expected {rounds} rounds\n{r.describe()}")
    check(all(o == outputs[0] for o in outputs), f"rounds differ\n{r.describe()}")
    check(outputs[0] and rec.stdout.endswith(outputs[0]),
          f"a round's output is not the end of the recorded output\n--- recorded\n"
          f"{rec.stdout.decode(errors='replace')}\n{r.describe()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--snapshot-check", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    return run_checks([(name, lambda name=name, event=event: check_case(
        args.rewind, args.snapshot_check, args.programs, fresh_dir(os.path.join(args.work, name)), name, event))
        for name, event in CASES])


if __name__ == "__main__":
    sys.exit(main())
