#!/usr/bin/env python3
"""Replay checks: a recorded program replays to the same output, byte for
byte, and the same exit status; replay survives changed inputs and a rebuilt
binary; a corrupt or consistently tampered trace is refused or reported as
a divergence, never replayed silently.

  check_replay.py --rewind R --program P --work W      one program
  check_replay.py --rewind R --programs DIR --work W --scenarios
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import (Failure, Run, check, fresh_dir, machine_can, prepare_inputs, require_root, run_checks,
                    shell_status, skip, skip_if_program_skipped)

DIVERGENCE, REFUSED, TRACE_ENDED = 90, 91, 92


def record(rw, trace, argv, cwd):
    return Run([rw, "record", "-q", "-o", trace, "--"] + argv, cwd=cwd)


def replay(rw, trace, *extra):
    return Run([rw, "replay", "--autopilot", *extra, trace], timeout=600)


def same_run(recorded, replayed, what):
    check(recorded.stdout == replayed.stdout, f"{what}: replay printed different output\n"
          f"--- recorded\n{recorded.stdout.decode(errors='replace')}--- replayed\n"
          f"{replayed.stdout.decode(errors='replace')}--- replay stderr\n{replayed.stderr.decode(errors='replace')}")
    check(shell_status(recorded.status) == shell_status(replayed.status),
          f"{what}: replay ended with {shell_status(replayed.status)}, the recording with "
          f"{shell_status(recorded.status)}\n{replayed.stderr.decode(errors='replace')}")


def gdb_answers(rw, trace, commands, env_extra):
    """What gdb answers (values printed, `monitor when`) to `commands` on a
    served trace, with these environment variables set for rewind."""
    argv = ["gdb", "-nx", "-batch", "-ex", "set pagination off", "-ex",
            f"target extended-remote | {rw} serve --stdio -q {trace}"]
    for c in commands:
        argv += ["-ex", c]
    g = Run(argv, env=dict(os.environ, **env_extra), timeout=300)
    return [l for l in (g.stdout + g.stderr).decode(errors="replace").splitlines()
            if l.startswith("$") or l.startswith("At event")]


def check_program(rw, program, work):
    name = os.path.basename(program)
    prog_args, _ = prepare_inputs(name, work)
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [program] + prog_args, work)
    skip_if_program_skipped(name, rec)
    rep = replay(rw, trace)
    same_run(rec, rep, name)
    return f"{len(rec.stdout)} bytes of output, exit status {shell_status(rec.status)}"


def scenario_inputs_and_binary_change(rw, progs, work):
    """Replay uses the trace's copies: inputs edited or deleted, binary rebuilt or deleted."""
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir)
    prog = os.path.join(bindir, "reader")
    shutil.copy(os.path.join(progs, "read_8m"), prog)
    data = os.path.join(work, "input.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(1 << 20))
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [prog, data], work)
    with open(data, "wb") as f:
        f.write(b"changed")
    shutil.copy(os.path.join(progs, "exit_code"), prog)  # "rebuilt": another binary at the same path
    same_run(rec, replay(rw, trace), "after editing the input and rebuilding the binary")
    os.unlink(data)
    os.unlink(prog)
    same_run(rec, replay(rw, trace), "after deleting the input and the binary")


def scenario_pipeline(rw, progs, work):
    """Children of a shell: only what reached the terminal is shown again."""
    for entry in ["one", "two", "three"]:
        open(os.path.join(work, entry), "w").close()
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, ["sh", "-c", f"ls {work} | wc -l; echo done"], work)
    check(rec.stdout.split()[0] in (b"3", b"4"), f"unexpected pipeline output {rec.stdout!r}")
    same_run(rec, replay(rw, trace), "sh -c 'ls | wc -l'")


def scenario_corrupt(rw, progs, work):
    trace = os.path.join(work, "trace")
    record(rw, trace, [os.path.join(progs, "pipes")], work)
    events = os.path.join(trace, "events")
    data = bytearray(open(events, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(events, "wb").write(bytes(data))
    rep = replay(rw, trace)
    check(rep.status == TRACE_ENDED, f"corrupt trace: status {rep.status}, expected {TRACE_ENDED}\n"
          f"{rep.stderr.decode(errors='replace')}")
    check(b"checksum" in rep.stderr or b"corrupt" in rep.stderr, f"corruption not named: {rep.stderr!r}")


def scenario_tampered(rw, progs, work, tamper):
    data = os.path.join(work, "input.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(5000))
    trace = os.path.join(work, "trace")
    record(rw, trace, [os.path.join(progs, "read_8m"), data], work)
    t = Run([tamper, trace, "4096"])
    check(t.status == 0, f"trace_tamper failed: {t.describe()}")
    rep = replay(rw, trace)
    check(rep.status == DIVERGENCE, f"tampered trace: status {rep.status}, expected {DIVERGENCE}\n"
          f"{rep.stderr.decode(errors='replace')}")
    check(b"diverged" in rep.stderr and b"event #" in rep.stderr, f"no divergence report: {rep.stderr!r}")


def scenario_notified_runs(rw, progs, work, tamper):
    """Runs of syscalls served through seccomp notifications (the thread runs
    on between them): the same output as with a ptrace stop at every call, and
    a divergence inside such a run reported at its own event."""
    import re
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [os.path.join(progs, "syscall_runs")], work)
    check(rec.status == 0, f"recording syscall_runs\n{rec.describe()}")
    summary = re.compile(rb"\[replay\] (\d+) of (\d+) emulated syscalls served by seccomp notification")
    served = {}
    for mode, extra in (("notified", {}), ("ptrace", {"REWIND_NOTIFY_SYSCALLS": "0"})):
        rep = Run([rw, "replay", "--autopilot", trace], env=dict(os.environ, REWIND_DEBUG="1", **extra), timeout=600)
        check(rep.status == 0 and rep.stdout == rec.stdout, f"replay ({mode})\n{rep.describe()}")
        m = summary.search(rep.stderr)
        check(m is not None, f"no summary of served syscalls ({mode}):\n{rep.stderr.decode(errors='replace')[-2000:]}")
        served[mode] = (int(m[1]), int(m[2]))
    notified, emulated = served["notified"]
    # 3,000 rounds of write, read and getppid; the calls around each mprotect
    # and at the program's start and end take the ptrace path.
    check(emulated >= 9000 and notified >= 0.95 * emulated, f"served by notification: {served}")
    check(served["ptrace"][0] == 0, f"REWIND_NOTIFY_SYSCALLS=0 still served some: {served}")
    gdb_said = "no gdb"
    if shutil.which("gdb"):
        # Under gdb: stops inside runs of served calls (a breakpoint between
        # a read and the getppid after it) are named as without them.
        source = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "programs",
                              "syscall_runs.c")
        lines = open(source).read().splitlines()
        fold = 1 + next(i for i, l in enumerate(lines) if "for (int k = 0" in l)
        protect = 1 + next(i for i, l in enumerate(lines) if "mprotect(page" in l)
        commands = [f"break syscall_runs.c:{fold} if i == 1234", "continue", "print i", "print sum", "monitor when",
                    "delete", f"break syscall_runs.c:{protect}", "continue", "print i", "monitor when",
                    "reverse-continue", "print i", "monitor when", "continue", "continue", "print i", "monitor when",
                    # Back through 99 hits gdb's condition rejects, one by
                    # one (the hits of the first collect are kept).
                    "delete", f"break syscall_runs.c:{fold} if i == 1900", "reverse-continue", "print i",
                    "monitor when"]
        said = {mode: gdb_answers(rw, trace, commands, extra)
                for mode, extra in (("notified", {}), ("ptrace", {"REWIND_NOTIFY_SYSCALLS": "0"}))}
        check(len(said["ptrace"]) == 11 and "$6 = 1900" in said["ptrace"] and said["notified"] == said["ptrace"],
              f"gdb with and without notifications:\n{said}")
        gdb_said = said["notified"][-1]
    t = Run([tamper, trace, "--write-data", "1500"])
    check(t.status == 0, f"trace_tamper failed: {t.describe()}")
    index = int(t.stdout.strip())
    for mode, extra in (("notified", {}), ("ptrace", {"REWIND_NOTIFY_SYSCALLS": "0"})):
        rep = Run([rw, "replay", "--autopilot", trace], env=dict(os.environ, **extra), timeout=600)
        check(rep.status == DIVERGENCE and f"event #{index} ".encode() in rep.stderr and b"differs" in rep.stderr,
              f"the 1,500th write changed (event #{index}), {mode}\n{rep.describe()}")
    return f"{notified} of {emulated} calls by notification; gdb: {gdb_said}; divergence at event #{index} found"


def scenario_unknown_syscall(rw, progs, work, tamper):
    # Failed calls of unknown effect replay (the program's own run is
    # compared byte for byte by replay.unknown_syscall); one that succeeded
    # cannot: `info` says so before a replay starts, and replay stops there.
    trace = os.path.join(work, "trace")
    record(rw, trace, [os.path.join(progs, "unknown_syscall")], work)
    made = subprocess.run([tamper, trace, "--unknown-succeeds"], capture_output=True)
    check(made.returncode == 0 and made.stdout.strip(), f"trace_tamper --unknown-succeeds: {made.stderr!r}")
    index = int(made.stdout.split()[-1])
    info = json.loads(subprocess.run([rw, "info", "--json", trace], capture_output=True).stdout)
    stops = info.get("replay_stops_at") or {}
    check(stops.get("event") == index, f"info does not name event {index} as where replay stops: {stops}")
    rep = replay(rw, trace)
    check(rep.status == REFUSED, f"unknown syscall that succeeded: status {rep.status}, expected {REFUSED}")
    check(b"syscall_600" in rep.stderr and b"not in the syscall table" in rep.stderr and
          f"event #{index}".encode() in rep.stderr, f"refusal does not say why and where: {rep.stderr!r}")


def scenario_unfinished(rw, progs, work):
    trace = os.path.join(work, "trace")
    p = subprocess.Popen([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "busy_loop")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = p.stdout.readline()  # the program runs (however loaded the machine)
    # The recorder writes its stream out every 250 ms of its own loop: on a
    # loaded machine, wait until it has written something after the first
    # line (the part a kill leaves is what is on disk).
    events = os.path.join(trace, "events")
    size_at_first = os.path.getsize(events) if os.path.exists(events) else 0
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (not os.path.exists(events) or os.path.getsize(events) <= size_at_first):
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGKILL)
    rest, _ = p.communicate()
    recorded_out = first + rest
    rep = replay(rw, trace)
    check(rep.status == TRACE_ENDED, f"unfinished trace: status {rep.status}, expected {TRACE_ENDED}")
    check(b"did not finish" in rep.stderr, f"no explanation: {rep.stderr!r}")
    check(rep.stdout and recorded_out.startswith(rep.stdout[: len(rep.stdout) // 2]),
          f"the replayed part of an unfinished trace differs: {len(rep.stdout)} bytes replayed, "
          f"{len(recorded_out)} recorded\n--- replayed (start)\n{rep.stdout[:200]!r}\n--- recorded (start)\n"
          f"{recorded_out[:200]!r}\n--- replay's stderr\n{rep.stderr.decode(errors='replace')}")


def process_state(pid):
    """The state letter of /proc/PID/stat (R, S, t, Z…), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def replay_under_outside_signals(rw, trace, name, count=30, gap=0.01, pairs=False):
    """Replays `trace` without a debugger while `count` SIGUSR1 from outside,
    `gap` seconds apart, reach its program (named `name`) as it runs:
    (status, stdout, stderr). The recording must last longer than the
    signals: a program that ended before the last one fails the test."""
    p = subprocess.Popen([rw, "replay", "--autopilot", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    program = None
    deadline = time.monotonic() + 30
    while program is None and time.monotonic() < deadline and p.poll() is None:
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv0 = f.read().split(b"\0")[0]
            except (OSError, ValueError, IndexError):
                continue
            if int(fields[1]) == p.pid and argv0.endswith(name.encode()):
                program = int(entry)
                break
        time.sleep(0.002)
    if program is None:
        p.kill()
        _, err = p.communicate()
        raise Failure(("the replay ended before its program was seen" if p.returncode is not None
                       else "the replayed program did not start") + "\n" + err.decode(errors="replace")[-2000:])
    # Most reach the thread while it waits for an answer (which then
    # fails); some while it runs between two calls, replay waiting for the
    # next one, or inside the syscall agent. With `pairs`, each comes
    # twice, the second while replay handles the stop for the first
    # (pending when the thread goes on).
    time.sleep(0.05)
    for _ in range(count):
        try:
            os.kill(program, signal.SIGUSR1)
            if pairs:
                os.kill(program, signal.SIGUSR1)
        except ProcessLookupError:
            break
        time.sleep(gap)
    state = process_state(program)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise Failure("the replay did not see its program stop for a signal from outside (killed after 120 s)\n"
                      + err.decode(errors="replace")[-2000:])
    # A replay that failed says why itself, to the caller.
    check(p.returncode != 0 or state not in (None, "Z", "X"),
          f"the replayed program ended before the last of {count} signals: the test needs a longer recording")
    return p.returncode, out, err


def scenario_signal_in_a_run(rw, progs, work):
    """A signal from outside reaches the program while replay serves a run
    of its syscalls without a debugger, waiting for its next call rather
    than for a stop: the stop is seen all the same (the signal is not the
    recording's and is not delivered), and the replay ends as recorded."""
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [os.path.join(progs, "syscall_runs"), "600000"], work)
    check(rec.status == 0, f"recording syscall_runs\n{rec.describe()}")
    status, out, err = replay_under_outside_signals(rw, trace, "syscall_runs", count=30, gap=0.005)
    check(status == 0 and out == rec.stdout,
          f"replay after a signal from outside: status {status}\n{err.decode(errors='replace')[-2000:]}")
    # Pairs, often: many stops inside the syscall agent's code, and the
    # second of a pair pending when the thread goes on to finish its answer.
    status, out, err = replay_under_outside_signals(rw, trace, "syscall_runs", count=1000, gap=0.0005, pairs=True)
    check(status == 0 and out == rec.stdout,
          f"replay after signals from outside in pairs: status {status}\n{err.decode(errors='replace')[-2000:]}")
    return "stops inside a run without a debugger are seen; the replay ends as recorded"


def symbol_range(program, symbol):
    """[start, end) of a function of `program` (a PIE executable) as nm
    sizes it, where it runs in a recording (without ASLR, at
    0x555555554000)."""
    out = subprocess.run(["nm", "-S", program], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == symbol:
            start, size = int(parts[0], 16), int(parts[1], 16)
            return 0x555555554000 + start, 0x555555554000 + start + size
    raise Failure(f"no symbol {symbol} in {program}")


def scenario_signal_in_nested_loop(rw, progs, work):
    """A signal in user code, in a loop that calls a function eight times a
    round with the same registers and counts its rounds in memory: the
    recorder delivers it at an instruction of the outer loop (once a round),
    with the sum of the pages that tell the rounds apart; replay finds it in
    the same round, the breakpoint's filter in the kernel judging the other
    executions, so that the thread stops there once."""
    program = os.path.join(progs, "nested_rounds")
    trace = os.path.join(work, "trace")
    rec = record(rw, trace, [program], work)
    check(rec.status == 0, f"recording nested_rounds\n{rec.describe()}")
    dump = Run([rw, "dump", "--json", trace])
    signals = [e for e in map(json.loads, dump.stdout.decode().splitlines())
               if e.get("kind") == "signal" and e.get("delivery") == "at-position"]
    if not signals:
        skip("the signal was delivered at a syscall (no debug registers, or the probe's time share was spent)")
    e = signals[0]
    rip = e["regs"]["rip"] if isinstance(e["regs"], dict) else None
    lo, hi = symbol_range(program, "nested_rounds_inner")
    check(rip is not None and not lo <= rip < hi,
          f"the signal is delivered in the function the loop calls eight times a round (rip {rip})")
    check(e.get("pages_sum"), f"the signal event keeps no sum of its pages: {e}")
    rep = Run([rw, "replay", "--autopilot", trace], env={**os.environ, "REWIND_DEBUG": "1"}, timeout=600)
    same_run(rec, rep, "nested_rounds")
    found = [l for l in rep.stderr.decode(errors="replace").splitlines() if "found in user code" in l]
    check(found, "replay did not say where it found the signal's point\n" + rep.stderr.decode(errors="replace"))
    if "filtered in the kernel" not in found[0]:
        skip("the breakpoint filter could not be loaded here: " + found[0])
    check(" after 1 stops " in found[0], "the thread stopped at executions that were not the point: " + found[0])
    return found[0].split("] ", 1)[-1]


SCENARIOS = [scenario_inputs_and_binary_change, scenario_pipeline, scenario_corrupt, scenario_tampered,
             scenario_notified_runs, scenario_signal_in_a_run,
             scenario_unknown_syscall, scenario_unfinished, scenario_signal_in_nested_loop]


# Programs that execute rdtsc themselves: exact only where rdtsc traps.
READS_THE_TSC = {"entropy", "rdtsc"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--program")
    ap.add_argument("--programs")
    ap.add_argument("--tamper")
    ap.add_argument("--work", required=True)
    ap.add_argument("--scenarios", action="store_true")
    args = ap.parse_args()
    require_root()
    if args.program:
        name = os.path.basename(args.program)
        if name in READS_THE_TSC and not machine_can(args.rewind, "rdtsc trap"):
            skip(f"{name} reads the TSC directly, and this machine does not trap rdtsc (rewind doctor)")
        work = fresh_dir(args.work)
        try:
            print(f"ok {os.path.basename(args.program)}: {check_program(args.rewind, args.program, work)}")
            return 0
        except Failure as f:
            print(f"FAIL {f}")
            return 1
    def scenario(s):
        work = fresh_dir(os.path.join(args.work, s.__name__))
        if s in (scenario_tampered, scenario_notified_runs, scenario_unknown_syscall):
            return s(args.rewind, args.programs, work, args.tamper)
        return s(args.rewind, args.programs, work)

    return run_checks([(s.__name__, lambda s=s: scenario(s)) for s in SCENARIOS])


if __name__ == "__main__":
    sys.exit(main())
