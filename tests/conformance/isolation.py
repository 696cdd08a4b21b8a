"""Every phase (a test program natively, under rewind record, under rewind
replay) runs in a new session, in a cgroup of its own when a cgroup v2
hierarchy is writable, with a tag in its environment; afterwards whatever is
left of it is killed: the process group, the session, the cgroup, and any
process that still carries the tag (daemons that made a new session, stopped
children, tracees). So the runner finishes even if every test hangs, and
leaves nothing running."""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "phase_wrapper.py")
CGROUP_PREFIX = "rewind-conformance-"
# Held while a test's binary is copied and while a phase is spawned: a fork in
# another thread while the copy is open for writing would make its exec fail
# with ETXTBSY. Popen returns once its child has exec'd (closing that fd).
SPAWN_LOCK = threading.Lock()


def copy_executable(src, dst):
    with SPAWN_LOCK:
        shutil.copy2(src, dst)


def cgroup2_root():
    """A cgroup v2 hierarchy where we may make groups (pure v2 or hybrid's 'unified')."""
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 3 and fields[2] == "cgroup2" and os.access(fields[1], os.W_OK):
                    return fields[1]
    except OSError:
        pass
    return None


def runner_alive(pid):
    """Whether a conformance runner still has this pid (a pid reused by another
    program does not count)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"run_conformance" in f.read()
    except OSError:
        return False


def kill_cgroup_tree(path):
    """Kills every process of a cgroup and its children, then removes them."""
    for sub, _, _ in sorted(os.walk(path), key=lambda w: -len(w[0])):
        try:
            with open(os.path.join(sub, "cgroup.kill"), "w") as f:
                f.write("1")
        except OSError:
            pass
    for sub, _, _ in sorted(os.walk(path), key=lambda w: -len(w[0])):
        for _ in range(50):
            try:
                os.rmdir(sub)
                break
            except OSError:
                time.sleep(0.1)


def sweep_stale_cgroups(root):
    """The cgroups of a run that was killed before it could clean up (CTest's
    timeout kills the runner with SIGKILL): a daemon a test left there would
    otherwise run on. Runs of other users of the machine that are still alive
    are left alone."""
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if not name.startswith(CGROUP_PREFIX):
            continue
        pid = name[len(CGROUP_PREFIX):].split("-")[0]
        if pid.isdigit() and not runner_alive(int(pid)):
            kill_cgroup_tree(os.path.join(root, name))


class IsolatedRunner:
    """Runs each phase in a new session, in a cgroup of its own when possible, with a
    tag in its environment; afterwards kills whatever is left of it: the process
    group, the session, the cgroup, and any process that still carries the tag
    (daemons that made a new session, stopped children)."""

    def __init__(self):
        self.run_id = f"{os.getpid()}-{int(time.time())}"
        self.counter = 0
        self.lock = threading.Lock()
        self.active = {}
        self.cg_base = None
        root = cgroup2_root()
        if root:
            sweep_stale_cgroups(root)
            base = os.path.join(root, f"{CGROUP_PREFIX}{self.run_id}")
            try:
                os.mkdir(base)
                self.cg_base = base
            except OSError:
                self.cg_base = None

    def new_slot(self, label):
        with self.lock:
            self.counter += 1
            n = self.counter
        tag = f"{self.run_id}:{n}:{label}"
        cg = None
        if self.cg_base:
            cg = os.path.join(self.cg_base, f"p{n}")
            try:
                os.mkdir(cg)
            except OSError:
                cg = None
        return tag, cg

    def run(self, argv, cwd, env, timeout, stdout_path, stderr_path, label):
        """Runs argv to its end or its timeout; returns its exact status (rc:
        negative for a signal, None when it timed out), whether it timed out,
        its duration and how many processes it left that had to be killed."""
        tag, cg = self.new_slot(label)
        env = dict(env)
        env["REWIND_CONFORMANCE_TAG"] = tag
        # (No preexec_fn: the runner is multithreaded.)
        status_path = stdout_path + ".status"
        if os.path.exists(status_path):
            os.unlink(status_path)
        wrapper = [sys.executable, "-I", "-S", WRAPPER, status_path,
                   os.path.join(cg, "cgroup.procs") if cg else "-"] + argv
        start = time.monotonic()
        timed_out = False
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                with SPAWN_LOCK:
                    p = subprocess.Popen(wrapper, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err, start_new_session=True)
            except OSError as e:
                err.write(f"cannot run: {e}\n".encode())
                return {"rc": 127, "timed_out": False, "duration": 0.0, "leftovers": 0}
            with self.lock:
                self.active[p.pid] = (tag, cg)
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                self._killpg(p.pid)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
        duration = time.monotonic() - start
        leftovers = self.sweep(p.pid, tag, cg)
        with self.lock:
            self.active.pop(p.pid, None)
        rc = None
        try:
            with open(status_path) as f:
                code, took = f.read().split()
            rc, duration = int(code), float(took)
        except (OSError, ValueError):
            if not timed_out:  # the wrapper itself was killed
                rc = p.returncode
        return {"rc": rc, "timed_out": timed_out, "duration": round(duration, 3), "leftovers": leftovers}

    @staticmethod
    def _killpg(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass

    @staticmethod
    def _tagged(tag, sid):
        """Pids of processes carrying the tag or belonging to session sid."""
        found = []
        me = os.getpid()
        needle = ("REWIND_CONFORMANCE_TAG=" + tag).encode() + b"\0"
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            pid = int(d)
            if pid == me:
                continue
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    stat = f.read()
                fields = stat[stat.rindex(b")") + 2:].split()
                if fields[0] == b"Z":
                    continue
                if int(fields[3]) == sid:
                    found.append(pid)
                    continue
                with open(f"/proc/{d}/environ", "rb") as f:
                    if needle in f.read() + b"\0":
                        found.append(pid)
            except (OSError, ValueError, IndexError):
                continue
        return found

    def _kill_once(self, sid, tag, cg):
        """One pass of killing: the session's group, the cgroup, the tagged
        processes. Returns the pids it found (zombies not counted)."""
        pids = set()
        if cg:
            try:
                with open(os.path.join(cg, "cgroup.procs")) as f:
                    pids |= {int(x) for x in f.read().split()}
            except OSError:
                pass
        self._killpg(sid)
        pids |= set(self._tagged(tag, sid))
        pids.discard(os.getpid())
        if pids and cg and os.path.exists(os.path.join(cg, "cgroup.kill")):
            try:
                with open(os.path.join(cg, "cgroup.kill"), "w") as f:
                    f.write("1")
            except OSError:
                pass
        killed = set()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        return killed

    def sweep(self, sid, tag, cg):
        """Kills what the phase left, until nothing is left (10 s at most), and
        removes its cgroup; returns how many processes were killed."""
        killed = set()
        deadline = time.monotonic() + 10
        while True:
            found = self._kill_once(sid, tag, cg)
            if not found:
                break
            killed |= found
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if cg:
            for _ in range(50):
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.1)
        return len(killed)

    def kill_all(self):
        """Kills every phase running now (on Ctrl-C or SIGTERM), at once: the
        thread that runs each phase then reaps it and sweeps what is left."""
        with self.lock:
            items = list(self.active.items())
        for pid, (tag, cg) in items:
            self._kill_once(pid, tag, cg)

    def close(self):
        if self.cg_base:
            for d in os.listdir(self.cg_base) if os.path.isdir(self.cg_base) else []:
                p = os.path.join(self.cg_base, d)
                if os.path.isdir(p):
                    try:
                        os.rmdir(p)
                    except OSError:
                        pass
            try:
                os.rmdir(self.cg_base)
            except OSError:
                pass
