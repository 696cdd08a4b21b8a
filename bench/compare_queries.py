"""The "queries" section of bench/compare.py: `rewind calls` and `rewind
writes` against one replay of the same recording (issue goal: at most 3x
over a recording with 10^6 calls of other functions), and against what a
user has without them: a gdb dprintf on the replay, a stop per call."""
import json
import os
import statistics
import subprocess
import time

OTHERS = 100_000_000  # calls of a function nobody asks about
TARGETS = [100, 1000, 10000]


def timed(argv, env, cwd=None, stdout=subprocess.DEVNULL):
    start = time.perf_counter()
    p = subprocess.run(argv, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, p


def medians(ctx, commands):
    """Each command `ctx.runs` times, alternating, side by side: medians."""
    times = {name: [] for name, _ in commands}
    outputs = {}
    for _ in range(ctx.runs):
        for name, argv in commands:
            t, p = timed(argv, ctx.env, stdout=subprocess.PIPE)
            times[name].append(t)
            outputs[name] = p.stdout
    return {name: statistics.median(v) for name, v in times.items()}, outputs


def section(ctx, md_table):
    program = os.path.join(ctx.build, "bench", "bench_query_calls")
    rows = []
    for targets in TARGETS:
        argv = [program, str(OTHERS), str(targets)]
        trace = os.path.join(ctx.tmp, f"queries-{targets}")
        subprocess.run([ctx.rewind, "record", "-q", "-o", trace, "--", *argv], env=ctx.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        commands = [("native", argv),
                    ("replay", [ctx.rewind, "replay", "--autopilot", "-q", trace]),
                    ("calls", [ctx.rewind, "calls", trace, "target", "--json", "--most", str(targets + 1)]),
                    ("writes", [ctx.rewind, "writes", trace, "counted", "--json", "--most", str(targets + 1)])]
        if targets <= 1000:
            commands.append(("dprintf", [ctx.rewind, "replay", trace, "--", "-batch", "-ex",
                                         'dprintf target,"%ld\\n",i', "-ex", "continue"]))
        t, out = medians(ctx, commands)
        calls = json.loads(out["calls"])
        writes = json.loads(out["writes"])
        right = len(calls["calls"]) == targets and len(writes["writes"]) == targets
        dprintf = f"{t['dprintf']:.2f} ({t['dprintf'] / t['replay']:.1f}×)" if "dprintf" in t else "–"
        rows.append([f"{OTHERS:,} other calls, {targets:,} of `target`", f"{t['native']:.2f}", f"{t['replay']:.2f}",
                     f"{t['calls']:.2f} ({t['calls'] / t['replay']:.1f}×)",
                     f"{t['writes']:.2f} ({t['writes'] / t['replay']:.1f}×)", dprintf,
                     "yes" if right else "**no**"])
    # Programs nobody here wrote.
    real = [("`seq 1 2000000`: calls of write", ["seq", "1", "2000000"], "calls", "write"),
            ("`sort` of 20,000 shuffled numbers: calls of strcoll", ["sort", ctx.file_numbers(20000)], "calls",
             "strcoll")]
    for name, argv, verb, what in real:
        trace = os.path.join(ctx.tmp, "queries-real")
        subprocess.run(["rm", "-rf", trace])
        subprocess.run([ctx.rewind, "record", "-q", "-o", trace, "--", *argv], env=ctx.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        t, out = medians(ctx, [("native", argv), ("replay", [ctx.rewind, "replay", "--autopilot", "-q", trace]),
                               ("query", [ctx.rewind, verb, trace, what, "--json", "--most", "1000000"])])
        n = len(json.loads(out["query"])["calls"])
        rows.append([f"{name} ({n:,})", f"{t['native']:.2f}", f"{t['replay']:.2f}",
                     f"{t['query']:.2f} ({t['query'] / t['replay']:.1f}×)", "–", "–", "–"])
    table = md_table(["recording", "native s", "replay s", "calls s (÷ replay)", "writes s (÷ replay)",
                      "gdb dprintf s (÷ replay)", "all listed"], rows)
    return "Whole-recording queries", table + "\n\n" + NOTES


NOTES = """\
`rewind calls target` and `rewind writes counted` on bench/programs/
query_calls.c (each call of `target` also writes `counted`; a syscall every
100,000 calls), medians of runs alternating with the program's own run and
`rewind replay --autopilot` of the same recording. Both commands include
starting gdb and reading the program's debug information. A query is one
replay that stops at the function's entry and at each call's return address
(calls) or at each write (a debug register: writes); the code between runs
at full speed, so the other calls cost nothing and the time over one replay
grows with the stops asked for (two per call, one per write). The gdb
alternative is a dprintf at the function on the replay: a stop and a
round trip to gdb per call. A library function (write, strcoll) is resolved
where the recording ends: one replay to the end first. Where the program
itself is short, the stops are the cost: about 100 µs a call on this VM
(traps are slow here), for sort's 261,000 calls of strcoll 27 s, against
about 3 ms a call for gdb's dprintf (the 1,000-call row)."""
