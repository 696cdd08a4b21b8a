#!/usr/bin/env python3
"""Records one test program and checks, against independent witnesses, that
recording changed nothing and captured everything:

  - stdout, stderr and exit status equal a native run's;
  - `rewind info` reports a complete trace whose per-syscall counts equal
    `strace -f -c`'s for the same program;
  - recorded read() payloads equal the bytes of the file that was read.
"""
import argparse
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rwtest import (STABLE_FILESYSTEMS, Failure, Run, check, dump_events, filesystem_type, fresh_dir, normalize_numbers,
                    prepare_inputs, require_root, rewind_json, shell_status, skip_if_program_skipped, strace_counts)

# Served by the vDSO in a native run (strace cannot see them); real
# syscalls under rewind, which hides the vDSO so their results are logged.
VDSO_SYSCALLS = {"clock_gettime", "gettimeofday", "time", "getcpu", "clock_getres"}

# Programs whose output differs on every run: compared with digits masked.
# (memcpy_overflow prints addresses, which ASLR moves in native runs; hw_random
# and random_device print the CPU's random numbers.)
NONDETERMINISTIC = {"clocks", "random_getrandom", "random_urandom", "rdtsc", "sigalrm_loop", "sigalrm_spin", "entropy", "memcpy_overflow",
                    "hw_random", "random_device", "signal_rounds", "nested_rounds",
                    "vdso_present"}

# Programs strace cannot follow to their end, so their syscall counts are
# not compared: a traced namespace init is never killed by its fault (the
# kernel keeps it unkillable while traced), and strace passes the fault on
# for ever. rewind lets it go (init_signals.h).
NO_STRACE_WITNESS = {"namespace_init_fault": "a traced namespace init never dies of its fault, so strace never ends",
                     "untraced_clone": "strace cannot follow a CLONE_UNTRACED child (rewind records it in the kernel)",
                     "wait_mask_signals": "how often the child's signals interrupt a wait depends on when each "
                                          "arrives, from run to run",
                     "stop_continue_stop": "whether SIGCHLD interrupts a wait for the child's stop (a restarted "
                                           "wait4, counted twice) depends on when the stop is reported",
                     "poll_restarted": "whether the stop comes while the parent is inside poll (a restart_syscall "
                                       "more) depends on when each process runs",
                     "agent_runs": "how many of its interval timer's signals come, and how many of them interrupt "
                                   "its wait for the child, depends on how fast it runs"}

# Syscalls whose count differs from run to run in some programs, compared as
# "called at all" there: glibc's mkstemp and mkdtemp draw another random value
# when the one getrandom gave falls in the biased tail of the range they use
# (about 1 run in 22), so the native run and the recorded one can differ.
TEMPNAME_GETRANDOM = {"getrandom": "mkstemp/mkdtemp draw again from getrandom in about 1 run in 22"}
RUN_DEPENDENT_COUNTS = {"mount_api": TEMPNAME_GETRANDOM, "device_controls": TEMPNAME_GETRANDOM,
                        "exec_detached": TEMPNAME_GETRANDOM}


def count_differences(name, ours, theirs):
    """Syscalls counted differently by rewind and strace, as {name: (ours, theirs)}."""
    loose = RUN_DEPENDENT_COUNTS.get(name, {})
    diff = {}
    for k in set(ours) | set(theirs):
        a, b = ours.get(k, 0), theirs.get(k, 0)
        if (a > 0) != (b > 0) if k in loose else a != b:
            diff[k] = (a, b)
    return diff


def check_read_payloads(events, expected_files):
    """Every read() of an expected file returned exactly its bytes."""
    if not expected_files:
        return
    fd_paths = {}
    for e in events:
        if e["kind"] != "syscall":
            continue
        if e["name"] == "openat" and e["ret"] >= 0:
            path = bytes.fromhex(e["memory"][0]["data_hex"]).rstrip(b"\0").decode()
            fd_paths[(e["tgid"], e["ret"])] = path
        if e["name"] == "read" and e["ret"] > 0:
            path = fd_paths.get((e["tgid"], e["args"][0]))
            if path in expected_files:
                data = bytes.fromhex(e["memory"][0]["data_hex"])
                check(len(data) == e["ret"], f"read of {path}: {len(data)} bytes captured, returned {e['ret']}")
                check(data == expected_files[path][:len(data)], f"read of {path}: payload differs from the file")
                expected_files[path] = None
    for path, left in expected_files.items():
        check(left is None, f"no recorded read of {path}")


def check_reads_by_reference(rewind, trace, events, work):
    """file_rereads reads one file over and over: once the recorder holds a
    copy, reads refer to it; each change to the file (a write that puts the
    mtime back, a write through a mapping) must lead to a new copy or to
    reads by content, which replay.file_rereads checks by output."""
    fs_type = filesystem_type(work)
    copies = {m["file_copy"] for e in events if e["kind"] == "syscall"
              for m in e.get("memory", []) if "file_copy" in m}
    if fs_type not in STABLE_FILESYSTEMS:
        print(f"note: {work} is on a filesystem (type {fs_type}) whose reads are always recorded by content")
        check(not copies, "reads by reference on a filesystem that does not allow them")
        return
    check(copies, "no read was recorded by reference to a copy of the file")
    for e in events:
        for m in e.get("memory", []) if e["kind"] == "syscall" else []:
            if "file_copy" in m:
                check(len(bytes.fromhex(m["data_hex"])) == m["length"],
                      f"a read by reference at event {e['seq']} did not get its bytes from the copy")
    # A damaged copy: `info --verify` names it, replay refuses to go past it.
    damaged = os.path.join(work, "damaged")
    shutil.copytree(trace, damaged)
    copy = os.path.join(damaged, "files", sorted(copies)[0])
    os.chmod(copy, 0o600)
    with open(copy, "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xff]))
    verify = Run([rewind, "info", "--verify", damaged])
    check(verify.status == 3 and b"a file read by reference" in verify.stdout and b"has been altered" in verify.stdout,
          f"rewind info --verify on a damaged copy of a file read by reference:\n{verify.describe()}")
    replay = Run([rewind, "replay", "--autopilot", "-q", damaged])
    check(shell_status(replay.status) != 0 and b"has been altered" in replay.stderr,
          f"replay of a trace whose copy of a file read by reference is damaged:\n{replay.describe()}")


def check_running_times(trace, events):
    """Syscalls carry their thread's running time: a wait adds nothing to
    it, a computation between two calls all of it."""
    end = json.load(open(os.path.join(trace, "end.json")))
    check(end.get("kernel_hz") == 4000, f"kernel_hz {end.get('kernel_hz')}, not 4000 (250 us units)")
    calls = [e for e in events if e.get("kind") == "syscall"]
    writes = [i for i, e in enumerate(calls) if e["name"] == "write"]
    sleeps = [i for i, e in enumerate(calls) if e["name"] in ("nanosleep", "clock_nanosleep")]
    check(len(writes) >= 3 and len(sleeps) == 1, f"expected three writes around one nanosleep, got {len(writes)}, {len(sleeps)}")
    before, sleep = calls[writes[0]], calls[sleeps[0]]
    after_wait, after_compute = calls[writes[1]], calls[writes[2]]
    units_ms = 4  # 250 us units
    waited = sleep["exit_time"] - before["exit_time"]
    check(waited <= 2 * units_ms, f"the 200 ms nanosleep added {waited} units (of 250 us) of running time")
    computed = after_compute["exit_time"] - after_wait["exit_time"]
    check(computed >= 5 * units_ms, f"the computation added only {computed} units (of 250 us) of running time")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rewind", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    require_root()
    name = os.path.basename(args.program)
    work = fresh_dir(args.work)
    prog_args, expected_files = prepare_inputs(name, work)
    argv = [args.program] + prog_args

    native = Run(argv, cwd=work)
    skip_if_program_skipped(name, native)
    trace = os.path.join(work, "trace")
    recorded = Run([args.rewind, "record", "-q", "-o", trace, "--"] + argv, cwd=work)
    try:
        out_native, out_recorded = native.stdout, recorded.stdout
        if name in NONDETERMINISTIC:
            out_native, out_recorded = normalize_numbers(out_native), normalize_numbers(out_recorded)
        check(out_native == out_recorded, "stdout differs under rewind record")
        check(native.stderr == recorded.stderr, "stderr differs under rewind record")
        check(shell_status(native.status) == shell_status(recorded.status),
              f"exit status {shell_status(recorded.status)}, native {shell_status(native.status)}")

        rc, info_text, info_err = rewind_json(args.rewind, "info", "--json", trace)
        check(rc == 0, f"rewind info failed ({rc}): {info_err}")
        info = json.loads(info_text)
        check(info["complete"], f"trace not complete: {info['problems']}")

        # strace -c leaves out numbers it has no name for (syscall_600).
        ours = {k: v for k, v in info["syscalls"].items()
                if k not in VDSO_SYSCALLS and not k.startswith("syscall_")}
        if name in NO_STRACE_WITNESS:
            print(f"note: syscall counts not compared with strace: {NO_STRACE_WITNESS[name]}")
        else:
            witness = strace_counts(argv, work, work)
            theirs = {k: v for k, v in witness.items() if k not in VDSO_SYSCALLS}
            diff = count_differences(name, ours, theirs)
            check(not diff, f"per-syscall counts differ from strace -f -c (rewind, strace): {diff}")

        events = dump_events(args.rewind, trace)
        check_read_payloads(events, expected_files)
        if name == "file_rereads":
            check_reads_by_reference(args.rewind, trace, events, work)
        if name == "wait_then_compute":
            check_running_times(trace, events)
    except Failure as f:
        print(f"FAIL {name}: {f}\n\nnative:\n{native.describe()}\nrecorded:\n{recorded.describe()}")
        return 1
    print(f"ok {name}: output, exit status {shell_status(recorded.status)}, {sum(ours.values())} syscalls"
          f"{'' if name in NO_STRACE_WITNESS else ' match strace'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
