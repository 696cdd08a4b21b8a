#!/usr/bin/env python3
"""rewind watch: the graph example's cycle-closing add_edge, a list length
that crosses a bound several times, values that come and go (the last
change asked for), a name that means the same global at every probe, a
pointer overwritten by a memcpy overrun, an expression that never changes,
one that cannot be evaluated, and reverse-watch inside rewind replay's gdb.

  check_watch.py --rewind R --programs DIR --graph G --work W
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import (DEBUG_REGISTERS, Run, check, fresh_dir, machine_can, require_root, requiring, run_checks,
                    serve_on_free_port, skip)
from rwtest import rewind_watch as watch

NO_CHANGE, UNEVALUABLE = 4, 5


def record(rw, work, name, argv):
    trace = os.path.join(work, name + ".trace")
    r = Run([rw, "record", "-q", "-o", trace, "--"] + argv, cwd=work)
    check(r.status in (0, 1), f"recording {name} failed\n{r.describe()}")
    return trace, r


def scenario_graph(rw, programs, graph, work):
    log = os.path.join(work, "culprit.log")
    trace, _ = record(rw, work, "graph", [graph, "--log", log])
    with open(log) as f:
        m = re.match(r"culprit edge (\d+): (\d+) -> (\d+)", f.read())
    check(m is not None, "the graph program did not log its culprit edge")
    index, frm, to = m.groups()
    r, j = watch(rw, trace, "has_cycle(g)", "--print", "i", "--print", "from", "--print", "to")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(j["function"] == "add_edge", f"the change is not in add_edge: {j}")
    check("a->out[a->n_out++] = to" in j["source"], f"not the line that stores the edge: {j}")
    check(j["after"]["value"] == "1", f"has_cycle(g) is not 1 after the change: {j}")
    last = j.get("last_evaluable", {})
    check(not j["before"]["value"].startswith("<cannot") or (last.get("value") == "0" and "(" in last.get("where", "")),
          f"the value is unevaluable before the change and the last value seen is not reported: {j}")
    check(j["printed"] == {"i": index, "from": frm, "to": to},
          f"rewind watch names edge {j['printed']}, the program logged {index}: {frm} -> {to}")
    check(not j.get("no_other_value_seen"), f"a change from 0 reported as a first evaluation: {j}")
    # g is NULL until graph_new (inlined into main) returns, with n_nodes set:
    # "g->n_nodes > 0" only becomes evaluable, it never changes value. Said so.
    r, k = watch(rw, trace, "g->n_nodes > 0")
    check(r.status == 0 and k.get("no_other_value_seen") is True and k["function"] == "main",
          f"becoming evaluable at g = graph_new(n) is not told apart from a change\n{r.describe()}")
    r = Run([rw, "watch", trace, "g->n_nodes > 0"])
    check(b"is 1 from here on" in r.stdout and b"saw no other value" in r.stdout, f"unclear report\n{r.describe()}")
    return f"edge {index} ({frm} -> {to}) in {j['probes']} probes, {j['seconds']:.1f} s"


def scenario_graph_logged_late(rw, programs, graph, work):
    # The culprit is written down only at the end: no event follows it
    # closely, and the stretch that holds it runs on through thousands of
    # forward edges, where a probe landing in the middle of an add_edge could
    # see a slot counted but not yet written.
    log = os.path.join(work, "culprit-late.log")
    trace, _ = record(rw, work, "graph-late", [graph, "--log-at-exit", log])
    with open(log) as f:
        index = re.match(r"culprit edge (\d+)", f.read()).group(1)
    r, j = watch(rw, trace, "has_cycle(g)", "--print", "i")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(j["printed"] == {"i": index}, f"rewind watch names edge {j['printed']}, the program logged {index}")
    return f"edge {index} in {j['probes']} probes, {j['seconds']:.1f} s"


def scenario_list(rw, programs, graph, work):
    trace, _ = record(rw, work, "list", [os.path.join(programs, "list_bound")])
    r, j = watch(rw, trace, "list_len(head) > 300")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    # Any of the crossings is a real change; the search verified it, and so do we.
    check(j["function"] == "push" and "push-line" in j["source"], f"not a push that crosses the bound: {j}")
    check(j["before"]["value"] == "0" and j["after"]["value"] == "1", f"values: {j}")
    return f"{j['source'].strip()} in {j['probes']} probes"


def scenario_after_exec(rw, programs, graph, work):
    # The recorded command is a shell that execs the program (as env, a
    # script's interpreter or a version manager's shim do): the expression
    # is about the program, whose symbols gdb must hold at the positions
    # the search looks at (it once still held the shell's).
    trace, _ = record(rw, work, "exec", ["/bin/sh", "-c", f"exec {os.path.join(programs, 'list_bound')}"])
    r, j = watch(rw, trace, "list_len(head) > 300")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(j["function"] == "push" and "push-line" in j["source"], f"not a push that crosses the bound: {j}")
    # At a position before the exec the process runs the shell: the message says so, and where the program begins.
    r, k = watch(rw, trace, "list_len(head) > 300", "--at", "5")
    check(r.status == 5 and k["outcome"] == "unevaluable", f"expected exit 5 before the exec\n{r.describe()}")
    check("(the process runs " in k["message"], f"the message does not say which program runs there: {k}")
    check(re.search(r"execs \S*list_bound at event \d+: --at a position after it", k["message"]) is not None,
          f"the message does not say where the program begins: {k}")
    return f"{j['source'].strip()} in {j['probes']} probes, after sh's exec"


def scenario_child_process(rw, programs, graph, work):
    # The program of interest is a child of the recorded command (a
    # pipeline): --exec (or --pid) watches it; without, the message says
    # which processes there are.
    trace, _ = record(rw, work, "pipe", ["/bin/sh", "-c", f"{os.path.join(programs, 'list_bound')} | cat"])
    r, j = watch(rw, trace, "list_len(head) > 300", "--exec", "list_bound")
    check(r.status == 0 and j["outcome"] == "found", f"not found in the child\n{r.describe()}")
    check(j["function"] == "push" and "push-line" in j["source"], f"not a push that crosses the bound: {j}")
    r, k = watch(rw, trace, "list_len(head) > 300")
    check(r.status == 5 and "--exec NAME looks in another process" in k["message"] and "list_bound" in k["message"],
          f"the message does not name the other processes\n{r.describe()}")
    r = Run([rw, "watch", trace, "list_len(head) > 300", "--pid", "999999"])
    check(r.status == 2 and b"has no process 999999" in r.stderr, f"--pid of no process\n{r.describe()}")
    return f"{j['source'].strip()} in the pipeline's list_bound, {j['probes']} probes"


def scenario_last_of_many_changes(rw, programs, graph, work):
    # "flag == 1" became 1 twice, and is 1 in the middle of the run too: the
    # change asked for is the last one before --at, not the one a bisection
    # from the start finds by probing the middle first.
    trace, _ = record(rw, work, "flips", [os.path.join(programs, "flag_flips")])
    r, j = watch(rw, trace, "flag == 1")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check("LAST-SET" in j["source"], f"not the last change: {j['source'].strip()} ({j['file']}:{j['line']})")
    return f"{j['source'].strip()}, {j['probes']} probes"


def scenario_one_meaning(rw, programs, graph, work):
    # `flag` is the program's global wherever the replay stands: at the end
    # (inside finish(), whose parameter is named flag too) and at every probe.
    trace = os.path.join(work, "meaning.trace")
    rec = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "flag_meaning")], cwd=work)
    check(rec.status == 3, f"flag_meaning did not exit with 3\n{rec.describe()}")
    seen = {}
    for expr in ("flag", "::flag"):
        r, j = watch(rw, trace, expr)
        seen[expr] = j
        check(r.status == 0 and j["outcome"] == "found", f"{expr}: not found\n{r.describe()}")
        # Its value at the start (0) is its value at the end: the last change is asked for.
        check("LAST" in j["source"] and j["after"]["value"] == "0",
              f"{expr}: not the last change: {j['source'].strip()} ({j['file']}:{j['line']}), {j['after']}")
        check(j.get("same_value_at_start") is True, f"{expr}: the same value at the start not said: {j}")
    j = seen["flag"]
    check(j["names"].get("flag", "").startswith("the variable at"), f"flag not resolved as the global: {j['names']}")
    check(any(m.startswith("flag: a local of finish") for m in j["other_meanings"]),
          f"the other meaning of flag (finish's parameter) not reported: {j['other_meanings']}")
    r = Run([rw, "watch", trace, "flag"])
    check(b"kept one meaning" in r.stdout and b"a local of finish" in r.stdout, f"unclear report\n{r.describe()}")
    return f"line LAST, {seen['flag']['probes']} and {seen['::flag']['probes']} probes"


def scenario_value_comes_and_goes(rw, programs, graph, work):
    trace, _ = record(rw, work, "comes-and-goes", [os.path.join(programs, "list_comes_and_goes")])
    r, j = watch(rw, trace, "list_len() == 0")
    check(r.status == 0 and j["outcome"] == "found", f"no change found\n{r.describe()}")
    check(j["function"] == "pop" and any("list_comes_and_goes.c:52" in f for f in j["backtrace"]),
          f"not the last pop: {j['backtrace']}")
    check(j["before"]["value"] == "0" and j["after"]["value"] == "1", f"values: {j}")
    # Looking back in time samples the last stretch; an alarm that comes
    # after the program's end leaves no anchor (it once ended the replay).
    info = Run([rw, "info", trace]).stdout.decode()
    last = int(re.search(r"^events\s+(\d+)", info, re.M).group(1)) - 1
    r = Run(["gdb", "-batch", "-ex", f"target extended-remote | {rw} serve --stdio -q {trace}",
             "-ex", f"monitor rw-sample {last} 1 100000000", "-ex", "monitor rw-status"])
    out = r.stdout.decode() + r.stderr.decode()
    check('{"anchors":[],"ran_us":[]}' in out and '"position":' in out,
          f"a sample of the last stretch past the program's end\n{r.describe()}")
    return f"the last pop in {j['probes']} probes, {j['seconds']:.1f} s"


def scenario_a_syscall_resets_the_value(rw, programs, graph, work):
    # total grows past 500, then a read() from /dev/zero sets it back to 0,
    # as at the start: the last change is the kernel's write (no watchpoint
    # sees it), found at the event. And the search drawn.
    trace, _ = record(rw, work, "resets", [os.path.join(programs, "calls_count"), "40"])
    svg = os.path.join(work, "search.svg")
    r, j = watch(rw, trace, "total > 500", "--svg", svg)
    check(r.status == 0 and j["outcome"] == "found" and j["changed_by"] == "syscall read()",
          f"the read() that reset total is not the change\n{r.describe()}")
    import xml.etree.ElementTree as ElementTree
    dots = [e for e in ElementTree.parse(svg).getroot().iter() if e.tag.endswith("circle")]
    check(len(dots) == j["probes"] + 1, f"the picture has {len(dots)} dots for {j['probes']} probes and the change")
    return f"the read() in {j['probes']} probes"


def scenario_last_change_in_the_middle_and_first(rw, programs, graph, work):
    # The last change of a flag flipped 100,000 times in the first half of
    # the run and 0 after, as at the start: the flip with i == 99999. And a
    # flag set by main's first statement and never again.
    trace, _ = record(rw, work, "middle", [os.path.join(programs, "flag_phases"), "middle"])
    r, j = watch(rw, trace, "flag", "--print", "i")
    check(r.status == 0 and j["outcome"] == "found", f"middle: not found\n{r.describe()}")
    check("FLIP" in j["source"] and j["printed"].get("i") == "99999" and j["after"]["value"] == "0",
          f"middle: not the last flip: {j['source'].strip()}, {j['printed']}, {j['after']}")
    middle = j["probes"]
    trace, _ = record(rw, work, "first", [os.path.join(programs, "flag_phases"), "first"])
    r, j = watch(rw, trace, "flag")
    check(r.status == 0 and "FIRST" in j["source"], f"first: not main's first statement\n{r.describe()}")
    return f"the last flip in {middle} probes, the first statement in {j['probes']}"


def scenario_memcpy(rw, programs, graph, work):
    trace, rec = record(rw, work, "memcpy", [os.path.join(programs, "memcpy_overflow")])
    out = rec.stdout.decode()
    addr = re.search(r"rows pointer at (0x[0-9a-f]+)", out).group(1)
    bad = re.search(r"rows pointer now (0x[0-9a-f]+)", out).group(1)
    r, j = watch(rw, trace, f"*(long*){addr} == {bad}")
    check(r.status == 0 and j["outcome"] == "found", f"not found\n{r.describe()}")
    check(re.search(r"mem(cpy|move)", j["function"]) is not None, f"the write is not in memcpy: {j}")
    check(any("set_name" in f and "memcpy_overflow.c:19" in f for f in j["backtrace"]),
          f"the caller is not the overflowing memcpy line: {j['backtrace']}")
    return f"{j['function']} called from set_name, {j['probes']} probes"


def scenario_never_changes(rw, programs, graph, work):
    trace, _ = record(rw, work, "never", [os.path.join(programs, "memcpy_overflow")])
    r, j = watch(rw, trace, "storage[0] == 12345")
    check(r.status == NO_CHANGE and j["outcome"] == "no-change", f"expected exit {NO_CHANGE}\n{r.describe()}")
    check("no change was found" in j["message"] and "--from" in j["message"],
          f"unclear message: {j['message']}")
    r, j = watch(rw, trace, "storage[0] == 12345", "--from", "50%")
    check(r.status == NO_CHANGE and "at --from 50%" in j["message"], f"--from 50%\n{r.describe()}")
    r = Run([rw, "watch", trace, "storage[0] == 12345", "--from", "999999"])
    check(r.status == 1 and b"--from 999999 is not an event" in r.stderr, f"--from past the end\n{r.describe()}")
    r, j = watch(rw, trace, "no_such_variable + 1")
    check(r.status == UNEVALUABLE and j["outcome"] == "unevaluable", f"expected exit {UNEVALUABLE}\n{r.describe()}")
    check("no_such_variable" in j["message"], f"unclear message: {j['message']}")
    r = Run([rw, "watch", trace, ""])
    check(r.status == 2 and b"empty" in r.stderr, f"an empty expression was accepted\n{r.describe()}")
    return "exit statuses 4, 5 and 2"


def scenario_connect(rw, programs, graph, work):
    # A replay already served (rewind serve --port): the search runs in it,
    # after the expression's syntax is checked without connecting.
    trace, _ = record(rw, work, "connect", [os.path.join(programs, "list_bound")])
    server, port = serve_on_free_port(rw, trace)
    try:
        where = f"127.0.0.1:{port}"
        r = Run([rw, "watch", trace, "list_len(head) >", "--connect", where])
        check(r.status == 2 and b"cannot parse" in r.stderr, f"a syntax error is not a usage error\n{r.describe()}")
        r = Run([rw, "watch", trace, "list_len(head) > 300", "--connect", where, "--pid", "1"])
        check(r.status == 2 and b"--connect" in r.stderr, f"--pid with --connect was accepted\n{r.describe()}")
        r, j = watch(rw, trace, "list_len(head) > 300", "--connect", where)
        check(r.status == 0 and j["outcome"] == "found", f"not found through --connect\n{r.describe()}")
        check(j["function"] == "push" and "push-line" in j["source"], f"not a push that crosses the bound: {j}")
    finally:
        server.kill()
        server.wait()
    return f"{j['source'].strip()} in {j['probes']} probes, in a served replay"


def scenario_reverse_watch_in_gdb(rw, programs, graph, work):
    trace, _ = record(rw, work, "rwatch", [os.path.join(programs, "list_bound")])
    r = Run([rw, "replay", trace, "--", "-nx", "-batch", "-ex", "continue", "-ex", "reverse-watch list_len(head) > 300",
             "-ex", "print list_len(head) > 300", "-ex", "stepi", "-ex", "print list_len(head) > 300", "-ex",
             "reverse-stepi", "-ex", "print list_len(head)"], timeout=900)
    out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    check(re.search(r"changed from 0 to 1", out) is not None, f"reverse-watch did not report the change\n{out}")
    check(re.search(r"push-line", out) is not None, f"gdb is not at the push line\n{out}")
    values = re.findall(r"^\$\d+ = (\d+)", out, re.M)
    check(values[:3] == ["0", "1", "300"], f"expected 0 (before), 1 (one instruction later), 300 (back): {values}\n{out}")
    return "gdb left just before the change"


def scenario_count_of_a_hot_instruction(rw, programs, graph, work):
    # The search counts executions of instructions. With debug registers
    # the count is exact however large; with int3s (a trap each) it stops
    # at 20,000 with that reason, even where the position counted towards
    # is on the same instruction, and the search tries other addresses.
    trace, _ = record(rw, work, "compute", [os.path.join(programs, "compute_loop"), "0.01"])
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "compute_loop.c")
    with open(source) as f:
        line = next(n for n, text in enumerate(f, 1) if "/* the long loop */" in text)
    # The long loop runs after the second clock_gettime, in that event's stretch.
    dump = Run([rw, "dump", trace]).stdout.decode()
    event = int(re.findall(r"^#(\d+)\s.*clock_gettime", dump, re.M)[-1]) + 1
    script = (f'python a = gdb.decode_line("compute_loop.c:{line}")[1][0].pc; '
              f'gdb.execute(f"monitor rw-count {event} {event}:b{{a:x}}x30000 {{a:x}}")')
    r = Run(["gdb", "-nx", "-batch", "-ex", f"target extended-remote | {rw} serve --stdio -q {trace}", "-ex", script],
            timeout=300)
    out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    if machine_can(rw, DEBUG_REGISTERS):
        check(re.search(r'"counts":\[30000\]', out) is not None, f"expected 30000 executions\n{r.describe()}")
        return "30,000 executions counted by a debug register"
    check("counting stopped" in out and "more than 20000 times" in out, f"int3 counting did not stop\n{r.describe()}")
    return "int3 counting stopped at 20,000 executions"


LABEL_SCRIPT = r"""
import json
def tool(command):
    out = gdb.execute("monitor " + command, to_string=True)
    return json.loads(out[out.index("{"):])
def regs():
    gdb.execute("maintenance flush register-cache")
    return gdb.execute("info registers", to_string=True)
stretch = STRETCH
anchor = tool(f"rw-sample {stretch} 1 1000")["anchors"][0]
tool("rw-goto " + anchor)
gdb.execute("maintenance flush register-cache")
frame = gdb.newest_frame()
if frame.name() != "round_of":
    print("LABEL no anchor inside round_of:", frame.name())
else:
    ret = frame.older().pc()
    settled = f"{anchor}/b{ret:x}x1"
    tool("rw-goto " + settled)
    want = regs()
    named = tool(f"rw-label {stretch} {settled}")["position"]
    n = int(named.rsplit("x", 1)[1])
    tool("rw-goto " + named)
    same = regs() == want
    # From a start resting on the instruction: that execution is not counted again.
    start = f"{stretch}:b{ret:x}x5"
    later = tool(f"rw-label {start} {settled}")["position"]
    print(f"LABEL n={n} same={same} named={named} later={later} want_later={start}/b{ret:x}x{n - 5}")
"""


def scenario_label_names_an_anchor(rw, programs, graph, work):
    # An anchor (a snapshot an alarm stopped) is named as a count of
    # executions of an instruction: the count must reach the very same
    # registers, from the stretch's start and from a start resting on the
    # instruction, whether a BPF filter on the breakpoint compares the
    # registers in the kernel or the replayer at each execution.
    if not machine_can(rw, DEBUG_REGISTERS):
        skip("labels count with debug registers, which this machine does not let fire")
    trace, rec = record(rw, work, "label", [os.path.join(programs, "label_loop")])
    dump = Run([rw, "dump", trace]).stdout.decode()
    # The loop runs in the stretch before stdio's first call for printf.
    stretch = int(re.findall(r"^#(\d+)\s.*(?:newfstatat|write)\(1", dump, re.M)[0])
    script = os.path.join(work, "label.py")
    with open(script, "w") as f:
        f.write(LABEL_SCRIPT.replace("STRETCH", str(stretch)))
    said = []
    for filtered in ("1", "0"):
        env = dict(os.environ, REWIND_DEBUG="1", REWIND_BPF_FILTERS=filtered)
        for attempt in range(3):  # an alarm may stop the loop itself, between two rounds
            server, port = serve_on_free_port(rw, trace, env)
            r = Run(["gdb", "-nx", "-batch", "-ex", f"target extended-remote localhost:{port}", "-x", script],
                    timeout=300)
            try:
                server_said = server.communicate(timeout=60)[1].decode(errors="replace")
            except subprocess.TimeoutExpired:
                server.kill()
                server_said = server.communicate()[1].decode(errors="replace")
            out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
            if "no anchor inside round_of" not in out:
                break
        m = re.search(r"LABEL n=(\d+) same=(\w+) named=(\S+) later=(\S+) want_later=(\S+)", out)
        check(m is not None, f"no label (filter {filtered})\n{r.describe()}")
        n, same, _, later, want_later = m.groups()
        check(same == "True", f"the named position's registers are not the anchor's (filter {filtered}): {m.group(0)}")
        check(later == want_later, f"named from a start resting on the instruction: {later}, not {want_later}")
        check(1 < int(n) <= 8192, f"a label of {n} executions")
        by_filter = "registers compared by the filter" in server_said
        check(filtered == "1" or not by_filter, "REWIND_BPF_FILTERS=0 still filtered")
        said.append(f"{n} executions " + ("by the BPF filter" if by_filter else "stopping at each"))
    if "by the BPF filter" not in said[0]:
        said[0] += " (the filter did not load here: REWIND_DEBUG says why)"
    return "; ".join(said)


BACKSTEP_SCRIPT = r"""
import json, re
def tool(command):
    out = gdb.execute("monitor " + command, to_string=True)
    return json.loads(out[out.index("{"):])
stretch = STRETCH
tool(f"rw-goto {stretch}")
gdb.execute("maintenance flush register-cache")
spill = int(gdb.parse_and_eval("&table.spill"))
said = gdb.execute("info line hot_store.c:LINE", to_string=True)
start, end = (int(a, 16) for a in re.findall(r"(?:starts at address|ends at) (0x[0-9a-f]+)", said))
arch = gdb.selected_inferior().architecture()
code = [i for i in arch.disassemble(start, end) if i["addr"] < end]
# The line's store: its last instruction with a memory destination (AT&T: the last operand).
store = [i["addr"] for i in code if re.search(r",\s*[-0-9a-fx]*\(%\w+(,%\w+,\d)?\)$", i["asm"])][-1]
write = f"{stretch}:w{spill:x}.4.1x1"
n = tool(f"rw-count {stretch} {write} {store:x}")["counts"][0]
for back in (1000, 20000):
    base = f"{stretch}:b{store:x}x{n - back}"
    tool(f"rw-goto {base}/w{spill:x}.4.1x1")
    try:
        found = tool("rw-back 4096")
    except gdb.error as e:
        found = {"error": str(e)}
    if "position" in found:
        tail = found["position"][len(base):]
        k = int(tail.rsplit("x", 1)[1]) if tail else 0
        print(f"BACK {back} at {n - back + k}")
    else:
        print(f"BACK {back} failed: {found.get('error')}")
"""


def scenario_backstep_in_a_hot_loop(rw, programs, graph, work):
    # Stepping back from a watched write whose store runs tens of thousands
    # of times: each execution before it is judged (does it write the watched
    # word?) in the kernel by a BPF filter, or, without it, at a stop each,
    # which gives up past 4,096. Both find the same execution.
    if not machine_can(rw, DEBUG_REGISTERS):
        skip("stepping back from a write counts with debug registers, which this machine does not let fire")
    trace, rec = record(rw, work, "hot", [os.path.join(programs, "hot_store")])
    check(rec.stdout.strip().endswith(b" 1"), f"unexpected output\n{rec.describe()}")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "hot_store.c")
    with open(source) as f:
        line = next(n for n, text in enumerate(f, 1) if "/* HOT STORE */" in text)
    dump = Run([rw, "dump", trace]).stdout.decode()
    stretch = int(re.findall(r"^#(\d+)\s.*(?:newfstatat|write)\(1", dump, re.M)[0])
    script = os.path.join(work, "backstep.py")
    with open(script, "w") as f:
        f.write(BACKSTEP_SCRIPT.replace("STRETCH", str(stretch)).replace("LINE", str(line)))
    found = {}
    for filtered in ("1", "0"):
        server, port = serve_on_free_port(rw, trace, dict(os.environ, REWIND_BPF_FILTERS=filtered))
        r = Run(["gdb", "-nx", "-batch", "-ex", f"target extended-remote localhost:{port}", "-x", script], timeout=300)
        try:
            server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
        out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
        for back in ("1000", "20000"):
            m = re.search(rf"BACK {back} (at (\d+)|failed: (.*))", out)
            check(m is not None, f"no step back from {back} executions before (filter {filtered})\n{r.describe()}")
            found[(filtered, back)] = int(m.group(2)) if m.group(2) else m.group(3)
    at = found[("0", "1000")]
    check(isinstance(at, int), f"stepping back over 1,000 executions with a stop each failed: {at}")
    check(found[("1", "1000")] == at, f"with the filter, from 1,000 before: {found[('1', '1000')]}, not {at}")
    check(isinstance(found[("0", "20000")], str) and "4096" in found[("0", "20000")],
          f"with a stop each, 20,000 executions before should give up past 4,096: {found[('0', '20000')]}")
    if isinstance(found[("1", "20000")], str) and "filter" not in found[("1", "20000")]:
        # (Where the filter cannot be loaded, both ways give up alike.)
        check(found[("1", "20000")] == found[("0", "20000")], f"{found}")
        return f"the store's {at}th execution; no write filter here (REWIND_DEBUG=1 says why)"
    check(found[("1", "20000")] == at, f"with the filter, from 20,000 before: {found[('1', '20000')]}, not {at}")
    return f"the store's {at}th execution, from 1,000 and 20,000 executions before, with and without the filter"


def scenario_writes(rw, programs, graph, work):
    # EXPR reads one global: gdb watches it with a debug register, the
    # search bisects over the writes to it and steps back from the one that
    # made the change (its positions name that write).
    trace, rec = record(rw, work, "writes", [os.path.join(programs, "counted_writes")])
    check(b"hits 1000, mode 7" in rec.stdout, f"unexpected output\n{rec.describe()}")
    r, j = watch(rw, trace, "hits >= 700")
    check(r.status == 0 and j["outcome"] == "found" and "HIT" in j["source"], f"not the HIT line\n{r.describe()}")
    check(re.search(r"[:/]w[0-9a-f]+\.8\.1x700$", j["after"]["position"]) is not None,
          f"not found at the 700th write to hits: {j['after']}")
    check(j["before"]["value"] == "0" and j["after"]["value"] == "1", f"values: {j['before']} {j['after']}")
    # Two places (the pointer, set before the stretch, and the field): only
    # the field's writes change it there.
    r, j = watch(rw, trace, "cur->n >= 400")
    check(r.status == 0 and j["outcome"] == "found" and "REC" in j["source"], f"not the REC line\n{r.describe()}")
    check(re.search(r"[:/]w[0-9a-f]+\.8\.1x200$", j["after"]["position"]) is not None,
          f"not found at the 200th write to cur->n: {j['after']}")
    # Two places both written (the sum reaches 150 at round 50's PAIR-B):
    # the writes of one divide the stretch, the other's find the change.
    r, j = watch(rw, trace, "pair.a + pair.b >= 150")
    check(r.status == 0 and j["outcome"] == "found" and "PAIR-B" in j["source"], f"not PAIR-B\n{r.describe()}")
    check(re.search(r"[:/]w[0-9a-f]+\.8\.1x50/w[0-9a-f]+\.8\.1x1$", j["after"]["position"]) is not None,
          f"not found at the write to pair.b after the 50th to pair.a: {j['after']}")
    # The tools: writes counted between the two getppid calls; the step back
    # from a write of the fill loop traps its store at each round, and gives
    # up past a bound (the replay stays where it was).
    dump = Run([rw, "dump", trace]).stdout.decode()
    event = int(re.findall(r"^#(\d+)\s.*getppid", dump, re.M)[0]) + 1
    script = f"""python
import json
def tool(command):
    out = gdb.execute("monitor " + command, to_string=True)
    return json.loads([line for line in out.splitlines() if line.startswith("{{")][-1])
hits, mode, cell = (int(gdb.parse_and_eval(f"(long)&{{v}}")) for v in ("hits", "mode", "table[4999]"))
to = f"{event}:w{{cell:x}}.8.1x1"
print("WRITES", tool(f"rw-count {event} {{to}} w{{hits:x}}.8 w{{mode:x}}.8")["writes"])
tool("rw-goto " + to)
print("CAPPED", tool("rw-back 100").get("error"))
print("STAYED", tool("rw-status")["position"] == to)
print("BACK", tool("rw-back")["position"])
gdb.execute("maintenance flush register-cache")
print("LINE", gdb.find_pc_line(int(gdb.parse_and_eval("$pc"))).line)
print("BAD", tool("rw-count {event} " + to + " w1.8").get("error"))
end"""
    # (The write filter would judge the store's rounds in the kernel and
    # stop at none of them: scenario_backstep_in_a_hot_loop covers it.)
    r = Run(["gdb", "-nx", "-batch", "-ex", f"target extended-remote | {rw} serve --stdio -q {trace}", "-ex", script],
            env=dict(os.environ, REWIND_BPF_FILTERS="0"), timeout=300)
    out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    check("WRITES [1000, 1]" in out, f"expected 1000 writes to hits and 1 to mode\n{out}")
    check(re.search(r"CAPPED counting stopped: .* more than 100 times", out) is not None, f"rw-back 100\n{out}")
    check("STAYED True" in out, f"a step back given up moved the replay\n{out}")
    check(re.search(rf"BACK {event}:b[0-9a-f]+x5000\n", out) is not None, f"not the store's 5000th run\n{out}")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "counted_writes.c")
    with open(source) as f:
        fill = next(n for n, text in enumerate(f, 1) if "/* FILL */" in text)
    check(f"LINE {fill}\n" in out, f"the step back is not on the FILL line ({fill})\n{out}")
    check("BAD a watched range is 1, 2, 4 or 8 bytes" in out, f"a misaligned range was accepted\n{out}")
    return "found at the 700th write to hits, the 200th to cur->n, the 50th pair.b"


# gdb's reverse-stepi steps back by counting several instructions at once.
NEED_DEBUG_REGISTERS = {scenario_reverse_watch_in_gdb, scenario_writes, scenario_one_meaning, scenario_a_syscall_resets_the_value,
                        scenario_last_change_in_the_middle_and_first}
SCENARIOS = [scenario_graph, scenario_label_names_an_anchor, scenario_backstep_in_a_hot_loop, scenario_graph_logged_late, scenario_list, scenario_after_exec, scenario_child_process,
             scenario_last_of_many_changes, scenario_one_meaning, scenario_value_comes_and_goes,
             scenario_last_change_in_the_middle_and_first, scenario_a_syscall_resets_the_value, scenario_memcpy, scenario_never_changes, scenario_connect,
             scenario_count_of_a_hot_instruction, scenario_reverse_watch_in_gdb, scenario_writes]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    if not os.access("/usr/bin/gdb", os.X_OK):
        skip("no gdb at /usr/bin/gdb")
    def scenario(s):
        fn = lambda: s(args.rewind, args.programs, args.graph, fresh_dir(os.path.join(args.work, s.__name__)))
        return requiring(args.rewind, DEBUG_REGISTERS, fn) if s in NEED_DEBUG_REGISTERS else fn
    return run_checks([(s.__name__, scenario(s)) for s in SCENARIOS], args.only)

if __name__ == "__main__":
    sys.exit(main())
