#!/usr/bin/env python3
"""Persistent landmarks used by replay (rewind landmark, replay/serve --from):
on real recordings (a compute program, a multithreaded one, one that forks
and execs), landmarks are made; a replay from each shows byte for byte the
output a replay from the start shows from there, and gdb finds the same
registers at the landmark's position either way. A damaged or missing
landmark is reported by `rewind info --verify` and skipped, with a message,
for an earlier one; a landmark intact by its checksums but wrong diverges,
and the divergence is reported.

  check_landmark_replay.py --rewind R --programs DIR --tamper T --work W
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import Run, Skipped, check, fresh_dir, require_machine, require_root, run_checks

RIP = "/tasks/0/regs/16"  # the first thread's rip in a manifest's state (Registers::RIP)
SYSCALL_INSN = "/vms/0/syscall_insn"  # where the replayer injects syscalls into the first process

RECORDINGS = [  # name, program, arguments, landmark option
    ("compute", "compute_steps", ["24", "3000000"], ["--every", "25%"]),
    ("threads", "compute_steps", ["10", "2000000", "2", "3"], ["--every", "30%"]),
    ("fork_exec", "fork_exec", [], ["--every", "30%"]),
]

# In a UTF-8 locale the child's echo maps glibc's gconv cache shared and
# read-only: landmarks after that mapping must still be saved.
LOCALE = {"fork_exec": "C.UTF-8"}


def record(rewind, programs, work, name, program, args):
    trace = os.path.join(work, name)
    env = dict(os.environ)
    if name in LOCALE:
        env["LANG"] = env["LC_ALL"] = LOCALE[name]
    r = Run([rewind, "record", "-q", "-o", trace, "--", os.path.join(programs, program)] + args, env=env,
            timeout=600)
    check(r.status == 0, f"recording {name} failed\n{r.describe()}")
    return trace


def landmarks_of(rewind, trace):
    r = Run([rewind, "info", "--json", trace])
    check(r.status == 0, f"rewind info failed\n{r.describe()}")
    return json.loads(r.stdout)["landmarks"]


def autopilot(rewind, trace, event, *extra):
    r = Run([rewind, "replay", "--autopilot", "--from", str(event), trace, *extra], timeout=600)
    check(r.status == 0, f"replay --from {event} {' '.join(extra)} failed\n{r.describe()}")
    return r


# Registers and where the replay stands, as gdb sees them at the first stop
# (--from), or after a goto from the program's start.
def gdb_state(rewind, trace, event, *extra, goto=False):
    start = ["-ex", f"monitor goto {event}"] if goto else []
    where = [] if goto else ["--from", str(event)]
    r = Run([rewind, "replay", *where, *extra, trace, "--", "-batch", *start, "-ex", "info registers",
             "-ex", "info threads", "-ex", "when"], timeout=600)
    out = r.stdout.decode(errors="replace")
    lines = out.splitlines()
    # A register's name and value (not the symbol gdb may add).
    state = [" ".join(line.split()[:2]) for line in lines
             if re.match(r"^(r[a-z0-9]+|e?flags|[cdefgs]s|fs_base|gs_base|k[0-7])\s", line)]
    state += [line for line in lines if line.startswith("At event") or line.startswith("Position")]
    # gdb's thread list (symbols aside, which gdb may not have read yet after a goto).
    state.append(f"{sum(1 for line in lines if re.match(r'^[* ] +[0-9]+ +Thread ', line))} threads")
    check(r.status == 0 and any(line.startswith("rip") for line in state),
          f"gdb at --from {event} {' '.join(extra)} shows no registers\n{r.describe()}")
    return state, r.stderr.decode(errors="replace")


def check_recording(rewind, programs, work, name, program, args, option):
    trace = record(rewind, programs, work, name, program, args)
    r = Run([rewind, "landmark", trace, *option], timeout=900)
    check(r.status == 0, f"rewind landmark failed\n{r.describe()}")
    marks = landmarks_of(rewind, trace)
    check(len(marks) >= 2 and all(not m["problems"] for m in marks),
          f"expected intact landmarks, got {marks}\n{r.describe()}")
    full = autopilot(rewind, trace, 0, "--no-landmarks").stdout
    for m in marks:
        used = autopilot(rewind, trace, m["event"])
        check(f"using landmark {m['name']} " in used.stderr.decode(),
              f"replay --from {m['event']} did not start at landmark {m['name']}\n{used.describe()}")
        plain = autopilot(rewind, trace, m["event"], "--no-landmarks")
        check(used.stdout == plain.stdout and full.endswith(used.stdout),
              f"output from landmark {m['name']} differs from a replay's from the start\n"
              f"from the landmark:\n{used.stdout.decode(errors='replace')}\n"
              f"from the start:\n{plain.stdout.decode(errors='replace')}")
    # The same state at a landmark's position, reached either way.
    m = marks[len(marks) // 2]
    state, err = gdb_state(rewind, trace, m["event"])
    check(f"using landmark {m['name']} " in err, f"gdb's replay did not start at landmark {m['name']}:\n{err}")
    plain_state, _ = gdb_state(rewind, trace, m["event"], "--no-landmarks")
    check(state == plain_state, "at event {} gdb sees\n{}\nfrom the landmark, and\n{}\nfrom the start".format(
        m["event"], "\n".join(state), "\n".join(plain_state)))
    # `monitor goto` in a session that began at the start takes the landmark too.
    went, err = gdb_state(rewind, trace, m["event"], goto=True)
    check(f"using landmark {m['name']} " in err and went == plain_state,
          "monitor goto {} did not use landmark {} or arrived elsewhere:\n{}\n{}".format(
              m["event"], m["name"], err, "\n".join(went)))
    return f"{len(marks)} landmarks ({', '.join(str(m['event']) for m in marks)}), outputs and registers match"


def check_damaged(rewind, programs, work, tamper):
    trace = record(rewind, programs, work, "damaged", "compute_steps", ["16", "2000000"])
    r = Run([rewind, "landmark", trace, "--at", "20%", "40%", "60%", "80%"], timeout=900)
    check(r.status == 0, f"rewind landmark failed\n{r.describe()}")
    marks = landmarks_of(rewind, trace)
    check(len(marks) == 4, f"expected 4 landmarks, got {marks}")
    last, middle, first, earliest = marks[3], marks[2], marks[1], marks[0]
    full = autopilot(rewind, trace, 0, "--no-landmarks").stdout

    # One image byte changed: verify says which file, replay takes the one before.
    pages = sorted(glob.glob(os.path.join(trace, "landmarks", last["name"], "p0", "pages-*.img")))
    check(pages, "the landmark has no pages image")
    with open(pages[0], "r+b") as f:
        f.seek(64)
        byte = f.read(1)
        f.seek(64)
        f.write(bytes([byte[0] ^ 0xFF]))
    v = Run([rewind, "info", "--verify", trace])
    out = v.stdout.decode()
    check(v.status == 3 and f"landmark {last['name']}: p0/{os.path.basename(pages[0])} does not match its checksum"
          in out, f"rewind info --verify did not report the damaged landmark\n{v.describe()}")
    used = autopilot(rewind, trace, last["event"])
    err = used.stderr.decode()
    check(f"landmark {last['name']} (event {last['event']}) is skipped: " in err
          and f"using landmark {middle['name']} " in err,
          f"the damaged landmark was not skipped for the one before\n{used.describe()}")
    check(full.endswith(used.stdout) and used.stdout == autopilot(rewind, trace, last["event"], "--no-landmarks").stdout,
          f"output after skipping a damaged landmark differs\n{used.describe()}")

    # A manifest missing: listed as unusable, skipped.
    os.remove(os.path.join(trace, "landmarks", middle["name"], "manifest.json"))
    used = autopilot(rewind, trace, last["event"])
    err = used.stderr.decode()
    check(f"landmark {middle['name']} is skipped: its manifest is missing" in err
          and f"using landmark {first['name']} " in err,
          f"the landmark without a manifest was not skipped\n{used.describe()}")

    # Intact by its checksums, but the replay cannot be restored from it
    # (no syscall instruction where it says): skipped for the one before.
    shutil.rmtree(os.path.join(trace, "landmarks", last["name"]))
    t = Run([tamper, os.path.join(trace, "landmarks", first["name"]), SYSCALL_INSN, "0x1000"])
    check(t.status == 0, f"landmark_tamper failed\n{t.describe()}")
    used = autopilot(rewind, trace, first["event"])
    err = used.stderr.decode()
    check(f"landmark {first['name']} (event {first['event']}) is skipped: restoring the replay from it failed" in err
          and f"using landmark {earliest['name']} " in err and full.endswith(used.stdout)
          and used.stdout == autopilot(rewind, trace, first["event"], "--no-landmarks").stdout,
          f"a landmark that cannot be restored was not skipped for the one before\n{used.describe()}")
    # The same in a debugging session (its timeline drops the landmark).
    state, err = gdb_state(rewind, trace, first["event"])
    plain_state, _ = gdb_state(rewind, trace, first["event"], "--no-landmarks")
    check("restoring the replay from it failed" in err and f"using landmark {earliest['name']} " in err
          and state == plain_state, f"gdb's session did not fall back to landmark {earliest['name']}:\n{err}\n"
          + "\n".join(state) + "\n---\n" + "\n".join(plain_state))

    # Intact by its checksums, but not the state it claims: the replay
    # from it diverges, and says so.
    t = Run([tamper, os.path.join(trace, "landmarks", earliest["name"]), RIP, "0x1000"])
    check(t.status == 0, f"landmark_tamper failed\n{t.describe()}")
    r = Run([rewind, "replay", "--autopilot", "--from", str(earliest["event"]), trace], timeout=600)
    err = r.stderr.decode()
    check(r.status == 90 and f"using landmark {earliest['name']} " in err and "diverged" in err,
          f"a wrong landmark did not end in a reported divergence\n{r.describe()}")
    return ("a damaged image, a missing manifest and a landmark that cannot be restored are skipped with a "
            "message; a wrong state diverges")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--tamper", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)

    def needs_criu(fn):
        def run():
            require_machine(args.rewind, "criu", "persistent landmarks")
            if not shutil.which("gdb"):
                raise Skipped("gdb is not installed")
            return fn()
        return run

    checks = [(name, needs_criu(lambda n=name, p=program, a=a, o=option:
                                check_recording(args.rewind, args.programs, work, n, p, a, o)))
              for name, program, a, option in RECORDINGS]
    checks.append(("damaged", needs_criu(lambda: check_damaged(args.rewind, args.programs, work, args.tamper))))
    return run_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
