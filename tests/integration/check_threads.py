#!/usr/bin/env python3
"""Multithreaded programs: each recording replays to the same output, byte
for byte, with the recorded interleaving (data races included); thread and
futex events show in `rewind dump` with the thread that issued them; a
preemption point that replay cannot find again is reported, never skipped;
rewind watch names the thread whose instruction made the change.

  check_threads.py --rewind R --programs DIR --tamper T --work W
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import DEBUG_REGISTERS, Run, check, dump_events, fresh_dir, require_root, requiring, run_checks, shell_status
from rwtest import rewind_watch as watch

DIVERGENCE = 90
PROGRAMS = ["threads_mutex", "threads_condvar", "threads_barrier", "threads_detached", "threads_spin",
            "threads_signal", "threads_rounding", "threads_timed", "threads_many", "threads_fork",
            "threads_exit_waiting", "main_thread_exits", "shared_counter",
            "kill_new_thread", "robust_mutex", "threads_group_stop",
            "namespace_threads", "threads_unshare_files"]


def record(rw, trace, argv, *options):
    return Run([rw, "record", "-q", *options, "-o", trace, "--"] + argv)


def replay(rw, trace, watchdog=60):
    return Run([rw, "replay", "--autopilot", "--watchdog", str(watchdog), trace], timeout=600)


def same_run(rec, rep, what):
    check(rec.status == 0, f"{what}: the recording failed\n{rec.describe()}")
    check(rec.stdout == rep.stdout and shell_status(rec.status) == shell_status(rep.status),
          f"{what}: the replay differs from the recording\n--- recorded\n{rec.describe()}\n--- replayed\n"
          f"{rep.describe()}")


def check_program(rw, progs, work, name):
    trace = os.path.join(work, name)
    rec = record(rw, trace, [os.path.join(progs, name)])
    rep = replay(rw, trace)
    same_run(rec, rep, name)
    events = dump_events(rw, trace)
    threads = {e["child_tid"] for e in events if e["kind"] == "fork"}
    exits = {e["tid"] for e in events if e["kind"] == "exit"}
    check(threads and threads <= exits, f"{name}: every thread has a creation and an exit event")
    preempts = sum(1 for e in events if e["kind"] == "preempt")
    return events, preempts, rec.stdout.decode().strip()


def check_one(rw, progs, work, name):
    events, preempts, output = check_program(rw, progs, work, name)
    extra = ""
    if name == "threads_condvar":
        extra = "; " + check_dump_names_threads(rw, events, name)
    if name == "threads_spin":
        check(preempts > 0, "threads_spin: the spinning threads were preempted")
    return f"{output!r}, {preempts} preemptions{extra}"


def check_exec(rw, progs, work, name):
    """An exec in a threaded process ends the other threads where they stand
    (their exits come before it), and one from a thread that does not lead
    its process takes the leader's id; the recorder followed it to the end
    (it hung there before)."""
    trace = os.path.join(work, name)
    rec = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, name)], timeout=120)
    rep = replay(rw, trace)
    same_run(rec, rep, name)
    events = dump_events(rw, trace)
    execs = [e for e in events if e["kind"] == "exec"][1:]
    check(execs, f"{name}: no exec after the first")
    for x in execs:
        ended = [e for e in events if e["kind"] == "exit" and e["tgid"] == x["tgid"] and e["seq"] < x["seq"]]
        check(ended, f"{name}: the exec at seq {x['seq']} ended no thread before it")
    from_threads = sum(1 for x in execs if x["former_tid"] not in (0, x["tid"]))
    if name == "threads_exec_other":
        check(from_threads == len(execs), f"{name}: {from_threads} of {len(execs)} execs came from a non-leader")
    return f"{rec.stdout.decode().strip()!r}, {len(execs)} execs, {from_threads} from a non-leader thread"


def check_leader_exit(rw, progs, work):
    """The leader ends before its worker, which ends the process with status
    3: a zombie ptrace reports only then, with that status (the recorder
    hung at the leader's end before, waiting to hand its CPU on)."""
    trace = os.path.join(work, "threads_leader_exit")
    rec = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "threads_leader_exit")], timeout=120)
    check(shell_status(rec.status) == 3, f"the recording did not end with status 3\n{rec.describe()}")
    rep = replay(rw, trace)
    check(rec.stdout == rep.stdout and shell_status(rep.status) == 3,
          f"the replay differs from the recording\n--- recorded\n{rec.describe()}\n--- replayed\n{rep.describe()}")
    return f"{rec.stdout.decode().strip()!r}, status 3"


def check_spin_blocked(rw, progs, work):
    """Spinning threads that block every signal (as xz's workers do): no
    hardware breakpoint's SIGTRAP reaches them, so the recorder preempts
    them by single steps after its compute budget, and replay lets SIGTRAP
    through while it runs them to those points; their mask stays theirs."""
    trace = os.path.join(work, "threads_spin-blocked")
    rec = record(rw, trace, [os.path.join(progs, "threads_spin"), "blocked"])
    rep = replay(rw, trace)
    same_run(rec, rep, "threads_spin blocked")
    preempts = sum(1 for e in dump_events(rw, trace) if e["kind"] == "preempt")
    check(preempts > 0, "threads_spin blocked: the spinning threads were not preempted")
    return f"{rec.stdout.decode().strip()!r}, {preempts} preemptions"


def check_dump_names_threads(rw, events, name):
    futexes = [e for e in events if e["kind"] == "syscall" and e.get("name") == "futex"]
    by_workers = [e for e in futexes if e["tid"] != e["tgid"]]
    check(by_workers, f"{name}: rewind dump shows futex calls issued by worker threads")
    return f"{len(futexes)} futex events, {len(by_workers)} from worker threads"


def check_handoffs(rw, progs, work, recordings=5):
    """Calls that never block run without a ptrace stop between mutex and
    condition variable hand-offs: each of several recordings replays to
    its own output, byte for byte, and the recorder stopped the program far
    less often than it made syscalls."""
    outputs = set()
    for i in range(recordings):
        trace = os.path.join(work, f"handoff-{i}")
        rec = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(progs, "threads_handoff")],
                  env={**os.environ, "REWIND_RECORD_STATS": "1"})
        rep = replay(rw, trace)
        same_run(rec, rep, f"threads_handoff recording {i + 1}")
        outputs.add(rec.stdout)
        m = re.search(r"(\d+) ptrace stops", rec.stderr.decode())
        check(m, f"no supervisor statistics\n{rec.describe()}")
        syscalls = sum(1 for e in dump_events(rw, trace) if e["kind"] == "syscall")
        stops = int(m.group(1))
        check(stops * 2 < syscalls, f"{stops} ptrace stops for {syscalls} syscalls: calls that never block stopped")
    return f"{recordings} recordings, {len(outputs)} distinct outputs, last: {stops} stops for {syscalls} syscalls"


def check_races(rw, progs, work):
    """The racy counter: each recording replays to its own final value."""
    values = []
    for i in range(3):
        trace = os.path.join(work, f"racy-{i}")
        rec = record(rw, trace, [os.path.join(progs, "threads_racy")], "--chaos")
        rep = replay(rw, trace)
        same_run(rec, rep, f"threads_racy recording {i + 1}")
        values.append(rec.stdout.decode().split(",")[0])
    return "; ".join(values)


def check_tampered_preemption(rw, tamper, work):
    trace = os.path.join(work, "threads_spin")
    r = Run([tamper, trace, "--preempt"])
    check(r.status == 0, f"tampering with a preemption\n{r.describe()}")
    index = int(r.stdout.decode().split("#")[1].split()[0])
    rep = replay(rw, trace, watchdog=3)
    err = rep.stderr.decode()
    check(rep.status == DIVERGENCE and f"event #{index}" in err and "switched threads" in err,
          f"a moved preemption point must be reported as a divergence at #{index}\n{rep.describe()}")
    return f"divergence reported at #{index}"


def check_order_violation(rw, progs, work, *options):
    """pbzip2's order violation: main frees the queue's mutex while a
    consumer still uses it. The replay dies the same way, and rewind watch
    names main and the line that freed it, not the consumer that crashed.
    `options`: how it is recorded (check_parallel.py: --parallel)."""
    trace = os.path.join(work, "order_violation" + "".join(options))
    rec = record(rw, trace, [os.path.join(progs, "threads_order_violation")], *options)
    check(shell_status(rec.status) == 128 + 11, f"the consumer did not crash on the freed mutex\n{rec.describe()}")
    rep = replay(rw, trace)
    check(rec.stdout == rep.stdout and shell_status(rep.status) == shell_status(rec.status),
          f"the replay differs from the recording\n--- recorded\n{rec.describe()}\n--- replayed\n{rep.describe()}")
    events = dump_events(rw, trace)
    main_tid = next(e["tid"] for e in events if e["kind"] == "exec")
    crashed = next(e["tid"] for e in events if e["kind"] == "signal")
    r, j = watch(rw, trace, "fifo->mut == 0")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(j["thread"] == main_tid and crashed != main_tid,
          f"the culprit is main ({main_tid}), the crash is in {crashed}; rewind watch names {j['thread']}")
    check(j["function"] == "queue_delete" and "queue-delete-line" in j["source"], f"not the freeing line: {j}")
    check(any(re.search(r" main \(\) at .*threads_order_violation.c:\d+", f) for f in j["backtrace"]),
          f"the backtrace does not lead to main: {j['backtrace']}")
    return f"thread {main_tid} at line {j['line']} (crash in thread {crashed}), {j['probes']} probes"


def check_watch_names_writer(rw, work):
    """Each barrier worker writes its own column: the change of column 0 is worker 0's."""
    r, j = watch(rw, os.path.join(work, "threads_barrier"), "cell[5][0] == 0")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(any("work (arg=0x0)" in f for f in j["backtrace"]), f"not worker 0: {j['backtrace']}")
    check("cell[r][id]" in j["source"], f"not the writing line: {j}")
    return f"thread {j['thread']}, {j['probes']} probes"


def check_watch_across_preemptions(rw, progs, work):
    """The spinning partner's write happens in a stretch that ends in a
    preemption: the watch searches inside it and names the partner."""
    trace = os.path.join(work, "spin-watch")
    rec = record(rw, trace, [os.path.join(progs, "threads_spin")])
    check(rec.status == 0, f"recording threads_spin\n{rec.describe()}")
    partner = next(e["child_tid"] for e in dump_events(rw, trace) if e["kind"] == "fork")
    r, j = watch(rw, trace, "trace_of_work[3] == 8")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(j["thread"] == partner and j["function"] == "partner" and "trace_of_work[2 * r + 1]" in j["source"],
          f"not the partner's write (thread {partner}): {j}")
    return f"thread {partner}, {j['probes']} probes"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--tamper", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)
    rw, progs = args.rewind, args.programs
    checks = [(name, lambda name=name: check_one(rw, progs, work, name)) for name in PROGRAMS]
    checks += [(name, lambda name=name: check_exec(rw, progs, work, name))
               for name in ("threads_exec", "threads_exec_other")]
    checks += [("threads_leader_exit", lambda: check_leader_exit(rw, progs, work)),
               ("threads_spin blocked", lambda: check_spin_blocked(rw, progs, work)),
               ("hand-offs", lambda: check_handoffs(rw, progs, work)),
               ("races", lambda: check_races(rw, progs, work)),
               ("tampered preemption", lambda: check_tampered_preemption(rw, args.tamper, work)),
               ("order violation", lambda: check_order_violation(rw, progs, work)),
               ("rewind watch", lambda: check_watch_names_writer(rw, work)),
               ("watch across preemptions", lambda: check_watch_across_preemptions(rw, progs, work))]
    return run_checks(checks)

if __name__ == "__main__":
    sys.exit(main())
