#!/usr/bin/env python3
"""A landmark is CRIU images that a replay restores as root: only those
rewind made on this machine for this user (signed with the user's landmark
key) are used. One made elsewhere is skipped, saying why, by replay, serve
and info, unless --trust-landmarks; one made here is used. The landmark
from elsewhere is forged by landmark_tamper with another key, so this
check needs no working CRIU; the one made here does."""
import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rwtest import Run, Skipped, check, fresh_dir, require_root, run_checks

NOT_MADE_HERE = b"it was not made by rewind on this machine for this user"


def as_user(config):
    """The environment of a user whose landmark key lives under `config`."""
    return dict(os.environ, XDG_CONFIG_HOME=config)


def check_foreign_landmark_skipped(rw, work, tamper):
    mine, theirs = os.path.join(work, "mine"), os.path.join(work, "theirs")
    trace = os.path.join(work, "ls.trace")
    rec = Run([rw, "record", "-q", "-o", trace, "--", "/bin/ls", "-l", "/usr"], env=as_user(mine))
    check(rec.status == 0, f"recording ls\n{rec.describe()}")
    forged = Run([tamper, "--forge", trace, "1", "10"], env=as_user(theirs))
    check(forged.status == 0, f"landmark_tamper --forge\n{forged.describe()}")
    # This user has a key too (made with a landmark of another trace).
    scratch = os.path.join(work, "scratch.trace")
    shutil.copytree(trace, scratch, ignore=shutil.ignore_patterns("landmarks"))
    check(Run([tamper, "--forge", scratch, "1", "10"], env=as_user(mine)).status == 0, "a key for this user")

    rep = Run([rw, "replay", "--autopilot", "--from", "90%", trace], env=as_user(mine))
    check(rep.status == 0 and NOT_MADE_HERE in rep.stderr and b"--trust-landmarks" in rep.stderr and
          b"using landmark" not in rep.stderr,
          f"a landmark signed with another key must be skipped, saying why\n{rep.describe()}")
    full = Run([rw, "replay", "--autopilot", trace], env=as_user(mine))
    check(rep.stdout and full.stdout.endswith(rep.stdout), f"the replay from the start shows another end\n"
          f"{rep.describe()}\n{full.describe()}")

    info = Run([rw, "info", trace], env=as_user(mine))
    check(b"not used without --trust-landmarks" in info.stdout and NOT_MADE_HERE in info.stdout,
          f"rewind info must say the landmark is not used\n{info.describe()}")

    if shutil.which("gdb"):
        g = Run(["gdb", "-nx", "-batch", "-ex", f"target extended-remote | {rw} serve --stdio -q --from 90% {trace}",
                 "-ex", "continue"], env=as_user(mine), timeout=120)
        check(NOT_MADE_HERE in g.stderr, f"rewind serve must skip it too\n{g.describe()}")

    # Told to trust it, replay tries it: the forged image cannot be
    # restored, which is said as any broken landmark is.
    trusted = Run([rw, "replay", "--autopilot", "--from", "90%", "--trust-landmarks", trace], env=as_user(mine))
    check(trusted.status == 0 and NOT_MADE_HERE not in trusted.stderr and b"landmark 1" in trusted.stderr,
          f"--trust-landmarks must try the landmark\n{trusted.describe()}")
    return "skipped by replay, serve and info unless --trust-landmarks"


def check_own_landmark_used(rw, work, tamper):
    mine, theirs = os.path.join(work, "mine"), os.path.join(work, "theirs")
    trace = os.path.join(work, "ls.trace")
    rec = Run([rw, "record", "-q", "-o", trace, "--", "/bin/ls", "/"], env=as_user(mine))
    check(rec.status == 0, f"recording ls\n{rec.describe()}")
    made = Run([rw, "landmark", trace, "--at", "50%"], env=as_user(mine), timeout=120)
    if made.status != 0:
        raise Skipped("rewind landmark cannot save a landmark here (CRIU): " +
                      made.stderr.decode(errors="replace").strip().splitlines()[-1])
    rep = Run([rw, "replay", "--autopilot", "--from", "90%", trace], env=as_user(mine))
    check(rep.status == 0 and b"using landmark 1" in rep.stderr, f"this user's landmark must be used\n{rep.describe()}")
    other = Run([rw, "replay", "--autopilot", "--from", "90%", trace], env=as_user(theirs))
    check(other.status == 0 and b"landmark 1 is skipped" in other.stderr and b"using landmark" not in other.stderr,
          f"another user's replay must not use it\n{other.describe()}")
    return "made and used by its user, skipped by another"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--tamper", required=True, help="the landmark_tamper tool")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    work = fresh_dir(args.work)
    checks = []
    for fn in [check_foreign_landmark_skipped, check_own_landmark_used]:
        d = fresh_dir(os.path.join(work, fn.__name__))
        checks.append((fn.__name__, lambda fn=fn, d=d: fn(args.rewind, d, args.tamper)))
    return run_checks(checks)


if __name__ == "__main__":
    sys.exit(main())
