"""The parent of every phase's command (run as a script, standard library only):
  phase_wrapper.py STATUS_FILE CGROUP_PROCS_OR_- COMMAND ARGS...

It joins the phase's cgroup, forbids core dumps, runs the command and writes
its exact wait status and run time to STATUS_FILE ("CODE SECONDS", CODE
negative for a signal): the runner cannot see a signal death through rewind's
own exit status otherwise.

It survives the catchable signals a test sends its parent or its process group
(self_sigint sends SIGINT to its parent, abort SIGABRT to its group), which
would otherwise reach the runner. The command starts with the default
dispositions (handlers do not survive exec; SIGPIPE and SIGXFSZ, which Python
ignores, are reset).

Should the runner die (killed by CTest's timeout, or by hand), the phase would
go on running with no one to end it: the wrapper watches its parent and, once
it is gone, kills its cgroup and its process group, itself included."""
import os
import resource
import select
import signal
import sys
import time

PARENT_CHECK_SECONDS = 1.0


def kill_phase(procs):
    if procs != "-":
        try:
            with open(os.path.join(os.path.dirname(procs), "cgroup.kill"), "w") as f:
                f.write("1")
        except OSError:
            pass
    os.killpg(os.getpgrp(), signal.SIGKILL)


def wait_watching_parent(pid, procs):
    """waitpid(pid), but every second checks that the runner still exists; a
    pidfd makes the child's exit wake us at once (no polling delay)."""
    runner = os.getppid()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    while True:
        if pidfd is not None:
            select.select([pidfd], [], [], PARENT_CHECK_SECONDS)
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                os.close(pidfd)
                return st
        else:
            return os.waitpid(pid, 0)[1]
        if os.getppid() != runner:
            kill_phase(procs)


def main():
    status_path, procs = sys.argv[1], sys.argv[2]
    argv = sys.argv[3:]
    if procs != "-":
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            procs = "-"
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    caught = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD)
              and s < signal.SIGRTMIN]
    for s in caught:
        try:
            signal.signal(s, lambda *a: None)
        except (OSError, ValueError):
            pass
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            for s in caught:
                try:
                    signal.signal(s, signal.SIG_DFL)
                except (OSError, ValueError):
                    pass
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, ("cannot run %s: %s\n" % (argv[0], e)).encode())
        os._exit(127)
    while True:
        try:
            st = wait_watching_parent(pid, procs)
            break
        except ChildProcessError:
            st = 127 << 8
            break
        except InterruptedError:
            continue
    took = time.monotonic() - start
    code = -os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
    with open(status_path + ".tmp", "w") as f:
        f.write("%d %.3f\n" % (code, took))
    os.rename(status_path + ".tmp", status_path)


if __name__ == "__main__":
    main()
