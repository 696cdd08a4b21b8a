#!/usr/bin/env python3
"""rewind inside a container: rewind itself runs in a pid namespace of its
own (as in a container, where the kernel's ids are not the ones rewind
sees through ptrace, wait and /proc, and the session leader is outside the
namespace). Each program is recorded in one such namespace and replayed in
another; the replay's output must be the recording's, byte for byte, and
the trace complete: threads, a pipeline of processes, a program that makes
a pid namespace of its own inside the container, an attach to a process
of the container, and a persistent landmark (CRIU) taken there."""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rwtest import SKIP, Run, Skipped, check, fresh_dir, machine_can, require_root, run_checks

CONTAINER = ["unshare", "--pid", "--fork", "--mount-proc"]


def in_container(argv, timeout=180):
    return Run(CONTAINER + argv, timeout=timeout)


def record_and_replay(rw, work, name, argv):
    trace = os.path.join(work, name)
    rec = in_container([rw, "record", "-q", "-o", trace, "--"] + argv)
    check(rec.status == 0, f"recording {name} in a container\n{rec.describe()}")
    info = Run([rw, "info", trace])
    check(b"status     complete" in info.stdout, f"the trace of {name} is not complete\n{info.describe()}")
    rep = in_container([rw, "replay", "--autopilot", "--watchdog", "60", trace])
    check(rep.status == 0 and rep.stdout == rec.stdout,
          f"the replay of {name} differs\n--- recorded\n{rec.describe()}\n--- replayed\n{rep.describe()}")
    return trace, len(rec.stdout)


def check_threads(rw, work, programs):
    _, n = record_and_replay(rw, work, "threads", [os.path.join(programs, "compute_steps"), "10", "2000000", "3", "3"])
    return f"{n} bytes replayed"


def check_processes(rw, work):
    script = "ls /usr/bin | sort | head -n 40 | wc -l; echo $$; cat /proc/self/status | grep -c NSpid"
    _, n = record_and_replay(rw, work, "pipeline", ["/bin/bash", "-c", script])
    return f"{n} bytes replayed"


def check_nested_namespace(rw, work, programs):
    _, n = record_and_replay(rw, work, "nested", [os.path.join(programs, "namespace_threads")])
    return f"{n} bytes replayed"


def check_attach(rw, work, programs):
    if not machine_can(rw, "criu"):
        raise Skipped("an attach's start image needs CRIU, which does not work here (rewind doctor)")
    trace = os.path.join(work, "attached")
    target = os.path.join(programs, "attach_target")
    # The target and rewind share the container; rewind names it by the
    # container's id.
    script = (f"{target} 400 20 {work}/attached.file > {work}/attached.out 2>&1 & t=$!; sleep 0.5; "
              f"{rw} record -q --pid $t --for 1.5s -o {trace}; s=$?; kill $t; exit $s")
    rec = in_container(["/bin/bash", "-c", script])
    check(rec.status == 0, f"attaching in a container\n{rec.describe()}")
    rep = in_container([rw, "replay", "--autopilot", "--watchdog", "60", trace])
    with open(os.path.join(work, "attached.out"), "rb") as f:
        whole = f.read()
    check(rep.status == 0 and rep.stdout and rep.stdout in whole,
          f"the replay of the attached process must print a part of what it printed\n{rep.describe()}")
    return f"{len(rep.stdout)} bytes replayed"


def check_landmark(rw, work, programs):
    doctor = in_container([rw, "doctor"])
    if not machine_can(rw, "criu"):
        raise Skipped("persistent landmarks need CRIU, which does not work here (rewind doctor)")
    check(any(line.split()[:2] == [b"ok", b"criu"] for line in doctor.stdout.splitlines()),
          f"rewind doctor in a container says CRIU cannot save a landmark there\n{doctor.describe()}")
    trace, _ = record_and_replay(rw, work, "landmarked",
                                 [os.path.join(programs, "compute_steps"), "12", "2000000"])
    lm = in_container([rw, "landmark", trace, "--every", "50%"])
    check(lm.status == 0 and b"could not be" not in lm.stdout + lm.stderr,
          f"rewind landmark in a container\n{lm.describe()}")
    rep = in_container([rw, "replay", "--autopilot", "--from", "50%", trace])
    check(rep.status == 0, f"replay from the landmark in a container\n{rep.describe()}")
    return "landmark saved and replayed from"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    if not shutil.which("unshare"):
        print("SKIP all: unshare (util-linux) is not installed")
        return SKIP
    probe = subprocess.run(CONTAINER + ["true"], capture_output=True)
    if probe.returncode != 0:
        print(f"SKIP all: cannot make a pid namespace here: {probe.stderr.decode(errors='replace').strip()}")
        return SKIP
    work = fresh_dir(args.work)
    rw, programs = args.rewind, args.programs
    checks = [
        ("threads", lambda: check_threads(rw, fresh_dir(os.path.join(work, "threads")), programs)),
        ("processes", lambda: check_processes(rw, fresh_dir(os.path.join(work, "processes")))),
        ("nested_namespace", lambda: check_nested_namespace(rw, fresh_dir(os.path.join(work, "nested")), programs)),
        ("attach", lambda: check_attach(rw, fresh_dir(os.path.join(work, "attach")), programs)),
        ("landmark", lambda: check_landmark(rw, fresh_dir(os.path.join(work, "landmark")), programs)),
    ]
    return run_checks(checks, args.only)


if __name__ == "__main__":
    sys.exit(main())
