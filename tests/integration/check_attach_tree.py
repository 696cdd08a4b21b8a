#!/usr/bin/env python3
"""rewind record --pid PID --tree: a running process and every process
below it, attached at one moment, recorded together, and let go together.
Checked on a program of ours whose child ticks on its own (gdb and rewind
watch in the child); on a shell whose background subshell and foreground
loop both print and start processes; on two python3 processes that share
a page of anonymous memory (MAP_SHARED before a fork) and count in it,
which the start image, and a landmark of the replay, must share again
for the replay to see each other's counts; on nginx's master with two
workers under a load that runs throughout (they share a page too); and a
recorder killed with SIGKILL at several moments, after which both
processes of ours run on unharmed. For each: every process goes on after
the detach, untraced; the replay from the start image is exact; gdb
debugs a process below the attached one, at a breakpoint and back to the
attach point."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rwtest import Run, check, fresh_dir
from check_attach import (SOURCE, check_recorder_killed, check_slice, gdb_at_breakpoint_and_back, record_under_load,
                          run_main, start_nginx, target_output)


def children_of(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], stdout=subprocess.PIPE).stdout.split()
    return [int(p) for p in out]


def untraced(pids):
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                tracer = next(line.split()[1] for line in f if line.startswith("TracerPid:"))
            check(tracer == "0", f"thread {tid} of process {pid} is still traced by {tracer}")


def attached_in_ps(rw, trace, pids):
    ps = Run([rw, "ps", trace])
    for pid in pids:
        check(re.search(rb"^\s*%d\s.*\(attached\)" % pid, ps.stdout, re.M),
              f"rewind ps must list process {pid} as attached\n{ps.describe()}")


def check_usage(rw, work):
    alone = Run([rw, "record", "--tree", "--", "/bin/true"])
    check(alone.status != 0 and b"--tree goes with --pid" in alone.stderr, f"--tree without --pid\n{alone.describe()}")
    window = Run([rw, "record", "--pid", str(os.getpid()), "--tree", "--window", "1m", "-o",
                  os.path.join(work, "w")])
    check(window.status != 0 and b"cannot go with --tree" in window.stderr and not os.path.exists(
        os.path.join(work, "w")), f"--window with --tree\n{window.describe()}")
    # A process below of another user: refused as --pid refuses it (CRIU
    # needs CAP_SYS_RESOURCE to read its limits), naming it, and no trace.
    if shutil.which("setpriv"):
        parent = subprocess.Popen(["/bin/bash", "-c", "setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & "
                                   "wait"])
        try:
            time.sleep(0.5)
            other = children_of(parent.pid)
            trace = os.path.join(work, "other")
            rec = Run([rw, "record", "--pid", str(parent.pid), "--tree", "--for", "1s", "-o", trace], timeout=60)
            if rec.status == 1:
                check(other and b"cannot attach to process %d below process %d" % (other[0], parent.pid) in rec.stderr
                      and not os.path.exists(trace), f"another user's process below\n{rec.describe()}")
            else:
                check(rec.status == 0, f"another user's process below\n{rec.describe()}")
        finally:
            for pid in children_of(parent.pid):
                os.kill(pid, 9)
            parent.kill()
            parent.wait()
    return "--tree alone, with --window, and over another user's process refused"


def check_shell_tree(rw, work):
    script = os.path.join(work, "tree.sh")
    with open(script, "w") as f:
        f.write("( j=0; while [ $j -lt 80 ]; do j=$((j+1)); echo \"below $j $(ls / | wc -l)\"; sleep 0.03; done ) &\n"
                "i=0; while [ $i -lt 50 ]; do i=$((i+1)); echo \"above $i\"; sleep 0.05; done; wait\n")
    out_path = os.path.join(work, "tree.out")
    shell = subprocess.Popen(["/bin/bash", script], stdout=open(out_path, "wb"))
    time.sleep(0.4)
    below = [p for p in children_of(shell.pid) if b"bash" in open(f"/proc/{p}/cmdline", "rb").read()]
    trace = os.path.join(work, "tree")
    rec = Run([rw, "record", "--pid", str(shell.pid), "--tree", "--for", "1s", "-o", trace], timeout=120)
    status = shell.wait(timeout=60)
    whole = open(out_path, "rb").read()
    check(rec.status == 0 and status == 0 and whole.count(b"below ") == 80 and whole.count(b"above ") == 50,
          f"both loops must run all their rounds\n{rec.describe()}\n{whole.decode()}")
    check(b"processes below it" in rec.stderr or b"process below it" in rec.stderr,
          f"rewind record must say it recorded the processes below\n{rec.describe()}")
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0, f"replay\n{rep.describe()}")
    check_slice(rep.stdout, whole, "the shell and its subshell")
    check(b"below " in rep.stdout and b"above " in rep.stdout,
          f"the replay must print both processes' lines\n{rep.stdout.decode()}")
    check(len(below) == 1, f"the subshell was not found: {below}")
    subshell = below[0]
    attached_in_ps(rw, trace, [shell.pid, subshell])
    gdb_at_breakpoint_and_back(rw, trace, "write", "bt 1", ["--pid", str(subshell)])
    # A process that started while recorded is not one gdb can start with.
    later = next(int(line.split()[0]) for line in Run([rw, "ps", trace]).stdout.splitlines()[1:]
                 if b"(attached)" not in line)
    refused = Run([rw, "replay", "--pid", str(later), trace, "--", "-batch", "-ex", "info threads"], timeout=120)
    check(refused.status != 0 and b"started after rewind attached" in refused.stdout + refused.stderr,
          f"--pid of a process started while recorded\n{refused.describe()}")
    return (f"{len(rep.stdout.splitlines())} lines replayed from 2 shells; gdb in the subshell ({subshell}) at "
            f"write and back")


def check_program_tree(rw, work, program):
    out = open(os.path.join(work, "target.out"), "wb")
    target = subprocess.Popen([program, "70", "50", os.path.join(work, "target.file"), "tree"], stdout=out,
                              stderr=subprocess.STDOUT)
    time.sleep(0.5)
    kids = children_of(target.pid)
    check(len(kids) == 1, f"attach_target's child did not start: {kids}")
    child = kids[0]
    trace = os.path.join(work, "tree")
    rec = Run([rw, "record", "--pid", str(target.pid), "--tree", "--for", "1.5s", "-o", trace], timeout=120)
    status = target.wait(timeout=60)
    whole = target_output(work)
    check(rec.status == 0 and b"and the 1 process below it" in rec.stderr, f"record --tree\n{rec.describe()}")
    check(status == 0 and whole.strip().splitlines()[-1].startswith(b"done 70: value ok, bytes ok, usr1 pending"),
          f"both must go on correctly after the detach (status {status})\n{whole.decode(errors='replace')}")
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0, f"replay from the start image\n{rep.describe()}")
    check_slice(rep.stdout, whole, "attach_target and its child")
    counts = [int(c) for c in re.findall(rb"child tick \d+ count (\d+)", rep.stdout)]
    check(len(counts) > 5 and b"\ntick " in rep.stdout, f"both processes' ticks must be replayed\n{rep.stdout.decode()}")
    info = Run([rw, "info", trace])
    check(b"and the 1 process below it (--tree)" in info.stdout, f"rewind info\n{info.describe()}")
    line = next(i + 1 for i, text in enumerate(open(SOURCE)) if 'printf("child tick' in text)
    out = gdb_at_breakpoint_and_back(rw, trace, f"attach_target.c:{line}", "print child_count", ["--pid", str(child)])
    check(re.search(rb"\$1 = %d\b" % counts[0], out),
          f"gdb must see the child's first count recorded ({counts[0]})\n{out.decode()}")
    count_line = next(i + 1 for i, text in enumerate(open(SOURCE)) if "child_count +=" in text)
    watch = Run([rw, "watch", trace, "--pid", str(child), f"child_count >= {counts[4]}"], timeout=300)
    check(watch.status == 0 and b"attach_target.c:%d" % count_line in watch.stdout + watch.stderr,
          f"rewind watch in the child must name the line that changes child_count\n{watch.describe()}")
    return (f"{len(rep.stdout.splitlines())} lines replayed from 2 processes; gdb in the child at its count "
            f"{counts[0]} and back; rewind watch in the child names line {count_line}")


COUNTER = r"""
import mmap, os, struct, sys, time
page = mmap.mmap(-1, 4096)  # MAP_SHARED | MAP_ANONYMOUS: shared with the child
child = os.fork()
me = "child" if child == 0 else "parent"
for i in range(150):
    seen = struct.unpack_from("Q", page, 0)[0]
    struct.pack_into("Q", page, 0, seen + 1)
    print(me, i, seen, flush=True)
    time.sleep(0.02)
if child:
    os.waitpid(child, 0)
"""


def check_shared_page(rw, work):
    out_path = os.path.join(work, "counter.out")
    parent = subprocess.Popen([sys.executable, "-c", COUNTER], stdout=open(out_path, "wb"))
    time.sleep(0.6)
    kids = children_of(parent.pid)
    check(len(kids) == 1, f"the python child did not start: {kids}")
    trace = os.path.join(work, "counter")
    rec = Run([rw, "record", "--pid", str(parent.pid), "--tree", "--for", "1s", "-o", trace], timeout=120)
    check(rec.status == 0, f"record\n{rec.describe()}")
    check(parent.wait(timeout=60) == 0, "the python processes must finish")
    whole = open(out_path, "rb").read()
    check(whole.count(b"\n") == 300, f"both must count to the end\n{whole.decode()}")
    import json
    with open(os.path.join(trace, "start", "manifest.json")) as f:
        shared = json.load(f)["state"].get("shared_memory", [])
    check(any(len(r["mapped_at"]) == 2 for r in shared),
          f"the start image must know the page the two share: {shared}")
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0, f"replay (each count printed checked against the recording's)\n{rep.describe()}")
    # The replay's lines are the recording's, which interleave as the two
    # processes ran: the counts one saw include the other's increments.
    lines = rep.stdout.splitlines()
    check(lines and all(line in whole.splitlines() for line in lines), "the replay printed other counts")
    check(any(l.startswith(b"parent") for l in lines) and any(l.startswith(b"child") for l in lines),
          f"both processes must print in the replay\n{rep.stdout.decode()}")
    # A landmark of the replay: CRIU saves each process alone, the page is
    # shared again when it is restored (the counts after it are both's).
    lm = Run([rw, "landmark", trace, "--every", "50%"], timeout=300)
    check(lm.status == 0 and b"2 processes" in lm.stdout, f"rewind landmark\n{lm.describe()}")
    half = Run([rw, "replay", "--autopilot", "--from", "50%", trace], timeout=300)
    check(half.status == 0 and b"using landmark 1" in half.stderr and half.stdout and
          rep.stdout.endswith(half.stdout), f"replay from the landmark\n{half.describe()}")
    return (f"{len(lines)} counts replayed from 2 processes sharing a page; {len(half.stdout.splitlines())} from a "
            f"landmark at 50%")


def check_nginx_tree(rw, work):
    master, fetch = start_nginx(work, b"nginx tree under rewind\n" * 40, "root", workers=2)
    try:
        time.sleep(0.3)  # (its workers started)
        workers = children_of(master.pid)
        check(len(workers) == 2, f"nginx must have 2 workers: {workers}")
        trace = os.path.join(work, "nginx")
        rec, results = record_under_load(rw, trace, master.pid, fetch, options=("--tree",), children=workers)
        check(master.poll() is None and fetch() and sorted(children_of(master.pid)) == sorted(workers),
              "nginx and its workers must still serve after the detach")
        untraced([master.pid, *workers])
        attached_in_ps(rw, trace, [master.pid, *workers])
        rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
        check(rep.status == 0, f"replay (each write checked against the recorded bytes)\n{rep.describe()}")
        dump = Run([rw, "dump", trace]).stdout
        busy = max(workers, key=lambda w: dump.count(b"[%d] accept4(" % w))
        gdb_at_breakpoint_and_back(rw, trace, "ngx_http_process_request", "bt 1", ["--pid", str(busy)])
        return (f"master and 2 workers: {results['ok']} requests, none failed; the replay exact; gdb in worker "
                f"{busy}'s request handler and back")
    finally:
        master.terminate()
        master.wait()


def main():
    return run_main(lambda rw, program, work: [
        ("usage", lambda: check_usage(rw, fresh_dir(os.path.join(work, "usage")))),
        ("program_tree", lambda: check_program_tree(rw, fresh_dir(os.path.join(work, "program")), program)),
        ("shell_tree", lambda: check_shell_tree(rw, fresh_dir(os.path.join(work, "shell")))),
        ("shared_page", lambda: check_shared_page(rw, fresh_dir(os.path.join(work, "shared")))),
        ("nginx_tree", lambda: check_nginx_tree(rw, fresh_dir(os.path.join(work, "nginx")))),
        ("recorder_killed", lambda: check_recorder_killed(rw, fresh_dir(os.path.join(work, "killed")), program,
                                                          options=("--tree",), mode=("tree",))),
    ], "the start image of attached processes")


if __name__ == "__main__":
    sys.exit(main())
