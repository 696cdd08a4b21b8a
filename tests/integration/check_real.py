#!/usr/bin/env python3
"""Everyday programs from Debian's packages, recorded and replayed the way a
user would: the autopilot replay's output byte for byte against the
recording's, then gdb on the replay (a breakpoint on a libc function, its
hits, goto 50%, back to the beginning and to the same hit again; with debug
registers also reverse-stepi, reverse-finish, reverse-next, reverse-step and
a watchpoint with reverse-continue), and gdb on a child process of the tree
(--exec, --pid).

  check_real.py --rewind R --work W [--gdb /usr/bin/gdb] [--only NAME]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import (DEBUG_REGISTERS, Run, Skipped, check, dump_events, fresh_dir, machine_can, require_root,
                    run_checks)

GDB = "/usr/bin/gdb"


class Case:
    """One program: how to prepare its directory, its command line, the libc
    function gdb breaks on and how often it is hit at least, and a child
    process (by exec name) to debug on its own."""

    def __init__(self, name, argv, prepare=None, function="write", hits=1, child=None, child_shows=None,
                 forked_child=False, watch="$rsi", global_int=None):
        self.name, self.argv, self.prepare = name, argv, prepare
        self.function, self.hits = function, hits
        self.child, self.child_shows, self.forked_child, self.watch = child, child_shows, forked_child, watch
        self.global_int = global_int  # an int the program exports: rewind watch finds its last write


# ---- inputs ---------------------------------------------------------------

def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def words(d):
    write(os.path.join(d, "words.txt"), "pear\napple\nfig\nbanana\ncherry\nkiwi\n" * 50)


def tree(d):
    for i in range(6):
        write(os.path.join(d, "tree", f"dir{i % 3}", f"f{i}.txt"),
              "".join(f"line {j} {'needle' if (i + j) % 4 == 0 else 'hay'}\n" for j in range(40)))


def numbers(d):
    write(os.path.join(d, "nums.txt"), "".join(f"row{i} {i * 7 % 13} {i}\n" for i in range(300)))


DEEP_PY = """\
def descend(n):
    if n == 0:
        raise ValueError("nothing at the bottom")
    return descend(n - 1) + 1

print("descending", flush=True)
descend(60)
"""

THREADS_PY = """\
import threading
results = {}
lock = threading.Lock()
def work(i):
    total = sum(k * k for k in range(20000 * (i + 1)))
    with lock:
        results[i] = total
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sorted(results.items()))
"""

# The workers share their task queue's locks and semaphores with the parent
# (in /dev/shm, mapped shared): the processes run as one group.
POOL_PY = """\
from multiprocessing import Pool
def square(x):
    return x * x
if __name__ == "__main__":
    with Pool(2) as pool:
        print(sum(pool.map(square, range(2000))), flush=True)
"""

SCRIPT_PY = """\
#!/usr/bin/python3 -u
import sys
print("script", sys.argv[0], sys.argv[1:])
print("second line")
"""

BASH_SCRIPT = """\
upper=$(echo inner | tr a-z A-Z)
( echo "subshell $upper"; echo second ) | sort -r
./greet.sh world
for i in 1 2 3 4; do echo "loop $i"; done | wc -l
echo "exit of a subshell: $(exit 3; echo no) $?"
"""

C_FILES = {
    "lib_a.c": "int twice(int x) { return 2 * x; }\n",
    "lib_b.c": "int plus_three(int x) { return x + 3; }\n",
    "main.c": '#include <stdio.h>\nint twice(int);\nint plus_three(int);\n'
              'int main(void) { printf("result %d\\n", twice(plus_three(4))); return 0; }\n',
}

MAKEFILE = """\
prog: lib_a.o lib_b.o main.o
\tgcc -o $@ $^
%.o: %.c
\tgcc -O1 -g -c -o $@ $<
"""


def bash_inputs(d):
    write(os.path.join(d, "script.sh"), BASH_SCRIPT)
    write(os.path.join(d, "greet.sh"), '#!/bin/sh\necho "hello, $1, from $0"\n', 0o755)


def c_project(d):
    for name, text in C_FILES.items():
        write(os.path.join(d, name), text)
    write(os.path.join(d, "Makefile"), MAKEFILE)


CASES = [
    Case("sort", ["sort", "words.txt"], words, function="write"),
    # Kills its child at the deadline, then sends itself SIGCONT (exit 124).
    Case("timeout", ["timeout", "0.3", "sleep", "5"], function="kill", hits=2, watch=None),
    Case("grep", ["grep", "-rn", "needle", "tree"], tree),
    Case("sed", ["sed", "-e", "s/a/A/g; s/^p/P/", "words.txt"], words),
    Case("awk", ["gawk", "{ s[$2] += $3 } END { for (k in s) n++; print n, length($0) }", "nums.txt"], numbers),
    Case("python_exception", ["/usr/bin/python3", "deep.py"],
         lambda d: write(os.path.join(d, "deep.py"), DEEP_PY), hits=2),
    Case("python_threads", ["/usr/bin/python3", "threads.py"],
         lambda d: write(os.path.join(d, "threads.py"), THREADS_PY), function="pthread_create", hits=2,
         watch=False),
    Case("bash", ["bash", "script.sh"], bash_inputs, child="greet.sh",
         child_shows=r"hello, world, from \./greet\.sh", forked_child=True, global_int="line_number"),
    Case("sqlite3", ["sqlite3", "db.sqlite",
                     "create table t(a integer, b text); insert into t values (1, 'one'), (2, 'two'), (3, 'three');"
                     " update t set b = upper(b) where a > 1; select a, b from t order by a desc;"
                     " select count(*), sum(a) from t;"]),
    Case("gcc", ["gcc", "-O1", "-c", "-o", "lib_a.o", "lib_a.c"], c_project, function="access", hits=3, child="cc1",
         child_shows=r"twice", watch="$rdi"),
    # Two compilers run at once: the first cc1 to start is either's.
    Case("make_j2", ["make", "-j2"], c_project, hits=3, child="cc1", child_shows=r"\.globl\\t(twice|plus_three|main)",
         watch=False),
    Case("python_pool", ["/usr/bin/python3", "pool.py"], lambda d: write(os.path.join(d, "pool.py"), POOL_PY),
         hits=1, watch=False),
    Case("python_script", ["./show.py", "one", "two"],
         lambda d: write(os.path.join(d, "show.py"), SCRIPT_PY, 0o755), hits=2),
    Case("env_exec", ["env", "GREETING=hi", "/usr/bin/python3", "-c", "import os; print(os.environ['GREETING'])"],
         function="write"),
    Case("tar_pigz", ["sh", "-c", "tar cf - tree | pigz -n -p 2 | wc -c"], tree, function="fork", hits=2,
         child="pigz", watch=False),
    Case("tar_gzip", ["sh", "-c", "tar cf - tree | gzip -n -6 | wc -c"], tree, function="fork", hits=2, child="gzip",
         watch=False),
]


# ---- the checks -----------------------------------------------------------

class Recorded:
    def __init__(self, rw, case, work):
        self.dir = fresh_dir(os.path.join(work, case.name))
        if case.prepare:
            case.prepare(self.dir)
        self.trace = os.path.join(work, case.name + ".trace")
        shutil.rmtree(self.trace, ignore_errors=True)
        self.run = Run([rw, "record", "-q", "-o", self.trace, "--", *case.argv], cwd=self.dir)
        check(os.path.isdir(self.trace), f"no trace recorded\n{self.run.describe()}")


def gdb_session(rw, trace, commands, options=(), timeout=600):
    argv = [rw, "replay", "--gdb", GDB, *options, trace, "--", "-nx", "-batch", "-ex", "set breakpoint pending on",
            "-ex", "set pagination off"]
    for c in commands:
        argv += ["-ex", c]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        shown = (e.output or b"").decode(errors="replace")
        check(False, f"the gdb session did not end within {timeout} s:\n{shown}")
    return p.stdout.decode(errors="replace")


def no_divergence(out, what):
    for bad in (r"diverged", r"Remote connection closed", r"cannot reproduce", r"Remote communication error"):
        check(re.search(bad, out) is None, f"{what}: /{bad}/ in gdb's output:\n{out}")


def positions(out):
    return re.findall(r"^Position (\S+) \(for", out, re.M)


def autopilot_matches(rw, case, rec):
    rep = Run([rw, "replay", "--autopilot", rec.trace])
    check(rep.status == rec.run.status, f"exit status: recorded {rec.run.status}, replayed {rep.status}\n"
          f"{rec.run.describe()}\n{rep.describe()}")
    check(rep.stdout == rec.run.stdout, f"stdout differs\n{rec.run.describe()}\n{rep.describe()}")
    # The replay's stderr is the program's, then rewind's own lines (none on success).
    check(rep.stderr == rec.run.stderr, f"stderr differs\n{rec.run.describe()}\n{rep.describe()}")


def hits_and_return(rw, case, rec):
    """Break on a libc function, hit it, go to 50%, back to the beginning,
    and to the same hit again: the same position each time."""
    hit = ["continue"] * case.hits
    out = gdb_session(rw, rec.trace, [f"break {case.function}", *hit, "when", "bt 1", "goto 50%", "when",
                                      "restart", "when", *hit, "when", "bt 1"])
    no_divergence(out, "gdb session")
    check(len(re.findall(r"^Breakpoint 1(\.\d+)?, ", out, re.M)) == 2 * case.hits,
          f"expected {case.hits} hits of {case.function} twice over:\n{out}")
    found = positions(out)
    check(len(found) == 4, f"expected four `when` answers:\n{out}")
    check(found[0] == found[3], f"the same hit after restart is elsewhere: {found[0]} then {found[3]}\n{out}")
    # At 50%, or at the next boundary the replay can stop at (a vfork
    # child's events replay in one step with its parent's vfork).
    percents = [int(p) for p in re.findall(r"^At event .* events \((\d+)%", out, re.M)]
    check(len(percents) >= 2 and 50 <= percents[1] < 100, f"goto 50% did not arrive at 50%: {percents}\n{out}")
    frames = re.findall(r"^#0 .*$", out, re.M)
    check(len(frames) == 2 and frames[0] == frames[1], f"frames differ: {frames}\n{out}")
    return f"{case.function} x{case.hits} at {found[0]}"


def watch_global(rw, case, rec):
    """rewind watch on a global of a program without debug info: gdb
    watches it with a debug register, the search bisects over its writes
    and names the store that wrote its last value."""
    expr = f"*(int*)&{case.global_int}"
    r = Run([rw, "watch", rec.trace, expr, "--json"], timeout=600)
    check(r.status == 0, f"rewind watch {expr}\n{r.describe()}")
    j = json.loads(r.stdout)
    check(f"<{case.global_int}>" in j["instruction"], f"not a store to {case.global_int}: {j['instruction']}")
    check(re.search(r"[:/]w[0-9a-f]+\.4\.1x\d+$", j["after"]["position"]) is not None,
          f"not found at a write: {j['after']}")
    return f"{j['instruction']} ({j['before']['value']} -> {j['after']['value']}), {j['probes']} probes"


def reverse_execution(rw, case, rec):
    """reverse-stepi, reverse-finish, reverse-next, reverse-step, and a
    watchpoint on the bytes the program is about to write, found backwards."""
    hit = ["continue"] * case.hits
    commands = [f"break {case.function}", *hit, "when", "stepi", "when", "reverse-stepi", "when", "reverse-finish",
                "reverse-next", "reverse-step", "when"]
    if case.watch:
        # The watch is on the first byte the function is given: the buffer
        # write is to print, the path access is to check.
        commands += [f"continue", f"watch -l *(char*){case.watch}", "reverse-continue", "when"]
    out = gdb_session(rw, rec.trace, commands)
    no_divergence(out, "reverse session")
    found = positions(out)
    check(len(found) >= 4, f"expected `when` answers:\n{out}")
    check(found[0] == found[2], f"stepi then reverse-stepi is elsewhere: {found[0]} then {found[2]}\n{out}")
    check(found[1] != found[0], f"stepi did not move: {found[0]}\n{out}")
    check("No more reverse-execution history" not in out.split(found[2])[1].split("Position")[0],
          f"reverse-finish ran out of history:\n{out}")
    if case.watch:
        check(re.search(r"(Hardware watchpoint|Watchpoint) 2: -location .*\n+Old value", out) is not None,
              f"reverse-continue did not find the write:\n{out}")
    return f"{len(found)} positions"


def child_process(rw, case, rec):
    """gdb on a child of the recorded tree, the rest replayed around it."""
    ps = Run([rw, "ps", "--json", rec.trace])
    check(ps.status == 0, f"rewind ps\n{ps.describe()}")
    tree = json.loads(ps.stdout)
    results = []
    if case.child:
        out = gdb_session(rw, rec.trace, ["info inferiors", "break write", "continue", "bt 1", "x/s $rsi"],
                          options=("--exec", case.child))
        no_divergence(out, f"--exec {case.child}")
        check(re.search(r"Breakpoint 1(\.\d+)?, .*write", out) is not None, f"--exec {case.child}: no write:\n{out}")
        if case.child_shows:
            check(re.search(case.child_shows, out) is not None,
                  f"--exec {case.child}: expected /{case.child_shows}/:\n{out}")
        results.append(f"--exec {case.child}")
    if case.forked_child:
        # A subshell that writes with builtins of its own (echo), never exec'ing.
        writers = {e["tgid"] for e in dump_events(rw, rec.trace) if e.get("name") == "write"}
        forks = [p for p in tree if not p["execs"] and p["parent"] and p["pid"] in writers]
        check(forks, f"no forked child that writes without an exec in {tree}")
        pid = forks[0]["pid"]
        out = gdb_session(rw, rec.trace, ["break write", "continue", "x/s $rsi"], options=("--pid", str(pid)))
        no_divergence(out, f"--pid {pid}")
        check(re.search(r"Breakpoint 1(\.\d+)?, .*write", out) is not None, f"--pid {pid}: no write:\n{out}")
        results.append(f"--pid {pid}")
    return ", ".join(results) + f" of {len(tree)} processes"


def checks_for(rw, case, work):
    state = {}

    def record():
        rec = state["rec"] = Recorded(rw, case, work)
        autopilot_matches(rw, case, rec)
        return f"status {rec.run.status}, {len(rec.run.stdout)} bytes out"

    def needs_recording(fn):
        def run():
            if "rec" not in state:
                raise Skipped("the recording failed")
            return fn(rw, case, state["rec"])
        return run

    def needs_debug_registers(fn):
        def run():
            if not machine_can(rw, DEBUG_REGISTERS):
                raise Skipped(f"reverse execution needs {DEBUG_REGISTERS}, which this machine lacks (rewind doctor)")
            return fn()
        return run

    out = [(f"{case.name}: record, autopilot", record),
           (f"{case.name}: gdb hits, goto, restart", needs_recording(hits_and_return)),
           (f"{case.name}: gdb reverse", needs_debug_registers(needs_recording(reverse_execution)))]
    if case.child or case.forked_child:
        out.append((f"{case.name}: gdb on a child", needs_recording(child_process)))
    if case.global_int:
        out.append((f"{case.name}: rewind watch {case.global_int}", needs_debug_registers(needs_recording(watch_global))))
    return out


def main():
    global GDB
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--gdb", default=GDB)
    ap.add_argument("--only")
    args = ap.parse_args()
    GDB = args.gdb
    require_root()
    missing = [c.argv[0] for c in CASES if not c.argv[0].startswith("./") and shutil.which(c.argv[0]) is None]
    if missing or not os.path.exists(GDB):
        # scripts/install-deps.sh installs them all.
        print(f"FAIL: missing programs: {' '.join(missing + ([GDB] if not os.path.exists(GDB) else []))}")
        return 1
    work = fresh_dir(args.work)
    checks = []
    for case in CASES:
        if not args.only or args.only == case.name:
            checks += checks_for(args.rewind, case, work)
    return run_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
