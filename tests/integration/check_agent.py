#!/usr/bin/env python3
"""The syscall agent (replay/engine/syscall_agent.h): runs of recorded
syscalls answered inside the replayed program. With the agent, with
notifications alone (REWIND_SYSCALL_AGENT=0) and with a ptrace stop at
every call (REWIND_NOTIFY_SYSCALLS=0), a program replays to the same
output, a tampered call is reported the same, and gdb sees the same
stops, steps and positions inside the runs.

  check_agent.py --rewind R --programs DIR --tamper T --work W
"""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from check_replay import DIVERGENCE, gdb_answers, record, replay_under_outside_signals
from rwtest import Run, check, fresh_dir, require_root, run_checks, skip

MODES = {"agent": {}, "notified": {"REWIND_SYSCALL_AGENT": "0"}, "ptrace": {"REWIND_NOTIFY_SYSCALLS": "0"}}
SUMMARY = re.compile(rb"\[replay\] (\d+) of (\d+) emulated syscalls served by seccomp notification, "
                     rb"(\d+) of them by the syscall agent")


def replay_in(rw, trace, mode, debug=False):
    env = dict(os.environ, **MODES[mode])
    if debug:
        env["REWIND_DEBUG"] = "1"
    return Run([rw, "replay", "--autopilot", trace], env=env, timeout=600)


def recorded(rw, progs, work):
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [os.path.join(progs, "agent_runs")], work)
    check(rec.status == 0, f"recording agent_runs\n{rec.describe()}")
    return trace, rec


def scenario_same_output(rw, progs, work, tamper):
    """Byte for byte in every mode; the agent answers nearly every call
    the notification path would, fork, exec and recorded signals between."""
    trace, rec = recorded(rw, progs, work)
    counts = {}
    for mode in MODES:
        rep = replay_in(rw, trace, mode, debug=True)
        check(rep.status == 0 and rep.stdout == rec.stdout, f"replay ({mode})\n{rep.describe()}")
        m = SUMMARY.search(rep.stderr)
        check(m is not None, f"no summary of served calls ({mode}):\n{rep.stderr.decode(errors='replace')[-2000:]}")
        counts[mode] = tuple(int(x) for x in m.groups())
    notified, emulated, by_agent = counts["agent"]
    check(emulated > 30000 and by_agent >= 0.95 * notified, f"answered by the agent: {counts}")
    check(counts["notified"][2] == 0 and counts["ptrace"][0] == 0, f"the switches did not turn it off: {counts}")
    check(b"alarms came" in rec.stdout and b"child ok" in rec.stdout, f"the program's run: {rec.stdout!r}")
    return f"{by_agent} of {emulated} calls answered by the agent"


def scenario_divergence(rw, progs, work, tamper):
    """A recorded argument and a recorded input changed: the same report,
    at the same event, in every mode (the agent leaves the call to the
    replayer, which reports it)."""
    trace, _ = recorded(rw, progs, work)
    said = []
    for what in (["--call-arg", "18", "1500", "3"], ["--write-data", "1500"]):
        tampered = os.path.join(work, "tampered")
        shutil.rmtree(tampered, ignore_errors=True)
        shutil.copytree(trace, tampered)
        t = Run([tamper, tampered, *what])
        check(t.status == 0, f"trace_tamper {what}: {t.describe()}")
        index = int(t.stdout.strip())
        reports = {}
        for mode in MODES:
            rep = replay_in(rw, tampered, mode)
            check(rep.status == DIVERGENCE and f"event #{index} ".encode() in rep.stderr,
                  f"{what} (event #{index}), {mode}\n{rep.describe()}")
            reports[mode] = rep.stderr
        check(len(set(reports.values())) == 1, f"{what}: the reports differ\n{reports}")
        said.append(f"event #{index}")
    return "the same report with and without the agent: " + ", ".join(said)


def scenario_outside_signals(rw, progs, work, tamper):
    """Signals from outside while the agent answers: a thread stopped inside
    the agent's code finishes its answer first; the replay ends as recorded."""
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [os.path.join(progs, "agent_runs"), "150000"], work)
    check(rec.status == 0, f"recording agent_runs\n{rec.describe()}")
    status, out, err = replay_under_outside_signals(rw, trace, "agent_runs", count=60, gap=0.005)
    check(status == 0 and out == rec.stdout, f"status {status}\n{err.decode(errors='replace')[-2000:]}")
    status, out, err = replay_under_outside_signals(rw, trace, "agent_runs", count=600, gap=0.0005, pairs=True)
    check(status == 0 and out == rec.stdout, f"signals in pairs: status {status}\n{err.decode(errors='replace')[-2000:]}")
    return "60 signals from outside, then 600 pairs, all while the program runs; the replay ends as recorded"


def scenario_gdb(rw, progs, work, tamper):
    """gdb inside runs the agent answers: a goto into the middle of one, steps
    back and forth there, a conditional breakpoint, reverse-next, a
    watchpoint and a goto to 75%: the same answers in every mode."""
    if not shutil.which("gdb"):
        skip("gdb is not installed")
    trace, _ = recorded(rw, progs, work)
    source = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs", "agent_runs.c")
    line = 1 + next(i for i, l in enumerate(open(source).read().splitlines()) if "pwrite(fd, out" in l)
    # Forward to a breakpoint through runs the agent answers (the
    # debugger's int3 is not at a site); a hardware watchpoint turns the
    # agent off (its writes would trap in it).
    commands = ["monitor goto 25%", "monitor when", "reverse-stepi", "monitor when", "stepi", "stepi",
                "monitor when", "up", "print i", f"break agent_runs.c:{line} if i == 1800", "continue", "print i",
                "monitor when", "delete", "reverse-next", "reverse-next", "print i", "monitor when",
                "watch sum", "continue", "continue", "print i", "monitor when", "delete",
                "monitor goto 75%", "monitor when", "reverse-stepi", "monitor when"]
    said = {mode: gdb_answers(rw, trace, commands, extra) for mode, extra in MODES.items()}
    check(len(said["ptrace"]) >= 11 and any(l.endswith(" = 1800") for l in said["ptrace"]) and
          said["agent"] == said["ptrace"] and
          said["notified"] == said["ptrace"], f"gdb in each mode:\n{said}")
    return said["agent"][-1]


SCENARIOS = [scenario_same_output, scenario_divergence, scenario_outside_signals, scenario_gdb]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--tamper", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()

    def scenario(s):
        return s(args.rewind, args.programs, fresh_dir(os.path.join(args.work, s.__name__)), args.tamper)

    return run_checks([(s.__name__, lambda s=s: scenario(s)) for s in SCENARIOS])


if __name__ == "__main__":
    sys.exit(main())
