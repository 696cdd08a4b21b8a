#!/usr/bin/env python3
"""Persistent landmarks (rewind landmark): how much sooner a replay that
starts late reaches its first stop, and what a landmark costs.

1. A compute-bound recording of about SECONDS (bench/programs/compute.c:
   the program's start, one long loop without syscalls, its output) gets
   landmarks every 10%. 90% of its events lie after the loop, so
   `rewind replay --from 90%` replays the whole loop without landmarks; it
   is timed to its first gdb stop with and without them (gdb -batch with one
   command: gdb's start and exit are included).
2. A process with a 100 MB heap (tests/programs/compute_steps): a
   landmark's creation (criu dump of the replayed process's copy) and its
   restore (into a new pid namespace, seized, before the replay forks its
   live copy), as rewind prints them.
3. `rewind watch` with the culprit at 95% of a compute-bound recording of
   about SECONDS with an event every 0.1% (bench/programs/late_change.c),
   with landmarks every 10% and with --no-landmarks; the culprit line must
   be right both ways.

  bench/landmarks.py [--rewind R] [--compute C] [--program P] [--late L] [--seconds 60] [--runs 3] [--out FILE]

Needs root, CRIU 4.1 (rewind doctor) and gdb.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(argv, timeout=3600, stdout=subprocess.PIPE):
    start = time.monotonic()
    p = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout)
    took = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stdout.decode()}\n{p.stderr.decode()}")
    return took, (p.stdout or b"").decode(errors="replace"), p.stderr.decode(errors="replace")


def record(rewind, trace, command):
    """Records `command`; again if the trace has an rt_sigreturn without a
    signal (under load the recorder sometimes logs those, and the replay
    then diverges there whatever the landmarks)."""
    for _ in range(3):
        shutil.rmtree(trace, ignore_errors=True)
        took, _, _ = run([rewind, "record", "-q", "-o", trace, "--", *command], stdout=subprocess.DEVNULL)
        _, dump, _ = run([rewind, "dump", trace])
        if "rt_sigreturn" not in dump:
            return took
    sys.exit(f"every recording of {' '.join(command)} has an rt_sigreturn without a signal")


def iterations_for(compute, seconds):
    """Iterations of bench/programs/compute.c for about `seconds`."""
    probe = 300_000_000
    took, _, _ = run([compute, str(probe)])
    return max(1000, int(probe * seconds / max(took, 1e-3)))


def first_stop(rewind, trace, *extra):
    took, out, err = run([rewind, "replay", "--from", "90%", *extra, trace, "--", "-batch", "-ex", "when"])
    if "event" not in out + err:
        sys.exit(f"gdb did not stop at 90%:\n{out}\n{err}")
    return took, err


def watch_late_change(rewind, late, seconds, runs, work):
    """Part 3: the search for the store at 95%, with and without landmarks."""
    probe = 20_000_000
    took, _, _ = run([late, "10", str(probe // 10)])
    iterations = max(1000, int(probe * seconds / max(took, 1e-3) / 1000))
    trace = os.path.join(work, "late")
    recorded = record(rewind, trace, [late, "1000", str(iterations)])
    made, _, _ = run([rewind, "landmark", trace, "--every", "10%"])
    source_line = next(i for i, line in enumerate(open(os.path.join(ROOT, "bench", "programs", "late_change.c")), 1)
                       if "CULPRIT" in line)
    times = {"with": [], "without": []}
    for _ in range(runs):
        for way, extra in (("with", []), ("without", ["--no-landmarks"])):
            took, out, err = run([rewind, "watch", "--json", *extra, trace, "damaged == 0"])
            report = json.loads(out)
            where = f"{report.get('file', '')}:{report.get('line', '')}"
            if not where.endswith(f"late_change.c:{source_line}"):
                sys.exit(f"rewind watch ({way} landmarks) named {where}, not late_change.c:{source_line}\n{out}\n{err}")
            times[way].append(round(took, 2))
    return {"recording_s": round(recorded, 2), "landmarks_s": round(made, 2), "watch_with_landmarks_s": times["with"],
            "watch_without_landmarks_s": times["without"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", default=os.path.join(ROOT, "build", "cli", "rewind"))
    ap.add_argument("--compute", default=os.path.join(ROOT, "build", "bench", "bench_compute"))
    ap.add_argument("--program", default=os.path.join(ROOT, "build", "tests", "programs", "compute_steps"))
    ap.add_argument("--late", default=os.path.join(ROOT, "build", "bench", "bench_late_change"))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--parts", default="123", help="which parts to run (digits)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("recording needs root")
    if not shutil.which("gdb"):
        sys.exit("gdb is not installed")
    work = tempfile.mkdtemp(prefix="rewind-landmarks-bench-")
    results = {}
    try:
        if "1" in args.parts:
            results.update(replay_from_late(args, work))
        if "2" in args.parts:
            results["rss_100mb"] = heap_100mb(args, work)
        if "3" in args.parts:
            results["watch_at_95pct"] = watch_late_change(args.rewind, args.late, args.seconds, args.runs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if "1" in args.parts:
        w, wo = results["from_90pct_with_landmarks_s"], results["from_90pct_without_landmarks_s"]
        print(f"recording of {results['recording_s']} s; landmarks every 10% made in "
              f"{results['landmark_every_10pct_s']} s")
        print(f"replay --from 90% to its first stop: {statistics.median(w):.2f} s with landmarks "
              f"({', '.join(map(str, w))}), {statistics.median(wo):.2f} s without ({', '.join(map(str, wo))})")
    if "2" in args.parts:
        big = results["rss_100mb"]
        print(f"100 MB heap: image {big['image_mb']} MB, create {statistics.median(big['create_s']):.2f} s "
              f"({', '.join(map(str, big['create_s']))}), restore {statistics.median(big['restore_s']):.2f} s "
              f"({', '.join(map(str, big['restore_s']))})")
    if "3" in args.parts:
        late = results["watch_at_95pct"]
        w, wo = late["watch_with_landmarks_s"], late["watch_without_landmarks_s"]
        print(f"rewind watch, culprit at 95% of a {late['recording_s']} s recording (landmarks every 10% made in "
              f"{late['landmarks_s']} s): {statistics.median(w):.2f} s with landmarks ({', '.join(map(str, w))}), "
              f"{statistics.median(wo):.2f} s without ({', '.join(map(str, wo))}): "
              f"{statistics.median(wo) / statistics.median(w):.1f}x")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


def replay_from_late(args, work):
    """Part 1: a long compute-bound recording, replayed from 90%."""
    results = {}
    trace = os.path.join(work, "long")
    took = record(args.rewind, trace, [args.compute, str(iterations_for(args.compute, args.seconds))])
    results["recording_s"] = round(took, 2)
    took, out, _ = run([args.rewind, "landmark", trace, "--every", "10%"])
    results["landmark_every_10pct_s"] = round(took, 2)
    results["landmarks"] = out.strip().splitlines()
    with_marks, without = [], []
    for _ in range(args.runs):
        t, err = first_stop(args.rewind, trace)
        if "using landmark" not in err:
            sys.exit(f"the replay did not start at a landmark:\n{err}")
        with_marks.append(t)
    for _ in range(max(1, args.runs // 2)):
        without.append(first_stop(args.rewind, trace, "--no-landmarks")[0])
    results["from_90pct_with_landmarks_s"] = [round(t, 2) for t in with_marks]
    results["from_90pct_without_landmarks_s"] = [round(t, 2) for t in without]
    return results


def heap_100mb(args, work):
    """Part 2: 100 MB of heap: create and restore."""
    trace = os.path.join(work, "big")
    record(args.rewind, trace, [args.program, "60", "200000", "100"])
    creates, restores, sizes = [], [], []
    for _ in range(args.runs):
        _, out, _ = run([args.rewind, "landmark", trace, "--clear", "--at", "75%"])
        m = re.search(r"([0-9.]+) MB, saved in ([0-9.]+) s", out)
        sizes.append(float(m.group(1)))
        creates.append(float(m.group(2)))
        _, _, err = run([args.rewind, "replay", "--autopilot", "-q", "--from", "75%", trace])
        m = re.search(r"restored in ([0-9.]+) s", err)
        if not m:
            sys.exit(f"the replay did not restore the landmark:\n{err}")
        restores.append(float(m.group(1)))
    return {"image_mb": sizes[0], "create_s": creates, "restore_s": restores}


if __name__ == "__main__":
    main()
