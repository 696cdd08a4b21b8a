#!/usr/bin/env python3
"""rewind calls, rewind writes and rewind origin, against what the programs
count themselves: every call of a function with its arguments and return value
(a loop, a recursion, a longjmp out of a call, two threads, a double), every
write to a global (by stores and by a read()), positions that gdb reaches
through rewind replay, bad input, and the write calls of a program nobody
here wrote against the write syscalls its recording holds; the origin of
a value that went through a file, memcpy, a struct copy, arithmetic,
strdup, getrandom, a constant and a pipe between two processes.

  check_queries.py --rewind R --programs DIR --work W
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import DEBUG_REGISTERS, Run, check, dump_events, fresh_dir, require_root, requiring, run_checks, skip

PROGRAMS_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs")
SOURCE = os.path.join(PROGRAMS_SOURCE, "calls_count.c")


def line_of(marker, source=SOURCE):
    with open(source) as f:
        return next(n for n, text in enumerate(f, 1) if marker in text)


def record(rw, programs, work, *args):
    trace = os.path.join(work, "calls.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "calls_count"), *args], cwd=work)
    check(r.status == 0, f"recording failed\n{r.describe()}")
    return trace, r.stdout.decode()


def query(rw, *args):
    r = Run([rw, *args, "--json"])
    check(r.status == 0, f"rewind {args[0]} failed\n{r.describe()}")
    return json.loads(r.stdout)


def said(out, line):
    """The numbers NAME=N on the program's output line that starts with `line`."""
    m = re.search(rf"^{line}(.*)$", out, re.M)
    check(m is not None, f"the program did not print {line!r}: {out}")
    return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", m.group(1))}


def scenario_calls(rw, programs, work):
    trace, out = record(rw, programs, work, "40", "1000")
    want = said(out, "accumulate ")
    j = query(rw, "calls", trace, "accumulate")
    calls = j["calls"]
    check(len(calls) == want["calls"], f"{len(calls)} calls of accumulate listed, the program made {want['calls']}")
    check(j["signature"] == "int accumulate(int value, const char *tag)", f"signature: {j['signature']}")
    values = [int(c["args"][0]["value"]) for c in calls]
    check(sum(values) == want["values"], f"the values add up to {sum(values)}, the program's to {want['values']}")
    check(all(c["returned"] for c in calls), "a call of accumulate did not return")
    returns = sum(int(c["value"]) for c in calls)
    check(returns == want["returns"], f"the returns add up to {returns}, the program's to {want['returns']}")
    tags = [c["args"][1]["value"].split(" ", 1)[1] for c in calls]
    check(tags == ['"even"', '"odd"'] * (len(calls) // 2), f"the tag strings: {tags[:4]}…")
    call_line = line_of("sum_of_returns += accumulate")
    check(all(c["caller"]["function"] == "main" and c["caller"]["line"] == call_line for c in calls),
          f"not called from main, line {call_line}: {calls[0]['caller']}")
    check(len({c["position"] for c in calls}) == len(calls), "two calls share a position")
    return f"{len(calls)} calls, {j['seconds']:.2f} s"


def scenario_recursion_longjmp_float(rw, programs, work):
    trace, out = record(rw, programs, work, "4")
    j = query(rw, "calls", trace, "factorial")
    got = [(int(c["args"][0]["value"]), int(c["value"]), c["caller"]["function"]) for c in j["calls"]]
    check(got == [(6, 720, "main"), (5, 120, "factorial"), (4, 24, "factorial"), (3, 6, "factorial"),
                  (2, 2, "factorial"), (1, 1, "factorial")], f"factorial's calls: {got}")
    check("factorial 6=720" in out, f"the program says otherwise: {out}")
    j = query(rw, "calls", trace, "may_jump")
    got = [(c["args"][0]["value"], c["returned"], c.get("value")) for c in j["calls"]]
    check(got == [("0", True, "7"), ("1", False, None), ("0", True, "7")], f"may_jump's calls: {got}")
    j = query(rw, "calls", trace, "halve")
    got = [(c["args"][0]["value"], c["args"][1]["value"], c["value"]) for c in j["calls"]]
    check(got == [("10", "2", "2.5")], f"halve's calls: {got}")
    j = query(rw, "calls", trace, "work")
    want = said(out, "work ")
    threads = {}
    for c in j["calls"]:
        threads.setdefault(c["thread"], []).append(int(c["value"]))
    total = sum(sum(v) for v in threads.values())
    check(len(j["calls"]) == 60 and sorted(len(v) for v in threads.values()) == [30, 30],
          f"work: {len(j['calls'])} calls in threads {[len(v) for v in threads.values()]}")
    check(total == want["sum"], f"work's returns add up to {total}, the program's to {want['sum']}")
    # --most: the list stops and says so.
    j = query(rw, "calls", trace, "noise", "--most", "5")
    check(not j["calls"], "noise was not called without a count")
    return "recursion, longjmp, a double, two threads"


def scenario_most(rw, programs, work):
    trace, _ = record(rw, programs, work, "4", "300")
    j = query(rw, "calls", trace, "noise", "--most", "100")
    check(len(j["calls"]) == 100 and j["complete"] is False, f"--most 100: {len(j['calls'])}, {j['complete']}")
    args = [int(c["args"][0]["value"]) for c in j["calls"]]
    check(args == list(range(100)), f"noise's first arguments: {args[:5]}…")
    r = Run([rw, "calls", trace, "noise", "--most", "100"])
    check(b"stops at 100 calls" in r.stdout, f"the cut is not said\n{r.describe()}")
    # The calls listed before a cut still get their returns (the outer
    # ones of a recursion come after the cut).
    j = query(rw, "calls", trace, "factorial", "--most", "3")
    got = [(c["args"][0]["value"], c.get("value")) for c in j["calls"]]
    check(got == [("6", "720"), ("5", "120"), ("4", "24")] and not j["complete"], f"factorial --most 3: {got}")
    return "cut at 100 and said so; a recursion cut at 3"


def scenario_writes(rw, programs, work):
    trace, out = record(rw, programs, work, "40")
    want = said(out, "total ")["writes"]
    j = query(rw, "writes", trace, "total")
    writes = j["writes"]
    check(len(writes) == want, f"{len(writes)} writes to total listed, the program made {want}")
    check(j["size"] == 8 and j["type"] == "long", f"total is {j['type']} of {j['size']} bytes")
    store = line_of("/* STORE */")
    by_store = [w for w in writes if w["by"] == "instruction"]
    check(all(w["function"] == "accumulate" and w["line"] == store for w in by_store),
          f"a store is not on line {store} in accumulate: {by_store[0]}")
    last = writes[-1]
    check(last["by"] == "event" and last["what"].startswith("read(") and last["new"] == "0",
          f"the read() into total is not the last write: {last}")
    previous = j["initial"]
    for w in writes:
        check(w["old"] == previous, f"old value {w['old']} is not the previous new value {previous}")
        previous = w["new"]
    running = 0
    for k, w in enumerate(by_store):
        running += 3 * k
        check(int(w["new"]) == running, f"write {k} makes total {w['new']}, the program's sum is {running}")
    # Through the path users take: the write's position in gdb.
    pos = by_store[10]["position"]
    r = Run([rw, "replay", trace, "--", "-batch", "-ex", f"goto {pos}", "-ex", "print total", "-ex", "frame"])
    out = r.stdout.decode(errors="replace")
    check(f"$1 = {by_store[10]['new']}" in out and "accumulate" in out, f"goto {pos}\n{r.describe()}")
    # Both threads' stores to one global, each with its thread.
    j = query(rw, "writes", trace, "last_work")
    line = line_of("/* THREAD STORE */")
    per_thread = {}
    for w in j["writes"]:
        check(w["by"] == "instruction" and w["line"] == line, f"not the store of work(): {w}")
        per_thread.setdefault(w["thread"], []).append(int(w["new"]))
    check(sorted(len(v) for v in per_thread.values()) == [30, 30],
          f"last_work: {[len(v) for v in per_thread.values()]} writes by thread, 30 each made")
    check(all(v == [v[0] + i for i in range(30)] for v in per_thread.values()),
          f"each thread's writes are not its own sequence: {per_thread}")
    return f"{len(writes)} writes, {j['seconds']:.2f} s; two threads' stores"


def scenario_call_positions_in_gdb(rw, programs, work):
    trace, _ = record(rw, programs, work, "10")
    j = query(rw, "calls", trace, "accumulate")
    c = j["calls"][7]
    r = Run([rw, "replay", trace, "--", "-batch", "-ex", f"goto {c['position']}", "-ex", "info args",
             "-ex", f"goto {c['returned_at']}", "-ex", "print $rax"])
    out = r.stdout.decode(errors="replace")
    check(f"value = {c['args'][0]['value']}" in out, f"goto the call: not its arguments\n{r.describe()}")
    check(re.search(rf"\$1 = {c['value']}\b", out) is not None, f"goto the return: not its value\n{r.describe()}")
    return "call and return positions"


def scenario_bad_input(rw, programs, work):
    trace, _ = record(rw, programs, work, "4")
    for args, words in [(["calls", trace, "no_such_function"], b"not a function"),
                        (["calls", trace, "a b"], b"not a function name"),
                        (["writes", trace, "main"], b"is a function"),
                        (["writes", trace, "out"], b"debug registers"),
                        (["writes", trace, "total +"], b""),
                        (["calls", os.path.join(work, "nothing"), "main"], b"")]:
        r = Run([rw, *args])
        check(r.status == 2 and b"rewind:" in r.stderr and words in r.stderr,
              f"{args[2:]}: not a usage error saying {words!r}\n{r.describe()}")
    return "usage errors"


def scenario_program_nobody_here_wrote(rw, programs, work):
    # seq's libc write() calls against the write syscalls recorded.
    trace = os.path.join(work, "seq.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", "seq", "1", "200000"], cwd=work)
    check(r.status == 0, f"recording seq failed\n{r.describe()}")
    syscalls = sum(1 for e in dump_events(rw, trace) if e["kind"] == "syscall" and e["name"] == "write")
    j = query(rw, "calls", trace, "write")
    fds = {c["args"][0]["value"] for c in j["calls"]}
    # (Where the program starts, `write` is its PLT stub: libc's, at the end.)
    check(j["object"] == "libc.so.6", f"write is not libc's but {j['object']}")
    check(len(j["calls"]) == syscalls and fds == {"1"},
          f"{len(j['calls'])} calls of write (fds {fds}), {syscalls} write syscalls recorded")
    return f"{syscalls} writes of seq, {j['seconds']:.2f} s"


def origin(rw, programs, work, mode, *extra):
    with open(os.path.join(work, "origin.bin"), "wb") as f:
        f.write(bytes((i * 7 + 3) & 255 for i in range(4096)))
    trace = os.path.join(work, f"origin-{mode}.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "origin_chain"), mode], cwd=work)
    check(r.status == 0, f"recording origin_chain {mode} failed\n{r.describe()}")
    j = query(rw, "origin", trace, "result", *extra)
    check(j["hops"], f"{mode}: no hop")
    return trace, j


def origin_line(marker):
    return line_of(marker, os.path.join(PROGRAMS_SOURCE, "origin_chain.c"))


def scenario_origin_file(rw, programs, work):
    # A file's bytes, libc's memcpy of 4 KiB, a struct copy, arithmetic in a
    # function, a store: back to byte 16 of the file.
    svg = os.path.join(work, "chain.svg")
    trace, j = origin(rw, programs, work, "file", "--svg", svg)
    hops = j["hops"]
    import xml.etree.ElementTree as ElementTree
    drawn = ElementTree.parse(svg).getroot()
    dots = [e for e in drawn.iter() if e.tag.endswith("circle")]
    texts = " ".join(e.text or "" for e in drawn.iter() if e.tag.endswith("text"))
    check(len(dots) == len(hops) and f"origin_chain.c:{origin_line('/* MEMCPY */')}" in texts,
          f"the picture has {len(dots)} hops of {len(hops)}, or not the memcpy's line")
    kinds = [h["kind"] for h in hops]
    check(j["complete"] and kinds[-1] == "event", f"the chain does not end at a syscall: {kinds}, {j['ends']}")
    check("byte 16 of the file" in hops[-1]["what"] and "origin.bin" in hops[-1]["what"],
          f"not byte 16 of origin.bin: {hops[-1]['what']}")
    copy = [h for h in hops if h["kind"] == "copy"]
    check(len(copy) == 1 and "n=4096" in copy[0]["what"] and copy[0]["line"] == origin_line("/* MEMCPY */"),
          f"the memcpy hop: {copy}")
    check(hops[0]["kind"] == "store" and hops[0]["line"] == origin_line("/* RESULT */"), f"first hop: {hops[0]}")
    arithmetic = [h for h in hops if h["kind"] == "compute"]
    check(arithmetic and all(h["function"] == "scaled" and h["line"] == origin_line("/* ARITHMETIC */")
                             for h in arithmetic), f"the arithmetic hops: {arithmetic}")
    check(any(h["line"] == origin_line("/* STRUCT COPY */") for h in hops), "no hop on the struct copy's line")
    check(all(h["line"] for h in hops if h["kind"] != "event"), "a hop without a line")
    # A hop's position in gdb: the same instruction.
    load = next(h for h in hops if h["kind"] == "load")
    r = Run([rw, "replay", trace, "--", "-batch", "-ex", f"goto {load['position']}", "-ex", "print/x $pc"])
    check(f"= {load['pc']:#x}" in r.stdout.decode(errors="replace"), f"goto {load['position']}\n{r.describe()}")
    return f"{len(hops)} hops to byte 16 of the file"


def scenario_reverse_origin_in_gdb(rw, programs, work):
    # The path users take: stopped in gdb, the origin of a local there.
    trace, _ = origin(rw, programs, work, "file")
    r = Run([rw, "replay", trace, "--", "-batch", "-ex", "break scaled", "-ex", "continue", "-ex", "reverse-origin x",
             "-ex", "frame"])
    out = r.stdout.decode(errors="replace")
    after = out.split("origin: a syscall's result")[-1]  # `frame`, after the chain
    check("byte 16 of the file" in out and "scaled (" in after, f"reverse-origin in gdb\n{r.describe()}")
    return "from a breakpoint in scaled, the session left there"


def scenario_origin_strdup_random_constant(rw, programs, work):
    _, j = origin(rw, programs, work, "strdup")
    check("byte 11 of the file" in j["hops"][-1]["what"] and any(h["kind"] == "copy" for h in j["hops"]),
          f"strdup: {[h['what'] for h in j['hops']]}")
    _, j = origin(rw, programs, work, "random")
    check("getrandom" in j["hops"][-1]["what"], f"random: {j['hops'][-1]}")
    _, j = origin(rw, programs, work, "constant")
    last = j["hops"][-1]
    check(last["kind"] == "constant" and "0x2a" in last["what"] and last["line"] == origin_line("/* CONSTANT */"),
          f"constant: {last}")
    return "strdup, getrandom, a constant"


def scenario_origin_through_a_pipe(rw, programs, work):
    trace, j = origin(rw, programs, work, "pipe")
    last = j["hops"][-1]["what"]
    m = re.search(r"rewind origin (--pid \d+) \S+ '([^']+)' --at (\d+)", last)
    check(m is not None and "written by process" in last, f"the pipe's writer is not named: {last}")
    r = Run([rw, "origin", *m.group(1).split(), trace, m.group(2), "--at", m.group(3), "--json"])
    check(r.status == 0, f"the writer's side\n{r.describe()}")
    writer = json.loads(r.stdout)["hops"][-1]
    check(writer["kind"] == "constant" and "0x1122334455667788" in writer["what"], f"the writer's origin: {writer}")
    return "into the child that wrote"


def scenario_origin_of_a_byte_sort_prints(rw, programs, work):
    # sort (coreutils) copies each line through its own buffers and libc's
    # small-copy paths (overlapping stores after a jump table: a step back
    # from a watched write that names the next instruction by the write).
    with open(os.path.join(work, "fruit.txt"), "w") as f:
        f.write("pear\napple\nfig\n")
    trace = os.path.join(work, "sort.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", "sort", "fruit.txt"], cwd=work)
    check(r.status == 0 and r.stdout == b"apple\nfig\npear\n", f"recording sort failed\n{r.describe()}")
    write = next(e for e in dump_events(rw, trace)
                 if e["kind"] == "syscall" and e["name"] == "write" and e["args"][0] == 1)
    # Byte 6 of the output, the f of fig: byte 11 of the file.
    j = query(rw, "origin", trace, f"*(char*){write['args'][1] + 6:#x}", "--at", str(write["index"] + 1))
    last = j["hops"][-1]
    check(j["complete"] and "byte 11 of the file" in last["what"] and "fruit.txt" in last["what"],
          f"not byte 11 of fruit.txt: {[h['what'] for h in j['hops']]}")
    return f"{len(j['hops'])} hops to byte 11 of the file"


NEED_DEBUG_REGISTERS = {scenario_writes, scenario_origin_file, scenario_origin_of_a_byte_sort_prints,
                        scenario_reverse_origin_in_gdb, scenario_origin_strdup_random_constant,
                        scenario_origin_through_a_pipe}
SCENARIOS = [scenario_calls, scenario_recursion_longjmp_float, scenario_most, scenario_writes,
             scenario_call_positions_in_gdb, scenario_bad_input, scenario_program_nobody_here_wrote,
             scenario_origin_file, scenario_origin_strdup_random_constant, scenario_origin_through_a_pipe,
             scenario_origin_of_a_byte_sort_prints, scenario_reverse_origin_in_gdb]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    if not os.access("/usr/bin/gdb", os.X_OK):
        skip("no gdb at /usr/bin/gdb")

    def scenario(s):
        fn = lambda: s(args.rewind, args.programs, fresh_dir(os.path.join(args.work, s.__name__)))
        return requiring(args.rewind, DEBUG_REGISTERS, fn) if s in NEED_DEBUG_REGISTERS else fn
    return run_checks([(s.__name__, scenario(s)) for s in SCENARIOS], args.only)


if __name__ == "__main__":
    sys.exit(main())
