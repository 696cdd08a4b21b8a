"""Runs a helper command (apt, the compiler, rewind --version) to completion or
to its timeout, in a session of its own so that a timeout kills everything it
started."""
import os
import signal
import subprocess


def run_quiet(argv, timeout, cwd=None):
    """Returns (returncode, or None on timeout; stdout and stderr as one text)."""
    try:
        p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        return 127, str(e)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = b""
        return None, out.decode("utf-8", "replace") + f"\n(timed out after {timeout} s)"
