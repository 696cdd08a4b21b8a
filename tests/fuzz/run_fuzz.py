#!/usr/bin/env python3
"""Builds rewind's libFuzzer targets with clang in their own build
directory and runs them for N seconds in all (shared between the
targets), seeded with the unit tests' sample events and a real recording.
Fails if any input crashes, hangs or leaks; skips (77) with the reason
where clang's libFuzzer is not installed.

  run_fuzz.py --source DIR --build DIR --rewind R --seconds N
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

TARGETS = ["fuzz_event_decode", "fuzz_trace_files"]


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def have_libfuzzer():
    if not shutil.which("clang++"):
        return False
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.cpp")
        with open(src, "w") as f:
            f.write('extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n')
        return subprocess.run(["clang++", "-fsanitize=fuzzer", src, "-o", os.path.join(d, "t")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def build(source, build_dir):
    configure = ["cmake", "-S", source, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                 "-DCMAKE_C_COMPILER=clang", "-DCMAKE_CXX_COMPILER=clang++", "-DREWIND_FUZZ=ON",
                 "-DBUILD_TESTING=OFF"]
    subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 2), "--target", *TARGETS,
                    "make_seeds"], check=True, stdout=subprocess.DEVNULL)


def seeds(rewind, make_seeds, corpus):
    """Sample events always; a real recording's events and files when this
    machine can record."""
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t")
        r = subprocess.run([rewind, "record", "-q", "-o", trace, "--", "/bin/sh", "-c", "echo seed; ls / >/dev/null"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        argv = [make_seeds, corpus] + ([trace] if r.returncode == 0 else [])
        if r.returncode != 0:
            print("note: no real recording to seed from (rewind record failed); sample events only")
        subprocess.run(argv, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--seconds", type=int, default=24, help="for all targets together")
    args = ap.parse_args()
    if not have_libfuzzer():
        skip("clang with libFuzzer is not installed (scripts/install-deps.sh installs clang and libclang-rt-14-dev)")
    build(args.source, args.build)
    work = os.path.join(args.build, "fuzz-work")
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    seeds(args.rewind, os.path.join(args.build, "tests", "fuzz", "make_seeds"), corpus)
    failed = 0
    each = max(1, args.seconds // len(TARGETS))
    for target in TARGETS:
        target_corpus = os.path.join(corpus, target)
        os.makedirs(target_corpus, exist_ok=True)
        artifacts = os.path.join(work, "artifacts", target) + "/"
        os.makedirs(artifacts, exist_ok=True)
        exe = os.path.join(args.build, "tests", "fuzz", target)
        p = subprocess.run([exe, f"-max_total_time={each}", "-rss_limit_mb=2048", "-timeout=10",
                            f"-artifact_prefix={artifacts}", target_corpus],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        done = [l for l in p.stdout.splitlines() if l.startswith("Done ")]
        if p.returncode != 0:
            failed += 1
            print(f"FAIL {target}: libFuzzer found a failing input (in {artifacts})")
            print("\n".join(p.stdout.splitlines()[-40:]))
        else:
            print(f"ok   {target}: {done[-1] if done else 'ran'}, corpus {len(os.listdir(target_corpus))} inputs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
