#!/usr/bin/env python3
"""rewind record --pid: recording a process that already runs, from the
attach point to a detach, after which the process runs on as if rewind had
never been there. Checked on a program of ours whose state at the attach
holds an open file, a pipe, a socket pair, threads blocked in read and in a
futex, a pending timer and a blocked pending signal; on a shell loop that
starts processes (bash, ls, wc, sleep); and on Debian's python3
http.server, an nginx worker and redis-server (threads) under a load that
runs throughout. For each: the process goes
on correctly after the detach; the replay from the start image is exact
(its output is the slice the process printed while recorded); gdb stops
at a breakpoint and goes back to the attach point; rewind watch finds
where a value of the server changes (nginx's request counter, redis's
key count through a call of its function). Also the refusals, and
a recorder killed with SIGKILL at several moments."""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rwtest import SKIP, Run, Skipped, check, fresh_dir, require_machine, require_root, run_checks

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs", "attach_target.c")


def start_target(program, work, ticks, tick_ms, mode=()):
    out = open(os.path.join(work, "target.out"), "wb")
    p = subprocess.Popen([program, str(ticks), str(tick_ms), os.path.join(work, "target.file"), *mode], stdout=out,
                         stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while time.time() < deadline:
        with open(os.path.join(work, "target.out"), "rb") as f:
            if f.read().startswith(b"pid "):
                return p
        time.sleep(0.02)
    p.kill()
    raise AssertionError("attach_target did not start")


def target_output(work):
    with open(os.path.join(work, "target.out"), "rb") as f:
        return f.read()


def check_slice(replayed, whole, what):
    check(replayed and replayed in whole,
          f"the replay of {what} must print exactly a part of what the process printed\n--- replay\n"
          f"{replayed.decode(errors='replace')}--- process\n{whole.decode(errors='replace')}")


def check_refusals(rw, work, program):
    gone = Run([rw, "record", "--pid", "999999999"])
    check(gone.status == 1 and b"there is no process 999999999" in gone.stderr, f"no such process\n{gone.describe()}")
    both = Run([rw, "record", "--pid", "1", "--", "/bin/true"])
    check(both.status == 2 and b"give no program" in both.stderr, f"--pid with a program\n{both.describe()}")
    lone = Run([rw, "record", "--for", "1s", "--", "/bin/true"])
    check(lone.status == 2 and b"--for goes with --pid" in lone.stderr, f"--for without --pid\n{lone.describe()}")
    bad = Run([rw, "record", "--pid", "1", "--for", "soon"])
    check(bad.status == 2 and b"--for takes a duration" in bad.stderr, f"a bad duration\n{bad.describe()}")
    said = ["no such process", "a program too", "--for alone", "a bad duration"]
    target = start_target(program, work, 400, 50)
    try:
        thread = Run([rw, "record", "--pid", str(target.pid + 1)])
        tids = os.listdir(f"/proc/{target.pid}/task")
        if str(target.pid + 1) in tids:
            check(thread.status == 1 and b"is a thread of process" in thread.stderr, f"a thread\n{thread.describe()}")
            said.append("a thread's id")
        if shutil.which("strace"):
            st = subprocess.Popen(["strace", "-p", str(target.pid), "-o", "/dev/null"], stderr=subprocess.DEVNULL)
            time.sleep(1)
            traced = Run([rw, "record", "--pid", str(target.pid)])
            st.terminate()
            st.wait()
            check(traced.status == 1 and re.search(rb"already traced by process \d+ \(strace\)", traced.stderr),
                  f"a process strace traces\n{traced.describe()}")
            said.append("a process strace traces (named)")
        os.kill(target.pid, signal.SIGSTOP)
        time.sleep(0.2)
        stopped = Run([rw, "record", "--pid", str(target.pid)])
        os.kill(target.pid, signal.SIGCONT)
        check(stopped.status == 1 and b"is stopped (job control)" in stopped.stderr,
              f"a stopped process\n{stopped.describe()}")
        said.append("a stopped process")
    finally:
        target.kill()
        target.wait()
    return ", ".join(said) + ": refused, saying why"


def gdb_at_breakpoint_and_back(rw, trace, breakpoint, show, replay_options=()):
    g = Run([rw, "replay", *replay_options, trace, "--", "-batch", "-ex", f"break {breakpoint}", "-ex", "continue", "-ex", show,
             "-ex", "reverse-stepi", "-ex", "delete", "-ex", "reverse-continue", "-ex", "monitor when"], timeout=300)
    out = g.stdout + g.stderr
    check(b"Breakpoint 1," in out, f"gdb must stop at the breakpoint\n{g.describe()}")
    # The libraries the process had loaded, by the names its loader gave
    # them (a soname link, as libz.so.1 for libz.so.1.2.13).
    check(b"Could not load shared library symbols" not in out, f"gdb must find every library\n{g.describe()}")
    check(b"No more reverse-execution history" in out and b"At event 0 of" in out,
          f"reverse-continue must stop at the attach point (event 0)\n{g.describe()}")
    return out


def check_program_state(rw, work, program):
    target = start_target(program, work, 70, 50)
    trace = os.path.join(work, "attached")
    rec = Run([rw, "record", "--pid", str(target.pid), "--for", "1.5s", "-o", trace], timeout=120)
    status = target.wait(timeout=60)
    whole = target_output(work)
    check(rec.status == 0 and b"detached (the time given with --for passed); the process runs on" in rec.stderr,
          f"recording with --for\n{rec.describe()}")
    last = whole.strip().splitlines()[-1]
    check(status == 0 and last.startswith(b"done 70: value ok, bytes ok, usr1 pending"),
          f"the process must go on correctly after the detach (status {status})\n{whole.decode(errors='replace')}")
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0 and b"detached from process" in rep.stderr, f"replay from the start image\n{rep.describe()}")
    check_slice(rep.stdout, whole, "attach_target")
    check(re.fullmatch(rb"(tick \d+ value \d+\n)+", rep.stdout), f"whole lines only\n{rep.describe()}")
    info = Run([rw, "info", trace])
    check(b"attached   to running process" in info.stdout and b"exit       none: detached" in info.stdout,
          f"rewind info\n{info.describe()}")
    line = next(i + 1 for i, text in enumerate(open(SOURCE)) if 'printf("tick' in text)
    out = gdb_at_breakpoint_and_back(rw, trace, f"attach_target.c:{line}", "print i")
    first = int(re.search(rb"tick (\d+)", rep.stdout).group(1))
    check(re.search(rb"\$1 = %d\b" % first, out), f"gdb must see the first tick recorded ({first})\n{out.decode()}")
    wakes_line = next(i + 1 for i, text in enumerate(open(SOURCE)) if "wakes++" in text)
    watch = Run([rw, "watch", trace, f"wakes >= {first + 5}"], timeout=300)
    check(watch.status == 0 and b"attach_target.c:%d" % wakes_line in watch.stdout + watch.stderr,
          f"rewind watch must name the line that changes wakes\n{watch.describe()}")
    # A landmark of the replay, which runs in the pid namespace the start
    # image was restored into, and a replay from it.
    lm = Run([rw, "landmark", trace, "--every", "50%"], timeout=300)
    check(lm.status == 0 and b"could not be" not in lm.stdout + lm.stderr, f"rewind landmark\n{lm.describe()}")
    half = Run([rw, "replay", "--autopilot", "--from", "50%", trace], timeout=300)
    check(half.status == 0 and b"using landmark 1" in half.stderr and rep.stdout.endswith(half.stdout),
          f"replay from a landmark of the attached trace\n{half.describe()}")
    return (f"{len(rep.stdout.splitlines())} ticks replayed of 70; gdb at tick {first} and back to the attach "
            f"point; rewind watch names line {wakes_line}; replay from a landmark at 50%")


def check_stop_and_interrupt(rw, work, program):
    """Without --for: `rewind stop TRACE` from elsewhere, or Ctrl-C (SIGINT)
    on `rewind record`, ends the recording with a detach; so does a `rewind
    stop` as soon as the trace is there (while rewind attaches and saves
    the start image: the signal waits for the recording to run)."""
    said = []
    for how in ["rewind stop", "SIGINT", "rewind stop at once"]:
        d = fresh_dir(os.path.join(work, how.replace(" ", "_")))
        target = start_target(program, d, 60, 50)
        trace = os.path.join(d, "t")
        rec = subprocess.Popen([rw, "record", "--pid", str(target.pid), "-o", trace], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        if how == "rewind stop at once":
            while not os.path.exists(os.path.join(trace, ".recorder")) and rec.poll() is None:
                time.sleep(0.001)
        else:
            time.sleep(1.2)
        if how == "SIGINT":
            rec.send_signal(signal.SIGINT)
        else:
            stop = Run([rw, "stop", trace], timeout=120)
            check(stop.status == 0 and b"detached" in stop.stderr, f"rewind stop\n{stop.describe()}")
        _, err = rec.communicate(timeout=120)
        status = target.wait(timeout=60)
        whole = target_output(d)
        check(rec.returncode == 0 and b"rewind record was told to stop" in err,
              f"{how} must end the recording with a detach: {err.decode(errors='replace')}")
        check(status == 0 and b"done 60: value ok, bytes ok" in whole, f"the process after {how}\n{whole.decode()}")
        rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
        check(rep.status == 0, f"replay\n{rep.describe()}")
        if how == "rewind stop at once":
            check(rep.stdout in whole, f"the replay must print a part of what the process printed\n{rep.describe()}")
        else:
            check_slice(rep.stdout, whole, f"attach_target ended by {how}")
        said.append(how)
    again = Run([rw, "stop", trace])
    check(again.status == 1 and b"has ended already" in again.stderr, f"rewind stop of an ended one\n{again.describe()}")
    return ", ".join(said) + " end the recording with a detach; the replays are exact"


def check_shell_tree(rw, work):
    script = os.path.join(work, "loop.sh")
    with open(script, "w") as f:
        f.write("i=0; while [ $i -lt 60 ]; do i=$((i+1)); echo \"round $i $(ls / | wc -l)\"; sleep 0.05; done\n")
    out_path = os.path.join(work, "loop.out")
    shell = subprocess.Popen(["/bin/bash", script], stdout=open(out_path, "wb"))
    time.sleep(0.3)
    trace = os.path.join(work, "shell")
    rec = Run([rw, "record", "--pid", str(shell.pid), "--for", "1s", "-o", trace], timeout=120)
    status = shell.wait(timeout=60)
    whole = open(out_path, "rb").read()
    check(rec.status == 0 and status == 0 and whole.count(b"round ") == 60,
          f"the shell must run all its rounds\n{rec.describe()}\n{whole.decode()}")
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0, f"replay\n{rep.describe()}")
    check_slice(rep.stdout, whole, "the shell loop")
    dump = Run([rw, "dump", trace]).stdout
    check(b"rseq(" in dump and b"ENOSYS" in dump, "the children's rseq registrations must be refused (ENOSYS)")
    forks = dump.count(b"clone(") + dump.count(b"clone3(")
    ps = Run([rw, "ps", trace])
    check(re.search(rb"^\s*%d\s+-\s.*\(attached\) /bin/bash" % shell.pid, ps.stdout, re.M) and
          ps.stdout.count(b"\n") > 3, f"rewind ps must list the shell (attached) and its children\n{ps.describe()}")
    return f"{len(rep.stdout.splitlines())} rounds replayed, {forks} clone events"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(request, what):
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            request()
            return
        except (OSError, AssertionError):
            time.sleep(0.1)
    raise AssertionError(f"{what} did not start")


def record_under_load(rw, trace, pid, request, seconds=2, options=(), children=()):
    """Records `pid` for `seconds` (with `options` of rewind record) while a
    bounded load (`request`, which raises or returns False on a failure)
    runs throughout: before the attach, while recorded, and after the
    detach; the process has only `children` afterwards. Returns (rewind
    record, counts)."""
    results = {"ok": 0, "failed": 0}
    stop = threading.Event()

    def load():
        while not stop.is_set():
            try:
                results["ok" if request() else "failed"] += 1
            except OSError:
                results["failed"] += 1
            time.sleep(0.02)

    loader = threading.Thread(target=load)
    loader.start()
    time.sleep(0.5)
    rec = Run([rw, "record", "--pid", str(pid), "--for", f"{seconds}s", *options, "-o", trace], timeout=120 + seconds)
    time.sleep(0.5)
    stop.set()
    loader.join()
    check(rec.status == 0, f"recording under load\n{rec.describe()}")
    check(results["failed"] == 0 and results["ok"] > 10, f"requests: {results}")
    # No trace of rewind is left: no tracer, no child but its own (the
    # start image's copy is reaped).
    now = sorted(int(c) for c in subprocess.run(["pgrep", "-P", str(pid)], stdout=subprocess.PIPE).stdout.split())
    check(now == sorted(children), f"the process has children {now} after the detach, not {sorted(children)}")
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            tracer = next(line.split()[1] for line in f if line.startswith("TracerPid:"))
        check(tracer == "0", f"thread {tid} is still traced by {tracer}")
    return rec, results


def check_replay_and_gdb(rw, trace, breakpoint):
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0, f"replay (each write checked against the recorded bytes)\n{rep.describe()}")
    gdb_at_breakpoint_and_back(rw, trace, breakpoint, "bt 1")


def check_fork_storm(rw, work):
    """A shell that starts a process as fast as it can (/bin/true and a
    command substitution, over and over), detached from ten times: every
    detach lands among forks, execs and the dynamic loader's first rdtsc.
    Each trace replays to its end, and no child dies of the detach."""
    for n in range(10):
        errors = os.path.join(work, f"storm{n}.err")
        shell = subprocess.Popen(["/bin/bash", "-c", "while :; do /bin/true; x=$(echo a); done"],
                                 stderr=open(errors, "wb"))
        try:
            time.sleep(0.2)
            trace = os.path.join(work, f"storm{n}")
            rec = Run([rw, "record", "-q", "--pid", str(shell.pid), "--for", "300ms", "-o", trace], timeout=120)
            check(rec.status == 0, f"recording the shell\n{rec.describe()}")
            time.sleep(0.3)
            check(shell.poll() is None, "the shell must run on after the detach")
        finally:
            shell.kill()
            shell.wait()
        with open(errors, "rb") as f:
            said = f.read()
        check(b"Segmentation" not in said and b"Killed" not in said and b"Stopped" not in said,
              f"a child of the shell was harmed by the detach: {said.decode(errors='replace')}")
        rep = Run([rw, "replay", "--autopilot", "-q", trace], timeout=300)
        check(rep.status == 0, f"replay of detach {n}\n{rep.describe()}")
    return "10 detaches among forks and execs, each replayed to its end; no child harmed"


def check_python_http_server(rw, work, seconds=2, options=()):
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        raise Skipped("Debian's python3 is not installed")
    root = fresh_dir(os.path.join(work, "www"))
    page = b"served while recorded\n" * 50
    with open(os.path.join(root, "index.html"), "wb") as f:
        f.write(page)
    port = free_port()
    server = subprocess.Popen([python, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=root,
                              stdout=open(os.path.join(work, "server.log"), "wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/index.html"
    fetch = lambda: urllib.request.urlopen(url, timeout=10).read() == page  # noqa: E731
    try:
        wait_for(fetch, "http.server")
        _, results = record_under_load(rw, os.path.join(work, "http"), server.pid, fetch, seconds, options)
        check(server.poll() is None and fetch(), "the server must still serve after the detach")
        check_replay_and_gdb(rw, os.path.join(work, "http"), "accept4")
        return f"{results['ok']} requests, none failed; the replay is exact; gdb at accept4 and back"
    finally:
        server.kill()
        server.wait()


def watch_server_value(rw, trace, value, more, where):
    """rewind watch on a value of a server built without debug info (a cast
    of its exported symbol, or a call of its function): the value at the
    attach point, then the instruction where it first reaches `more` above
    that, which must be in (or called from) function `where`."""
    g = Run([rw, "replay", trace, "--", "-batch", "-ex", f"print {value}"], timeout=300)
    start = re.search(rb"^\$1 = (\d+)", g.stdout, re.M)
    check(start, f"gdb must print {value} at the attach point\n{g.describe()}")
    target = int(start.group(1)) + more
    w = Run([rw, "watch", trace, f"{value} >= {target}"], timeout=300)
    check(w.status == 0 and b" in %s" % where.encode() in w.stdout + w.stderr,
          f"rewind watch must find where {value} reaches {target}, in {where}\n{w.describe()}")
    return f"rewind watch: {value} reaches {target} in {where}"


def start_nginx(work, page, user="", workers=1):
    """Debian's nginx serving `page` from `work` on a free loopback port, in
    the foreground (its master is the Popen), with `workers` workers run as
    `user` (its default, nobody, if ""). Returns (master, fetch): fetch()
    is True when a request gets the page. Skipped without nginx."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        raise Skipped("nginx is not installed (scripts/install-deps.sh installs nginx-light)")
    root = fresh_dir(os.path.join(work, "www"))
    with open(os.path.join(root, "index.html"), "wb") as f:
        f.write(page)
    port = free_port()
    temp = fresh_dir(os.path.join(work, "temp"))
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write((f"user {user};\n" if user else "")
                + f"worker_processes {workers};\ndaemon off;\npid {work}/nginx.pid;\nerror_log {work}/error.log;\n"
                f"events {{ worker_connections 64; }}\nhttp {{ access_log {work}/access.log;\n"
                + "".join(f"{k}_temp_path {temp};\n" for k in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"])
                + f"server {{ listen 127.0.0.1:{port}; root {root}; }} }}\n")
    master = subprocess.Popen([nginx, "-c", conf, "-p", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/index.html"
    fetch = lambda: urllib.request.urlopen(url, timeout=10).read() == page  # noqa: E731
    try:
        wait_for(fetch, "nginx")
    except BaseException:
        master.terminate()
        master.wait()
        raise
    return master, fetch


def check_nginx_worker(rw, work):
    page = b"nginx under rewind\n" * 40

    def start(user):
        master, fetch = start_nginx(work, page, user)
        worker = int(subprocess.run(["pgrep", "-P", str(master.pid)], stdout=subprocess.PIPE).stdout.split()[0])
        return master, worker, fetch

    said = []
    # Its default user (nobody): CRIU's dump reads another user's resource
    # limits, which needs CAP_SYS_RESOURCE; without it rewind refuses first.
    master, worker, fetch = start("")
    try:
        refused = Run([rw, "record", "--pid", str(worker), "--for", "1s", "-o", os.path.join(work, "nobody")],
                      timeout=120)
        if refused.status == 1:
            check(b"CAP_SYS_RESOURCE" in refused.stderr and fetch(),
                  f"attaching to another user's worker must say which right is missing\n{refused.describe()}")
            said.append("a worker of user nobody refused (no CAP_SYS_RESOURCE here)")
        else:
            check(refused.status == 0 and fetch(), f"recording a worker of user nobody\n{refused.describe()}")
    finally:
        master.terminate()
        master.wait()
    master, worker, fetch = start("root")
    try:
        trace = os.path.join(work, "worker")
        _, results = record_under_load(rw, trace, worker, fetch)
        check(master.poll() is None and fetch(), "nginx must still serve after the detach")
        check_replay_and_gdb(rw, trace, "ngx_http_process_request")
        # The request counter of its status page, in the memory the master
        # shares with its workers (private in the start image).
        watched = watch_server_value(rw, trace, "**(unsigned long**)&ngx_stat_requests", 3, "ngx_http_create_request")
        said.append(f"a worker: {results['ok']} requests, none failed, the replay exact, gdb in the request handler "
                    f"and back; {watched}")
        return "; ".join(said)
    finally:
        master.terminate()
        master.wait()


def check_redis(rw, work, seconds=2, options=()):
    redis = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(redis):
        raise Skipped("redis-server is not installed (scripts/install-deps.sh installs it)")
    port = free_port()
    server = subprocess.Popen([redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                               "--dir", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    counter = {"n": 0}

    def command(*words):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words))
            return s.recv(4096)

    def request():
        counter["n"] += 1
        key = b"k%d" % counter["n"]
        return command(b"SET", key, b"v" + key) == b"+OK\r\n" and command(b"GET", key).endswith(b"v" + key + b"\r\n")

    try:
        wait_for(lambda: command(b"PING") == b"+PONG\r\n" or False, "redis-server")
        threads = len(os.listdir(f"/proc/{server.pid}/task"))
        trace = os.path.join(work, "redis")
        _, results = record_under_load(rw, trace, server.pid, request, seconds, options)
        check(server.poll() is None and request(), "redis must still answer after the detach")
        check_replay_and_gdb(rw, trace, "accept4")
        # Each request sets a new key.
        watched = watch_server_value(rw, trace, "(long long)dbTotalServerKeyCount()", 3, "setKey")
        return f"{threads} threads, {results['ok']} SET+GET pairs, none failed; the replay exact; gdb back; {watched}"
    finally:
        server.kill()
        server.wait()


def check_recorder_killed(rw, work, program, delays=(0.02, 0.1, 0.2, 0.3, 0.5, 1.0), options=(), mode=()):
    said = []
    for delay in delays:
        d = fresh_dir(os.path.join(work, f"kill-{delay}"))
        target = start_target(program, d, 40, 50, mode)
        rec = subprocess.Popen([rw, "record", "-q", "--pid", str(target.pid), *options, "-o", os.path.join(d, "t")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        rec.kill()
        rec.wait()
        status = target.wait(timeout=60)
        whole = target_output(d)
        last = whole.strip().splitlines()[-1] if whole.strip() else b""
        # (With `tree`, a child that did not end well is named before.)
        check(status == 0 and last.startswith(b"done 40: value ok, bytes ok") and b": status " not in whole,
              f"the process must go on unharmed when rewind is killed {delay} s in (status {status})\n"
              f"{whole.decode(errors='replace')}")
        said.append(f"{delay} s")
    return "the process ran to its end with rewind killed after " + ", ".join(said)


def run_main(make_checks, needs):
    """The command line of the attach tests: --rewind, --program
    (attach_target), --work, --only; skipped whole without CRIU (`needs`
    says what for). `make_checks(rw, program, work)` gives the checks."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--program", required=True, help="attach_target")
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    try:
        require_machine(args.rewind, "criu", needs)
    except Skipped as s:
        print(f"SKIP all: {s}")
        return SKIP
    return run_checks(make_checks(args.rewind, args.program, fresh_dir(args.work)), args.only)


def main():
    return run_main(lambda rw, program, work: [
        ("refusals", lambda: check_refusals(rw, fresh_dir(os.path.join(work, "refusals")), program)),
        ("program_state", lambda: check_program_state(rw, fresh_dir(os.path.join(work, "state")), program)),
        ("stop_and_interrupt", lambda: check_stop_and_interrupt(rw, fresh_dir(os.path.join(work, "stop")), program)),
        ("shell_tree", lambda: check_shell_tree(rw, fresh_dir(os.path.join(work, "shell")))),
        ("fork_storm", lambda: check_fork_storm(rw, fresh_dir(os.path.join(work, "storm")))),
        ("python_http_server", lambda: check_python_http_server(rw, fresh_dir(os.path.join(work, "http")))),
        ("nginx_worker", lambda: check_nginx_worker(rw, fresh_dir(os.path.join(work, "nginx")))),
        ("redis_server", lambda: check_redis(rw, fresh_dir(os.path.join(work, "redis")))),
        ("recorder_killed", lambda: check_recorder_killed(rw, fresh_dir(os.path.join(work, "killed")), program)),
    ], "the start image of an attached process")


if __name__ == "__main__":
    sys.exit(main())
