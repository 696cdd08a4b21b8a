#!/usr/bin/env python3
"""Side-by-side timings of rewind against native runs, written to
docs/benchmarks.md. Speed is only compared as ratios measured in one run on
one machine: absolute times on our VMs mean little (traps are slow there).

  bench/compare.py REWIND BUILD_DIR [--section NAME ...] [--runs N]
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_queries  # noqa: E402
import compare_watch  # noqa: E402
import watch_shapes  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "programs"))
import thread_workloads  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "benchmarks.md")


def wall(argv, env=None, timeout=None):
    start = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=timeout)
    return time.perf_counter() - start, p.returncode


def median_pair(native, recorded, runs, env):
    """Alternates the two commands so both see the same machine conditions."""
    a, b = [], []
    for _ in range(runs):
        a.append(wall(native, env)[0])
        b.append(wall(recorded, env)[0])
    return statistics.median(a), statistics.median(b)


class Context:
    def __init__(self, rewind, build, runs):
        self.rewind = os.path.abspath(rewind)
        self.build = os.path.abspath(build)
        self.runs = runs
        self.tmp = tempfile.mkdtemp(prefix="rewind-bench-")
        self.env = dict(os.environ, REWIND_DIR=os.path.join(self.tmp, "traces"))
        self.rows = []

    def record(self, argv, flags=()):
        return [self.rewind, "record", "-q", *flags, "--"] + argv

    def info(self):
        p = subprocess.run([self.rewind, "info", "--json"], env=self.env, stdout=subprocess.PIPE, check=True)
        return json.loads(p.stdout)

    def file_numbers(self, count):
        """The numbers 1..count, shuffled the same way every time, one a line."""
        path = os.path.join(self.tmp, f"numbers-{count}.txt")
        if not os.path.exists(path):
            numbers, x = list(range(1, count + 1)), 12345
            for i in range(count - 1, 0, -1):
                x = (x * 1103515245 + 12345) & 0x7FFFFFFF
                j = x % (i + 1)
                numbers[i], numbers[j] = numbers[j], numbers[i]
            with open(path, "w") as f:
                f.write("".join(f"{n}\n" for n in numbers))
        return path

    def file(self, name, size, compressible=True):
        path = os.path.join(self.tmp, name)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                words = [b"alpha", b"beta", b"gamma", b"delta", b"rewind", b"trace", b"\n"]
                x = 12345
                out = bytearray()
                while len(out) < size:
                    x = (x * 1103515245 + 12345) & 0x7FFFFFFF
                    out += words[x % len(words)] if compressible else x.to_bytes(4, "little")
                f.write(out[:size])
        return path


def section_record(ctx):
    """Recorder overhead: issue #2's goals are <= 1.05 (compute) and <= 1.5 (syscalls)."""
    rows = []
    compute = os.path.join(ctx.build, "bench", "bench_compute")
    syscalls = os.path.join(ctx.build, "bench", "bench_syscalls")
    small = ctx.file("small.bin", 4096, compressible=False)
    gz_in = ctx.file("gzip-input.txt", 8 << 20)
    cases = [
        ("startup: `true`", ["true"], None, ()),
        ("startup: `true`, `--parallel` (probes on libc's synchronization calls)", ["true"], None, ("--parallel",)),
        ("(a) compute-bound loop, 3e9 xorshift steps", [compute, "3000000000"], "1.05", ()),
        ("(b) 1,000,000 getppid()", [syscalls, "1000000"], "1.5", ()),
        ("(b') 1,000,000 pread() of 64 bytes", [syscalls, "1000000", small], "1.5", ()),
        ("(b'') 20,000 waitpid(WNOHANG), no child (a ptrace stop each)", [syscalls, "20000", "--wait"], None, ()),
        ("(c) gzip -c of 8 MiB of text", ["gzip", "-c", gz_in], None, ()),
        ("(d) find /usr/lib /usr/share", ["find", "/usr/lib", "/usr/share"], "1.5", ()),
        ("(e) du -s /usr", ["du", "-s", "/usr"], "1.5", ()),
    ]
    for name, argv, goal, flags in cases:
        native, recorded = median_pair(argv, ctx.record(argv, flags), ctx.runs, ctx.env)
        info = ctx.info()
        per_event = info["stream_bytes"] / max(info["events"], 1)
        rows.append([name, f"{native:.3f}", f"{recorded:.3f}", f"{recorded / native:.2f}",
                     goal or "", f"{info['events']:,}", f"{per_event:.1f}"])
    table = md_table(["workload", "native s", "recorded s", "ratio", "goal", "events", "trace bytes/event"], rows)

    # gdb's own recorder, for scale: a tiny run of (a), cut off after 120 s.
    n = "200000"
    native, _ = wall([compute, n])
    try:
        gdb_t, _ = wall(["gdb", "-batch", "-nx", "-ex", "break main", "-ex", "run", "-ex", "record full",
                         "-ex", "continue", "--args", compute, n], timeout=120)
        gdb_cell = f"{gdb_t:.1f} s"
    except subprocess.TimeoutExpired:
        gdb_cell = "> 120 s (cut off)"
    rec_t, _ = wall(ctx.record([compute, n]), ctx.env)
    gdb_table = md_table(["(a) with 200,000 steps", "time"],
                         [["native", f"{native:.4f} s"], ["rewind record", f"{rec_t:.3f} s"],
                          ["gdb `record full`", gdb_cell]])
    return ("Recording overhead", table + "\n\n" + gdb_table + "\n\n" + RECORD_NOTES)


RECORD_NOTES = """\
What the numbers mean:

- *startup* is a fixed cost per recording: parsing the kernel's BTF
  (about 17 ms), loading and verifying the eBPF program (about 20 ms of
  kernel verifier time on the machine of 2026-11-26; 0.22 s before its loop
  state moved out of the verifier's sight, see architecture.md; on a later
  kernel, 0.17 s more until the capture program stopped walking pointers
  from the current task: the verifier searched the kernel's types by name,
  one by one, for each pointer it saw loaded from a trusted task, in each
  state (btf_nested_type_is_trusted), 35 % of a recording of `true`; reads
  with BPF_CORE_READ take it to 0.12 s), allocating the 64 MiB ring
  buffer (about 14 ms; mapping it, 10 ms more, overlaps the program's
  start), copying the program's mapped files into the trace; with
  `--parallel`, also attaching the synchronization probes (about 14 ms;
  detaching them, 30 to 45 ms, is left to a process of its own). Ratios
  for short runs are dominated by it; (a) runs long enough to show the
  steady state. Side by side on 2026-11-26, 25 runs each (medians), the
  start-up of `true` went from 0.147 to 0.121 s, and from 0.249 to 0.152 s
  with `--parallel` (architecture.md); between runs of this table it
  varies by a fifth.
- Syscall-heavy work pays, per syscall, for the attached `sys_exit`
  tracepoint (about 120 ns here, paid by every process on the machine while
  a recording runs) plus the capture program and its ring-buffer write
  (about 150 ns). `getppid` costs ~170 ns natively, so it is the worst case
  there is; a syscall that does real work amortises the fixed cost.
- (b') reads one 4 KiB file over and over: once it has read it twice
  over by content (and the recorder has seen that), its reads are
  recorded by reference to the trace's copy of the file (983,970 of the
  million here) (architecture.md, "Reads of files by reference"; 2.87 with
  3.1 trace bytes per event before, on 2026-11-26).
- `gdb record full` single-steps every instruction in gdb; it is shown for
  scale, on a run 15,000 times shorter than (a).
"""


def section_replay(ctx):
    """Replay speed: issue #3's goal is <= 1.5 for compute-bound work."""
    compute = os.path.join(ctx.build, "bench", "bench_compute")
    syscalls = os.path.join(ctx.build, "bench", "bench_syscalls")
    gz_in = ctx.file("gzip-input.txt", 8 << 20)
    unpinned = dict(ctx.env, REWIND_REPLAY_CPU="any")
    ptrace_only = dict(ctx.env, REWIND_NOTIFY_SYSCALLS="0")
    no_agent = dict(ctx.env, REWIND_SYSCALL_AGENT="0")
    repo = git_repository(ctx, 2000)
    cases = [
        ("(a) compute-bound loop, 3e9 xorshift steps", [compute, "3000000000"], "1.5", ctx.env),
        ("(b) 100,000 getppid()", [syscalls, "100000"], "", ctx.env),
        ("(b) the same, notifications alone (REWIND_SYSCALL_AGENT=0)", [syscalls, "100000"], "", no_agent),
        ("(b) the same, a ptrace stop at every call (REWIND_NOTIFY_SYSCALLS=0)", [syscalls, "100000"], "",
         ptrace_only),
        ("(b) the same, replay not pinned to one CPU (REWIND_REPLAY_CPU=any)", [syscalls, "100000"], "", unpinned),
        ("(b) 1,000,000 getppid()", [syscalls, "1000000"], "3", ctx.env),
        ("(c) gzip -c of 8 MiB of text", ["gzip", "-c", gz_in], "", ctx.env),
        ("(d) find /usr/lib /usr/share", ["find", "/usr/lib", "/usr/share"], "1.3", ctx.env),
        ("(d) the same, notifications alone", ["find", "/usr/lib", "/usr/share"], "", no_agent),
        ("(e) du -s /usr", ["du", "-s", "/usr"], "1.3", ctx.env),
        ("(e) the same, notifications alone", ["du", "-s", "/usr"], "", no_agent),
        ("(f) git status, 2,000 files", ["git", "-C", repo, "status", "--porcelain"], "1.3", ctx.env),
        ("(f) the same, notifications alone", ["git", "-C", repo, "status", "--porcelain"], "", no_agent),
        ("(g) dd of libc in 64-byte blocks", ["dd", "if=/usr/lib/x86_64-linux-gnu/libc.so.6", "of=/dev/null",
                                               "bs=64"], "", ctx.env),
        ("(g) the same, notifications alone", ["dd", "if=/usr/lib/x86_64-linux-gnu/libc.so.6", "of=/dev/null",
                                               "bs=64"], "", no_agent),
    ]
    rows = []
    recorded_argv = None
    for name, argv, goal, env in cases:
        trace = os.path.join(ctx.tmp, "replay-trace")
        if argv != recorded_argv:  # ("the same" rows replay the trace just made)
            shutil.rmtree(trace, ignore_errors=True)
            subprocess.run([ctx.rewind, "record", "-q", "-o", trace, "--"] + argv, env=ctx.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            recorded_argv = argv
        native, replayed = median_pair(argv, [ctx.rewind, "replay", "--autopilot", "-q", trace], ctx.runs, env)
        events = json.loads(subprocess.run([ctx.rewind, "info", "--json", trace], env=ctx.env,
                                           stdout=subprocess.PIPE).stdout)["events"]
        per_event = (replayed - native) / max(events, 1) * 1e6
        # (Replay can come out faster than the native run by the noise of one run.)
        rows.append([name, f"{native:.3f}", f"{replayed:.3f}", f"{replayed / native:.2f}", goal,
                     f"{events:,}", f"{per_event:.0f}" if per_event >= 0 else "~0 (within noise)"])
    return ("Replay speed", md_table(["workload", "native s", "replay s", "ratio", "goal", "events",
                                      "µs per event"], rows) + "\n\n" + REPLAY_NOTES)


def git_repository(ctx, files):
    """A git repository of `files` small committed files, one changed."""
    repo = os.path.join(ctx.tmp, f"repo-{files}")
    if not os.path.exists(repo):
        os.makedirs(repo)
        for i in range(files):
            d = os.path.join(repo, f"d{i % 40}")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"f{i}.c"), "w") as f:
                f.write(f"int f{i}(void) {{ return {i}; }}\n")
        git = ["git", "-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        subprocess.run(git[:3] + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "."], check=True)
        subprocess.run(git + ["commit", "-q", "-m", "files"], check=True)
        with open(os.path.join(repo, "d0", "f0.c"), "a") as f:
            f.write("/* changed */\n")
    return repo


REPLAY_NOTES = """\
Replay runs the program's own code natively; every recorded event costs a
round trip to the tracer (a syscall served from the log, an rdtsc, a
signal), which is what the last column measures (it includes replay's fixed start-up: a mount
namespace, staging the program's binary, the first exec). Compute-bound work
replays at native speed; syscall-heavy work is bound by ptrace round trips,
which are slow on our VMs. Replay without a debugger runs on one CPU
(replay/engine/cpu_pin.cpp): across two CPUs every stop and resume is a cross-CPU
wake-up, a VM exit in a guest; the unpinned row shows what that costs.
On one CPU the replay's own thread traps rdtsc as the program does
(userspace/process/own_tsc_trap.h), so switching between them writes no CR4 (an
exit to the hypervisor in a guest at every switch); with it, a stop waits
in one `wait4` and writes a call's bytes with one `process_vm_writev`.
Side by side with the build before those changes (medians of 3), (b)
replays in 1.63 s against 4.06 s pinned; unpinned (the tracer does not
trap rdtsc there) in 13.6 s against 12.7 s, a figure that varies from 12
to 40 s between runs of either build. A thread's runs of syscalls are
answered through seccomp user notifications instead of a ptrace stop
each (architecture.md, "Runs of syscalls served by seccomp
notification"); the row with REWIND_NOTIFY_SYSCALLS=0 shows the ptrace
path alone. The kernel wakes the thread waiting for an answer on the
CPU that answers (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), so served runs
cost about the same pinned or not (the first and the last (b) row; 16.6 s
unpinned with a ptrace stop per call on 2026-11-26). Without a debugger
nothing but its next call can stop a thread in a run, and the tracer
waits in the listener's receive itself rather than in `epoll_wait`
(architecture.md): `replay --autopilot` of `bench_watch_syscall_loop 8`
(640,000 write and read events), side by side with the build before,
medians of 3, 5.49 → 5.07 s (epoll_wait instead of a `ppoll` per call
before that: 5.78 → 5.54 s).

Most of those calls are now answered inside the program by its syscall
agent (architecture.md, "Runs of syscalls answered inside the
program"): no trap, no context switch, a memory copy of the recorded
output. The rows "notifications alone" replay the same trace with
REWIND_SYSCALL_AGENT=0, which is what every row of (b), (d) and (e) cost
before it. What is left is the replayer's own reading of the trace: in
a profile of (d), decoding the events (zstd, the event decoder and its
allocations) and keeping the event queue take about half of the replay's
samples, the program itself a quarter; the reader runs on the one CPU
the replay is pinned to, in turn with the program. (f) is short enough
natively (a few ms) that the replay's fixed start-up (a mount namespace,
staging the binaries, the first exec: about 30 ms) is most of it."""


def section_reading(ctx):
    """What it costs to start on a long trace: the commands that read every
    event before they replay anything."""
    syscalls = os.path.join(ctx.build, "bench", "bench_syscalls")
    data = ctx.file("pread-input.txt", 4096)
    trace = os.path.join(ctx.tmp, "reading-trace")
    shutil.rmtree(trace, ignore_errors=True)
    subprocess.run([ctx.rewind, "record", "-q", "-o", trace, "--", syscalls, "500000", data], env=ctx.env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events = json.loads(subprocess.run([ctx.rewind, "info", "--json", trace], env=ctx.env,
                                       stdout=subprocess.PIPE).stdout)["events"]
    cases = [("`rewind ps` (the process tree)", [ctx.rewind, "ps", trace]),
             ("`rewind watch TRACE 'a +'` (gdb's sysroot, then the syntax error)",
              [ctx.rewind, "watch", trace, "a +"])]
    rows = []
    for name, argv in cases:
        seconds = statistics.median(wall(argv, ctx.env)[0] for _ in range(max(ctx.runs, 3)))
        rows.append([name, f"{seconds:.2f}"])
    return ("Reading a trace", f"A trace of {events:,} events: `bench_syscalls 500000` preads 64 bytes of one "
            "4 KiB file, so nearly every read is recorded by reference to the trace's copy of it.\n\n" +
            md_table(["command", "s (median)"], rows) + "\n\n" + READING_NOTES)


READING_NOTES = """\
Both read every event once: the process tree (who ran what, for `ps`,
`--pid`, `--exec` and every `rewind watch`) and the index of the trace's
file copies behind gdb's sysroot. They read events as stored: the bytes
of a read recorded by reference are not read back from the copy. Side by
side with the build before that (3 runs each, alternating), `rewind ps`
took 0.30, 0.30 and 0.31 s, and `rewind watch` up to its syntax check
0.38, 0.38 and 0.41 s."""


def record_replay_medians(ctx, argv, trace):
    """Medians of the native run, the recording (into `trace`) and its
    --autopilot replay, ctx.runs of each, alternating."""
    natives, records, replays = [], [], []
    for _ in range(ctx.runs):
        shutil.rmtree(trace, ignore_errors=True)
        natives.append(wall(argv, ctx.env)[0])
        records.append(wall([ctx.rewind, "record", "-q", "-o", trace, "--"] + argv, ctx.env)[0])
        replays.append(wall([ctx.rewind, "replay", "--autopilot", "-q", trace], ctx.env)[0])
    return tuple(statistics.median(v) for v in (natives, records, replays))


def section_threads(ctx):
    """Multithreaded programs: threads of a process run one at a time while recording."""
    prog = os.path.join(ctx.build, "bench", "bench_threads")
    cases = [("4 threads, lock-heavy (2,000,000 mutex rounds each)", [prog, "lock", "2000000"]),
             ("4 threads, compute-bound (3e8 xorshift steps each)", [prog, "compute", "300000000"]),
             ("8 threads, syscall-heavy (200,000 reads of 4 KiB of a file each)", [prog, "reads", "200000"])]
    rows = []
    for name, argv in cases:
        trace = os.path.join(ctx.tmp, "threads-trace")
        native, record, replay = record_replay_medians(ctx, argv, trace)
        info = json.loads(subprocess.run([ctx.rewind, "info", "--json", trace], env=ctx.env,
                                         stdout=subprocess.PIPE).stdout)
        rows.append([name, f"{native:.3f}", f"{record:.3f}", f"{record / native:.2f}", f"{replay:.3f}",
                     f"{replay / native:.2f}", f"{info['events']:,}"])
    return ("Threads", md_table(["workload", "native s", "record s", "record ÷ native", "replay s",
                                 "replay ÷ native", "events"], rows) + "\n\n" + THREADS_NOTES)


THREADS_NOTES = """\
While recording, the threads of a process take turns on one CPU (as under
rr): a thread gives the CPU up at a syscall that may block and is preempted
only when it spins. Calls that never block (the reads of a regular file in
the syscall-heavy row) run without a ptrace stop: the kernel side logs them
in order, and a thread past its time slice hands the CPU over at the exit
of one. Replay serves each read with a ptrace stop. Compute-bound threads therefore run one after another:
with two CPUs here, record ÷ native is close to 2 (4 on a machine with four
or more CPUs). Lock-heavy code becomes uncontended (a thread keeps the lock
for its whole turn), so it makes fewer futex calls than natively. Replay
runs one thread at a time too."""


def section_threads_parallel(ctx):
    """Multithreaded programs recorded with --parallel, beside today's
    serialized recording of the same run."""
    prog = os.path.join(ctx.build, "bench", "bench_threads")
    text = thread_workloads.write_text(os.path.join(ctx.tmp, "words-50mb.txt"), 50)
    cases = [("4 threads, compute-bound (3e8 xorshift steps each)", [prog, "compute", "300000000"], False),
             ("8 threads, syscall-heavy (200,000 reads of 4 KiB of a file each)", [prog, "reads", "200000"], True),
             ("4 threads, mutex-heavy (10,000 mutex rounds each)", [prog, "lock", "10000"], True),
             ("pigz -p 2, 50 MB of text", ["pigz", "-p", "2", "-c", text], True),
             ("xz -T2 -1, 50 MB of text", ["xz", "-T2", "-1", "-c", text], True),
             ("python3, 4 threads hashing under a lock", thread_workloads.python_threads(200000, 100), True)]
    rows = []
    for name, argv, replayed in cases:
        trace = os.path.join(ctx.tmp, "parallel-trace")
        natives, serials, parallels, replays = [], [], [], []
        for _ in range(ctx.runs):
            shutil.rmtree(trace, ignore_errors=True)
            natives.append(wall(argv, ctx.env)[0])
            serials.append(wall([ctx.rewind, "record", "-q", "-o", trace, "--"] + argv, ctx.env)[0])
            shutil.rmtree(trace, ignore_errors=True)
            parallels.append(wall([ctx.rewind, "record", "-q", "--parallel", "-o", trace, "--"] + argv, ctx.env)[0])
            if replayed:
                replays.append(wall([ctx.rewind, "replay", "--autopilot", "-q", trace], ctx.env)[0])
        info = json.loads(subprocess.run([ctx.rewind, "info", "--json", trace], env=ctx.env,
                                         stdout=subprocess.PIPE).stdout)
        native, serial, parallel = (statistics.median(v) for v in (natives, serials, parallels))
        replay = f"{statistics.median(replays) / native:.1f}" if replays else "not measured"
        rows.append([name, f"{native:.3f}", f"{serial / native:.2f}", f"{parallel / native:.2f}", replay,
                     f"{info['events']:,}"])
    return ("Threads, parallel recording", md_table(["workload", "native s", "serialized record ÷ native",
                                                      "--parallel record ÷ native", "--parallel replay ÷ native",
                                                      "events (--parallel)"], rows) + "\n\n" + PARALLEL_NOTES)


PARALLEL_NOTES = """\
`rewind record --parallel` lets the threads run on every CPU and orders
only libc's synchronization calls: two multi-uprobe links per recorded
process (entry and return of each call), each hit a trap into the kernel.
Compute-bound threads no longer take turns. The read-heavy row reads one
file over and over: once the trace holds a copy of it, its reads are
recorded by reference (architecture.md, "Reads of files by reference").
Each lock and unlock costs two uprobe traps
while recording (slow on a VM), and replay runs every synchronization call
of every thread one at a time, with two int3 stops (entry and return) per
call.

The goals were record ÷ native ≤ 1.1 for the compute-bound row and ≤ 3 for
the read-heavy one; the table says where they stand.

- Compute-bound: what remains above native is mostly a fixed cost, so it
  weighs more on a short run. With 3e9 steps instead of 3e8 (native
  11.54–11.73 s) the recording took 11.94–12.20 s (1.03–1.06). The fixed
  cost was cut on 2026-11-26, side by side, three runs each:

  | | native | before | after |
  |---|---|---|---|
  | `record -- /bin/true` | | 0.31–0.36 s | 0.12–0.19 s |
  | `record --parallel -- /bin/true` | | 0.35–0.48 s | 0.21–0.24 s |
  | `record --parallel`, 4 threads × 3e8 steps | 1.15–1.17 s | 1.52–1.61 s (1.32–1.38) | 1.38–1.50 s (1.19–1.29) |

  (the kernel's verifier took 0.22 s on the `sys_exit` program until its
  loop state moved out of its sight: architecture.md, "Sizes and costs").
  Later the same day, side by side, seven runs each (medians), 4 threads ×
  3e8 steps with `--parallel`: 1.418 s before, 1.295 s after (1.20 and
  1.10 of native 1.177 s). The supervisor's first wait slept 20 ms (the
  program's first stop raised its SIGCHLD before the signal was blocked);
  libc's symbols were read through a stream iterator (10 ms, now 1); the
  ring is mapped (10 ms) while the program starts; and the kernel's grace
  periods for closing the probe links (30 to 45 ms) are waited for by a
  process of their own (architecture.md). What is left is parsing the
  kernel's BTF (about 17 ms), allocating the ring (14 ms), the verifier
  (about 20 ms) and attaching the probes (about 14 ms, most of it a
  kernel grace period).
- Read-heavy: 6.5 GB pass through one ring buffer and one consumer thread,
  which decodes, orders, encodes and compresses them on a machine whose
  second CPU the eight reading threads share. Producers forcing a wake-up
  at every record once 8 MiB were pending cost a quarter of the threads'
  time (an interrupt through the APIC, a VM exit here) until wake-ups were
  limited to one a millisecond; outputs are no longer hashed (a seventh of
  the consumer's samples). The same day, half of these recordings ended
  incomplete: a thread preempted inside the kernel side's program between
  taking its seq and writing its record arrived up to 2,800 events late,
  beyond the recorder's 1,024-event window, which now holds up to 65,536
  events or 64 MiB. That window then always held 64 MiB of events, each
  going through a multimap and coming back out of cache; it now writes an
  event at once when its seq is the next, and holds only events behind a
  gap. Chunks of 1 KiB or more are read from the program straight into
  the ring (they were copied twice in the kernel). Side by side, four
  runs each (medians, native 0.86 to 0.90 s): 6.21 s, then 5.08 s with
  the window, then 4.87 s. On 2026-11-27 reads of a file the trace holds
  became references to its copy (the program reads its own executable,
  copied at exec, so from its first reads on): the 6.5 GB no longer pass
  through the ring, and the trace is 8 MB. Runs beside native ones, the
  same morning: 3.68 to 6.20 s before (three runs, native 0.54 to 0.98 s),
  1.87 to 2.32 s after (three runs, native 0.68 to 0.87 s); then the kernel side's look at the file became
  typed loads instead of a probe read per field (it had been a fifth of
  all samples, a twentieth after): five runs, native 0.49 to 0.70 s,
  recorded 1.31 to 1.78 s. What is left is per event: 1.6 million
  syscall records through one consumer.
- Serialized read-heavy recording: the main thread waits in
  `pthread_join` for the whole run, and every event after its place waited
  in the recorder's memory until it returned. Past 256 MiB held events now
  wait in an unlinked file of the trace directory, compressed
  (architecture.md). Side by side on 2026-11-26, two runs each of this
  row's program: 33.7–35.7 s and 7.0–7.4 GB of memory before, 8.4–8.6 s
  and 466–474 MB after.
- Mutex-heavy code pays a trap per probe hit (about 15 µs here) and, in
  replay, about 55 µs per event of a synchronization call (its entry and
  its return each stop at an int3).
- Replay got faster on 2026-11-26: its tracer thread traps rdtsc like
  the program (no CR4 write at each switch between them, an exit to the
  hypervisor here), waits for a stop with one `wait4`, and writes
  breakpoint bytes through a `/proc/PID/mem` file it keeps open instead of
  opening one per byte (architecture.md, "Replay"). Side by side with the
  build before, two runs each: a 4-thread mutex-heavy trace (20,000
  rounds each, 181,397 events) 23.8 s before, 9.7 s after; 8 threads ×
  20,000 reads 9.8 s before, 3.5 s after.

Real programs: xz's workers block every signal; until the recorder
stopped probing such threads with a hardware breakpoint whose SIGTRAP
never arrives (it trapped at every execution instead), serialized xz -T2
took over 100 times its native time. Replay of the parallel pigz and xz
traces runs each thread's compression in turn (the two threads' work one
after the other) and stops at every synchronization call. Python's
threads take and release the interpreter's lock (a condition variable and
a mutex) many times a second, so that row pays per call, as the
mutex-heavy one does."""


def section_codec(ctx):
    """Google Benchmark results for the trace format."""
    exe = os.path.join(ctx.build, "bench", "trace_codec_bench")
    p = subprocess.run([exe, "--benchmark_format=json"], stdout=subprocess.PIPE, check=True)
    data = json.loads(p.stdout)
    rows = []
    for b in data["benchmarks"]:
        rows.append([b["name"], f"{b['items_per_second'] / 1e6:.2f} M events/s",
                     f"{b['bytes_per_second'] / 2**30:.2f} GiB/s",
                     f"{b.get('compressed_ratio', 0):.3f}" if "compressed_ratio" in b else ""])
    return ("Trace format throughput", md_table(["benchmark", "events", "raw bytes", "compressed/raw"], rows) +
            "\n\nEvents are a typical mix (two small syscalls, then a 4 KiB read). Stream write+read includes "
            "zstd (level 1 and 3) and the xxh64 chunk checksums.")


def gdb_timings(ctx, trace, commands):
    """Runs gdb on a replay; commands tagged ("time", label, cmd) are timed."""
    script = ["python import time"]
    for c in commands:
        if isinstance(c, tuple):
            _, label, cmd = c
            script += ["python t0 = time.perf_counter()", cmd,
                       f"python print('TIMING {label}', time.perf_counter() - t0)"]
        else:
            script.append(c)
    path = os.path.join(ctx.tmp, "bench.gdb")
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    p = subprocess.run([ctx.rewind, "replay", "-q", trace, "--", "-nx", "-batch", "-x", path], env=ctx.env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=3600)
    out = p.stdout.decode(errors="replace")
    times = {m.group(1): float(m.group(2)) for m in re.finditer(r"^TIMING (\S+) ([0-9.e-]+)$", out, re.M)}
    if len(times) != sum(isinstance(c, tuple) for c in commands):
        raise RuntimeError(f"gdb session failed:\n{out}")
    return times


def section_debug(ctx):
    """Reverse execution and snapshots: issue #4's goals."""
    phases = os.path.join(ctx.build, "bench", "bench_phases")
    n = "600000000"  # about one second of computation here
    native, _ = wall([phases, n])
    trace = os.path.join(ctx.tmp, "phases-trace")
    shutil.rmtree(trace, ignore_errors=True)
    subprocess.run([ctx.rewind, "record", "-q", "-o", trace, "--", phases, n], env=ctx.env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    rows = []
    for _ in range(ctx.runs):
        t = gdb_timings(ctx, trace, [
            "watch phase", "continue",                     # phase = 1, before the computation
            ("time", "forward", "continue"),              # phase = 2: across the computation
            ("time", "reverse-write", "reverse-continue"),  # to just before the write of 2
            ("time", "reverse", "reverse-continue"),      # back across the computation to phase = 1
        ])
        rows.append((t["forward"], t["reverse"], t["reverse-write"]))
    fwd = statistics.median(r[0] for r in rows)
    rev = statistics.median(r[1] for r in rows)
    rev_write = statistics.median(r[2] for r in rows)
    table = md_table(["one second of computation between two writes of a watched global", "s", "÷ forward",
                      "goal"],
                     [["native run of the program", f"{native:.3f}", "", ""],
                      ["forward `continue` from `phase = 1` to `phase = 2`", f"{fwd:.3f}", "1.00", ""],
                      ["`reverse-continue` back across the computation to `phase = 1`", f"{rev:.3f}",
                       f"{rev / fwd:.2f}", "≤ 2"],
                      ["`reverse-continue` from the stop after `phase = 2` to just before that write",
                       f"{rev_write:.3f}", f"{rev_write / fwd:.2f}", ""]])

    bigmem = os.path.join(ctx.build, "bench", "bench_bigmem")
    snap_trace = os.path.join(ctx.tmp, "bigmem-trace")
    shutil.rmtree(snap_trace, ignore_errors=True)
    subprocess.run([ctx.rewind, "record", "-q", "-o", snap_trace, "--", bigmem, "100"], env=ctx.env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    p = subprocess.run([os.path.join(ctx.build, "bench", "snapshot_bench"), "--benchmark_format=json"],
                       env=dict(ctx.env, REWIND_BENCH_TRACE=snap_trace), stdout=subprocess.PIPE, check=True)
    snap_rows = []
    for b in json.loads(p.stdout)["benchmarks"]:
        snap_rows.append([b["name"].split("/")[0].removeprefix("BM_"), f"{b['real_time']:.0f} µs", "≤ 1000 µs"])
    snaps = md_table(["100 MiB resident, single process", "latency", "goal"], snap_rows)
    return ("Reverse execution and snapshots", table + "\n\n" + snaps + "\n\n" + DEBUG_NOTES)


DEBUG_NOTES = """\
- `reverse-continue` re-executes the stretch from the snapshot before it
  with the watchpoint armed and notes the last hit; the instruction that
  wrote is then found by one more replay with traps on the few instructions
  that can have written (decoded backwards from where the thread stopped),
  confirmed by a snapshot and one single step. Here the first hit going
  back sits at a snapshot, so the second replay is short.
- A stretch without syscalls has no event boundary inside, so it is
  re-executed whole: going back a distance D inside one stretch costs the
  stretch, not D. Across events, automatic snapshots (every 100 ms of
  forward replay, thinned exponentially) bound the re-execution.
- The last row is slower because its replay traps the instruction right
  after the loop: on these AMD machines an instruction breakpoint in the
  same 32-byte fetch block as a hot loop slows the loop about 2.5×
  (measured with a standalone probe). Targets reached after a few
  executions are therefore counted with int3 instead; unconfirmed
  candidates cannot be (an int3 inside another instruction would corrupt
  it), so they keep the debug registers.
- Snapshots are forks of the replayed process, injected into it. Large
  anonymous regions are first collapsed into 2 MiB pages (`MADV_COLLAPSE`),
  so fork copies 50 page-table entries instead of 25,600; native `fork` of
  a 100 MiB process in 4 KiB pages takes about 1.5 ms on these VMs. Memory
  written after a snapshot is split back into small pages by copy-on-write
  and collapsed again at the next snapshot, a cost proportional to what was
  written. Restoring kills the current processes and forks the snapshot's
  stopped copy."""


def section_watch(ctx):
    return compare_watch.section_watch(ctx, md_table)


def section_queries(ctx):
    return compare_queries.section(ctx, md_table)


def section_watch_shapes(ctx):
    return watch_shapes.section(ctx, md_table)


def section_signals(ctx):
    """Signals that arrive while a thread computes, and serialized threads
    with a large resident set (the recorder's look at written pages)."""
    programs = os.path.join(ctx.build, "tests", "programs")
    threads = os.path.join(ctx.build, "bench", "bench_threads")
    cases = [("signal_rounds: SIGALRM ends a loop counting its rounds in memory",
              [os.path.join(programs, "signal_rounds")]),
             ("sigalrm_loop: three SIGALRMs in a loop counting in registers", [os.path.join(programs, "sigalrm_loop")]),
             ("nested_rounds: SIGALRM ends a loop calling a function 8 times a round",
              [os.path.join(programs, "nested_rounds")]),
             ("4 threads compute-bound, 300 MiB resident (serialized)", [threads, "compute", "30000000", "300"])]
    rows = []
    for name, argv in cases:
        trace = os.path.join(ctx.tmp, "signals-trace")
        native, record, replay = record_replay_medians(ctx, argv, trace)
        rows.append([name, f"{native:.3f}", f"{record:.3f}", f"{replay:.3f}"])
        if argv[0].endswith("nested_rounds"):
            # The last recording again, every execution of the point's
            # instruction a stop (no breakpoint filter in the kernel).
            unfiltered = wall([ctx.rewind, "replay", "--autopilot", "-q", trace],
                              {**ctx.env, "REWIND_BPF_FILTERS": "0"})[0]
            rows.append(["the same, replayed with a stop at each execution", "", "", f"{unfiltered:.3f}"])
    return ("Signals in user code", md_table(["workload", "native s", "record s", "replay s"], rows) + "\n\n" +
            SIGNALS_NOTES)


SIGNALS_NOTES = """\
A signal that finds its thread computing is delivered where the thread
stands after --signal-delay-ms; the recorder first single-steps one round of
the loop there, to name the point by registers and the content of the pages
the round wrote (userspace/record/supervisor_signal_probe.cpp): that stepping is
the recording's extra cost in the first rows. Replay judges every round of
the loop since the thread's last event at a breakpoint on the point's
instruction, in the kernel where its BPF filter loads (registers, then the
sum of the pages the round wrote), else at a stop each: the row after
nested_rounds replays its last recording that way. The last row is the
preemption probes of serialized threads, which hash the resident pages only
for a thread that keeps its registers over a round (a spin-wait)."""


SECTIONS = {"record": section_record, "signals": section_signals, "replay": section_replay, "codec": section_codec, "debug": section_debug,
            "watch": section_watch, "watch-shapes": section_watch_shapes, "threads": section_threads,
            "threads-parallel": section_threads_parallel, "reading": section_reading, "queries": section_queries}


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def machine_line():
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{platform.node()}: Linux {platform.release()}, {cpu}, {os.cpu_count()} CPUs"


def update_doc(results):
    text = open(DOC).read() if os.path.exists(DOC) else "# Benchmarks\n"
    for title, body in results:
        begin, end = f"<!-- bench:{title} -->", f"<!-- /bench:{title} -->"
        block = f"{begin}\n## {title}\n\nMeasured {time.strftime('%Y-%m-%d')} on {machine_line()}.\n\n{body}\n{end}"
        if begin in text:
            text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: block, text, flags=re.S)
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
    with open(DOC, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rewind")
    ap.add_argument("build")
    ap.add_argument("--section", action="append", choices=sorted(SECTIONS))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    ctx = Context(args.rewind, args.build, args.runs)
    try:
        results = []
        for name in args.section or sorted(SECTIONS):
            title, body = SECTIONS[name](ctx)
            print(f"## {title}\n\n{body}\n")
            results.append((title, body))
        update_doc(results)
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
