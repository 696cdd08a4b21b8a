#!/usr/bin/env python3
"""How long `rewind record --pid` stops a process while it attaches, by
resident size: the process (bench/programs/resident_ticker.c) ticks every
millisecond and reports its longest gap; rewind reports its own measure
(meta.json attached.pause_seconds) and the start image's size and dump
time. Each size is run --runs times; medians are printed with the range.
With --window SPAN, a flight recorder (record --window SPAN, recording for
four spans): the longest gap is then the longest of every start image's
pause, and rewind's measure and the dump are those of the image the trace
kept (one taken while recording). With --tree N, rewind record --pid
--tree attaches to a shell whose N children are tickers sharing the
resident size between them: the longest gap is the longest any child saw.

  bench/attach_pause.py --rewind build/cli/rewind --ticker build/bench/bench_resident_ticker [--sizes 10,100,1000]
      [--window 2s | --tree 4]
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


def one(rewind, ticker, mib, work, window, tree):
    trace = os.path.join(work, f"t{mib}")
    shutil.rmtree(trace, ignore_errors=True)
    seconds = 4 * float(window.rstrip("s")) if window else 1
    if tree:
        each = f"{ticker} {max(1, mib // tree)} {seconds + 5}"
        command = ["/bin/bash", "-c", " & ".join([each] * tree) + " & wait"]
    else:
        command = [ticker, str(mib), str(seconds + 5)]
    p = subprocess.Popen(command, stdout=subprocess.PIPE)
    for _ in range(tree or 1):
        if p.stdout.readline().strip() != b"ready":
            raise SystemExit("the ticker did not start")
    time.sleep(1)
    options = ["--window", window] if window else ["--tree"] if tree else []
    rec = subprocess.run([rewind, "record", "-q", "--pid", str(p.pid), "--for", f"{seconds}s", *options, "-o", trace],
                         stderr=subprocess.PIPE)
    out = p.stdout.read().decode()
    p.wait()
    if rec.returncode != 0:
        raise SystemExit(f"rewind record failed: {rec.stderr.decode()}")
    gap = max(float(g) for g in re.findall(r"longest gap ([\d.]+) ms", out))
    meta = json.load(open(os.path.join(trace, "meta.json")))
    manifest = json.load(open(os.path.join(trace, "start", "manifest.json")))
    return {"gap_ms": gap, "pause_ms": meta["attached"]["pause_seconds"] * 1e3,
            "dump_ms": manifest["dump_seconds"] * 1e3, "image_mib": manifest["image_bytes"] / 2**20}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--ticker", required=True)
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--runs", type=int, default=3)
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--window", help="a flight recorder's span, in seconds (2s)")
    group.add_argument("--tree", type=int, default=0, help="attach to a shell with this many ticker children")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rewind-attach-bench-")
    try:
        print("| resident | pause the process saw (longest tick gap) | rewind's measure | CRIU dump of the copy | image |")
        print("|---|---|---|---|---|")
        for mib in [int(s) for s in args.sizes.split(",")]:
            runs = [one(args.rewind, args.ticker, mib, work, args.window, args.tree) for _ in range(args.runs)]

            def show(key, unit, digits=0):
                values = sorted(r[key] for r in runs)
                return (f"{statistics.median(values):.{digits}f} {unit} "
                        f"({values[0]:.{digits}f}–{values[-1]:.{digits}f})")
            print(f"| {mib} MiB | {show('gap_ms', 'ms')} | {show('pause_ms', 'ms')} | {show('dump_ms', 'ms')} "
                  f"| {show('image_mib', 'MiB', 1)} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
