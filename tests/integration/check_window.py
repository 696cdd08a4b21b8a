#!/usr/bin/env python3
"""rewind record --pid PID --window SPAN|SIZE: the flight recorder. The
recording goes on, start images are taken again as it goes, and only the
end is kept: the trace starts at the oldest start image the window needs.
Checked on a program of ours (threads blocked in read and in a futex, a
pending timer, a blocked pending signal) whose window replays exactly (its
output is the end of what the process printed while recorded) and under
gdb back to the window's start; the same program crashing, whose window
replays to the crash; copies of the window written on a signal while the
recording goes on; redis-server (threads) under a load that runs
throughout; a time-compressed long run whose disk use stays within a
window of a size; and the usage errors."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_attach as attach
from rwtest import Run, check, fresh_dir


def end_of(trace):
    with open(os.path.join(trace, "end.json")) as f:
        return json.load(f)


def check_window_account(trace, at_least_images):
    end = end_of(trace)
    w = end.get("window")
    check(w is not None, f"end.json must say the trace is a window\n{end}")
    check(w["images_taken"] >= at_least_images and w["events_dropped"] > 0,
          f"start images must be taken again as the recording goes, and the events before the oldest kept "
          f"dropped\n{w}")
    check(end["complete"], f"the window must be complete\n{end.get('problems')}")
    return end, w


def check_usage(rw, work, program):
    no_pid = Run([rw, "record", "--window", "10m", "--", "/bin/true"])
    check(no_pid.status != 0 and b"--window goes with --pid" in no_pid.stderr, f"--window without --pid\n{no_pid.describe()}")
    for bad in ["1", "1s", "lots", "100KiB"]:
        r = Run([rw, "record", "--pid", "1", "--window", bad])
        check(r.status != 0 and b"--window takes" in r.stderr, f"--window {bad}\n{r.describe()}")
    for bad in ["INT", "SIGKILL", "CHLD", "99", "nosuch"]:
        r = Run([rw, "record", "--pid", "1", "--window", "10m", "--freeze-on", bad])
        check(r.status != 0 and b"--freeze-on takes" in r.stderr, f"--freeze-on {bad}\n{r.describe()}")
    alone = Run([rw, "record", "--pid", "1", "--freeze-on", "USR1"])
    check(alone.status != 0 and b"--window" in alone.stderr, f"--freeze-on without --window\n{alone.describe()}")
    return "refused: no --pid; 1 (seconds below 2), 1s, lots, 100KiB; --freeze-on INT, SIGKILL, CHLD, 99, nosuch, alone"


def check_program_window(rw, work, program):
    target = attach.start_target(program, work, 400, 20)
    trace = os.path.join(work, "t")
    rec = Run([rw, "record", "--pid", str(target.pid), "--for", "6s", "--window", "2s", "-o", trace], timeout=120)
    check(rec.status == 0, f"rewind record --window\n{rec.describe()}")
    status = target.wait(timeout=60)
    whole = attach.target_output(work)
    check(status == 0 and whole.strip().splitlines()[-1].startswith(b"done 400: value ok, bytes ok"),
          f"the process must run to its end after the detach (status {status})\n{whole.decode(errors='replace')}")
    end, w = check_window_account(trace, 4)
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    check(rep.status == 0, f"replay of the window\n{rep.describe()}")
    attach.check_slice(rep.stdout, whole, "the window")
    # The window starts seconds after the attach: the first ticks recorded are not in it.
    first = int(rep.stdout.split()[1])
    attached_at = int([line for line in whole.splitlines() if line.startswith(b"tick")][0].split()[1])
    check(first > attached_at + 50, f"the window must start well after the attach (tick {first})")
    attach.gdb_at_breakpoint_and_back(rw, trace, "write", "bt 1")
    # A reverse watch inside the window: the tick after its first one.
    wakes_line = next(i + 1 for i, text in enumerate(open(attach.SOURCE)) if "wakes++" in text)
    watch = Run([rw, "watch", trace, f"wakes >= {first + 5}"], timeout=300)
    check(watch.status == 0 and b"attach_target.c:%d" % wakes_line in watch.stdout + watch.stderr,
          f"rewind watch must name the line that changes wakes\n{watch.describe()}")
    return (f"{w['images_taken']} start images in {w['recorded_ns'] / 1e9:.1f} s, {w['events_dropped']} events "
            f"dropped, {end['events']} kept (ticks {first}..); the replay exact; gdb back to the window's start; "
            f"rewind watch names line {wakes_line}")


def check_freeze_on_signal(rw, work, program):
    """--freeze-on USR2: each SIGUSR2 to rewind record writes the window so
    far out as TRACE.1, TRACE.2 (each replays exactly, as far as it goes),
    and the recording goes on to its own end."""
    target = attach.start_target(program, work, 400, 20)
    trace = os.path.join(work, "t")
    rec = subprocess.Popen([rw, "record", "--pid", str(target.pid), "--for", "6s", "--window", "2s", "--freeze-on",
                            "USR2", "-o", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3.5)
    rec.send_signal(signal.SIGUSR2)
    time.sleep(0.5)
    rec.send_signal(signal.SIGUSR2)
    _, err = rec.communicate(timeout=120)
    check(rec.returncode == 0 and err.count(b"the recording goes on") == 2,
          f"rewind record --freeze-on USR2 (two SIGUSR2)\n{err.decode(errors='replace')}")
    target.wait(timeout=60)
    whole = attach.target_output(work)
    said = []
    for t in [trace + ".1", trace + ".2", trace]:
        end, w = check_window_account(t, 3)
        rep = Run([rw, "replay", "--autopilot", t], timeout=300)
        check(rep.status == 0, f"replay of {t}\n{rep.describe()}")
        attach.check_slice(rep.stdout, whole, os.path.basename(t))
        said.append(f"{os.path.basename(t)}: {end['events']} events, ticks {int(rep.stdout.split()[1])}.."
                    f"{int(rep.stdout.split()[-3])}")
    return "; ".join(said) + "; each replays exactly"


def check_crash(rw, work, program):
    out = open(os.path.join(work, "target.out"), "wb")
    target = subprocess.Popen([program, "250", "20", os.path.join(work, "target.file"), "crash"], stdout=out,
                              stderr=subprocess.STDOUT)
    time.sleep(0.3)
    trace = os.path.join(work, "t")
    rec = Run([rw, "record", "--pid", str(target.pid), "--window", "2s", "-o", trace], timeout=120)
    target.wait(timeout=30)
    end, w = check_window_account(trace, 2)
    check(end["exit"]["signaled"] and end["exit"]["signal"] == 11,
          f"the window must end with the crash (SIGSEGV)\n{end['exit']}\n{rec.describe()}")
    rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
    whole = attach.target_output(work)
    check(rep.status in (-11, 128 + 11) and rep.stdout and whole.endswith(rep.stdout),
          f"the window must replay up to the crash, and die of it\n{rep.describe()}")
    return f"{w['images_taken']} start images; the replay prints the last {len(rep.stdout.splitlines())} ticks and dies of SIGSEGV"


def check_redis(rw, work):
    said = attach.check_redis(rw, work, 6, ["--window", "2s"])
    _, w = check_window_account(os.path.join(work, "redis"), 3)
    return f"{said}; {w['images_taken']} start images, {w['events_dropped']} events dropped"


def check_python_http_server(rw, work):
    said = attach.check_python_http_server(rw, work, 6, ["--window", "2s"])
    _, w = check_window_account(os.path.join(work, "http"), 3)
    return f"{said}; {w['images_taken']} start images, {w['events_dropped']} events dropped"


def check_recorder_killed(rw, work, program):
    return attach.check_recorder_killed(rw, work, program, (1.5, 2.3, 3.1), ["--window", "2s"])


def disk_bytes(trace):
    """Disk blocks of the trace, its file copies left out (shared by every
    stretch, not part of what the window bounds)."""
    total = 0
    for root, dirs, files in os.walk(trace):
        if root == trace and "files" in dirs:
            dirs.remove("files")
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def check_disk_bound(rw, work):
    """A long flight-recorder run in a few seconds: a process that reads
    1 MiB of random bytes every 100 ms (10 MiB/s of events that do not
    compress; its start images take 8 MiB each), a window of 64 MiB, 20 s:
    the disk the trace takes stays within the window all along, but for
    the stretch being recorded and the image being written."""
    script = ("import os, sys, time\nf = open('/dev/urandom', 'rb')\nprint('ready', flush=True)\n"
              "while True:\n    f.read(1 << 20)\n    time.sleep(0.1)\n")
    reader = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        check(reader.stdout.readline() == b"ready\n", "the reader did not start")
        trace = os.path.join(work, "t")
        bound = 64 << 20
        rec = subprocess.Popen([rw, "record", "-q", "--pid", str(reader.pid), "--for", "20s", "--window", "64MiB", "-o",
                                trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        peak = 0
        while rec.poll() is None:
            peak = max(peak, disk_bytes(trace) if os.path.isdir(trace) else 0)
            time.sleep(0.2)
        _, err = rec.communicate()
        check(rec.returncode == 0, f"rewind record --window 64MiB: {err.decode(errors='replace')}")
        end, w = check_window_account(trace, 4)
        # A stretch is a quarter of the window (and lasts 1 s at least): the
        # window holds up to its size, and one stretch more while it runs.
        check(peak <= bound * 3 // 2, f"the trace took {peak >> 20} MiB of disk at its peak, for a window of 64 MiB")
        check(end["stream_bytes"] <= bound, f"the window kept {end['stream_bytes'] >> 20} MiB of events")
        rep = Run([rw, "replay", "--autopilot", trace], timeout=300)
        check(rep.status == 0, f"replay of the window\n{rep.describe()}")
        return (f"{w['recorded_ns'] / 1e9:.0f} s recorded, {w['images_taken']} start images, peak disk "
                f"{peak / (1 << 20):.1f} MiB, {end['stream_bytes'] / (1 << 20):.1f} MiB of events kept "
                f"({end['events']} events, {w['events_dropped']} dropped); the replay exact")
    finally:
        reader.kill()
        reader.wait()


def main():
    return attach.run_main(lambda rw, program, work: [
        ("usage", lambda: check_usage(rw, fresh_dir(os.path.join(work, "usage")), program)),
        ("program_window", lambda: check_program_window(rw, fresh_dir(os.path.join(work, "program")), program)),
        ("crash", lambda: check_crash(rw, fresh_dir(os.path.join(work, "crash")), program)),
        ("freeze_on_signal", lambda: check_freeze_on_signal(rw, fresh_dir(os.path.join(work, "freeze")), program)),
        ("redis_server", lambda: check_redis(rw, fresh_dir(os.path.join(work, "redis")))),
        ("python_http_server", lambda: check_python_http_server(rw, fresh_dir(os.path.join(work, "http")))),
        ("recorder_killed", lambda: check_recorder_killed(rw, fresh_dir(os.path.join(work, "killed")), program)),
        ("disk_bound", lambda: check_disk_bound(rw, fresh_dir(os.path.join(work, "disk")))),
    ], "the start images of a flight recorder")


if __name__ == "__main__":
    sys.exit(main())
