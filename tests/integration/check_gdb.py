#!/usr/bin/env python3
"""gdb against rewind's replay server, in batch mode, asserting what gdb
prints: breakpoints (also in shared libraries), stepping, watchpoints with
reverse-continue, reverse stepping, inferior calls that leave the recording
untouched, goto and checkpoints, the ends of history, registers, and the
loopback-only TCP server.

  check_gdb.py --rewind R --programs DIR --work W [--gdb /usr/bin/gdb]
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import (DEBUG_REGISTERS, Failure, Run, check, fresh_dir, require_root, requiring, run_checks,
                    serve_on_free_port, skip)

GDB = "/usr/bin/gdb"
SRC = "debug_target.c"


def line_of(programs_src, marker):
    with open(os.path.join(programs_src, SRC)) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    raise Failure(f"no line with {marker!r} in {SRC}")


class Session:
    """One `rewind replay TRACE -- -batch -ex …` run of gdb."""

    def __init__(self, rw, trace):
        self.rw, self.trace = rw, trace

    def run(self, *commands, timeout=300):
        argv = [self.rw, "replay", "--gdb", GDB, self.trace, "--", "-nx", "-batch"]
        for c in commands:
            argv += ["-ex", c]
        # One stream, so that gdb's messages and the program's output keep their order.
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        return p.stdout.decode(errors="replace")


def expect(out, *patterns):
    """Each regex matches, in this order, in gdb's output."""
    pos = 0
    for p in patterns:
        m = re.compile(p, re.M).search(out, pos)
        check(m is not None, f"expected /{p}/ after offset {pos} in gdb's output:\n{out}")
        pos = m.end()


def refute(out, *patterns):
    for p in patterns:
        check(re.search(p, out, re.M) is None, f"did not expect /{p}/ in gdb's output:\n{out}")


def no_divergence(out):
    refute(out, r"diverged", r"Remote connection closed", r"cannot reproduce")


# ---- scenarios ------------------------------------------------------------

def scenario_breakpoints_and_stepping(s, src):
    bump = line_of(src, "bump-line")
    call = line_of(src, "call-line")
    out = s.run("break bump", "continue", "bt", "info threads", "continue", "print counter", "print by",
                "next", "step", "next", "advance square", "finish", "delete", "hbreak add_square", "continue",
                "print x", "delete", "tbreak debug_target.c:%d if i == 7" % call, "continue", "print i",
                "info registers rip", "print $xmm0.v2_int64[0] == $xmm0.v2_int64[0]", "print sizeof($ymm0)")
    no_divergence(out)
    expect(out, r"Breakpoint 1, bump \(by=1\) at .*debug_target.c:%d" % bump,
           r"#1 .* main \(\) at .*debug_target.c:%d" % (call + 1),
           r"\* 1 +Thread \d+",
           r"Breakpoint 1, bump \(by=2\)", r"\$1 = 1", r"\$2 = 2",
           r"^%d\t}" % (bump + 1),
           r"main \(\) at .*debug_target.c:%d" % (call + 2),
           r"^%d\t" % (call + 4),
           r"square \(x=3\) at ",
           r"add_square \(acc=5, x=3\)", r"Value returned is \$3 = 9",
           r"Hardware assisted breakpoint 2 at",
           r"Breakpoint 2, add_square \(acc=14, x=4\)", r"\$4 = 4",
           r"Temporary breakpoint 3 at", r"Temporary breakpoint 3, main \(\) at .*:%d" % call, r"\$5 = 7",
           r"rip +0x[0-9a-f]+ +0x[0-9a-f]+ <main\+\d+>", r"\$6 = 1", r"\$7 = 32")


def scenario_shared_library_breakpoint(s, src):
    out = s.run("break clock_gettime", "continue", "bt", "info sharedlibrary")
    no_divergence(out)
    expect(out, r"Breakpoint 1 at 0x[0-9a-f]+", r"Breakpoint 1, .*clock_gettime",
           r"#\d+ +0x[0-9a-f]+ in main \(\) at .*debug_target.c",
           r"Yes .*libc\.so\.6")


def scenario_watch_reverse_continue(s, src):
    bump = line_of(src, "bump-line")
    out = s.run("break bump", "continue", "delete", "watch counter", "continue", "continue",
                "reverse-continue", "reverse-continue", "reverse-continue", "continue", "continue")
    no_divergence(out)
    expect(out,
           # forward: 0 -> 1 (by=1), 1 -> 3 (by=2)
           r"Old value = 0\nNew value = 1", r"Old value = 1\nNew value = 3",
           # back: stops at the instruction that wrote, values shown going back
           r"Old value = 3\nNew value = 1\n.*bump \(by=2\) at .*:%d\n%d\t    counter \+= by;" % (bump, bump),
           r"Old value = 1\nNew value = 0\n.*bump \(by=1\)",
           r"No more reverse-execution history",
           # and forward again, exactly as recorded
           r"Old value = 0\nNew value = 1", r"Old value = 1\nNew value = 3")


def scenario_reverse_stepping(s, src):
    call = line_of(src, "call-line")
    bump_call = line_of(src, "bump-call-line")
    out = s.run("break bump if by == 3", "continue",
                # back out of bump into main, then into add_square's end
                "reverse-step", "reverse-step", "reverse-step", "bt 2",
                # out of add_square to its call
                "reverse-finish",
                # over the call of add_square: the previous iteration's loop line
                "reverse-next", "print i", "reverse-next", "print i",
                "reverse-stepi", "stepi", "next", "next", "print i")
    no_divergence(out)
    expect(out, r"Breakpoint 1, bump \(by=3\)",
           r"main \(\) at .*:%d\n%d\t +bump\(i\);" % (bump_call, bump_call),
           r"^%d\t +checksum = add_square" % call,
           r"add_square \(acc=5, x=3\) at .*\n\d+\t}",
           r"#1 .* main \(\) at .*:%d" % call,
           r"main \(\) at .*:%d" % call,
           r"\$1 = 3", r"for \(long i = 1", r"\$2 = 2",
           r"\$3 = 3")
    refute(out, r"square \(x=")  # reverse-next never stops inside the call


def scenario_inferior_call(s, src):
    out = s.run("break bump", "continue", "continue 3", "print counter", "print square(by)",
                "print add_square(1000, 3)", "print counter", "delete", "call bump(100)", "print counter",
                "set var counter = 5", "print counter", "break bump", "continue", "print by", "print counter",
                "delete", "continue", "print counter")
    no_divergence(out)
    expect(out, r"Breakpoint 1, bump \(by=4\)",
           r"\$1 = 6", r"\$2 = 16", r"\$3 = 1009", r"\$4 = 6",
           r"\$5 = 106",  # the call ran in a throwaway copy, which the debugger now shows
           r"\$6 = 5",
           r"changes made from the debugger are dropped",
           r"Breakpoint 2, bump \(by=5\)", r"\$7 = 5", r"\$8 = 10",
           r"step 25: counter=325 checksum=5525",
           r"done: 8", r"\$9 = -1")


def scenario_goto_and_checkpoints(s, src):
    a = s.run("goto 50%", "when", "break bump", "continue", "print by", "print counter",
              "checkpoint", "continue 5", "print by", "info checkpoints", "restart 1", "print by",
              "restart", "when", "goto 999999", "restart 9", "goto nonsense")
    no_divergence(a)
    m = re.search(r"Breakpoint 1, bump \(by=(\d+)\)", a)
    check(m is not None, f"no breakpoint after goto 50%:\n{a}")
    k = int(m.group(1))
    check(20 <= k <= 80, f"goto 50% led to iteration {k}, far from the middle:\n{a}")
    expect(a, r"At event \d+ of \d+ events \(50%\)",
           r"\$1 = %d" % k, r"\$2 = %d" % (k * (k - 1) // 2),
           r"Checkpoint 1 at event",
           r"\$3 = %d" % (k + 5),
           r"^1 +event \d+",
           r"\$4 = %d" % k,
           r"At event \d+ of \d+ events \(\d%\)",
           r"the recording has \d+ events", r"no checkpoint 9", r"goto needs an event number")
    # From the start, the same breakpoint reaches iteration k after k hits.
    b = s.run("break bump", "continue", "continue %d" % (k - 1), "print by", "print counter", "info breakpoints")
    no_divergence(b)
    expect(b, r"\$1 = %d" % k, r"\$2 = %d" % (k * (k - 1) // 2), r"breakpoint already hit %d times" % k)


def scenario_history_ends(s, src):
    out = s.run("reverse-stepi", "reverse-continue", "continue", "bt 1", "continue", "reverse-stepi",
                "print counter", "stepi", "stepi")
    no_divergence(out)
    expect(out, r"No more reverse-execution history", r"No more reverse-execution history",
           r"done: 8", r"No more reverse-execution history.\n.*_exit", r"#0 .*_exit",
           r"No more reverse-execution history", r"\$1 = -1", r"_exit.c",
           r"No more reverse-execution history")


def scenario_tcp_loopback(rw, trace):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([rw, "serve", "-q", "--port", str(port), trace], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        listening = ""
        while time.time() < deadline:
            with open("/proc/net/tcp") as f:
                listening = f.read()
            if (":%04X 00000000:0000 0A" % port) in listening:
                break
            time.sleep(0.05)
        check(("0100007F:%04X 00000000:0000 0A" % port) in listening,
              f"the server does not listen on 127.0.0.1:{port} only:\n{listening}")
        out = Run([GDB, "-nx", "-batch", "-ex", f"target extended-remote localhost:{port}", "-ex", "break bump",
                   "-ex", "continue", "-ex", "print by"], timeout=120)
        text = out.stdout.decode(errors="replace") + out.stderr.decode(errors="replace")
        expect(text, r"Breakpoint 1, bump \(by=1\)", r"\$1 = 1")
        server.wait(timeout=60)
        check(server.returncode == 0, f"serve exited with {server.returncode}: {server.stderr.read().decode()}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


class RawRemote:
    """A client that speaks gdb's remote protocol itself, on a socket or on
    a server's stdin and stdout, so that it can do what gdb never does."""

    def __init__(self, write, read):
        self.write, self.read, self.buffer = write, read, b""

    def send(self, payload):
        data = payload.encode()
        self.write(b"$" + data + b"#%02x" % (sum(data) & 0xFF))

    def packet(self):
        while True:
            start = self.buffer.find(b"$")
            end = self.buffer.find(b"#", start) if start >= 0 else -1
            if end >= 0 and len(self.buffer) >= end + 3:
                payload, self.buffer = self.buffer[start + 1:end], self.buffer[end + 3:]
                return payload
            chunk = self.read()
            if not chunk:
                return None
            self.buffer += chunk

    def ask(self, payload):
        self.send(payload)
        return self.packet()

    def start(self):
        """No acknowledgments from here on."""
        reply = self.ask("QStartNoAckMode")
        self.write(b"+")
        check(reply == b"OK", f"QStartNoAckMode: {reply!r}")


def raw_on_port(port, receive_buffer=None):
    conn = socket.socket()
    if receive_buffer:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    conn.settimeout(60)
    conn.connect(("127.0.0.1", port))
    return conn, RawRemote(conn.sendall, lambda: conn.recv(65536))


def scenario_malformed_packets(rw, trace):
    """Packets no gdb sends (a descriptor too large for any number, hex
    that is not hex): each gets an error reply and a note that says it was
    malformed, and the session goes on; never a library's exception text
    ("stoi") or a crash."""
    server, port = serve_on_free_port(rw, trace)
    try:
        conn, remote = raw_on_port(port)
        with conn:
            remote.start()
            bad = ["vFile:pread:" + "f" * 40 + ",10,0", "qRcmd,zz", "vFile:open:zz,0,0", "mzz,4",
                   "vFile:close:" + "9" * 30, "Z0,zz,1"]
            for packet in bad:
                reply = remote.ask(packet)
                check(reply is not None and reply.startswith(b"E"), f"{packet}: the reply is {reply!r}, not an error")
            check(remote.ask("?").startswith(b"T"), "the session did not go on after the malformed packets")
            check(remote.ask("D") == b"OK", "detach")
        server.wait(timeout=60)
        said = server.stderr.read().decode(errors="replace")
        check(server.returncode == 0, f"serve exited with {server.returncode}:\n{said}")
        check(said.count("a malformed") == len(bad) and "stoi" not in said and "stoull" not in said,
              f"what serve said of {len(bad)} malformed packets:\n{said}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return f"{len(bad)} malformed packets answered with errors"


def scenario_gdb_gone_mid_reply(rw, trace):
    """gdb goes away while the server is writing to it (killed, the
    connection reset): on a socket and on stdin/stdout, serve ends the
    session with a message and status 0, not killed by SIGPIPE (141)."""
    requests = "".join("$g#67" for _ in range(20000)).encode()  # replies far beyond any buffer
    server, port = serve_on_free_port(rw, trace)
    try:
        conn, remote = raw_on_port(port, receive_buffer=4096)
        remote.start()
        conn.sendall(requests)
        time.sleep(1)  # the server is blocked writing replies no one reads
        conn.close()  # unread data: the connection is reset
        server.wait(timeout=60)
        said = server.stderr.read().decode(errors="replace")
        check(server.returncode == 0 and "gdb went away" in said,
              f"serve --port when its gdb went away mid-reply: status {server.returncode}\n{said}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    stdio = subprocess.Popen([rw, "serve", "--stdio", "-q", trace], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        remote = RawRemote(lambda b: (stdio.stdin.write(b), stdio.stdin.flush()), lambda: stdio.stdout.read1(65536))
        remote.start()
        writer = threading.Thread(target=lambda: remote.write(requests), daemon=True)
        writer.start()
        time.sleep(1)
        stdio.stdout.close()  # gdb killed: its end of the pipe is gone
        writer.join(timeout=60)
        try:
            stdio.stdin.close()
        except BrokenPipeError:
            pass
        stdio.wait(timeout=60)
        said = stdio.stderr.read().decode(errors="replace")
        check(stdio.returncode == 0 and "gdb went away" in said,
              f"serve --stdio when its gdb went away mid-reply: status {stdio.returncode}\n{said}")
    finally:
        if stdio.poll() is None:
            stdio.kill()
            stdio.wait()
    return "status 0 and a message, on a socket and on a pipe"


def scenario_serve_access(rw, trace, work):
    """rewind serve --port: another local user's gdb is refused (the server
    keeps waiting for its own user), and the server's files are the
    trace's own: a host file that is not in the trace cannot be read."""
    if not shutil.which("setpriv"):
        raise Failure("setpriv (util-linux) is missing")
    server, port = serve_on_free_port(rw, trace)
    try:
        target = ["-ex", f"target extended-remote 127.0.0.1:{port}"]
        nobody = Run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GDB, "-nx", "-batch", *target,
                      "-ex", f"remote get /etc/shadow {work}/nobody-shadow"], timeout=120)
        refused = server.stderr.readline()
        check(b"refused a connection from uid 65534" in refused, f"serve did not refuse nobody: {refused!r}")
        check(not os.path.exists(f"{work}/nobody-shadow"), f"another user read a host file\n{nobody.describe()}")
        program = os.path.realpath("/proc/self/exe")  # any file of the host the trace does not hold
        own = Run([GDB, "-nx", "-batch", *target, "-ex", f"remote get {program} {work}/host-file",
                   "-ex", f"remote get /lib64/ld-linux-x86-64.so.2 {work}/traced-file"], timeout=120)
        check(not os.path.exists(f"{work}/host-file"), f"a host file outside the trace was served\n{own.describe()}")
        with open("/lib64/ld-linux-x86-64.so.2", "rb") as a, open(f"{work}/traced-file", "rb") as b:
            check(a.read() == b.read(), "the trace's copy of ld.so differs from the file")
        server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return "nobody refused, host files not served"


def scenario_goto_position(s, src):
    """goto to a position between two events (counted by debug registers,
    or by int3s where they do not work); gdb and the server stay in step
    (a refusal once shifted every later reply)."""
    out = s.run("break bump", "continue", "continue", "when", "goto 0%", "when")
    positions = re.findall(r"^Position (\S+) \(for", out, re.M)
    check(len(positions) == 2 and ":" in positions[0], f"no position between events:\n{out}")
    out = s.run("goto 0%", f"goto {positions[0]}", "when", "info registers rip", "goto 100%", "when")
    no_divergence(out)
    refute(out, r"Python Exception", r"Unknown remote", r"Invalid hex digit", r"without a live selected thread")
    after = re.findall(r"^Position (\S+) \(for", out, re.M)
    check(len(after) == 2, f"when did not answer twice:\n{out}")
    check(after[0] == positions[0], f"goto {positions[0]} arrived at {after[0]}:\n{out}")
    return f"goto {positions[0]}: arrived"


def scenario_thread_local(rw, programs, work):
    """errno and a __thread variable, in the main thread and in a worker:
    each thread's own value (gdb asks the server with qGetTLSAddr)."""
    trace = os.path.join(work, "threads_tls.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "threads_tls")])
    check(r.status == 0 and b"main errno 9 counter 7" in r.stdout, f"recording threads_tls\n{r.describe()}")
    saved = os.environ.get("REWIND_DEBUG")
    os.environ["REWIND_DEBUG"] = "1"  # the server logs how it found each address
    try:
        out = Session(rw, trace).run("break observe", "continue", "print errno", "print tls_counter", "continue",
                                     "print errno", "print tls_counter", "thread 1", "print tls_counter",
                                     "print errno")
    finally:
        if saved is None:
            del os.environ["REWIND_DEBUG"]
        else:
            os.environ["REWIND_DEBUG"] = saved
    no_divergence(out)
    refute(out, r"Cannot find thread-local", r"Remote target failed to process qGetTLSAddr")
    expect(out, r"Breakpoint 1, observe \(value=7\)", r"\$1 = 9", r"\$2 = 7",
           r"Breakpoint 1, observe \(value=42\)", r"\$3 = 2", r"\$4 = 42",
           r"\$5 = 7", r"\$6 = 9")
    if os.path.exists("/lib/x86_64-linux-gnu/libthread_db.so.1"):  # as gdbserver: by glibc's libthread_db
        expect(out, r"qGetTLSAddr thread \d+ module 0x[0-9a-f]+: 0x[0-9a-f]+ in [0-9.]+ ms \(libthread_db\)")
        refute(out, r"reading glibc's descriptors instead")
    return "errno 9 and 2, tls_counter 7 and 42"


def scenario_threads(rw, programs, work):
    """A multithreaded replay: every thread listed, a breakpoint stops the
    thread that reaches it, `thread N` and its backtrace, reverse-continue
    back to the first thread's stop, reverse-stepi in another thread, and
    scheduler-locking: the thread that runs now steps alone, and a thread
    that could only move after others is refused rather than moved."""
    trace = os.path.join(work, "threads_barrier.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "threads_barrier")])
    check(r.status == 0, f"recording threads_barrier\n{r.describe()}")
    out = Session(rw, trace).run("break work", "continue", "print (long)arg", "continue", "info threads", "thread 1",
                                 "bt", "reverse-continue", "print (long)arg", "monitor when",
                                 "set scheduler-locking on", "stepi", "thread 1",
                                 "reverse-stepi", "x/2bx $pc", "stepi", "stepi", "set scheduler-locking off", "continue",
                                 "print (long)arg")
    no_divergence(out)
    # Which worker reaches `work` first is the recording's schedule.
    expect(out, r"Thread [2-5] hit Breakpoint 1, work \(arg=0x[0-3]\)", r"\$1 = ([0-3])",
           r"Thread [2-5] hit Breakpoint 1, work", r"^  1 +Thread \d+ +.*futex",
           r"^\* [2-5] +Thread \d+ +work \(arg=0x[0-3]\)", r"#\d+ .* main \(\) at .*threads_barrier.c",
           r"Thread \d+ hit Breakpoint 1, work \(arg=0x[0-3]\)", r"\$2 = ([0-3])",
           r"At event \d+ > 1 x 0x[0-9a-f]+ .*thread \d+",
           # The worker runs now: it steps alone.
           r"^0x[0-9a-f]+\s+14\s+long id = \(long\)arg;",
           # main's last instruction is the syscall it blocks in (0f 05);
           # stepping it alone runs that syscall, and then it must wait.
           r"\[Switching to thread 1 ", r":\s+0x0f\s+0x05", r"futex",
           r"rewind: scheduler-locking is on: thread \d+ cannot go on alone",
           r"Thread \d+ hit Breakpoint 1, work", r"\$3 = [0-3]")
    first = re.search(r"\$1 = ([0-3])", out).group(1)
    back = re.search(r"\$2 = ([0-3])", out).group(1)
    check(first == back, f"reverse-continue came back to worker {back}, the first stop was worker {first}\n{out}")


def scenario_parallel_threads(rw, programs, sources, work):
    """gdb on a trace recorded with --parallel: producer/consumer threads
    with condition variables, some asleep in a futex whenever gdb stops
    (the replay stops them for gdb and puts them back to sleep after). A
    conditional breakpoint, a watchpoint forwards then backwards across
    other threads' waits, every thread listed with a frame, and the rest of
    the run printing what the recording printed; scheduler-locking."""
    trace = os.path.join(work, "threads_condvar.parallel")
    r = Run([rw, "record", "-q", "--parallel", "-o", trace, "--", os.path.join(programs, "threads_condvar")])
    check(r.status == 0, f"recording threads_condvar --parallel\n{r.describe()}")
    with open(os.path.join(sources, "threads_condvar.c")) as f:
        line = next(n for n, text in enumerate(f, 1) if "consumed_total++" in text)
    out = Session(rw, trace).run(f"break threads_condvar.c:{line} if consumed_total == 150", "continue",
                                 "print consumed_total", "delete", "watch consumed_total", "continue", "continue",
                                 "print consumed_total", "reverse-continue", "reverse-continue", "reverse-continue",
                                 "print consumed_total", "info threads", "delete", "continue")
    no_divergence(out)
    expect(out, r"hit Breakpoint 1, consumer", r"\$1 = 150",
           r"Old value = 150\s+New value = 151", r"Old value = 151\s+New value = 152", r"\$2 = 152",
           r"Old value = 152\s+New value = 151", r"Old value = 151\s+New value = 150",
           r"Old value = 150\s+New value = 149", r"\$3 = 149",
           r"^[ *] 1 +Thread \d+ ", r"^[ *] 5 +Thread \d+ ",
           re.escape(r.stdout.decode().strip()))
    refute(out, r"Could not read registers", r"remote failure reply")
    # Scheduler-locking: the consumer that stopped steps alone; a producer
    # cannot go on before it has reached its next event.
    out = Session(rw, trace).run(f"break threads_condvar.c:{line} if consumed_total == 150", "continue",
                                 "set scheduler-locking on", "next", "next", "print consumed_total", "thread 4",
                                 "stepi", "set scheduler-locking off", "delete", "continue")
    no_divergence(out)
    expect(out, r"hit Breakpoint 1, consumer", r"\$1 = 151",
           r"rewind: scheduler-locking is on: thread \d+ cannot go on alone", re.escape(r.stdout.decode().strip()))


def scenario_signal_state(rw, work):
    """The replayed program starts with the recorded signal state, whoever
    launches the replay: sort asks for SIGINT's disposition at start, gdb
    ignores SIGINT in what it starts, and a recording made with SIGINT
    ignored replays from a shell that does not ignore it."""
    data = os.path.join(work, "lines.txt")
    with open(data, "w") as f:
        f.write("pear\napple\nfig\n")
    sort = shutil.which("sort")
    for name, ignore in (("default", False), ("ignored", True)):
        trace = os.path.join(work, f"sort-{name}.trace")
        pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore else None
        rec = subprocess.run([rw, "record", "-q", "-o", trace, "--", sort, data], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=pre, timeout=300)
        check(rec.returncode == 0 and rec.stdout == b"apple\nfig\npear\n", f"recording sort ({name}) failed")
        auto = Run([rw, "replay", "--autopilot", trace])
        check(auto.status == 0 and auto.stdout == rec.stdout, f"autopilot replay of sort ({name})\n{auto.describe()}")
        out = Session(rw, trace).run("break write", "continue", "print (int)$rdi", "continue")
        no_divergence(out)
        expect(out, r"Breakpoint 1, .*write", r"\$1 = 1", r"apple\nfig\npear")


def scenario_fault_siginfo(rw, programs, work):
    """At a recorded fault gdb's $_siginfo is the kernel's: the signal, the
    faulting address, the reason."""
    trace = os.path.join(work, "sigsegv.trace")
    Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "sigsegv")])
    out = Session(rw, trace).run("continue", "print $_siginfo.si_signo", "print $_siginfo._sifields._sigfault.si_addr",
                                 "print $_siginfo.si_code", timeout=60)
    no_divergence(out)
    expect(out, r"Program received signal SIGSEGV", r"\$1 = 11", r"\$2 = \(void \*\) 0x10", r"\$3 = 1\b")
    return "SIGSEGV at 0x10, SEGV_MAPERR"


def scenario_step_into_signalled_syscall(rw, work):
    """python3 sends itself SIGUSR1; stepped instruction by instruction into
    kill's syscall, whose exit delivers the signal. The CPU saves the trap
    flag of the single step in r11, which the recorded run did not have:
    the replay must not take that for a divergence, nor show it."""
    trace = os.path.join(work, "kill-self.trace")
    script = ("import os, signal\n"
              "signal.signal(signal.SIGUSR1, lambda *a: print('handled'))\n"
              "os.kill(os.getpid(), signal.SIGUSR1)\n")
    rec = Run([rw, "record", "-q", "-o", trace, "--", "/usr/bin/python3", "-c", script])
    check(rec.status == 0 and rec.stdout == b"handled\n", f"recording python3\n{rec.describe()}")
    out = Session(rw, trace).run("break kill", "continue", "stepi", "x/i $pc", "stepi", "stepi", "x/i $pc",
                                 "print/x $r11 & 0x100", "continue")
    no_divergence(out)
    expect(out, r"Breakpoint 1, .*kill", r"=> 0x[0-9a-f]+ <__GI_kill\+5>:\s+syscall", r"\$1 = 0x0", r"handled")
    return "stepped over kill's syscall into the delivery of SIGUSR1"


def scenario_reverse_at_exec(rw, work):
    """After an exec the history begins again: a reverse-continue at that
    beginning stays there (it once went on into the former program, and the
    next continue never came back)."""
    data = os.path.join(work, "words.txt")
    with open(data, "w") as f:
        f.write("alpha\nbeta\n")
    trace = os.path.join(work, "exec.trace")
    rec = Run([rw, "record", "-q", "-o", trace, "--", "/bin/sh", "-c", f"exec cat {data}"])
    check(rec.status == 0 and rec.stdout == b"alpha\nbeta\n", f"recording failed\n{rec.describe()}")
    try:
        out = Session(rw, trace).run("continue", "reverse-continue", "info symbol $pc", "reverse-continue",
                                     "info symbol $pc", "continue", timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("gdb did not come back within 60 s from a continue after two reverse-continues")
    no_divergence(out)
    expect(out, r"executing new program: /usr/bin/cat", r"No more reverse-execution history.\n.*_exit",
           r"No more reverse-execution history.\n.*_start", r"_start in section", r"No more reverse-execution history",
           r"_start in section", r"No more reverse-execution history.\n.*_exit")
    return "reverse-continue twice at the new program's start, then continue to the end"


def scenario_last_stretch(rw, programs, work):
    """The stretch between a program's last event and its exit call, millions
    of instructions long: reverse-stepi from the end finds the instruction
    before the exit call at once (it once single-stepped the whole stretch),
    and stepping forward inside the stretch after a snapshot was restored
    there moves on (it once said the history had ended). A watchpoint on
    what memcpy's vector stores wrote there, found backwards, stops at the
    store at once (the decoder once missed that such stores write)."""
    trace = os.path.join(work, "tail.trace")
    rec = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "tail_compute")])
    check(rec.stdout == b"computing 2000000 rounds\n", f"recording failed\n{rec.describe()}")
    try:
        out = Session(rw, trace).run("break tail_compute.c:25", "continue", "stepi", "reverse-stepi", "stepi",
                                     "info symbol $pc", "continue", "reverse-stepi", "info symbol $pc",
                                     "reverse-stepi", "stepi", "stepi", "stepi", "reverse-continue", timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("gdb did not come back within 60 s (a reverse-stepi from the end stepping the last stretch?)")
    no_divergence(out)
    expect(out, r"Breakpoint 1, main .*tail_compute.c:25", r"in section", r"No more reverse-execution history.\n.*_exit",
           r"_exit \+ \d+ in section", r"No more reverse-execution history.\n.*_exit", r"Breakpoint 1, main")
    # Inside the stretch, after a restore, neither stepi said the history had ended.
    inside = out.split("Breakpoint 1, main", 1)[1].split("in section", 1)[0]
    refute(inside, r"No more reverse-execution history")
    try:
        out = Session(rw, trace).run("break tail_compute.c:25", "continue", "watch -l copy[100]", "reverse-continue",
                                     "bt 2", timeout=60)
    except subprocess.TimeoutExpired:
        raise Failure("gdb did not come back within 60 s from a reverse-continue to memcpy's store")
    no_divergence(out)
    expect(out, r"Hardware watchpoint 2: -location copy\[100\]", r"Old value", r"#0 .*mem(cpy|move)",
           r"#1 .*main .*tail_compute.c:24")
    return "reverse-stepi from the end of a 2,000,000-round last stretch, stepping on from inside it, memcpy's store"


def scenario_child_processes(rw, work):
    """rewind ps shows the recorded tree; --exec and --pid open gdb on a
    child (one that execs, one that only forks) while the rest replays."""
    data = os.path.join(work, "words.txt")
    with open(data, "w") as f:
        f.write("alpha\nbeta\ngamma\n")
    trace = os.path.join(work, "pipeline.trace")
    script = f"cat {data} | tr a-z A-Z | head -2; (echo subshell-$((6*7))); true"
    rec = Run([rw, "record", "-q", "-o", trace, "--", "/bin/sh", "-c", script])
    check(rec.status == 0 and rec.stdout == b"ALPHA\nBETA\nsubshell-42\n", f"recording failed\n{rec.describe()}")
    ps = Run([rw, "ps", "--json", trace])
    check(ps.status == 0, f"rewind ps failed\n{ps.describe()}")
    tree = json.loads(ps.stdout)
    root = tree[0]
    check(root["parent"] == 0 and root["command"][:2] == ["/bin/sh", "-c"], f"first process: {root}")
    by_command = {" ".join(p["command"]): p for p in tree}
    tr = by_command.get("tr a-z A-Z")
    check(tr is not None and tr["parent"] == root["pid"] and tr["exit"] == "exit 0", f"no tr child: {tree}")
    forks = [p for p in tree if not p["execs"]]
    check(len(forks) == 1 and forks[0]["parent"] == root["pid"], f"expected one subshell without exec: {tree}")
    check(all(p["first_event"] <= p["last_event"] for p in tree), f"event ranges: {tree}")
    table = Run([rw, "ps", trace])
    check(b"tr a-z A-Z" in table.stdout and b"PARENT" in table.stdout, f"table\n{table.describe()}")

    def session(*options_and_commands, options=()):
        argv = [rw, "replay", "--gdb", GDB, *options, trace, "--", "-nx", "-batch", "-ex", "set breakpoint pending on"]
        for c in options_and_commands:
            argv += ["-ex", c]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        return p.stdout.decode(errors="replace")

    out = session("info inferiors", "break write", "continue", "print (char*)$rsi", "continue",
                  options=("--exec", "tr"))
    no_divergence(out)
    expect(out, r"usr/bin/tr", r"Breakpoint 1, .*write", r'\$1 = 0x[0-9a-f]+ "ALPHA\\nBETA\\nGAMMA\\n"')
    out = session("break write", "continue", "print (char*)$rsi", "continue", options=("--pid", str(forks[0]["pid"])))
    no_divergence(out)
    expect(out, r"Breakpoint 1, .*write", r'\$1 = 0x[0-9a-f]+ "subshell-42\\n"')
    bad = Run([rw, "replay", "--pid", "1", trace])
    check(bad.status == 2 and b"no process 1" in bad.stderr and b"tr a-z A-Z" in bad.stderr,
          f"--pid of no process\n{bad.describe()}")
    return f"{len(tree)} processes"


def scenario_hardware_random(rw, programs, sources, work):
    """Stepping forwards and backwards across an rdrand, which replay runs in
    the program's place: the register holds the recorded number after it,
    the value before it when stepped back, and gdb sees the instruction."""
    trace = os.path.join(work, "hw_random.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "hw_random")])
    check(r.status == 0, f"recording hw_random\n{r.describe()}")
    first = r.stdout.decode().splitlines()[0]
    if "no rdrand" in first:
        return "not exercised: this CPU has no rdrand"
    number = int(first.split()[-1], 16)  # the 32-bit rdrand's, into r10
    line = next(i for i, text in enumerate(open(os.path.join(sources, "hw_random.c")), 1) if "rdrand %%r10d" in text)
    out = Session(rw, trace).run(f"break hw_random.c:{line}", "continue", "stepi", "stepi", "print/x $r10",
                                 "reverse-stepi", "print/x $r10", "x/i $pc", "reverse-stepi", "x/i $pc",
                                 "stepi", "stepi", "print/x $r10")
    no_divergence(out)
    expect(out, rf"\$1 = {number:#x}\n", r"\$2 = 0xffffffffffffffff", r"=> 0x[0-9a-f]+ <draw\+\d+>:\s+rdrand\s+%r10d",
           r"=> 0x[0-9a-f]+ <draw\+\d+>:\s+mov\s+\$0xffffffffffffffff,%r10", rf"\$3 = {number:#x}\n")
    return f"r10 {number:#x} after the rdrand, forwards, backwards and forwards again"


def scenario_mapped_file_back_in_time(rw, programs, sources, work):
    """A store through a shared mapping of a file, undone by going back in
    time: the replay's copy of the file is part of its snapshots."""
    trace = os.path.join(work, "mapped_file_writes.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "mapped_file_writes")], cwd=work)
    check(r.status == 0, f"recording mapped_file_writes\n{r.describe()}")
    src = os.path.join(sources, "mapped_file_writes.c")
    lines = open(src).read().split("\n")
    store = next(n for n, line in enumerate(lines, 1) if "rw[50] = 'M';" in line)
    after = next(n for n, line in enumerate(lines, 1) if "int changed" in line)
    out = Session(rw, trace).run(f"break mapped_file_writes.c:{store}", f"break mapped_file_writes.c:{after}",
                                 "continue", "print ro[50]", "continue", "print ro[50]", "print ro[10]@6",
                                 "reverse-continue", "print ro[50]", "print ro[10]@6", "continue", "print ro[50]")
    no_divergence(out)
    expect(out, r"Breakpoint 1, main", r"\$1 = 0 '\\000'", r"Breakpoint 2, main", r"\$2 = 77 'M'",
           r'\$3 = "pwrite"', r"Breakpoint 1, main", r"\$4 = 0 '\\000'", r'\$5 = "pwrite"',
           r"Breakpoint 2, main", r"\$6 = 77 'M'")
    return "the store is gone at the earlier stop and back at the later one"


def scenario_shared_memory_back_in_time(rw, programs, sources, work):
    """Shared anonymous memory, written by a child and by its parent, as it
    was at an earlier stop: snapshots keep its content."""
    trace = os.path.join(work, "shared_anon_back.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "shared_anon_back")], cwd=work)
    check(r.status == 0, f"recording shared_anon_back\n{r.describe()}")
    lines = open(os.path.join(sources, "shared_anon_back.c")).read().split("\n")
    first = next(n for n, line in enumerate(lines, 1) if "the first stop" in line)
    second = next(n for n, line in enumerate(lines, 1) if "the second stop" in line)
    out = Session(rw, trace).run(f"break shared_anon_back.c:{first}", f"break shared_anon_back.c:{second}",
                                 "continue", "print shared[0]", "print shared[1]", "continue",
                                 "print shared[0]", "print shared[1]", "reverse-continue", "print shared[0]",
                                 "print shared[1]", "continue", "print shared[0]")
    no_divergence(out)
    expect(out, r"Breakpoint 1, main", r"\$1 = 2", r"\$2 = 5", r"Breakpoint 2, main", r"\$3 = 3", r"\$4 = 6",
           r"Breakpoint 1, main", r"\$5 = 2", r"\$6 = 5", r"Breakpoint 2, main", r"\$7 = 3")
    return "the parent's and the child's stores are as they were at the earlier stop"


def scenario_sysv_segment_back_in_time(rw, programs, sources, work):
    """A System V segment the children fill, seen from the parent: zeros
    before the children ran, their words after, the same going back and
    forth again; attached again with SHM_REMAP, the same words."""
    trace = os.path.join(work, "sysv_shared_memory.trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "sysv_shared_memory")], cwd=work)
    check(r.status == 0, f"recording sysv_shared_memory\n{r.describe()}")
    lines = open(os.path.join(sources, "sysv_shared_memory.c")).read().split("\n")
    before, after, remapped = (next(n for n, line in enumerate(lines, 1) if marker in line)
                               for marker in ("for (int c = 0; c < CHILDREN", "const volatile uint32_t *again",
                                              "remapped at the same address"))
    out = Session(rw, trace).run(f"break sysv_shared_memory.c:{before}", f"break sysv_shared_memory.c:{after}",
                                 f"break sysv_shared_memory.c:{remapped}", "continue", "print shared[5]",
                                 "print shared[0]", "continue", "print shared[5]", "print shared[0]", "continue",
                                 "print back[5]", "reverse-continue", "reverse-continue", "print shared[5]",
                                 "continue", "print shared[5]", "delete", "continue")
    no_divergence(out)
    written = str((5 * 2654435761) % 2**32 ^ (5 % 3))
    expect(out, r"Breakpoint 1, main", r"\$1 = 0", r"\$2 = 0", r"Breakpoint 2, main", rf"\$3 = {written}",
           r"\$4 = 3", r"Breakpoint 3, main", rf"\$5 = {written}", r"Breakpoint 2, main", r"Breakpoint 1, main",
           r"\$6 = 0", r"Breakpoint 2, main", rf"\$7 = {written}", re.escape(r.stdout.decode().strip()))
    return "zeros before the children wrote, their words after, back and forth"


def scenario_bad_input(rw, work):
    r = Run([rw, "replay", "--gdb", "/nonexistent/gdb", os.path.join(work, "missing-trace")])
    check(r.status != 0, "replay of a missing trace succeeded")
    r = Run([rw, "serve", os.path.join(work, "missing-trace")])
    check(r.status == 2 and b"--stdio or --port" in r.stderr, f"serve without a transport:\n{r.describe()}")


# hbreak, reverse execution: the CPU's debug registers.
NEED_DEBUG_REGISTERS = {scenario_breakpoints_and_stepping, scenario_watch_reverse_continue, scenario_reverse_stepping,
                        scenario_history_ends, scenario_threads, scenario_parallel_threads}

SCENARIOS = [scenario_breakpoints_and_stepping, scenario_shared_library_breakpoint,
             scenario_watch_reverse_continue, scenario_reverse_stepping, scenario_inferior_call,
             scenario_goto_and_checkpoints, scenario_history_ends]


def main():
    global GDB
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True, help="directory of the built test programs")
    ap.add_argument("--sources", required=True, help="directory of the test programs' sources")
    ap.add_argument("--work", required=True)
    ap.add_argument("--gdb", default=GDB)
    ap.add_argument("--only", help="run the scenarios whose name contains this")
    args = ap.parse_args()
    require_root()
    GDB = args.gdb
    if not os.access(GDB, os.X_OK):
        skip(f"no gdb at {GDB}")
    work = fresh_dir(args.work)
    trace = os.path.join(work, "debug_target.trace")
    r = Run([args.rewind, "record", "-q", "-o", trace, "--", os.path.join(args.programs, "debug_target")])
    if r.status != 0:
        print(f"FAIL recording debug_target\n{r.describe()}")
        return 1
    session = Session(args.rewind, trace)
    def needs(f, fn):
        return requiring(args.rewind, DEBUG_REGISTERS, fn) if f in NEED_DEBUG_REGISTERS else fn
    tests = [(f.__name__, needs(f, lambda f=f: f(session, args.sources))) for f in SCENARIOS]
    tests.append(("scenario_tcp_loopback", lambda: scenario_tcp_loopback(args.rewind, trace)))
    tests.append(("scenario_serve_access",
                  lambda: scenario_serve_access(args.rewind, trace, fresh_dir(os.path.join(work, "access")))))
    tests.append(("scenario_goto_position", lambda: scenario_goto_position(session, args.sources)))
    tests.append(("scenario_thread_local",
                  lambda: scenario_thread_local(args.rewind, args.programs, fresh_dir(os.path.join(work, "tls")))))
    tests.append(("scenario_bad_input", lambda: scenario_bad_input(args.rewind, work)))
    tests.append(("scenario_malformed_packets", lambda: scenario_malformed_packets(args.rewind, trace)))
    tests.append(("scenario_gdb_gone_mid_reply", lambda: scenario_gdb_gone_mid_reply(args.rewind, trace)))
    tests.append(("scenario_mapped_file_back_in_time",
                  lambda: scenario_mapped_file_back_in_time(args.rewind, args.programs, args.sources,
                                                            fresh_dir(os.path.join(work, "mapped")))))
    tests.append(("scenario_sysv_segment_back_in_time",
                  lambda: scenario_sysv_segment_back_in_time(args.rewind, args.programs, args.sources,
                                                             fresh_dir(os.path.join(work, "sysv_segment")))))
    tests.append(("scenario_shared_memory_back_in_time",
                  lambda: scenario_shared_memory_back_in_time(args.rewind, args.programs, args.sources,
                                                              fresh_dir(os.path.join(work, "shared_anon")))))
    tests.append(("scenario_hardware_random",
                  lambda: scenario_hardware_random(args.rewind, args.programs, args.sources,
                                                   fresh_dir(os.path.join(work, "hw_random")))))
    tests.append(("scenario_child_processes",
                  lambda: scenario_child_processes(args.rewind, fresh_dir(os.path.join(work, "children")))))
    tests.append(("scenario_signal_state", lambda: scenario_signal_state(args.rewind, fresh_dir(os.path.join(work, "signal_state")))))
    tests.append(("scenario_reverse_at_exec",
                  lambda: scenario_reverse_at_exec(args.rewind, fresh_dir(os.path.join(work, "reverse_exec")))))
    tests.append(("scenario_last_stretch",
                  lambda: scenario_last_stretch(args.rewind, args.programs, fresh_dir(os.path.join(work, "last_stretch")))))
    tests.append(("scenario_fault_siginfo",
                  lambda: scenario_fault_siginfo(args.rewind, args.programs, fresh_dir(os.path.join(work, "siginfo")))))
    tests.append(("scenario_step_into_signalled_syscall",
                  lambda: scenario_step_into_signalled_syscall(args.rewind, fresh_dir(os.path.join(work, "kill_self")))))
    tests.append(("scenario_threads",
                  needs(scenario_threads, lambda: scenario_threads(args.rewind, args.programs, work))))
    tests.append(("scenario_parallel_threads",
                  needs(scenario_parallel_threads,
                        lambda: scenario_parallel_threads(args.rewind, args.programs, args.sources, work))))
    return run_checks(tests, args.only)


if __name__ == "__main__":
    sys.exit(main())
