#!/usr/bin/env python3
"""rewind watch where memory is short: the big hash-table shape of
bench/programs (128 MiB of heap that it rewrites all over between any two
snapshots, so that each snapshot the search keeps comes to cost about the
whole heap) searched inside a memory cgroup nested in one of 750 MiB,
which the search's snapshots would fill. The replay lets the snapshots it
used least recently go while memory is short, anchors last, and the search
starts a stretch again where one it needs was let go: the report names the
culprit line, and the kernel killed nothing in the cgroup.

  check_watch_memory.py --rewind R --programs DIR --sources DIR --work W [--only NAME]
"""
import json
import os
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from rwtest import Run, check, fresh_dir, run_checks, skip  # noqa: E402
from check_watch_shapes import shape_args  # noqa: E402
import watch_shapes  # noqa: E402

LIMIT = 750 << 20


class MemoryCgroup:
    """A child of this process's memory cgroup (version 1 or 2), with a
    limit, and in it a cgroup without one where the search runs: the limit
    that counts is an ancestor's, as for a service nested in a container."""

    def __init__(self, limit):
        self.dir = self.v2 = None
        with open("/proc/self/cgroup") as f:
            lines = [l.rstrip("\n").split(":", 2) for l in f]
        for _, controllers, path in lines:
            if "memory" in controllers.split(",") and os.path.isdir("/sys/fs/cgroup/memory" + path):
                self.dir, self.v2 = "/sys/fs/cgroup/memory" + path, False
        if not self.dir:
            for hid, controllers, path in lines:
                for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                    parent = root + path
                    if hid == "0" and not controllers and os.path.exists(parent + "/cgroup.controllers"):
                        with open(parent + "/cgroup.controllers") as f:
                            if "memory" in f.read().split():
                                self.dir, self.v2 = parent, True
        if not self.dir:
            skip("no memory cgroup controller here to hold the search in (cgroup v1 memory or v2 with memory)")
        self.dir = os.path.join(self.dir, f"rewind-watch-memory-{os.getpid()}")
        self.inner = os.path.join(self.dir, "inner")
        try:
            os.mkdir(self.dir)
            with open(os.path.join(self.dir, "memory.max" if self.v2 else "memory.limit_in_bytes"), "w") as f:
                f.write(str(limit))
            if self.v2:
                with open(os.path.join(self.dir, "cgroup.subtree_control"), "w") as f:
                    f.write("+memory")
            os.mkdir(self.inner)
        except OSError as e:
            self.remove()
            skip(f"cannot make a memory cgroup with a limit here: {e}")

    def oom_kills(self):
        name = "memory.events" if self.v2 else "memory.oom_control"
        with open(os.path.join(self.dir, name)) as f:
            m = re.search(r"^oom_kill (\d+)$", f.read(), re.M)
        return int(m.group(1)) if m else 0

    def peak(self):
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        try:
            with open(os.path.join(self.dir, name)) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def argv(self, argv):
        """`argv` run inside the cgroup."""
        procs = os.path.join(self.inner, "cgroup.procs")
        return ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh", *argv]

    def remove(self):
        """Kills what is left in it (a copy still exiting), then removes it."""
        deadline = time.monotonic() + 20
        for d in (self.inner, self.dir):
            while os.path.isdir(d):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        print(f"note: could not remove the test's cgroup {d}")
                        break
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        for pid in f.read().split():
                            try:
                                os.kill(int(pid), signal.SIGKILL)
                            except ProcessLookupError:
                                pass
                except OSError:
                    pass
                time.sleep(0.05)


def scenario_short_memory(rw, programs, sources, work):
    shape = watch_shapes.Shape("big_hash", sources)
    trace = os.path.join(work, "trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, "bench_watch_big_hash"), "1"], cwd=work)
    check(r.status == 0, f"recording big_hash\n{r.describe()}")
    cgroup = MemoryCgroup(LIMIT)
    try:
        r = Run(cgroup.argv([rw, "watch", trace, shape.expr, "--json"]), timeout=900)
        kills = cgroup.oom_kills()
        peak = cgroup.peak()
    finally:
        cgroup.remove()
    check(kills == 0, f"the kernel killed {kills} processes in the cgroup\n{r.describe()}")
    out = r.stdout.decode(errors="replace")
    check(r.status == 0 and out.strip(), f"rewind watch failed\n{r.describe()}")
    report = json.loads(out)
    right, said = watch_shapes.verdict(shape, report)
    check(right, f"rewind watch names {said}; the culprit is {shape.where()}")
    let_go = report.get("snapshots_let_go", 0)
    check(let_go > 0, f"memory was never short in {LIMIT >> 20} MiB (peak {peak}): the test shows nothing")
    return (f"{said} in {LIMIT >> 20} MiB, peak {(peak or 0) >> 20} MiB, {let_go} snapshots let go, "
            f"{report['probes']} probes")


def main():
    args = shape_args("bench_watch_big_hash")
    work = fresh_dir(args.work)
    return run_checks([("short_memory", lambda: scenario_short_memory(args.rewind, args.programs, args.sources,
                                                                        work))], args.only)


if __name__ == "__main__":
    sys.exit(main())
