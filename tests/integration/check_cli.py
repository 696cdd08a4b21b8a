#!/usr/bin/env python3
"""The recorder's behaviour around the happy path: bad input gets a clear
message and a non-zero status; a recorder killed with SIGKILL leaves a
readable trace whose readers say where it ends; a corrupted trace is
refused by its checksums; syscalls of unknown effect are flagged; a tiny
ring buffer stalls the program instead of losing data; a program that
traces processes itself is refused at once, saying why."""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import Failure, Run, check, dump_events, fresh_dir, require_root, rewind_json


def test_help(rw, work, progs):
    for cmd in ["record", "info", "ls", "dump", "doctor"]:
        r = Run([rw, cmd, "--help"])
        check(r.status == 0 and b"Usage" in r.stdout, f"`rewind {cmd} --help` does not print usage")


def test_bad_input(rw, work, progs):
    r = Run([rw, "record", "--", "no-such-program-xyz"])
    check(r.status == 127, f"program not found: status {r.status}, expected 127")
    check(b"program not found: no-such-program-xyz" in r.stderr, "program not found: unclear message")
    r = Run([rw, "record"])
    check(r.status != 0 and b"nothing to record" in r.stderr, "record without a program")
    r = Run([rw, "info", "no-such-trace"])
    check(r.status != 0 and b"no trace named 'no-such-trace'" in r.stderr, "info on a missing trace")
    r = Run([rw, "record", "--ring-mib", "3", "--", "true"])
    check(r.status != 0 and b"power of two" in r.stderr, "a ring size that is not a power of two")
    notexec = os.path.join(work, "not-executable")
    open(notexec, "w").close()
    r = Run([rw, "record", "--", notexec])
    check(r.status == 126, f"non-executable file: status {r.status}")
    if shutil.which("setpriv"):
        r = Run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", rw, "record", "--", "true"])
        check(r.status == 1, f"unprivileged record: status {r.status}")
        for cap in [b"CAP_BPF", b"CAP_PERFMON", b"CAP_SYS_PTRACE"]:
            check(cap in r.stderr, f"unprivileged record: message does not name {cap.decode()}: {r.stderr}")


def test_sigkill_leaves_readable_trace(rw, work, progs):
    trace = os.path.join(work, "killed")
    p = subprocess.Popen([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "busy_loop")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    p.send_signal(signal.SIGKILL)
    p.communicate()
    rc, out, err = rewind_json(rw, "info", "--json", trace)
    check(rc == 3, f"info on a killed recording: status {rc}, expected 3 (incomplete)")
    info = json.loads(out)
    check(not info["complete"], "a killed recording claims to be complete")
    check(any("did not finish" in p for p in info["problems"]), f"no 'did not finish' in {info['problems']}")
    check(info["syscalls"].get("clock_nanosleep", 0) > 10, "the events before the kill were not readable")
    r = Run([rw, "dump", trace])
    check(r.status == 3 and b"did not finish" in r.stderr, "dump does not say where a killed trace ends")


def test_corruption_is_detected(rw, work, progs):
    trace = os.path.join(work, "corrupt")
    Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "pipes")])
    events = os.path.join(trace, "events")
    data = bytearray(open(events, "rb").read())
    data[len(data) - 20] ^= 0x01
    open(events, "wb").write(bytes(data))
    rc, out, err = rewind_json(rw, "info", "--json", trace)
    check(rc == 3, f"info on a corrupted trace: status {rc}")
    info = json.loads(out)
    check(any("checksum" in p for p in info["problems"]), f"corruption not reported: {info['problems']}")
    r = Run([rw, "dump", trace])
    check(r.status == 3 and b"checksum" in r.stderr, "dump does not report the corruption")


def test_dump_errors(rw, work, progs):
    # Only the failed syscalls, then a count by errno, against what the
    # program saw itself.
    trace = os.path.join(work, "failing")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "failing_calls")])
    check(r.status == 0 and b"ENOENT 7 EBADF 3" in r.stdout, f"failing_calls\n{r.describe()}")
    r = Run([rw, "dump", "--errors", trace])
    out = r.stdout.decode()
    check(r.status == 0, f"dump --errors\n{r.describe()}")
    for i in range(7):
        check(f"/nonexistent-rewind-{i}" in out, f"the open of /nonexistent-rewind-{i} is not listed\n{out}")
    calls = [line for line in out.splitlines() if line.startswith("#")]
    check(all(" = -1 E" in line for line in calls), f"a call that did not fail is listed\n{out}")
    check(sum("close(" in line and "EBADF" in line for line in calls) == 3, f"not the three closes\n{out}")
    summary = out.strip().splitlines()[-1]
    check(re.search(r"^\d+ of \d+ syscalls failed: .*EBADF 3", summary) is not None, f"summary: {summary}")
    r = Run([rw, "dump", "--errors", "--json", trace])
    rows = [json.loads(line) for line in r.stdout.decode().splitlines()]
    check(len(rows) == len(calls) and all(row["ret"] < 0 for row in rows), f"--json rows\n{r.describe()}")


def test_unknown_effects_flagged(rw, work, progs):
    trace = os.path.join(work, "unknown")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "unknown_syscall")])
    check(r.status == 0, "unknown_syscall failed under rewind")
    rc, out, err = rewind_json(rw, "info", "--json", trace)
    info = json.loads(out)
    what = {u["what"] for u in info["unknown_effects"]}
    check("syscall_600" in what, f"syscall 600 not flagged: {what}")
    check("ioctl(0x5499)" in what, f"unknown ioctl not flagged: {what}")
    check(info["complete"], "unknown effects made the trace incomplete (nothing was lost)")
    check("syscall_-1" in what, f"syscall -1 not flagged (or taken for rt_sigreturn): {what}")
    # They all failed, so they changed nothing: replay passes them.
    check("replay stops" not in info["status"], f"status says replay stops: {info['status']}")
    check(info["replay_stops_at"] is None, f"replay_stops_at: {info['replay_stops_at']}")
    r = Run([rw, "info", trace])
    check(b"every call failed: replayed with its result" in r.stdout, f"info text: {r.stdout!r}")


def test_small_ring_stalls_instead_of_losing(rw, work, progs):
    data = os.path.join(work, "8m.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(8 << 20))
    trace = os.path.join(work, "small-ring")
    r = Run([rw, "record", "-q", "--ring-mib", "1", "-o", trace, "--", os.path.join(progs, "read_8m"), data])
    check(r.status == 0, "read_8m failed with a 1 MiB ring")
    rc, out, err = rewind_json(rw, "info", "--json", trace)
    info = json.loads(out)
    check(info["complete"], f"small-ring trace incomplete: {info['problems']}")
    check(info["stalls"] >= 1, "an 8 MiB read did not stall a 1 MiB ring")
    reads = [e for e in dump_events(rw, trace) if e["kind"] == "syscall" and e["name"] == "read"
             and e["ret"] == 8 << 20]
    check(len(reads) == 1, "the 8 MiB read is missing")
    check("rebuilt" in reads[0]["flags"], "the 8 MiB read was not captured by the supervisor")
    check(bytes.fromhex(reads[0]["memory"][0]["data_hex"]) == open(data, "rb").read(),
          "stalled read: payload differs from the file")
    # A write through /proc/self/mem too large for the ring: the supervisor
    # records what it put in the process's memory, as the kernel side would.
    own = os.path.join(work, "small-ring-self-mem")
    r = Run([rw, "record", "-q", "--ring-mib", "1", "-o", own, "--", os.path.join(progs, "self_mem_write")])
    check(r.status == 0, f"self_mem_write with a 1 MiB ring\n{r.describe()}")
    replay = Run([rw, "replay", "--autopilot", own])
    check(replay.status == 0 and replay.stdout == r.stdout,
          f"a stalled write through /proc/self/mem did not replay\n{replay.describe()}")


def test_threads_are_all_recorded(rw, work, progs):
    trace = os.path.join(work, "threads")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "threads_mutex")])
    check(r.status == 0 and r.stdout == b"total 20000\n", f"threads_mutex under rewind: {r.describe()}")
    rc, out, err = rewind_json(rw, "info", "--json", trace)
    info = json.loads(out)
    check(info["complete"], f"threads trace incomplete: {info['problems']}")
    check(info["threads"] == 5, f"{info['threads']} threads recorded, expected 5")
    events = dump_events(rw, trace)
    exits = {e["tid"] for e in events if e["kind"] == "exit"}
    forks = [e for e in events if e["kind"] == "fork"]
    check(len(forks) == 4 and all(f["thread"] for f in forks), "thread creations missing")
    check(all(f["child_tid"] in exits for f in forks), "a thread's exit is missing")
    for f in forks:
        first = next(e for e in events if e.get("tid") == f["child_tid"])
        check(first["kind"] == "syscall" and "child-return" in first["flags"],
              f"thread {f['child_tid']} does not start with its return from clone")


def test_daemon_left_running(rw, work, progs):
    # The recording ends when the program exits: what it left running is
    # killed (no recording that waits for a daemon); replay matches.
    prog = os.path.join(progs, "leaves_daemon")
    trace = os.path.join(work, "daemon")
    start = time.monotonic()
    r = Run([rw, "record", "-o", trace, "--", prog], timeout=60)
    took = time.monotonic() - start
    check(r.status == 0 and r.stdout == b"daemon started\n", f"leaves_daemon under rewind: {r.describe()}")
    check(took < 30, f"the recording waited {took:.1f} s for the daemon")
    check(b"left 1 process running: killed" in r.stderr, f"no word of the killed daemon: {r.stderr!r}")
    end = json.load(open(os.path.join(trace, "end.json")))
    check(end.get("killed_at_exit") == 1 and end["complete"], f"end.json: {end}")
    rep = Run([rw, "replay", "--autopilot", trace])
    check(rep.status == 0 and rep.stdout == b"daemon started\n", f"replay: {rep.describe()}")
    # --wait records the daemon to its own end.
    trace = os.path.join(work, "daemon-wait")
    start = time.monotonic()
    r = Run([rw, "record", "--wait", "-o", trace, "--", prog, "2"], timeout=60)
    took = time.monotonic() - start
    check(r.status == 0 and took >= 2, f"--wait: status {r.status} after {took:.1f} s: {r.describe()}")
    end = json.load(open(os.path.join(trace, "end.json")))
    check(end.get("killed_at_exit", 0) == 0 and end["processes"] == 3, f"end.json with --wait: {end}")
    rep = Run([rw, "replay", "--autopilot", trace])
    check(rep.status == 0, f"replay of --wait: {rep.describe()}")


def test_group_signals(rw, work, progs):
    # The program shares its process group with the recorder: what it sends
    # the group must not end the recording, nor reach it twice.
    prog = os.path.join(progs, "group_signals")
    trace = os.path.join(work, "group")
    native = subprocess.run([prog], capture_output=True, start_new_session=True, timeout=60)
    rec = subprocess.run([rw, "record", "-q", "-o", trace, "--", prog], capture_output=True,
                         start_new_session=True, timeout=60)
    check(native.stdout == b"usr1 1 term 1\n" and native.returncode == -signal.SIGABRT,
          f"group_signals natively: {native}")
    check(rec.stdout == native.stdout and rec.returncode == native.returncode, f"under rewind record: {rec}")
    end = json.load(open(os.path.join(trace, "end.json")))
    check(end["complete"] and end["exit"]["signal"] == signal.SIGABRT, f"end.json: {end}")
    rep = subprocess.run([rw, "replay", "--autopilot", trace], capture_output=True, start_new_session=True,
                         timeout=60)
    check(rep.stdout == native.stdout and rep.returncode == native.returncode, f"replay: {rep}")


def test_tracing_programs(rw, work, progs):
    # A program that traces a process of its own (a debugger, strace, a
    # crash reporter) is recorded with rewind standing in for the kernel
    # between the two recorded processes: the tracer sees the stops it would
    # see natively, and what it changes in its tracee (a word of memory, a
    # register) the replay changes too. Its output, recorded and replayed,
    # is the native one byte for byte.
    prog = os.path.join(progs, "traces_child")
    for how in ["traceme", "attach", "thread", "vfork", "poke", "syscall", "interrupted", "forks", "seize_stopped"]:
        native = Run([prog, how], timeout=60)
        natively = {"interrupted": b"waitpid gave -1 (Interrupted system call)",
                    "forks": b"forks: thread exited with 0",
                    "seize_stopped": b"seize_stopped: a group stop, signal 19"}.get(how, b"child stopped by signal")
        check(native.status == 0 and natively in native.stdout, f"{how} natively: {native.describe()}")
        trace = os.path.join(work, how)
        start = time.monotonic()
        r = Run([rw, "record", "-q", "-o", trace, "--", prog, how], timeout=60)
        took = time.monotonic() - start
        check(not r.timed_out and took < 30, f"{how}: the recording took {took:.1f} s\n{r.describe()}")
        check(r.status == 0 and r.stdout == native.stdout,
              f"{how}: recorded, the program does not behave as natively\n{native.describe()}\n{r.describe()}")
        rep = Run([rw, "replay", "--autopilot", trace], timeout=120)
        check(rep.status == 0 and rep.stdout == native.stdout,
              f"{how}: the replay differs from the recording\n{rep.describe()}")
    _test_tracing_refused(rw, work, progs)


def _test_tracing_refused(rw, work, progs):
    # What rewind does not stand in for is refused at the call, before it
    # runs, saying who, what and why, with a closed trace that replays up to
    # there; never a silent wait. A tracer's emulation of syscalls
    # (PTRACE_SYSEMU) is one such; a seccomp filter of the program's that hands a call to a
    # tracer (SECCOMP_RET_TRACE) wants one of its own, another.
    seccomp_why = "its own seccomp filter hands to a tracer (SECCOMP_RET_TRACE): rewind cannot record a program " \
                  "that relies on a tracer of its own"
    syscall_why = "not yet for one that emulates its system calls"
    prog = os.path.join(progs, "traces_child")
    for how, request in [("sysemu", "PTRACE_SYSEMU"), ("seccomp", "getppid")]:
        native = Run([prog, how], timeout=60)
        natively = b"getppid gave -1 (Function not implemented)" if how == "seccomp" else b"child stopped by signal 5"
        check(native.status == 0 and natively in native.stdout, f"{how} natively: {native.describe()}")
        why = seccomp_why if how == "seccomp" else syscall_why
        call = "made the system call getppid" if how == "seccomp" else f"called ptrace({request}"
        trace = os.path.join(work, how)
        start = time.monotonic()
        r = Run([rw, "record", "-q", "-o", trace, "--", prog, how], timeout=60)
        took = time.monotonic() - start
        check(not r.timed_out and took < 30, f"{how}: the recording took {took:.1f} s\n{r.describe()}")
        check(r.status == 91, f"{how}: status {r.status}, expected 91 (refused)\n{r.describe()}")
        said = r.stderr.decode(errors="replace")
        check(call in said and why in said and "process " in said,
              f"{how}: the refusal does not say who, what and why\n{r.describe()}")
        check(r.stdout == f"tracing a child ({how})\n".encode(),
              f"{how}: the program went on past the refusal, or lost its output\n{r.describe()}")
        # The refused process and the one it would trace are gone.
        time.sleep(0.2)
        for pid in re.findall(r"(?:process|thread) (\d+)", said.split("\n")[0]) + \
                re.findall(r"ptrace\(PTRACE_\w+, (\d+)\)", said):
            state = ""
            try:
                with open(f"/proc/{pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                pass
            check(state in ("", "Z", "X"), f"{how}: recorded process {pid} outlived the refusal (state {state})")
        end = json.load(open(os.path.join(trace, "end.json")))
        check(not end["complete"] and end.get("refusal") and request in end["refusal"]["why"],
              f"{how}: end.json does not say why the recording ended: {end}")
        info = Run([rw, "info", trace])
        check(info.status == 3 and b"the recording stops at event" in info.stdout and request.encode() in info.stdout
              and why.encode() in info.stdout,
              f"{how}: info\n{info.describe()}")
        rc, out, _ = rewind_json(rw, "info", "--json", trace)
        refusal = json.loads(out).get("refusal")
        check(refusal and refusal["event"] == end["refusal"]["event"], f"{how}: info --json: {refusal}")
        rep = Run([rw, "replay", "--autopilot", trace], timeout=120)
        check(rep.status == 92 and request.encode() in rep.stderr and rep.stdout == r.stdout,
              f"{how}: the replay does not end at the refusal, saying why\n{rep.describe()}")


def test_one_landmark_run_at_a_time(rw, work, progs):
    # A second `rewind landmark` on a trace another one works on is refused
    # at once, before any replay or CRIU: the two would number and write
    # the same landmarks.
    import fcntl
    trace = os.path.join(work, "lm")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "file_io")], cwd=work)
    check(r.status == 0, f"recording file_io: {r.describe()}")
    held = os.open(trace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        second = Run([rw, "landmark", trace, "--every", "50%"], timeout=60)
        check(second.status == 1 and b"another rewind landmark is running on" in second.stderr,
              f"a landmark run beside another: {second.describe()}")
        check(not os.path.exists(os.path.join(trace, "landmarks")), "the refused run wrote landmarks")
    finally:
        os.close(held)


TESTS = [test_tracing_programs, test_threads_are_all_recorded, test_daemon_left_running, test_group_signals,
         test_help, test_bad_input, test_sigkill_leaves_readable_trace, test_corruption_is_detected,
         test_unknown_effects_flagged, test_dump_errors, test_small_ring_stalls_instead_of_losing,
         test_one_landmark_run_at_a_time]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    failed = 0
    for t in TESTS:
        work = fresh_dir(os.path.join(args.work, t.__name__))
        try:
            t(args.rewind, work, args.programs)
            print(f"ok   {t.__name__}")
        except Failure as f:
            print(f"FAIL {t.__name__}: {f}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
