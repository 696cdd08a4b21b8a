#!/usr/bin/env python3
"""Recording is invisible to every process it does not record. While a
recorded program reads a file over and over (so that its reads refer to
the trace's copy), another process opens that file for writing without
blocking, GNU truncate opens it, and with the recorder stopped a writer
neither fails nor waits. Every change still reaches the trace: the replay
prints what the recorded run printed, byte for byte."""
import argparse
import os
import queue
import re
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rwtest import (STABLE_FILESYSTEMS, Run, check, filesystem_type, fresh_dir, require_root, run_checks)

FILE_BYTES = 1 << 20
# How long a step may take before the check calls it a wait (a writer of
# the old design waited 45 s for a stopped recorder).
PATIENCE = 10


class LineReader:
    """The recorded program's passes, read in the background."""

    def __init__(self, stream):
        self.lines = []
        self._queue = queue.Queue()
        threading.Thread(target=lambda: [self._queue.put(l) for l in stream] + [self._queue.put(None)],
                         daemon=True).start()

    def wait_for(self, what, done, seconds=PATIENCE):
        while not done(self.lines):
            try:
                line = self._queue.get(timeout=seconds)
            except queue.Empty:
                check(False, f"no {what} within {seconds} s; the program printed {len(self.lines)} lines")
            check(line is not None, f"the program ended before {what}")
            self.lines.append(line.decode())

    def wait_for_end(self, seconds):
        while True:
            try:
                line = self._queue.get(timeout=seconds)
            except queue.Empty:
                check(False, f"the program did not end within {seconds} s")
            if line is None:
                return
            self.lines.append(line.decode())

    def sums(self):
        return [l.split(": ")[1].strip() for l in self.lines]


def in_time(what, action):
    """Runs `action` on a thread of its own: it must end within PATIENCE."""
    failure = []

    def run():
        try:
            action()
        except OSError as e:
            failure.append(e)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(PATIENCE)
    check(not t.is_alive(), f"{what} waited more than {PATIENCE} s")
    check(not failure, f"{what} failed: {failure[0] if failure else ''}")


def overwrite(path, flags, text):
    """Changes bytes in the middle of the file, and puts its times back."""
    before = os.stat(path)
    fd = os.open(path, flags)
    try:
        os.pwrite(fd, text, 300000)
    finally:
        os.close(fd)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def check_writers_never_notice(rw, work, progs):
    data = os.path.join(work, "data.bin")
    stop = os.path.join(work, "stop")
    with open(data, "wb") as f:
        f.write(bytes((i * 31 + (i >> 9)) & 0xff for i in range(FILE_BYTES)))
    trace = os.path.join(work, "trace")
    env = dict(os.environ, REWIND_RECORD_STATS="1")
    rec = subprocess.Popen([rw, "record", "-o", trace, "--", os.path.join(progs, "reread_until"), data, stop],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stopped = False
    try:
        passes = LineReader(rec.stdout)
        passes.wait_for("20 passes", lambda lines: len(lines) >= 20)

        in_time("open(O_WRONLY|O_NONBLOCK) by another process",
                lambda: overwrite(data, os.O_WRONLY | os.O_NONBLOCK, b"changed by another process"))
        passes.wait_for("a pass that sees the first change", lambda lines: len(set(passes.sums())) >= 2)
        truncate = Run(["truncate", "-s", str(FILE_BYTES), data], timeout=PATIENCE)
        check(truncate.status == 0, f"GNU truncate on a file the recording reads\n{truncate.describe()}")
        seen = len(passes.lines)
        passes.wait_for("20 more passes", lambda lines: len(lines) >= seen + 20)

        os.kill(rec.pid, signal.SIGSTOP)
        stopped = True
        in_time("open(O_RDWR) while the recorder is stopped",
                lambda: overwrite(data, os.O_RDWR, b"changed while the recorder was stopped"))
        os.kill(rec.pid, signal.SIGCONT)
        stopped = False
        passes.wait_for("a pass that sees the second change", lambda lines: len(set(passes.sums())) >= 3)
        open(stop, "w").close()
        passes.wait_for_end(60)
    except Exception:
        if stopped:
            os.kill(rec.pid, signal.SIGCONT)
        rec.kill()
        raise
    finally:
        if not os.path.exists(stop):
            open(stop, "w").close()
    try:
        rec.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rec.kill()
        check(False, "the recording did not end within 60 s of the stop file")
    recorded = "".join(passes.lines).encode()
    stats = rec.stderr.read().decode(errors="replace")
    check(rec.returncode == 0, f"rewind record exited {rec.returncode}\n{stats}")
    sums = passes.sums()
    distinct = [s for i, s in enumerate(sums) if i == 0 or s != sums[i - 1]]
    check(len(distinct) == 3, f"expected the file's three contents in turn, the passes saw {distinct}")

    m = re.search(r"reads of files: (\d+) by reference \(\d+ bytes\) to (\d+) files shared, (\d+) copies retired",
                  stats)
    check(m, f"no statistics of reads by reference\n{stats}")
    by_reference, shared, retired = (int(x) for x in m.groups())
    check(by_reference > 0 and shared >= 2 and retired >= 2,
          f"{by_reference} reads by reference, {shared} copies shared, {retired} retired: expected reads by "
          f"reference before and after each change\n{stats}")

    replay = Run([rw, "replay", "--autopilot", trace], timeout=120)
    check(replay.status == 0 and replay.stdout == recorded,
          f"the replay printed other passes than the recording\n{replay.describe()}")
    return (f"{len(sums)} passes, {by_reference} reads by reference to {shared} copies, {retired} retired by "
            "writers that neither failed nor waited; replayed byte for byte")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)
    mounted = False
    if filesystem_type(work) not in STABLE_FILESYSTEMS:
        # Reads of files here are always recorded by content: a tmpfs of
        # its own gives the check files that can be read by reference.
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "none", work], check=True)
        mounted = True
    try:
        checks = [("check_writers_never_notice", lambda: check_writers_never_notice(args.rewind, work, args.programs))]
        return run_checks(checks)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", work])


if __name__ == "__main__":
    sys.exit(main())
