#!/usr/bin/env python3
"""Hygiene and honesty around the main paths: the modes of directories
rewind creates (and of those it does not), no scratch directories left
behind by replays (even killed ones), exit codes and messages for bad
command lines and unreadable traces, a replay server that ends with its
debugger.

  check_reliability.py --rewind R --programs DIR --work W
"""
import argparse
import ctypes
import glob
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import Run, Skipped, check, fresh_dir, require_root, rewind_json, run_checks, serve_on_free_port

GDB = "/usr/bin/gdb"
SCRATCH_GLOBS = ["/tmp/rewind-*", "/var/tmp/rewind-*", "/dev/shm/rewind-*", "/run/rewind-*"]


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def scratch_dirs():
    """Directories rewind itself might leave in the temporary areas (not
    gdb sysroots of sessions still running elsewhere)."""
    found = set()
    for g in SCRATCH_GLOBS:
        found.update(p for p in glob.glob(g) if "rewind-gdb-" not in p)
    return found


def wait_until(done, seconds):
    """Polls `done` until it holds or `seconds` have passed."""
    deadline = time.time() + seconds
    while not done() and time.time() < deadline:
        time.sleep(0.1)


def record(rw, work, name, argv, env=None):
    trace = os.path.join(work, name + ".trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", *argv], cwd=work, env=env)
    check(r.status == 0, f"recording {name}\n{r.describe()}")
    return trace


def check_directory_modes(rw, work, progs):
    shared = os.path.join(work, "shared")
    os.makedirs(shared)
    os.chmod(shared, 0o1777)
    env = dict(os.environ, REWIND_DIR=shared)
    r = Run([rw, "record", "-q", "--", "true"], env=env)
    check(r.status == 0, f"record into an existing REWIND_DIR\n{r.describe()}")
    check(mode_of(shared) == 0o1777, f"an existing REWIND_DIR was changed to {oct(mode_of(shared))}")
    traces = [p for p in glob.glob(os.path.join(shared, "true-*"))]
    check(len(traces) == 1 and mode_of(traces[0]) == 0o700, f"the trace is not private: {traces}")
    fresh = os.path.join(work, "new", "traces")
    r = Run([rw, "record", "-q", "--", "true"], env=dict(os.environ, REWIND_DIR=fresh))
    check(r.status == 0 and mode_of(fresh) == 0o700, f"a REWIND_DIR rewind creates is not 0700\n{r.describe()}")
    return "existing kept 1777, created 0700"


def check_no_scratch_left(rw, work, progs):
    # A program whose file is gone by replay time: its copy is bind-mounted
    # over a path recreated in an overlay.
    gone = os.path.join(work, "gone", "sub")
    os.makedirs(gone)
    program = os.path.join(gone, "myecho")
    shutil.copy("/usr/bin/echo", program)
    trace = record(rw, work, "gone", [program, "hello"])
    shutil.rmtree(os.path.join(work, "gone"))
    long_trace = record(rw, work, "long", [os.path.join(progs, "file_io"), work])
    before = scratch_dirs()
    r = Run([rw, "replay", "--autopilot", trace])
    check(r.status == 0 and r.stdout == b"hello\n", f"replay of a program whose file is gone\n{r.describe()}")
    for _ in range(5):
        p = subprocess.Popen([rw, "replay", "--autopilot", "-q", long_trace], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(0.15)
        p.send_signal(signal.SIGKILL)
        p.wait()
    # A scratch directory lives for the milliseconds a replay takes to set
    # up its mounts: one that appeared meanwhile may be another replay's
    # (tests run side by side) and goes away; one left behind stays.
    new = scratch_dirs() - before
    still_there = lambda: {d for d in new if os.path.exists(d)}
    wait_until(lambda: not still_there(), 10)
    check(not still_there(), f"replays left scratch directories behind: {sorted(still_there())}")
    return "none left after 1 replay and 5 killed ones"


def check_exit_codes_and_messages(rw, work, progs):
    def expect(argv, status, text, **kw):
        r = Run([rw, *argv], **kw)
        check(r.status == status and text.encode() in r.stderr,
              f"`rewind {' '.join(argv)}`: expected status {status} and {text!r}\n{r.describe()}")

    expect(["record", "--ring-mib", "abc", "--", "true"], 2, "--ring-mib")
    expect(["record", "--ring-mib", "3", "--", "true"], 2, "power of two")
    notexec = os.path.join(work, "not-executable")
    open(notexec, "w").close()
    expect(["record", "--", notexec], 126, "is not executable")
    expect(["record", "--", work], 126, "is a directory")
    expect(["record", "--", "no-such-program-xyz"], 127, "program not found")
    program_with_symbols = record(rw, work, "list_bound", [os.path.join(progs, "list_bound")])
    expect(["watch", program_with_symbols, "head->next =="], 2, "cannot parse the expression head->next ==")
    # A name gdb does not know before the syntax error (a local, only in scope where the search looks).
    expect(["watch", program_with_symbols, "it->value =="], 2, "cannot parse the expression it->value ==")
    expect(["watch", program_with_symbols, "list_len(head) > (1"], 2, "cannot parse the expression")
    # A trace path given as the expression (the expression forgotten): EXPR on the latest trace.
    env = dict(os.environ, REWIND_DIR=fresh_dir(os.path.join(work, "latest-traces")))
    r = Run([rw, "record", "-q", "--", os.path.join(progs, "list_bound")], env=env)
    check(r.status == 0, f"recording into REWIND_DIR\n{r.describe()}")
    expect(["watch", program_with_symbols], 2, "cannot parse the expression " + program_with_symbols, env=env)
    # A program without symbols at the start (a shell that execs the program): said before the search.
    exec_trace = record(rw, work, "exec_list", ["/bin/sh", "-c", "exec " + os.path.join(progs, "list_bound")])
    expect(["watch", exec_trace, "it->value =="], 2, "cannot parse the expression it->value ==")
    expect(["recrod"], 2, "unknown command 'recrod'; did you mean 'record'?")
    expect([], 2, "which command?")
    expect(["replay", "--no-such-option"], 2, "--no-such-option")
    trace = record(rw, work, "private", ["true"])
    if shutil.which("setpriv"):
        r = Run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", rw, "info", trace])
        check(r.status == 2 and b"permission denied" in r.stderr and b"belongs to root" in r.stderr,
              f"another user's trace\n{r.describe()}")
    return "14 command lines"


def check_serve_ends_with_gdb(rw, work, progs):
    # Seconds of computing without a syscall: its replay outlasts the wait
    # below, so the server can only end in time by noticing that gdb went away.
    busy = "print(sum(i * i for i in range(150_000_000)) > 0)"
    trace = record(rw, work, "busy", ["/usr/bin/python3", "-c", busy])
    serve, port = serve_on_free_port(rw, trace)
    try:
        gdb = subprocess.Popen([GDB, "-nx", "-batch", "-ex", f"target extended-remote 127.0.0.1:{port}",
                                "-ex", "continue"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)  # connected, and replaying for `continue`
        gdb.send_signal(signal.SIGKILL)
        gdb.wait()
        try:
            serve.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        ended = serve.poll() is not None
    finally:
        if serve.poll() is None:
            serve.kill()
        serve.wait()
    check(ended, "rewind serve went on replaying after its gdb was killed")
    return "serve ended with its gdb"


def check_gdb_ends_with_replay(rw, work, progs):
    """A `rewind replay` killed outright takes its gdb along, and gdb its
    server (once, a test's timeout killed the launcher and left both)."""
    trace = record(rw, work, "short", ["/bin/true"])
    launcher = subprocess.Popen([rw, "replay", "--gdb", GDB, trace, "--", "-nx", "-batch", "-ex",
                                 "python import time; time.sleep(60)"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def left():
        """gdb and the server: the processes whose command line names the trace."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == launcher.pid:
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if trace.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
        return found

    try:
        wait_until(lambda: len(left()) >= 2, 30)
        check(len(left()) >= 2, f"gdb and its server did not start: {left()}")
    finally:
        launcher.send_signal(signal.SIGKILL)
        launcher.wait()
    wait_until(lambda: not left(), 10)
    remaining = left()
    for pid in remaining:
        os.kill(pid, signal.SIGKILL)
    check(not remaining, f"rewind replay was killed and these went on: {remaining}")
    return "gdb and its server ended with the killed rewind replay"


def check_scrub_env(rw, work, progs):
    secret = "hunter2-do-not-keep"
    env = dict(os.environ, API_TOKEN=secret, OTHER="kept")
    trace = os.path.join(work, "scrubbed.trace")
    script = 'echo "length ${#API_TOKEN} $OTHER"; case "$API_TOKEN" in hunter2*) echo real;; *) echo placeholder;; esac'
    r = Run([rw, "record", "-q", "--scrub-env", "API_TOKEN", "-o", trace, "--", "/bin/sh", "-c", script], env=env)
    check(r.status == 0 and r.stdout == f"length {len(secret)} kept\nreal\n".encode(),
          f"the recorded program did not see the value\n{r.describe()}")
    for root, _, files in os.walk(trace):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                check(secret.encode() not in fh.read(), f"the secret is in {os.path.join(root, f)}")
    dump = Run([rw, "dump", "--json", trace])
    check(secret.encode() not in dump.stdout and b"API_TOKEN=" + b"*" * len(secret) in dump.stdout,
          "the exec event does not hold the placeholder")
    info = Run([rw, "info", trace])
    check(b"scrubbed   API_TOKEN" in info.stdout, f"info does not say what was scrubbed\n{info.describe()}")
    # The replayed program sees the placeholder: it takes the other branch,
    # and the replay says where and why.
    rep = Run([rw, "replay", "--autopilot", trace])
    check(rep.status == 90 and b"record --scrub-env" in rep.stderr and b"API_TOKEN" in rep.stderr,
          f"a replay that uses a scrubbed value\n{rep.describe()}")
    bad = Run([rw, "record", "--scrub-env", "A=B", "--", "true"])
    check(bad.status == 2 and b"NAME, not NAME=VALUE" in bad.stderr, f"--scrub-env A=B\n{bad.describe()}")
    return "placeholder kept, divergence explained"


def check_disk_full(rw, work, progs):
    """The disk fills while recording: the program is stopped where its
    recording stops, and every reader says so (not "killed or crashed")."""
    disk = os.path.join(work, "small-disk")
    os.makedirs(disk)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", disk]).returncode != 0:
        raise Skipped("cannot mount a small tmpfs here")
    try:
        big = os.path.join(work, "big.bin")
        with open(big, "wb") as f:
            f.write(os.urandom(30 << 20))  # incompressible, more than the disk holds
        trace = os.path.join(disk, "t")
        marker = "disk-full-marker"
        r = Run([rw, "record", "-q", "-o", trace, "--", "/bin/sh", "-c", f"cat {big} | wc -c; echo {marker}"])
        check(r.status == 1 and b"the disk filled" in r.stderr and b"the program was stopped" in r.stderr,
              f"record on a full disk\n{r.describe()}")
        check(marker.encode() not in r.stdout, f"the program ran on after its recording stopped\n{r.describe()}")
        time.sleep(0.2)
        left = subprocess.run(["pgrep", "-f", big], stdout=subprocess.PIPE).stdout
        check(not left, f"a recorded process outlived the recording: {left!r}")
        info = Run([rw, "info", trace])
        check(info.status == 3 and b"the disk filled: the recording stops after event" in info.stdout,
              f"info on a trace cut by a full disk\n{info.describe()}")
        check(b"corrupt" not in info.stdout and b"killed or crashed" not in info.stdout,
              f"info blames something else\n{info.describe()}")
        rep = Run([rw, "replay", "--autopilot", "-q", trace])
        check(rep.status == 92 and b"ends early" in rep.stderr, f"replay of the kept prefix\n{rep.describe()}")
        return "stopped, said, prefix replays"
    finally:
        subprocess.run(["umount", "-l", disk])


# Attaches the System V segment of the key it is given (made before the
# recording, by the test) and prints what the segment holds.
SHM_PY = """\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(int(sys.argv[1]), 0, 0)
addr = libc.shmat(shmid, None, 0)
print("attached", ctypes.string_at(addr, 16))
"""


def made_segment(key, content):
    """A System V segment made outside any recording; its id."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(key, 4096, 0o1600)
    check(shmid >= 0, f"shmget: errno {ctypes.get_errno()}")
    addr = libc.shmat(shmid, None, 0)
    ctypes.memmove(addr, content, len(content))
    libc.shmdt(ctypes.c_void_p(addr))
    return shmid


def check_info_says_what_replay_does(rw, work, progs):
    """info names the event where a replay will stop, and the replay stops
    exactly there with the same reason; what can be replayed, is."""
    def stops_at(trace):
        rc, out, _ = rewind_json(rw, "info", "--json", trace)
        return json.loads(out)["replay_stops_at"]

    def replays_like_recording(name, argv):
        trace = os.path.join(work, name + ".trace")
        rec = Run([rw, "record", "-q", "-o", trace, "--", *argv])
        rep = Run([rw, "replay", "--autopilot", trace])
        check(stops_at(trace) is None, f"{name}: info says replay stops: {stops_at(trace)}")
        check((rep.status, rep.stdout, rep.stderr) == (rec.status, rec.stdout, rec.stderr),
              f"{name}: replay differs\n{rec.describe()}\n{rep.describe()}")

    def replay_stops(name, argv, reason):
        trace = os.path.join(work, name + ".trace")
        Run([rw, "record", "-q", "-o", trace, "--", *argv])
        stop = stops_at(trace)
        check(stop is not None and reason in stop["why"], f"{name}: info says {stop}")
        rep = Run([rw, "replay", "--autopilot", "-q", trace])
        check(rep.status == 91 and f"at event #{stop['event']} ".encode() in rep.stderr and
              reason.encode() in rep.stderr, f"{name}: info said event {stop['event']}\n{rep.describe()}")

    shm = os.path.join(work, "shm.py")
    with open(shm, "w") as f:
        f.write(SHM_PY)
    # A segment made before the recording held what the trace cannot say;
    # one the recording makes starts as zeros (sysv_shared_memory replays).
    key = 0x5e910000 | (os.getpid() & 0xffff)
    shmid = made_segment(key, b"made before")
    try:
        replay_stops("shmat", ["/usr/bin/python3", shm, str(key)], "no shmget of the recording made it")
    finally:
        ctypes.CDLL(None).shmctl(shmid, 0, None)
    # strace, a tracer nobody here wrote: rewind stands in for the kernel
    # between it and the program it traces; its report (on stderr) replays
    # byte for byte. With -f it follows a shell's children from their
    # birth (fork and clone events, new tasks' first stops, their ends):
    # the same number of lines as natively, and the same process tree
    # (pids differ from run to run).
    native = Run(["strace", "true"])
    replays_like_recording("strace", ["strace", "true"])
    rec = Run([rw, "record", "-q", "-o", os.path.join(work, "strace2.trace"), "--", "strace", "true"])
    said = rec.stderr.decode(errors="replace")
    check(rec.status == 0 and native.status == 0 and said.startswith("execve(") and said.rstrip().endswith(
        "+++ exited with 0 +++") and said.count("\n") == native.stderr.decode(errors="replace").count("\n"),
          f"strace under rewind does not report what it reports natively\n{native.describe()}\n{rec.describe()}")
    follow = ["strace", "-f", "-e", "trace=execve,exit_group", "sh", "-c", "true; /bin/true; echo done"]
    native = Run(follow)
    replays_like_recording("strace_f", follow)
    rec = Run([rw, "record", "-q", "-o", os.path.join(work, "strace_f2.trace"), "--", *follow])
    # (strace pads pids to a width: "[pid   987]", "[pid  1026]".)
    shape = lambda text: sorted(re.sub(r"\s+", " ", re.sub(r"0x[0-9a-f]+|\d+", "N", l))
                                for l in text.decode(errors="replace").splitlines())
    check(rec.status == 0 and rec.stdout == b"done\n" and shape(rec.stderr) == shape(native.stderr),
          f"strace -f under rewind does not report what it reports natively\n{native.describe()}\n{rec.describe()}")
    # semctl(GETALL) in an IPC namespace of its own: the set's size is read
    # in that namespace, never guessed nor left out.
    replays_like_recording("ipc_namespace", ["unshare", "--ipc", os.path.join(progs, "sysv_ipc")])
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    replays_like_recording("privileges_dropped", [*nobody, "/usr/bin/id"])
    setuid = next((p for p in ["/usr/bin/chfn", "/usr/bin/newgrp", "/usr/bin/gpasswd"]
                   if os.path.exists(p) and os.stat(p).st_mode & stat.S_ISUID), None)
    if setuid:
        replay_stops("setuid_exec", [*nobody, setuid, "--help"], "set-user-ID")
    return "shmat, strace, strace -f, sysv_ipc in an IPC namespace, setpriv" + (f", {os.path.basename(setuid)}" if setuid else "")


def check_recorder_killed_anywhere(rw, work, progs):
    """SIGKILL of the recorder at random moments: every trace left says where
    it ends (info: incomplete, status 3), and its prefix replays without a
    crash or a hang (the replay stops there, status 92)."""
    import random
    rng = random.Random(42)
    kills = 6
    for n in range(kills):
        trace = os.path.join(work, f"killed-{n}")
        script = "for i in $(seq 1 400); do echo line $i; ls / > /dev/null; done"
        p = subprocess.Popen([rw, "record", "-q", "-o", trace, "--", "/bin/sh", "-c", script],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        time.sleep(0.2)  # the recorded processes die with their tracer
        if not os.path.exists(os.path.join(trace, "events")):
            continue  # killed before the trace existed
        info = Run([rw, "info", trace])
        check(info.status in (0, 3), f"kill {n}: info\n{info.describe()}")
        if info.status == 3:
            check(b"the trace ends at event" in info.stdout or b"truncated" in info.stdout,
                  f"kill {n}: info does not say where the trace ends\n{info.describe()}")
        # It replays up to where the trace ends, then says why it stops
        # (92; 91 when the cut fell between a clone and its new task).
        rep = Run([rw, "replay", "--autopilot", "-q", trace], timeout=300)
        check(rep.status in (0, 91, 92) and (rep.status == 0 or b"rewind: " in rep.stderr),
              f"kill {n}: replay of the prefix\n{rep.describe()}")
    return f"{kills} kills"


def check_damaged_traces(rw, work, progs, tamper):
    """Traces are untrusted input: an altered file copy is found by
    `info --verify` and refused by replay, naming it; a file name that is
    not a content hash is never followed."""
    import random
    words = os.path.join(work, "words.txt")
    with open(words, "w") as f:
        f.write("pear\napple\nfig\n" * 100)
    trace = record(rw, work, "sort", ["sort", words])
    files = sorted(os.listdir(os.path.join(trace, "files")))
    rng = random.Random(1234)
    flips = 20
    for trial in range(flips):
        name = rng.choice(files)
        path = os.path.join(trace, "files", name)
        with open(path, "r+b") as f:
            size = os.fstat(f.fileno()).st_size
            at = rng.randrange(size)
            f.seek(at)
            original = f.read(1)
            f.seek(at)
            f.write(bytes([original[0] ^ (1 << rng.randrange(8))]))
        try:
            info = Run([rw, "info", "--verify", trace])
            check(info.status == 3 and f"copy {name} has been altered".encode() in info.stdout,
                  f"flip {trial} at byte {at} of {name}: info --verify\n{info.describe()}")
            rep = Run([rw, "replay", "--autopilot", "-q", trace])
            check(rep.status == 92 and b"the trace is damaged" in rep.stderr and name.encode() in rep.stderr,
                  f"flip {trial} at byte {at} of {name}: replay\n{rep.describe()}")
        finally:
            with open(path, "r+b") as f:
                f.seek(at)
                f.write(original)
    ok = Run([rw, "info", "--verify", trace])
    check(ok.status == 0 and b"verified" in ok.stdout, f"the restored trace\n{ok.describe()}")
    outside = os.path.join(work, "outside")
    with open(outside, "wb") as f:
        f.write(open(shutil.which("sort"), "rb").read())
    crafted = os.path.join(work, "crafted.trace")
    shutil.copytree(trace, crafted)
    t = Run([tamper, crafted, "--copy-name", os.path.relpath(outside, os.path.join(crafted, "files"))])
    check(t.status == 0, f"trace_tamper\n{t.describe()}")
    for argv in (["replay", "--autopilot", "-q", crafted], ["info", "--verify", crafted]):
        r = Run([rw, *argv])
        check(r.status in (3, 92) and b"not a content hash" in (r.stderr + r.stdout),
              f"a crafted copy name: rewind {argv[0]}\n{r.describe()}")
    renumbered = os.path.join(work, "renumbered.trace")
    shutil.copytree(trace, renumbered)
    t = Run([tamper, renumbered, "--syscall-nr", "4000"])
    check(t.status == 0, f"trace_tamper\n{t.describe()}")
    rep = Run([rw, "replay", "--autopilot", "-q", renumbered])
    check(rep.status == 91 and b"syscall 4000 is not in the syscall table" in rep.stderr,
          f"a syscall number outside the table\n{rep.describe()}")
    for argv in (["info", renumbered], ["dump", renumbered]):
        r = Run([rw, *argv])
        check(r.status in (0, 3) and r.status >= 0, f"rewind {argv[0]} on a renumbered syscall\n{r.describe()}")
    return f"{flips} flips found by info --verify and replay; a crafted name and a syscall number refused"



def check_crafted_traces(rw, work, progs, tamper):
    """What a crafted trace can hold beyond altered bytes: copies that are
    symbolic links out of the trace or FIFOs (never followed, never waited
    on), files in files/ that are no copies, an end.json that is a FIFO, an
    input claiming more memory than exists. Each is refused with what is
    wrong, within seconds; info --verify names the file a copy stands for
    and the event that first uses it."""
    def bounded(argv):
        run = Run(argv, timeout=60)
        check(not run.timed_out, f"rewind {' '.join(argv[1:])} still running after 60 s (it followed or waited on a file)")
        return run

    words = os.path.join(work, "words.txt")
    with open(words, "w") as f:
        f.write("pear\napple\nfig\n")
    trace = record(rw, work, "sort", ["sort", words])
    dump = Run([rw, "dump", "--json", trace])
    first_use = {}
    for index, line in enumerate(dump.stdout.splitlines()):
        e = json.loads(line)
        for m in e.get("mappings", []) + ([e["file"]] if "file" in e else []):
            if m.get("content_hash"):
                first_use.setdefault(m["content_hash"], (index, m["path"]))
    name = sorted(first_use)[0]
    index, path = first_use[name]
    copy = os.path.join(trace, "files", name)
    saved = os.path.join(work, "saved-copy")
    shutil.move(copy, saved)
    for kind in ("a symbolic link to /dev/zero", "a symbolic link to a host file", "a FIFO"):
        if kind == "a FIFO":
            os.mkfifo(copy)
        else:
            os.symlink("/dev/zero" if "zero" in kind else shutil.which("sort"), copy)
        info = bounded([rw, "info", "--verify", trace])
        check(info.status == 3 and f"at event {index}, the copy of {path}: the trace's copy {name} cannot be "
              "read".encode() in info.stdout and b"is not a regular file" in info.stdout,
              f"a copy that is {kind}: info --verify\n{info.describe()}")
        rep = bounded([rw, "replay", "--autopilot", "-q", trace])
        check(rep.status == 92 and b"is not a regular file" in rep.stderr and path.encode() in rep.stderr,
              f"a copy that is {kind}: replay\n{rep.describe()}")
        os.remove(copy)
    shutil.move(saved, copy)

    stray = os.path.join(trace, "files", "notes.txt")
    with open(stray, "w") as f:
        f.write("not a copy")
    info = bounded([rw, "info", "--verify", trace])
    check(info.status == 3 and b"files/notes.txt is not a copy rewind writes" in info.stdout,
          f"a file in files/ that is no copy: info --verify\n{info.describe()}")
    os.remove(stray)
    ok = bounded([rw, "info", "--verify", trace])
    check(ok.status == 0 and f"verified   {len(first_use)} file copies".encode() in ok.stdout,
          f"the restored trace\n{ok.describe()}")

    fifo_end = os.path.join(work, "fifo-end.trace")
    shutil.copytree(trace, fifo_end)
    os.remove(os.path.join(fifo_end, "end.json"))
    os.mkfifo(os.path.join(fifo_end, "end.json"))
    info = bounded([rw, "info", fifo_end])
    check(info.status == 3 and b"end.json is not a regular file" in info.stderr,
          f"an end.json that is a FIFO\n{info.describe()}")

    huge = os.path.join(work, "huge-input.trace")
    shutil.copytree(trace, huge)
    t = Run([tamper, huge, "--hash-only-input", str(1 << 60)])
    check(t.status == 0, f"trace_tamper\n{t.describe()}")
    rep = bounded([rw, "replay", "--autopilot", "-q", huge])
    check(rep.status == 90 and b"is not readable" in rep.stderr and b"bad_alloc" not in rep.stderr,
          f"an input claiming 2^60 bytes\n{rep.describe()}")
    return "symbolic links, a FIFO, a stray file, a FIFO end.json and a 2^60-byte input refused"


def check_trace_files_never_followed(rw, work, progs):
    """A trace's files are opened only as regular files inside it, never
    through a link: meta.json, end.json, the event stream, a file copy or
    files/ replaced by a link to a secret file (0600; or to a directory),
    a FIFO or a directory is refused by every subcommand, within seconds,
    with a message naming the file and a non-zero status (3 for info and
    dump, 92 for what replays), and the secret never shows, even where
    root reads a trace another user owns."""
    secret_text = '"s3cr3t-' + os.urandom(6).hex()  # a JSON parser's error would quote it
    secret = os.path.join(work, "secret")
    with open(secret, "w") as f:
        f.write(secret_text + "\n")
    os.chmod(secret, 0o600)
    secret_dir = os.path.join(work, "secret-dir")
    os.makedirs(secret_dir)
    open(os.path.join(secret_dir, secret_text[1:]), "w").close()  # a listing would show its name
    words = os.path.join(work, "words.txt")
    with open(words, "w") as f:
        f.write("pear\napple\nfig\n")
    trace = record(rw, work, "sort", ["sort", words])
    copy = next(m["content_hash"] for line in Run([rw, "dump", "--json", trace]).stdout.splitlines()
                for m in json.loads(line).get("mappings", []) if m.get("content_hash"))

    def odd(path, kind):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
        if kind == "a link to a secret":
            os.symlink(secret_dir if path.endswith("files") else secret, path)
        elif kind == "a FIFO":
            os.mkfifo(path)
        else:
            os.mkdir(path)

    top = [(["info"], 3), (["dump"], 3), (["replay", "--autopilot", "-q"], 92), (["serve", "--stdio", "-q"], 92),
           (["landmark", "--every", "50%"], 92), (["watch", "--no-landmarks"], 92)]
    copies = [(["info", "--verify"], 3), (["replay", "--autopilot", "-q"], 92), (["serve", "--stdio", "-q"], 92)]
    victims = [("meta.json", top), ("end.json", top), ("events", top), (f"files/{copy}", copies), ("files", copies)]
    runs = 0
    for victim, commands in victims:
        for kind in ("a link to a secret", "a FIFO", "a directory"):
            if victim == "files" and kind == "a directory":
                continue  # it is one
            crafted = os.path.join(work, "crafted")
            shutil.rmtree(crafted, ignore_errors=True)
            shutil.copytree(trace, crafted, symlinks=True)
            odd(os.path.join(crafted, victim), kind)
            if victim == "meta.json" and kind == "a link to a secret":
                for root, dirs, files in os.walk(crafted):
                    for name in dirs + files:
                        os.lchown(os.path.join(root, name), 65534, 65534)  # root reads nobody's trace
            for argv, status in commands:
                argv = [rw, argv[0], *argv[1:], crafted] + (["x == 1"] if argv[0] == "watch" else [])
                r = Run(argv, timeout=60)
                runs += 1
                said = r.stdout + r.stderr
                where = f"{victim} is {kind}: rewind {' '.join(argv[1:-1])}"
                check(not r.timed_out, f"{where}: still running after 60 s\n{r.describe()}")
                check(secret_text[1:].encode() not in said, f"{where}: the secret was shown\n{r.describe()}")
                check(r.status == status and (b"not a regular file" in said or b"not a directory" in said) and
                      victim.split("/")[-1].encode() in said, f"{where}: expected status {status}\n{r.describe()}")
    return f"{runs} runs refused, the secret never shown"


def check_statuses_agree(rw, work, progs, tamper):
    """The same damage gets the same status and reason from every command
    that replays: a stream cut inside its first chunk is "truncated" (92)
    for replay, serve and landmark alike; an event whose kept bytes and
    hash of them disagree is a damaged trace (92), not a divergence between
    two identical texts; a program named from a working directory that is
    gone is refused naming that directory."""
    trace = record(rw, work, "echo", ["/bin/sh", "-c", "echo one; echo two"])
    cut = os.path.join(work, "cut.trace")
    shutil.copytree(trace, cut)
    with open(os.path.join(cut, "events"), "r+b") as f:
        f.truncate(16 + 30)  # the file header, then part of the first chunk's header
    for argv in (["replay", "--autopilot", "-q"], ["serve", "--stdio", "-q"], ["landmark", "--every", "50%"]):
        r = Run([rw, *argv, cut], timeout=60)
        check(r.status == 92 and b"truncated" in r.stderr and b"header has 30 of 40 bytes" in r.stderr,
              f"a stream cut in its first chunk: rewind {argv[0]}\n{r.describe()}")

    inconsistent = os.path.join(work, "inconsistent.trace")
    shutil.copytree(trace, inconsistent)
    t = Run([tamper, inconsistent, "--write-hash", "1"])
    check(t.status == 0, f"trace_tamper\n{t.describe()}")
    r = Run([rw, "replay", "--autopilot", "-q", inconsistent])
    check(r.status == 92 and b"the trace is damaged" in r.stderr and b"inconsistent" in r.stderr and
          b"expected" not in r.stderr, f"a write whose bytes and hash disagree\n{r.describe()}")

    # A replay that fails partway through a search: watch ends with the
    # replay's own status, as replay does, not a generic 1.
    changed = os.path.join(work, "changed.trace")
    shutil.copytree(trace, changed)
    t = Run([tamper, changed, "--write-data", "2"])
    check(t.status == 0, f"trace_tamper\n{t.describe()}")
    for argv in (["replay", "--autopilot", "-q"], ["watch"]):
        r = Run([rw, *argv, changed] + (["1 == 1"] if argv == ["watch"] else []), timeout=120)
        check(r.status == 90 and b"diverged" in r.stderr, f"a changed write: rewind {argv[0]}\n{r.describe()}")

    here = os.path.join(work, "here")
    os.makedirs(here)
    shutil.copy("/usr/bin/echo", os.path.join(here, "myecho"))
    relative = os.path.join(work, "relative.trace")
    rec = Run([rw, "record", "-q", "-o", relative, "--", "./myecho", "hi"], cwd=here)
    check(rec.status == 0, f"recording ./myecho\n{rec.describe()}")
    meta_file = os.path.join(relative, "meta.json")
    with open(meta_file) as f:
        meta = json.load(f)
    gone = os.path.join(work, "gone-cwd")
    meta["cwd"] = gone
    with open(meta_file, "w") as f:
        json.dump(meta, f)
    r = Run([rw, "replay", "--autopilot", relative])
    check(r.status == 91 and f"cannot enter the recorded working directory {gone} (No such file or "
          "directory)".encode() in r.stderr, f"a program named from a working directory that is gone\n{r.describe()}")
    return ("truncated: 92 from replay, serve and landmark; inconsistent event: 92; a divergence: 90 from replay and "
            "watch; the missing directory named")


def check_stuck_replay_says_where(rw, work, progs):
    # A thread that runs longer than the watchdog without an event: the
    # replay ends saying it is running and where, and a server says so in
    # its --error-file too (gdb shows a server's last words only while the
    # connection lasts).
    trace = record(rw, work, "compute", [os.path.join(progs, "compute_loop"), "3"])
    r = Run([rw, "replay", "--autopilot", "-q", "--watchdog", "1", trace])
    check(r.status == 93 and re.search(rb"did not reach .* within 1 s \(it is running at 0x[0-9a-f]+\)", r.stderr),
          f"a replay stuck in a loop\n{r.describe()}")
    if not shutil.which("gdb"):
        return "replay --autopilot (no gdb for serve)"
    error_file = os.path.join(work, "server-error")
    g = Run(["gdb", "-nx", "-batch", "-ex",
             f"target extended-remote | {rw} serve --stdio -q --watchdog 1 --error-file {error_file} {trace}",
             "-ex", "continue"], timeout=60)
    check(os.path.exists(error_file), f"serve left no --error-file\n{g.describe()}")
    with open(error_file) as f:
        said = f.read()
    check("replay is stuck" in said and "it is running at 0x" in said, f"serve's --error-file says {said!r}")
    return "replay and serve say the thread is running and where"


def check_group_exit_order(rw, work, progs, tamper):
    """The kernel may report the exits of the threads an exit_group killed
    before the exit of the thread that called it (1 recording of xz -T2 in
    about 10 here): replay must run that call first, not wait for the
    killed threads forever. trace_tamper puts a recording in that order."""
    xz = shutil.which("xz")
    if not xz:
        raise Skipped("xz is not installed (scripts/install-deps.sh installs it)")
    data = os.path.join(work, "input.txt")
    with open(data, "w") as f:
        f.write("".join(f"line {i} of the group exit check\n" for i in range(60000)))
    trace = os.path.join(work, "xz.trace")
    rec = Run([rw, "record", "-q", "-o", trace, "--", xz, "-T2", "-3", "-c", data])
    check(rec.status == 0, f"recording xz -T2\n{rec.describe()}")
    t = Run([tamper, trace, "--group-exit-last"])
    check(t.status == 0, f"trace_tamper\n{t.describe()}")
    rep = Run([rw, "replay", "--autopilot", "--watchdog", "20", trace])
    check(rep.status == 0 and rep.stdout == rec.stdout,
          f"replay with the killed threads' exits first\n{rep.describe()}")
    # Under gdb, history ends just before the exit_group, as in any order.
    g = Run([rw, "replay", "--gdb", GDB, trace, "--", "-nx", "-batch", "-ex", "set breakpoint pending on",
             "-ex", "break pthread_mutex_lock", "-ex", "continue", "-ex", "delete", "-ex", "continue",
             "-ex", "reverse-stepi", "-ex", "continue"])
    out = g.stdout.decode(errors="replace") + g.stderr.decode(errors="replace")
    check(g.status == 0 and out.count("No more reverse-execution history") == 2 and "Could not" not in out
          and "diverged" not in out, f"gdb to the end of that trace\n{g.describe()}")
    return f"{t.stdout.decode().strip()}; replayed byte for byte, and to its end under gdb"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tamper", required=True, help="the trace_tamper tool")
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)
    checks = []
    for fn in [check_directory_modes, check_no_scratch_left, check_exit_codes_and_messages,
               check_serve_ends_with_gdb, check_gdb_ends_with_replay, check_scrub_env, check_disk_full, check_info_says_what_replay_does,
               check_recorder_killed_anywhere, check_stuck_replay_says_where, check_trace_files_never_followed]:
        d = fresh_dir(os.path.join(work, fn.__name__))
        checks.append((fn.__name__, lambda fn=fn, d=d: fn(args.rewind, d, args.programs)))
    for fn in [check_damaged_traces, check_crafted_traces, check_group_exit_order, check_statuses_agree]:
        d = fresh_dir(os.path.join(work, fn.__name__))
        checks.append((fn.__name__, lambda fn=fn, d=d: fn(args.rewind, d, args.programs, args.tamper)))
    return run_checks(checks, args.only)


if __name__ == "__main__":
    sys.exit(main())
