#!/usr/bin/env python3
"""rewind watch on the program shapes of bench/programs/watch_*.c, each at
scale 0 (a tiny run): the report names the line marked /* CULPRIT */ and,
for the threaded shape, the thread the program named.

  check_watch_shapes.py --rewind R --programs DIR --sources DIR --work W [--only NAME]

DIR for --programs holds the built bench_watch_* programs, for --sources
their C files (each says what to watch in its first lines).
"""
import argparse
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from rwtest import DEBUG_REGISTERS, Run, check, fresh_dir, require_root, requiring, run_checks, skip  # noqa: E402
from rwtest import rewind_watch as watch  # noqa: E402
import watch_shapes  # noqa: E402

SCALE = "0"
# watch_crash ends in the SIGSEGV it is about; rewind record dies the same way.
EXIT_STATUS = {"crash": -signal.SIGSEGV}
# Where the debug registers do not work, executions are counted with an int3
# trap each; the final stretches of these shapes hold hot code (the loop
# before the crash; passes over a long list, where each evaluation is costly
# too) and their searches took 17 s to 270 s there, too long and too
# variable for a test.
NEED_DEBUG_REGISTERS = {"crash", "costly_expr"}


def scenario(rw, shape, programs, work):
    trace = os.path.join(work, shape.name + ".trace")
    r = Run([rw, "record", "-q", "-o", trace, "--", os.path.join(programs, f"bench_watch_{shape.name}"), SCALE],
            cwd=work)
    check(r.status == EXIT_STATUS.get(shape.name, 0), f"recording {shape.name} failed\n{r.describe()}")
    r, j = watch(rw, trace, shape.expr)
    check(r.status == 0 and j is not None and j["outcome"] == "found", f"not found\n{r.describe()}")
    names = watch_shapes.thread_names(rw, trace) if shape.thread else {}
    right, said = watch_shapes.verdict(shape, j, names)
    check(right, f"rewind watch names {said}; the culprit is {shape.where()}"
          + (f" in {shape.thread}" if shape.thread else "") + f"\n{r.describe()}")
    return f"{said}, {j['probes']} probes, {j['seconds']:.1f} s"


def shape_args(program):
    """The arguments of a test on the shapes (--rewind, --programs, --sources,
    --work, --only); skips where not root, without gdb, or where the bench
    program `program` is not built."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--sources", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    args = ap.parse_args()
    require_root()
    if not os.access("/usr/bin/gdb", os.X_OK):
        skip("no gdb at /usr/bin/gdb")
    if not os.path.exists(os.path.join(args.programs, program)):
        skip(f"{program} is not built in {args.programs} (bench/ needs Google Benchmark)")
    return args


def main():
    args = shape_args("bench_watch_" + watch_shapes.SHAPES[0])

    def check_shape(name):
        shape = watch_shapes.Shape(name, args.sources)
        fn = lambda: scenario(args.rewind, shape, args.programs, fresh_dir(os.path.join(args.work, name)))
        return requiring(args.rewind, DEBUG_REGISTERS, fn) if name in NEED_DEBUG_REGISTERS else fn
    return run_checks([(f"watch_{name}", check_shape(name)) for name in watch_shapes.SHAPES], args.only)


if __name__ == "__main__":
    sys.exit(main())
