#!/usr/bin/env python3
"""Threads recorded with `rewind record --parallel` (they run freely; libc's
synchronization calls are put in one global order): programs whose shared
data those calls protect replay byte for byte, recording after recording;
a program with a data race either replays to its own output or the replay
reports a divergence (or a thread that cannot go on): never a different
output with success. Real programs with threads (pigz, xz -T2, python3's
threading) replay to the bytes they wrote, recorded with --parallel and
serialized. gdb debugs each parallel trace to its end, and rewind watch
finds the culprit of pbzip2's order violation in a parallel trace.

  check_parallel.py --rewind R --programs DIR --work W
"""
import argparse
import json
import resource
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import Run, Skipped, check, dump_events, fresh_dir, require_root, rewind_watch, run_checks, shell_status

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "programs"))
import thread_workloads  # noqa: E402
import check_threads  # noqa: E402

DIVERGENCE, STUCK = 90, 93
RECORDINGS = 5
# Shared data under mutexes, condition variables (producers and consumers),
# barriers, rwlocks, semaphores, a thread pool.
# threads_timed: signals blocked around locks, condition waits with deadlines
# (woken and timed out), a nested pthread_once.
# threads_many: twelve threads joined, whose joins free stacks (munmap).
# threads_fork: forks after a join and takes SIGCHLD in wait4; rdrand.
# threads_exit_waiting: the process ends while its workers wait or wake;
# the recording has the workers' exits before or after the ending call.
# threads_wake_while_cloning: sleepers to wake while the main thread is
# inside a clone (2 recordings in 3 failed to replay before replay chose
# another thread to make the wake-up call).
EXACT = ["threads_mutex", "threads_condvar", "threads_barrier", "threads_rwlock", "threads_semaphore",
         "threads_pool", "threads_timed", "threads_many", "threads_fork", "threads_exit_waiting",
         "threads_wake_while_cloning"]
# Real programs that run threads: (name, argv with {input}).
REAL = [("pigz", ["pigz", "-p", "2", "-c", "{input}"]),
        ("xz", ["xz", "-T2", "-3", "-c", "{input}"]),
        ("python3", thread_workloads.python_threads(20000, 1000))]
# Real programs whose threads share data outside the ordered calls: each
# recording replays exactly or reports a divergence (exit 90, naming the
# event and thread), and one of a few recordings replays exactly.
# CPython: a thread that waits for the GIL sets an atomic drop request,
# which the running thread reads between bytecodes; where that read falls
# in replay is not ordered (about 1 recording in 15 here).
# pigz: glibc's malloc makes a thread's first arena with a hint that the
# thread that made the previous arena stores after its munmap, outside any
# ordered call; a thread replayed before that store asks mmap for twice
# the size at no address (rare: one recording in about a dozen runs). It
# also reports another of its job objects locked than recorded, cause not
# found (2 recordings in 12 of this input, measured 2026-11-26).
UNORDERED = {"python3": 3, "pigz": 3}
# Real programs debugged under gdb, in their parallel and their serialized
# trace: a breakpoint on a synchronization function the replay stops at
# too, hit forwards and backwards, then the run to its end. xz's main
# thread ends the process (exit_group) while its workers wait.
DEBUGGED = {"python3": "sem_post", "xz": "pthread_mutex_lock"}
# A counter updated without a lock.
REPORTED = ["threads_racy"]


def record(rw, trace, program, *args):
    return Run([rw, "record", "-q", "--parallel", "-o", trace, "--", program, *args])


def replay(rw, trace):
    return Run([rw, "replay", "--autopilot", "--watchdog", "20", trace], timeout=600)


def thread_mode(rw, trace):
    p = subprocess.run([rw, "info", "--json", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return json.loads(p.stdout)["thread_mode"]


def check_exact(rw, progs, work, name):
    outputs = set()
    for i in range(RECORDINGS):
        trace = os.path.join(work, f"{name}-{i}")
        rec = record(rw, trace, os.path.join(progs, name))
        check(rec.status == 0, f"{name}: recording {i + 1} failed\n{rec.describe()}")
        rep = replay(rw, trace)
        check(rep.status == 0 and rep.stdout == rec.stdout,
              f"{name}: recording {i + 1} does not replay byte for byte\n--- recorded\n{rec.describe()}\n"
              f"--- replayed\n{rep.describe()}")
        outputs.add(rec.stdout)
    events = dump_events(rw, trace)
    syncs = [e for e in events if e["kind"] == "sync"]
    check(syncs, f"{name}: rewind dump shows no synchronization events")
    check(all(e["tid"] and e["function"] and e["entry"] for e in syncs),
          f"{name}: a sync event without its thread, function or address")
    check(thread_mode(rw, trace) == "parallel", f"{name}: rewind info does not say the trace is parallel")
    debugged = ""
    if shutil.which("gdb"):
        # Under gdb: stopped where main joins its threads (they run, or
        # sleep in a futex the replay stops for gdb), then to the end, which
        # prints what the recording printed.
        gdb = Run([rw, "replay", "--gdb", shutil.which("gdb"), trace, "--", "-nx", "-batch", "-ex", "break pthread_join",
                   "-ex", "continue", "-ex", "info threads", "-ex", "delete", "-ex", "continue"], timeout=300)
        out = gdb.stdout.decode(errors="replace") + gdb.stderr.decode(errors="replace")
        check(gdb.status == 0 and "Breakpoint 1, " in out and "Target Id" in out.split("Breakpoint 1, ")[1]
              and rec.stdout.decode() in out and "Could not read registers" not in out
              and "diverged" not in out, f"{name}: gdb on the parallel trace\n{gdb.describe()}")
        debugged = ", debugged under gdb to its end"
    return (f"{RECORDINGS} recordings replayed, {len(outputs)} distinct outputs, {len(syncs)} sync events in the last"
            + debugged)


def check_reported(rw, progs, work, name):
    reproduced = reported = 0
    for i in range(RECORDINGS):
        trace = os.path.join(work, f"{name}-{i}")
        rec = record(rw, trace, os.path.join(progs, name))
        check(rec.status == 0, f"{name}: recording {i + 1} failed\n{rec.describe()}")
        rep = replay(rw, trace)
        if rep.status == 0:
            check(rep.stdout == rec.stdout and shell_status(rep.status) == shell_status(rec.status),
                  f"{name}: recording {i + 1} replayed to another output without a report\n--- recorded\n"
                  f"{rec.describe()}\n--- replayed\n{rep.describe()}")
            reproduced += 1
            continue
        text = rep.stderr.decode(errors="replace")
        check(rep.status in (DIVERGENCE, STUCK) and "thread" in text and "event #" in text,
              f"{name}: recording {i + 1}: the replay failed without naming the event and the thread\n"
              f"{rep.describe()}")
        reported += 1
    return f"{reproduced} reproduced, {reported} reported"


def text_input(work):
    path = os.path.join(work, "input.txt")
    return path if os.path.exists(path) else thread_workloads.write_text(path, 4)


def check_real(rw, work, name, argv):
    program = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    if not program:
        raise Skipped(f"{argv[0]} is not installed (scripts/install-deps.sh installs it)")
    args = [a.replace("{input}", text_input(work)) for a in argv[1:]]
    native = Run([program, *args])
    check(native.status == 0, f"{name} fails without rewind\n{native.describe()}")
    trace = os.path.join(work, name)
    reported = 0
    for attempt in range(UNORDERED.get(name, 1)):
        shutil.rmtree(trace, ignore_errors=True)  # (an earlier attempt's)
        rec = record(rw, trace, program, *args)
        check(rec.status == 0 and rec.stdout == native.stdout,
              f"{name}: the recorded run's output differs from a run without rewind\n{rec.describe()}")
        rep = replay(rw, trace)
        text = rep.stderr.decode(errors="replace")
        if (rep.status == 0 or name not in UNORDERED or attempt + 1 == UNORDERED[name]
                or rep.status != DIVERGENCE or "event #" not in text or "thread" not in text):
            break
        reported += 1
    check(rep.status == 0 and rep.stdout == rec.stdout,
          f"{name}: does not replay byte for byte\n--- recorded\n{rec.describe()}\n--- replayed\n{rep.describe()}")
    syncs = sum(1 for e in dump_events(rw, trace) if e["kind"] == "sync")
    debugged = ""
    if name in DEBUGGED and shutil.which("gdb"):
        debug_under_gdb(rw, trace, name, rec.stdout, "parallel")
        debugged = f", break {DEBUGGED[name]} under gdb forwards and backwards"
    # Serialized too (the default): xz's workers block every signal, which
    # no hardware breakpoint's SIGTRAP gets through.
    serial = os.path.join(work, name + "-serialized")
    srec = Run([rw, "record", "-q", "-o", serial, "--", program, *args])
    check(srec.status == 0 and srec.stdout == native.stdout,
          f"{name}: the serialized recording's output differs from a run without rewind\n{srec.describe()}")
    srep = replay(rw, serial)
    check(srep.status == 0 and srep.stdout == srec.stdout,
          f"{name}: the serialized recording does not replay byte for byte\n{srep.describe()}")
    if name in DEBUGGED and shutil.which("gdb"):
        debug_under_gdb(rw, serial, name, srec.stdout, "serialized")
    divergences = f" (after {reported} recording(s) whose replay reported a divergence)" if reported else ""
    return f"{len(rec.stdout)} bytes of output replayed{divergences}, {syncs} sync events{debugged}; serialized too"


def debug_under_gdb(rw, trace, name, recorded_stdout, mode):
    gdb = Run([rw, "replay", "--gdb", shutil.which("gdb"), trace, "--", "-nx", "-batch",
               "-ex", "set breakpoint pending on", "-ex", f"break {DEBUGGED[name]}", "-ex", "ignore 1 40",
               "-ex", "continue", "-ex", "continue", "-ex", "reverse-continue", "-ex", "delete", "-ex", "continue"],
              timeout=300)
    out = gdb.stdout.decode(errors="replace") + gdb.stderr.decode(errors="replace")
    # The program's output is in gdb's (text programs: compared there).
    text = recorded_stdout.decode(errors="replace")
    output_seen = text in out if text.isprintable() or text.endswith("\n") and text[:-1].isprintable() else True
    said = "".join(line for line in out.splitlines(keepends=True) if not line.startswith("rewind: note: "))
    passed = (gdb.status == 0 and out.count("Breakpoint 1, ") == 3 and output_seen
              and "diverged" not in out and "Remote connection closed" not in out and "rewind:" not in said)
    check(passed, f"{name}: gdb with `break {DEBUGGED[name]}` on the {mode} trace\n{gdb.describe()}")


def check_watch_in_stretch(rw, work):
    """rewind watch on a parallel trace, where the change is made by a
    worker's code just before one of its synchronization calls: the
    worker and the line are named, not the thread the debugger stood in
    (check_exact made the threads_many traces)."""
    trace = os.path.join(work, "threads_many-0")
    events = dump_events(rw, trace)
    main_tid = next(e["tid"] for e in events if e["kind"] == "exec")
    r, j = rewind_watch(rw, trace, "total > 7000")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(j["function"] == "work" and "total +=" in j["source"] and j["thread"] != main_tid
          and j["changed_by"] == "instruction", f"not a worker's addition: {j}")
    return f"thread {j['thread']} at line {j['line']}, {j['probes']} probes"


LIMIT = "threads recorded in parallel (record --parallel): replay orders them only at libc synchronization calls"


def check_limit_said(rw, progs, work):
    """What a parallel replay cannot promise (a race that never reaches a
    syscall replays with values the recording never had, unnoticed) is said
    where it matters: by rewind info, at the start of a gdb session, in
    rewind watch's report; and not for a serialized trace."""
    program = os.path.join(progs, "threads_many")
    traces = {}
    for mode in ("parallel", "serialized"):
        traces[mode] = os.path.join(work, f"limit-{mode}")
        flags = ["--parallel"] if mode == "parallel" else []
        rec = Run([rw, "record", "-q", *flags, "-o", traces[mode], "--", program])
        check(rec.status == 0, f"recording threads_many {mode}\n{rec.describe()}")
    for mode, trace in traces.items():
        expected = mode == "parallel"
        info = Run([rw, "info", trace])
        check(info.status == 0 and (LIMIT.encode() in info.stdout) == expected,
              f"rewind info on the {mode} trace\n{info.describe()}")
        info_json = json.loads(Run([rw, "info", "--json", trace]).stdout)
        check(("replay_limit" in info_json) == expected, f"rewind info --json on the {mode} trace: {info_json}")
        gdb = Run([rw, "replay", "--gdb", shutil.which("gdb"), trace, "--", "-nx", "-batch", "-ex", "continue"],
                  timeout=300)
        out = gdb.stdout + gdb.stderr
        check(gdb.status == 0 and (out.count(LIMIT.encode()) == 1) == expected and
              (LIMIT.encode() in out) == expected, f"a gdb session on the {mode} trace\n{gdb.describe()}")
        watch = Run([rw, "watch", trace, "total > 7000"], timeout=900)
        check(watch.status == 0 and (b"note: " + LIMIT.encode() in watch.stdout) == expected,
              f"rewind watch on the {mode} trace\n{watch.describe()}")
        r, j = rewind_watch(rw, trace, "total > 7000")
        check(r.status == 0 and ("replay_limit" in j) == expected, f"rewind watch --json on the {mode} trace: {j}")
    return "said by info, gdb sessions and watch for the parallel trace only"


# Pipelines of single-threaded processes: nothing is unordered in them, so
# every recording must replay byte for byte. sort's SIGPIPE handler raises
# the signal again, which is delivered right after a return probe's
# trampoline (a syscall of the kernel's, not in the trace); tar starts gzip
# through fork, and a child that runs before its probes are in makes calls
# the trace would miss; bash waits for background jobs (SIGCHLD). With
# signals held only 1 ms, the recorder often stops a thread for its held
# SIGPIPE while it still sits in that trampoline, a page replay lacks.
SORT_HEAD = "seq 1 300000 | sort | uniq -c | sort -rn | head -3"
PIPELINES = [("sort | head", SORT_HEAD, []),
             ("sort | head, signals held 1 ms", SORT_HEAD, ["--signal-delay-ms", "1"]),
             ("tar | gzip", "tar czf - {dir} | gzip -dc | tar tvf - | wc -l", []),
             ("background jobs", "for i in 1 2 3; do echo $i & done; wait; echo done", [])]


def check_pipelines(rw, work):
    tree = os.path.join(work, "tree")
    os.makedirs(tree, exist_ok=True)
    for i in range(20):
        with open(os.path.join(tree, f"f{i}.txt"), "w") as f:
            f.write(f"file {i}\n" * 200)
    done = []
    for name, script, options in PIPELINES:
        script = script.replace("{dir}", tree)
        for attempt in range(3):
            trace = os.path.join(work, "pipeline")
            shutil.rmtree(trace, ignore_errors=True)
            rec = Run([rw, "record", "-q", "--parallel", *options, "-o", trace, "--", "bash", "-c", script], cwd=work)
            check(rec.status == 0, f"{name}: recording\n{rec.describe()}")
            rep = replay(rw, trace)
            check(rep.status == 0 and rep.stdout == rec.stdout,
                  f"{name}, recording {attempt + 1}: does not replay byte for byte\n--- recorded\n"
                  f"{rec.describe()}\n--- replayed\n{rep.describe()}")
        done.append(name)
    return f"{', '.join(done)}: 3 recordings each replayed byte for byte"


def check_many_processes(rw, work):
    """Each process's probes are detached when it ends: 60 processes under a
    limit of 64 descriptors (two probe links each, once kept to the end)."""
    trace = os.path.join(work, "many-processes")
    script = "for i in $(seq 60); do /bin/echo $i; done"
    expected = "".join(f"{i}\n" for i in range(1, 61)).encode()

    def few_descriptors():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    p = subprocess.run([rw, "record", "-q", "--parallel", "-o", trace, "--", "bash", "-c", script],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=few_descriptors, timeout=300)
    check(p.returncode == 0 and p.stdout == expected, f"recording 60 processes: status {p.returncode}\n"
          f"{p.stderr.decode(errors='replace')}")
    info = json.loads(subprocess.run([rw, "info", "--json", trace], stdout=subprocess.PIPE).stdout)
    check(info["complete"], f"the recording of 60 processes is incomplete: {info.get('problems')}")
    r = replay(rw, trace)
    check(r.status == 0 and r.stdout == expected, f"replay of 60 processes\n{r.describe()}")
    return f"{info['events']} events, complete, replayed"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)
    rw, progs = args.rewind, args.programs
    checks = [(name, lambda name=name: check_exact(rw, progs, work, name)) for name in EXACT]
    checks += [(name, lambda name=name: check_reported(rw, progs, work, name)) for name in REPORTED]
    checks += [(name, lambda name=name, argv=argv: check_real(rw, work, name, argv)) for name, argv in REAL]
    checks.append(("watch in a stretch", lambda: check_watch_in_stretch(rw, work)))
    checks.append(("replay limit said", lambda: check_limit_said(rw, progs, work)))
    checks.append(("60 processes, 64 descriptors", lambda: check_many_processes(rw, work)))
    checks.append(("pipelines of processes", lambda: check_pipelines(rw, work)))
    # pbzip2's order violation recorded in parallel: rewind watch names the
    # thread and line that freed the mutex another thread then used.
    checks.append(("order violation",
                   lambda: check_threads.check_order_violation(rw, progs, work, "--parallel")))
    return run_checks(checks, args.only)


if __name__ == "__main__":
    sys.exit(main())
