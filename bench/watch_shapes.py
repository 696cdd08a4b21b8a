#!/usr/bin/env python3
"""`rewind watch` on eight program shapes (bench/programs/watch_*.c) at
growing sizes: how long the search takes against the program's own run, how
many probes it needs, and whether it names the line marked /* CULPRIT */.

Each program says, in comments at its top, the expression to watch
(`// watch: EXPR`) and, if it matters, the thread that makes the change
(`// thread: NAME`); it takes a scale N (work grows linearly with it, 0 is
a tiny run for tests).

  bench/watch_shapes.py [--rewind R] [--build B] [--scales 1,2,4,8] [--shapes a,b]
                        [--runs 3] [--searches 3] [--out FILE]

bench/compare.py runs it as its "watch-shapes" section; tests/integration/
check_watch_shapes.py uses the shape descriptions and the verdict below.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "bench", "programs")
SHAPES = ["rare_call", "deep_recursion", "tight_loop", "memcpy", "costly_expr", "syscall_loop", "threads", "crash",
          "big_graph", "big_hash", "flips"]
SCALES = [1, 2, 4, 8]
# The culprit store is inside libc: the program's line is in a caller's frame.
CULPRIT_IN_A_CALLER = {"memcpy"}
WATCH_TIMEOUT = 1800  # seconds for one `rewind watch`
LACKEY_LIMIT = 60  # seconds valgrind may take to count a run's instructions


class Shape:
    """A program of bench/programs, with what its comments say."""

    def __init__(self, name, sources=SOURCES):
        self.name = name
        self.source = os.path.join(sources, f"watch_{name}.c")
        self.expr = self.thread = None
        self.culprit_line = None
        with open(self.source) as f:
            for number, line in enumerate(f, 1):
                m = re.match(r"// (watch|thread): (.+)$", line.rstrip())
                if m and m.group(1) == "watch":
                    self.expr = m.group(2).strip()
                elif m:
                    self.thread = m.group(2).strip()
                if "/* CULPRIT */" in line:
                    if self.culprit_line is not None:
                        raise ValueError(f"{self.source}: more than one /* CULPRIT */ line")
                    self.culprit_line = number
        if self.expr is None or self.culprit_line is None:
            raise ValueError(f"{self.source}: no `// watch:` line or no /* CULPRIT */ line")

    def program(self, build):
        return os.path.join(build, "bench", f"bench_watch_{self.name}")

    def where(self):
        return f"{os.path.basename(self.source)}:{self.culprit_line}"


def thread_names(rewind, trace, env=None):
    """{tid: name} for the threads the program named through /proc (as
    pthread_setname_np does for another thread): an openat of
    /proc/self/task/TID/comm, then a write of the name to that descriptor."""
    p = subprocess.run([rewind, "dump", "--json", trace], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       env=env, check=True)
    names, opened = {}, {}
    for line in p.stdout.splitlines():
        e = json.loads(line)
        if e.get("kind") != "syscall" or e.get("ret", -1) < 0:
            continue
        data = b"".join(bytes.fromhex(m.get("data_hex", "")) for m in e.get("memory", []) if m.get("dir") == "in")
        if e["name"] == "openat":
            m = re.match(rb"/proc/(?:self|\d+)/task/(\d+)/comm\0", data)
            if m:
                opened[(e["tid"], e["ret"])] = int(m.group(1))
        elif e["name"] == "write" and (e["tid"], e["args"][0]) in opened:
            names[opened.pop((e["tid"], e["args"][0]))] = data.decode(errors="replace").strip()
    return names


def frame_place(frame):
    """'watch_x.c:12' from a backtrace frame as gdb prints it."""
    m = re.search(r" at (\S+):(\d+)$", frame)
    return f"{os.path.basename(m.group(1))}:{m.group(2)}" if m else None


def verdict(shape, report, names=None):
    """(right, what the report names) for a `rewind watch --json` report."""
    if not report or report.get("outcome") != "found":
        return False, (report or {}).get("message", "nothing found")
    place = f"{os.path.basename(report.get('file') or '?')}:{report.get('line')}"
    right = place == shape.where()
    if not right and shape.name in CULPRIT_IN_A_CALLER:
        right = any(frame_place(f) == shape.where() for f in report.get("backtrace", []))
        place = f"{report.get('function')} from {shape.where()}" if right else place
    said = place
    if shape.thread:
        thread = (names or {}).get(report.get("thread"), f"thread {report.get('thread')}")
        said += f" in {thread}"
        right = right and thread == shape.thread
    return right, said


def run_watch(rewind, trace, expr, env=None, timeout=WATCH_TIMEOUT):
    """(seconds, report or None, first stderr line) of `rewind watch --json`."""
    start = time.perf_counter()
    try:
        p = subprocess.run([rewind, "watch", trace, expr, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return timeout, None, f"cut off after {timeout} s"
    seconds = time.perf_counter() - start
    err = p.stderr.decode(errors="replace").strip().splitlines()
    try:
        report = json.loads(p.stdout) if p.stdout.strip() else None
    except json.JSONDecodeError:
        report = None
    if p.returncode != 0 or report is None:
        return seconds, None, err[0] if err else f"exit status {p.returncode}, no report"
    return seconds, report, ""


def timed(argv, env=None, timeout=None):
    """(seconds, exit status, stdout)."""
    start = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=timeout)
    return time.perf_counter() - start, p.returncode, p.stdout


def guest_instructions(argv, timeout):
    """Instructions a native run executes, counted by valgrind's lackey, or
    None past `timeout` seconds."""
    try:
        p = subprocess.run(["valgrind", "--tool=lackey", "--basic-counts=yes"] + argv, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except (subprocess.TimeoutExpired, FileNotFoundError):
        return None
    m = re.search(r"guest instrs:\s+([\d,]+)", p.stderr.decode(errors="replace"))
    return int(m.group(1).replace(",", "")) if m else None


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


class Measure:
    """One shape at one scale."""

    def __init__(self, shape, scale):
        self.shape, self.scale = shape, scale
        self.native = self.watch = None
        self.deterministic = True
        self.report, self.error, self.replays, self.instructions = None, "", None, None
        self.instructions_estimated = False  # scaled from a smaller N of the same shape
        self.right, self.said = False, ""
        self.probes = []  # of each search
        self.wrong = 0    # searches that named another place

    def probes_cell(self):
        if not self.probes:
            return "?"
        median = statistics.median(self.probes)
        text = f"{median:g}"
        return text if len(self.probes) == 1 else f"{text} ({min(self.probes)}–{max(self.probes)})"


def measure(ctx, shape, scale, lackey_budget):
    m = Measure(shape, scale)
    argv = [shape.program(ctx.build), str(scale)]
    natives = [timed(argv) for _ in range(ctx.runs)]
    m.native = statistics.median(t for t, _, _ in natives)
    m.deterministic = len({out for _, _, out in natives}) == 1
    trace = os.path.join(ctx.tmp, f"watch-{shape.name}-{scale}")
    shutil.rmtree(trace, ignore_errors=True)
    _, rec_status, recorded = timed([ctx.rewind, "record", "-q", "-o", trace, "--"] + argv, ctx.env)
    # Without -q: the replay shows the program's output again.
    _, rep_status, replayed = timed([ctx.rewind, "replay", trace, "--autopilot"], ctx.env)
    m.replays = (replayed, rep_status) == (recorded, rec_status) and recorded == natives[0][2]
    # Searches on one trace differ by where the alarms land (a few probes
    # either way): the median of several, and their range.
    names = thread_names(ctx.rewind, trace, ctx.env) if shape.thread else {}
    times = []
    for _ in range(getattr(ctx, "searches", 3)):
        seconds, report, error = run_watch(ctx.rewind, trace, shape.expr, ctx.env)
        if not report:
            m.report, m.error = None, error
            break
        right, said = verdict(shape, report, names)
        times.append(seconds)
        m.probes.append(report.get("probes", 0))
        m.wrong += 0 if right else 1
        if not m.report or not right:
            m.report, m.said = report, said
    if m.report:
        m.watch = statistics.median(times)
        m.right = m.wrong == 0
    if lackey_budget(m.native):
        start = time.perf_counter()
        m.instructions = guest_instructions(argv, LACKEY_LIMIT)
        lackey_budget.seen(m.native, time.perf_counter() - start)
    shutil.rmtree(trace, ignore_errors=True)
    return m


class LackeyBudget:
    """Whether counting instructions at the next scale should finish within
    LACKEY_LIMIT, from how long valgrind took per second of native run."""

    def __init__(self):
        self.per_native_second = None

    def __call__(self, native):
        return self.per_native_second is None or self.per_native_second * native <= LACKEY_LIMIT

    def seen(self, native, seconds):
        self.per_native_second = seconds / max(native, 1e-3)


def rows_for(ms):
    rows = []
    for m in ms:
        ins = f"{math.log2(m.instructions) + 10:.1f}" if m.instructions else "n/a"
        if m.instructions and m.instructions_estimated:
            ins = "≈" + ins
        native = f"{m.native:.3f}" + ("" if m.deterministic else " (output varies)")
        replay = "same output" if m.replays else "**differs**"
        if m.report:
            wrong = f"**wrong** in {m.wrong} of {len(m.probes)}" if m.wrong else "right"
            rows.append([m.shape.name, f"{m.scale}N", native, replay, f"{m.watch:.2f}", f"{m.watch / m.native:.0f}",
                         m.probes_cell(), ins, cell(f"{wrong}: {m.said}")])
        else:
            rows.append([m.shape.name, f"{m.scale}N", native, replay, cell(f"failed: {m.error}"), "", "", ins, ""])
    return rows


def growth_rows(by_shape, low, high):
    rows = []
    for name, ms in by_shape.items():
        a, b = ms.get(low), ms.get(high)
        if not a or not b:
            continue
        native = b.native / a.native
        if a.report and b.report:
            watch = b.watch / a.watch
            rows.append([name, f"{watch:.2f}", f"{native:.1f}", f"{watch / native:.2f}"])
        else:
            rows.append([name, "n/a (a search failed)", f"{native:.1f}", ""])
    return rows


def doctor_line(rewind):
    out = subprocess.run([rewind, "doctor"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    m = re.search(r"^\s*(ok|no|FAIL)\s+hw breakpoints\s+(.*)$", out, re.M)
    return f"`{m.group(1)}`: {m.group(2).strip()}" if m else "not reported"


def section(ctx, md_table, shapes=None, scales=None):
    """(title, markdown) for bench/compare.py's docs/benchmarks.md."""
    shapes = [Shape(name) for name in shapes or SHAPES]
    scales = scales or SCALES
    by_shape = {}
    for shape in shapes:
        budget = LackeyBudget()
        by_shape[shape.name] = {}
        for scale in scales:
            m = measure(ctx, shape, scale, budget)
            by_shape[shape.name][scale] = m
            # The work grows linearly with N: a count too long for lackey
            # is scaled from the largest smaller N it counted.
            counted = [o for o in by_shape[shape.name].values() if o.instructions and not o.instructions_estimated
                       and 0 < o.scale < scale]
            if m.instructions is None and counted:
                base = max(counted, key=lambda o: o.scale)
                m.instructions = base.instructions * scale // base.scale
                m.instructions_estimated = True
            print(f"watch-shapes: {shape.name} {scale}N: native {m.native:.3f} s, "
                  + (f"watch {m.watch:.2f} s, {m.said}" if m.report else f"watch failed: {m.error}"),
                  file=sys.stderr)
    described = md_table(["shape", "expression", "culprit"],
                         [[f"`watch_{s.name}`", f"`{cell(s.expr)}`",
                           s.where() + (f", thread {s.thread}" if s.thread else "")] for s in shapes])
    table = md_table(["shape", "size", "native s", "replay", "`rewind watch` s", "÷ native", "probes",
                      "log₂(instr.) + 10", "culprit"],
                     rows_for([m for ms in by_shape.values() for m in ms.values()]))
    low, high = min(scales), max(scales)
    body = described + "\n\n" + table
    if low != high:
        growth = md_table(["shape", f"`rewind watch` s at {high}N ÷ at {low}N", f"native {high}N ÷ {low}N",
                           "watch growth ÷ native growth"], growth_rows(by_shape, low, high))
        body += "\n\n" + growth
    body += f"\n\nDebug registers here (`rewind doctor`, hw breakpoints): {doctor_line(ctx.rewind)}\n\n" + NOTES
    return "Reverse watchpoints on program shapes", body


NOTES = """\
- Each program (`bench/programs/watch_*.c`) makes its watched expression
  change for good once, late in the run (around 85 %), with the store on
  the line marked `/* CULPRIT */`; its comments say why the shape is hard.
  N is a scale: the work grows linearly with it (about 0.1 s of native run
  at N). The two large shapes are more: `watch_big_graph` is 140,000 nodes
  and 1.7 million edges at N (1.1 million and 13 million at 8N), whose
  expression walks the whole graph; `watch_big_hash` is 125,000 entries of
  a kilobyte at N (a gigabyte of heap at 8N), rewritten all over between
  any two probes, whose expression looks up one key.
- *replay*: `rewind replay --autopilot` printed what the recorded run and
  the native runs printed, and ended the same way. *native s* is the
  median of the runs.
- `rewind watch` s is the median of three searches on one recording
  (the whole command, gdb's start included), *probes* their median and
  range: where the alarms that place the anchors land varies from one
  search to the next, and with it the path. *culprit* compares the report's file and line with the marked line (for
  `watch_memcpy`, a frame of the backtrace: the store is in libc's memcpy)
  and, for `watch_threads`, the reported thread with the one the program
  named, in every search. Where a search failed, the cell holds the first line it printed
  on standard error.
- log₂(instructions) + 10 bounds the probes a bisection should need; valgrind's
  lackey counts the instructions of a native run, *n/a* where it would take
  more than a minute, *≈* where they are scaled from a smaller N of the
  same shape (the work grows linearly with N).
- Where the CPU's debug registers do not work (the line above), positions
  between events are counted with int3 traps, one ptrace stop per
  execution of the counted instruction: searches through long stretches of
  hot code cost the most there."""


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


class Context:
    """What bench/compare.py's context offers, for a run on its own."""

    def __init__(self, rewind, build, runs, searches):
        self.rewind = os.path.abspath(rewind)
        self.build = os.path.abspath(build)
        self.runs = runs
        self.searches = searches
        self.tmp = tempfile.mkdtemp(prefix="rewind-watch-shapes-")
        self.env = dict(os.environ, REWIND_DIR=os.path.join(self.tmp, "traces"))


def shape_list(text):
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        raise argparse.ArgumentTypeError(f"no shape {', '.join(unknown)} (shapes: {', '.join(SHAPES)})")
    return names


def scale_list(text):
    scales = [int(v) for v in text.split(",") if v]
    if not scales or min(scales) < 0:
        raise argparse.ArgumentTypeError("scales are integers from 0 up, comma-separated")
    return scales


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rewind", default=os.path.join(ROOT, "build", "cli", "rewind"), help="the rewind to measure")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build directory (its bench/ programs)")
    ap.add_argument("--scales", default=SCALES, type=scale_list, help="sizes N, e.g. 1,2,4,8 (0: tiny)")
    ap.add_argument("--shapes", default=SHAPES, type=shape_list, help=f"some of {','.join(SHAPES)}")
    ap.add_argument("--runs", type=int, default=3, help="native runs, of which the median is shown")
    ap.add_argument("--searches", type=int, default=3, help="searches per trace, of which the median is shown")
    ap.add_argument("--out", help="also write the table (markdown) to this file")
    args = ap.parse_args()
    if args.runs < 1 or args.searches < 1:
        ap.error("--runs and --searches take 1 or more")
    ctx = Context(args.rewind, args.build, args.runs, args.searches)
    try:
        title, body = section(ctx, md_table, args.shapes, args.scales)
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    text = f"## {title}\n\n{body}\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
