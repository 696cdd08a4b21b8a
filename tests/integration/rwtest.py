"""Helpers shared by rewind's integration tests."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def skip_if_program_skipped(name, run):
    """A program that exits 77 says why it cannot run here (the last line
    of its output): the test is skipped for that reason, never passed."""
    if shell_status(run.status) == SKIP:
        lines = run.stdout.decode(errors="replace").strip().splitlines()
        skip(f"{name}: {lines[-1] if lines else 'the program skipped itself'}")


def require_root():
    if os.geteuid() != 0:
        skip("recording needs root (or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE)")


# Filesystems whose files the recorder may read by reference (capture.bpf.c,
# stable_filesystem), by `stat -f -c %t`.
STABLE_FILESYSTEMS = {"ef53", "58465342", "9123683e", "1021994", "f2f52010", "73717368", "e0f5e1e2"}


def filesystem_type(path):
    return subprocess.run(["stat", "-f", "-c", "%t", path], capture_output=True, text=True).stdout.strip()


class Skipped(Exception):
    """A check this machine cannot run (the reason is printed)."""


_doctor_lines = {}


def doctor_says(rewind, check_name):
    """(verdict, detail) of one of `rewind doctor`'s checks (e.g. "hw breakpoints");
    the detail keeps its continuation lines."""
    if not _doctor_lines:
        out = subprocess.run([rewind, "doctor"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True).stdout
        name = None
        for line in out.splitlines():
            m = re.match(r"\s*(ok|no|FAIL)\s+(\S.*?)\s{2,}(.*)", line)
            if m:
                name = m.group(2)
                _doctor_lines[name] = (m.group(1), m.group(3))
            elif name and line.startswith(" " * 24):
                verdict, detail = _doctor_lines[name]
                _doctor_lines[name] = (verdict, detail + "\n" + line.strip())
            else:
                name = None
    return _doctor_lines.get(check_name, ("missing", "rewind doctor has no such check"))


def machine_can(rewind, check_name):
    """Whether `rewind doctor` says ok for one of its checks."""
    return doctor_says(rewind, check_name)[0] == "ok"


def require_machine(rewind, check_name, what):
    """Raises Skipped unless `rewind doctor` says ok for `check_name`."""
    verdict, detail = doctor_says(rewind, check_name)
    if verdict != "ok":
        raise Skipped(f"{what} needs {check_name}, which this machine lacks; rewind doctor says: {detail}")


def requiring(rewind, check_name, fn):
    """`fn`, skipped (with the reason) where `rewind doctor` is not ok for `check_name`."""
    def run():
        require_machine(rewind, check_name, "this check")
        return fn()
    return run


# Reverse execution, goto a position inside an event interval and rewind
# watch count positions with the CPU's debug registers.
DEBUG_REGISTERS = "hw breakpoints"


def run_checks(checks, only=None):
    """Runs (name, check) pairs in order, printing `ok` with what each
    check returned (if anything) and its time, `SKIP` with the reason a
    check cannot run here, or `FAIL` with the reason. Returns the exit
    status: 1 if any failed, else SKIP if any was skipped, else 0."""
    failed = skipped = 0
    for name, run in checks:
        if only and only not in name:
            continue
        start = time.time()
        try:
            found = run()
            print(f"ok   {name}" + (f": {found}" if found else "") + f" ({time.time() - start:.1f} s)")
        except Skipped as s:
            print(f"SKIP {name}: {s}")
            skipped += 1
        except Failure as f:
            print(f"FAIL {name}: {f}")
            failed += 1
    return 1 if failed else SKIP if skipped else 0


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Run:
    def __init__(self, argv, cwd=None, env=None, timeout=300):
        self.argv = argv
        self.timed_out = None
        try:
            p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired as e:
            # A check that fails, with what the command printed, rather
            # than a traceback that ends the whole test script.
            self.timed_out = timeout
            self.stdout, self.stderr = e.stdout or b"", e.stderr or b""
            self.status = -9
            return
        self.stdout = p.stdout
        self.stderr = p.stderr
        self.status = p.returncode  # negative: killed by that signal

    def describe(self):
        status = f"killed after {self.timed_out} s" if self.timed_out else f"status {self.status}"
        return (f"$ {' '.join(self.argv)}\n{status}\n--- stdout\n"
                f"{self.stdout.decode(errors='replace')}--- stderr\n{self.stderr.decode(errors='replace')}")


def shell_status(status):
    """A subprocess status as a shell reports it: 128+N for signal N."""
    return 128 - status if status < 0 else status


def normalize_numbers(text):
    """For programs whose output varies from run to run (clocks, random bytes)."""
    return re.sub(rb"[0-9a-f]{2,}|[0-9]+", b"N", text)


def strace_counts(argv, cwd, workdir):
    out = os.path.join(workdir, "strace.txt")
    # Same kind of stdout as the recorded run (a pipe): libc probes it.
    subprocess.run(["strace", "-f", "-c", "-o", out] + argv, cwd=cwd, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)
    counts = {}
    dashes = 0
    with open(out) as f:
        for line in f:
            if line.startswith("------"):
                dashes += 1
                continue
            if dashes != 1:
                continue
            fields = line.split()
            if len(fields) >= 5:
                counts[fields[-1]] = int(fields[3])
    return counts


def rewind_json(rewind, *args):
    p = subprocess.run([rewind] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def rewind_watch(rewind, trace, expr, *extra):
    """`rewind watch --json`: the run and its report (None if it printed nothing)."""
    r = Run([rewind, "watch", trace, expr, "--json", *extra], timeout=900)
    out = r.stdout.decode(errors="replace")
    try:
        return r, json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        raise Failure(f"rewind watch printed no JSON\n{r.describe()}")


def serve_on_free_port(rewind, trace, env=None):
    """`rewind serve --port` on a free loopback port, once it listens: the
    process (its stderr a pipe, the "waiting" line read) and the port."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([rewind, "serve", "--port", str(port), trace], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env)
    waiting = server.stderr.readline()  # "rewind: waiting for gdb on 127.0.0.1:PORT …"
    if b"waiting for gdb" not in waiting:
        server.kill()
        server.wait()
        raise Failure(f"rewind serve did not listen: {waiting!r}")
    return server, port


def dump_events(rewind, trace):
    p = subprocess.run([rewind, "dump", "--json", trace], stdout=subprocess.PIPE, check=True)
    return [json.loads(line) for line in p.stdout.splitlines()]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def deterministic_bytes(n):
    """Content that is easy to check and not all one value."""
    out = bytearray(n)
    x = 0x12345678
    for i in range(0, n, 4):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        out[i:i + 4] = x.to_bytes(4, "little")
    return bytes(out)


def prepare_inputs(name, work):
    """Arguments for the program, and the files whose reads are checked."""
    data = os.path.join(work, "data")
    os.makedirs(data)
    if name == "read_8m":
        path = os.path.join(data, "8m.bin")
        with open(path, "wb") as f:
            f.write(deterministic_bytes(8 << 20))
        return [path], {path: open(path, "rb").read()}
    if name == "mmap_file":
        path = os.path.join(data, "mapped.bin")
        with open(path, "wb") as f:
            f.write(deterministic_bytes(100000))
        return [path], {}
    if name == "dir_list":
        for entry in ["b.txt", "a.txt", "c.dir"]:
            open(os.path.join(data, entry), "w").close()
        return [data], {}
    if name in ("file_io", "stat_files", "file_rereads"):
        return [data], {}
    return [], {}
